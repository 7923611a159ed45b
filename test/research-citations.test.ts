/**
 * Deep research that cites what it read, end to end: a local search server (SearXNG's JSON
 * API), a local page server and a scripted model. Every [n] of the answer resolves to a page
 * the page server served; verification, extracted facts and unified_response come in the
 * spec's shape.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain JavaScript build script without type declarations
import { buildConsole } from '../scripts/build-console.mjs';
import { json, readSse, startTestApp, waitFor, type TestApp } from './helpers/app.js';
import { expectAccessible, launchBrowser, onPage } from './helpers/browser.js';
import { startOpenAiServer, type OpenAiTestServer, type RecordedRequest, scriptedProvider } from './helpers/openai-server.js';
import { startServer, type TestServer } from './helpers/tools-web.js';

let llm: OpenAiTestServer;
let t: TestApp;
let pages: TestServer;
let search: TestServer;
/** What the search backend returns, when a test sets it. */
let searchResults: { title: string; url: string; content: string }[] | undefined;
/** The first test's task, which the console test opens. */
let citedTask: string | undefined;

const PAGES: Record<string, { title: string; body: string }> = {
  '/jetstream': { title: 'JetStream overview', body: 'JetStream stores messages in streams. A stream keeps messages until its limits are reached.' },
  '/consumers': { title: 'Consumers', body: 'Consumers read messages from a stream and acknowledge each message they process.' },
};

beforeAll(async () => {
  llm = await startOpenAiServer();
  pages = await startServer((req, res) => {
    const p = PAGES[new URL(req.url ?? '/', 'http://x').pathname];
    if (!p) return void res.writeHead(404).end();
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end(`<html><head><title>${p.title}</title></head><body><main><h1>${p.title}</h1><p>${p.body}</p></main></body></html>`);
  });
  search = await startServer((_req, res) => {
    const results = searchResults ?? [
      { title: 'Consumers', url: `${pages.origin}/consumers`, content: 'How consumers read.' },
      { title: 'JetStream overview', url: `${pages.origin}/jetstream?utm_source=search#intro`, content: 'JetStream stores messages.' },
      { title: 'Never read', url: `${pages.origin}/unread`, content: 'A result nobody fetched.' },
    ];
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ results }));
  });
  t = await startTestApp(
    {
      TOOLS_HTTP_ALLOW_HOSTS: '127.0.0.1/32',
      WEB_SEARCH_PROVIDER: 'searxng',
      SEARXNG_URL: search.origin,
      MAX_TOKENS_PER_REQUEST: '0',
      MAX_COST_PER_REQUEST: '0',
    },
    { llm: scriptedProvider(llm) },
  );
});
afterAll(async () => {
  await t?.stop();
  await llm?.close();
});

const system = (r: RecordedRequest) => String((r.messages ?? []).find((m) => m.role === 'system')?.content ?? '');
const lastUser = (r: RecordedRequest) => String([...(r.messages ?? [])].reverse().find((m) => m.role === 'user')?.content ?? '');

/** The number the synthesiser's source list gives a URL path. */
function numberOf(prompt: string, path: string): number {
  const m = new RegExp(`\\[(\\d+)\\][^\\n]*\\nURL: [^\\n]*${path}`).exec(prompt);
  if (!m) throw new Error(`${path} is not in the source list:\n${prompt}`);
  return Number(m[1]);
}

describe('research citations', () => {
  it('cites only pages it read, renumbered; verification, facts and unified_response in the spec’s shape', async () => {
    llm.setDefault((r) => {
      const sys = system(r);
      const tools = (r.messages ?? []).filter((m) => m.role === 'tool').length;
      if (sys.startsWith('Break the research question'))
        return { type: 'completion', content: '["How does JetStream store messages?", "How do consumers read?"]' };
      if (sys.startsWith('You are a research agent')) {
        const consumers = lastUser(r).includes('consumers read');
        const page = `${pages.origin}${consumers ? '/consumers' : '/jetstream'}`;
        if (tools === 0)
          return { type: 'completion', content: '', toolCalls: [{ id: 's1', name: 'web_search', arguments: JSON.stringify({ query: 'jetstream' }) }] };
        if (tools === 1) return { type: 'completion', content: '', toolCalls: [{ id: 'f1', name: 'web_fetch', arguments: JSON.stringify({ url: page }) }] };
        return { type: 'completion', content: `Found it in ${page}.` };
      }
      if (sys.startsWith('You check research claims')) return { type: 'completion', content: '[]' };
      if (sys.startsWith('Extract the facts')) {
        return {
          type: 'completion',
          content: JSON.stringify({
            facts: [
              {
                statement: 'JetStream stores messages in streams',
                confidence: 0.9,
                source_citation: [1],
                category: 'definition',
                entity_mentions: ['JetStream'],
              },
              {
                statement: 'Consumers acknowledge each message',
                confidence: 0.85,
                source_citation: [2, 9],
                category: 'process',
                entity_mentions: ['Consumers'],
              },
            ],
            contradictions: [],
          }),
        };
      }
      const prompt = lastUser(r);
      const j = numberOf(prompt, '/jetstream');
      const c = numberOf(prompt, '/consumers');
      return {
        type: 'completion',
        content: `JetStream stores messages in streams [${j}]. Consumers acknowledge each message they process [${c}, 42]. Consumers are written in Rust [${c}]. Nothing backs this [17].`,
      };
    });
    const r = await fetch(`${t.base}/api/v1/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        query: 'How does NATS JetStream work?',
        research_strategy: 'quick',
        enable_verification: true,
        context: { enable_fact_extraction: true },
      }),
    });
    expect(r.status).toBe(200);
    const { task_id: id } = await json(r);
    citedTask = id;
    const s = await waitFor(async () => {
      const x = await json(await fetch(`${t.base}/api/v1/tasks/${id}`));
      return /COMPLETED|FAILED/.test(x.status) ? x : undefined;
    }, 30_000);
    expect(s.status, s.error).toBe('TASK_STATUS_COMPLETED');
    // The first search asked the backend the question itself.
    expect(new URL(search.requests[0]!.url, 'http://x').searchParams.get('q')).toBe('How does NATS JetStream work?');

    expect(s.result).toBe(
      'JetStream stores messages in streams [1]. Consumers acknowledge each message they process [2]. Consumers are written in Rust [2]. Nothing backs this.',
    );
    const citations = s.metadata.citations as { url: string; title: string; source: string; credibility_score: number; quality_score: number }[];
    const served = new Set(pages.requests.map((q) => new URL(q.url, pages.origin).pathname));
    const markers = [...new Set([...String(s.result).matchAll(/\[(\d+)\]/g)].map((m) => Number(m[1])))];
    expect(markers).toEqual(citations.map((_, i) => i + 1));
    for (const c of citations) {
      expect(served.has(new URL(c.url).pathname), c.url).toBe(true);
      expect(c.source).toBe('127.0.0.1');
      expect(c.credibility_score).toBeGreaterThanOrEqual(0);
      expect(c.credibility_score).toBeLessThanOrEqual(1);
      expect(c.quality_score).toBeGreaterThan(0);
      expect(c.quality_score).toBeLessThanOrEqual(1);
    }
    expect(citations.map((c) => [new URL(c.url).pathname, c.title])).toEqual([
      ['/jetstream', 'JetStream overview'],
      ['/consumers', 'Consumers'],
    ]);
    expect(served.has('/unread')).toBe(false);

    expect(s.metadata.verification).toEqual({
      overall_confidence: expect.any(Number),
      total_claims: 3,
      supported_claims: 2,
      unsupported_claims: ['Consumers are written in Rust.'],
      conflicts: [],
      claim_details: [
        { claim: 'JetStream stores messages in streams.', supporting_citations: [1], conflicting_citations: [], confidence: 1 },
        { claim: 'Consumers acknowledge each message they process.', supporting_citations: [2], conflicting_citations: [], confidence: 1 },
        { claim: 'Consumers are written in Rust.', supporting_citations: [], conflicting_citations: [], confidence: expect.any(Number) },
      ],
    });
    expect(s.metadata.verification.overall_confidence).toBeGreaterThan(0.6);
    expect(s.metadata.verification.overall_confidence).toBeLessThan(1);

    expect(s.metadata.extracted_facts).toEqual([
      {
        statement: 'JetStream stores messages in streams',
        confidence: 0.9,
        source_citation: [1],
        category: 'definition',
        entity_mentions: ['JetStream'],
        temporal_marker: null,
        is_quantitative: false,
      },
      {
        statement: 'Consumers acknowledge each message',
        confidence: 0.85,
        source_citation: [2],
        category: 'process',
        entity_mentions: ['Consumers'],
        temporal_marker: null,
        is_quantitative: false,
      },
    ]);
    expect(s.metadata.fact_summary).toEqual({ total_facts: 2, high_confidence: 2, categorized_facts: { definition: 1, process: 1 }, contradiction_count: 0 });

    const u = s.metadata.unified_response;
    expect(u).toMatchObject({
      task_id: id,
      session_id: expect.any(String),
      status: 'TASK_STATUS_COMPLETED',
      result: s.result,
      metadata: { model: s.model_used, execution_mode: 'EXECUTION_MODE_COMPLEX', agents_used: 2 },
      usage: { total_tokens: s.usage.total_tokens, input_tokens: expect.any(Number), output_tokens: expect.any(Number), cost_usd: expect.any(Number) },
      performance: { execution_time_ms: expect.any(Number) },
      stop_reason: 'completed',
      error: '',
    });
    expect(Object.keys(u.metadata).sort()).toEqual(['agents_used', 'complexity_score', 'execution_mode', 'model']);
    expect(Date.parse(u.timestamp)).toBeGreaterThan(0);
    expect(s.metadata.research).toMatchObject({ strategy: 'quick', rounds: 1, max_rounds: 1, pages_read: 2 });
    // What a client streamed is the result, renumbered: the synthesiser's raw text ([2, 42]) never went out as the answer.
    const { events } = await readSse(`${t.base}/api/v1/stream/sse?workflow_id=${id}`, { timeoutMs: 20_000 });
    const final = events
      .filter((e) => e.data.startsWith('{'))
      .map((e) => ({ type: e.event, ...JSON.parse(e.data) }))
      .filter((e) => e.payload?.final_answer === true);
    expect(new Set(final.map((e) => e.agent_id))).toEqual(new Set(['synthesizer']));
    expect(
      final
        .filter((e) => e.type === 'LLM_PARTIAL')
        .map((e) => e.payload.delta)
        .join(''),
    ).toBe(s.result);
    expect(final.filter((e) => e.type === 'LLM_OUTPUT').map((e) => e.message)).toEqual([s.result]);
    expect(events.some((e) => e.data.includes('42]'))).toBe(false);
    // The generic verifier did not run for a research task.
    expect(llm.requests.some((x) => system(x).startsWith('You verify answers'))).toBe(false);
  });

  it('never cites a search result it did not read: 5 results, 1 page read, a snippet’s number cited is removed', async () => {
    llm.reset();
    searchResults = [
      { title: 'JetStream overview', url: `${pages.origin}/jetstream`, content: 'JetStream stores messages.' },
      ...[1, 2, 3, 4].map((n) => ({ title: `Unread ${n}`, url: `${pages.origin}/unread-${n}`, content: 'Consumers are written in Rust.' })),
    ];
    let prompt = '';
    llm.setDefault((r) => {
      const sys = system(r);
      if (sys.startsWith('Break the research question')) return { type: 'completion', content: '["How does JetStream store messages?"]' };
      if (sys.startsWith('You are a research agent'))
        return (r.messages ?? []).some((m) => m.role === 'tool')
          ? { type: 'completion', content: 'JetStream stores messages in streams [1]; consumers are written in Rust [3].' }
          : { type: 'completion', content: '', toolCalls: [{ id: 'f1', name: 'web_fetch', arguments: JSON.stringify({ url: `${pages.origin}/jetstream` }) }] };
      if (sys.startsWith('You check research claims')) return { type: 'completion', content: '[]' };
      prompt = lastUser(r);
      return { type: 'completion', content: 'JetStream stores messages in streams [1]. Consumers are written in Rust [3]. Streams keep messages [1, 4].' };
    });
    try {
      const r = await fetch(`${t.base}/api/v1/tasks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          query: 'How does JetStream store messages?',
          research_strategy: 'standard',
          enable_verification: true,
          context: { iterative_research_enabled: false },
        }),
      });
      const { task_id: id } = await json(r);
      const s = await waitFor(async () => {
        const x = await json(await fetch(`${t.base}/api/v1/tasks/${id}`));
        return /COMPLETED|FAILED/.test(x.status) ? x : undefined;
      }, 30_000);
      expect(s.status, s.error).toBe('TASK_STATUS_COMPLETED');
      // Only the page read is numbered; the unread results are context without numbers.
      expect(numberOf(prompt, '/jetstream')).toBe(1);
      expect(prompt).toContain(`Unread 2 (${pages.origin}/unread-2)`);
      expect(prompt).not.toMatch(/\[\d+\][^\n]*\nURL: [^\n]*unread/);
      expect(s.result).toBe('JetStream stores messages in streams [1]. Consumers are written in Rust. Streams keep messages [1].');
      expect(s.metadata.citations.map((c: { url: string }) => c.url)).toEqual([`${pages.origin}/jetstream`]);
      expect(s.metadata.research).toMatchObject({ sources_found: 5, pages_read: 1 });
      // The claims are checked against the page read, never a snippet.
      expect(s.metadata.verification).toMatchObject({ total_claims: 2, supported_claims: 2 });
    } finally {
      searchResults = undefined;
    }
  });

  it('the console shows the cited answer with each [n] a link to its source, and the sources as links', async () => {
    expect(citedTask, 'the first test ran').toBeDefined();
    await buildConsole({ typecheck: false });
    const browser = await launchBrowser();
    try {
      const s = await json(await fetch(`${t.base}/api/v1/tasks/${citedTask}`));
      const urls = (s.metadata.citations as { url: string }[]).map((c) => c.url);
      await onPage(browser, 'citations', async (page) => {
        await page.goto(`${t.base}/#/tasks/${citedTask}`);
        const result = page.getByRole('region', { name: 'Result' });
        await result.getByRole('link', { name: '1', exact: true }).waitFor();
        // Every inline mark links to the source it stands for; the answer's text is unchanged.
        const marks = await result.getByRole('link').evaluateAll((els) => els.map((e) => [e.textContent, e.getAttribute('href')]));
        expect(marks).toEqual([
          ['1', urls[0]],
          ['2', urls[1]],
          ['2', urls[1]],
        ]);
        expect((await result.innerText()).replace(/\s+/g, ' ').trim()).toBe(s.result);
        const sources = page.getByTestId('citations').getByRole('link');
        expect(await sources.evaluateAll((els) => els.map((e) => [e.textContent, e.getAttribute('href'), e.getAttribute('rel')]))).toEqual([
          ['JetStream overview', urls[0], 'noopener noreferrer'],
          ['Consumers', urls[1], 'noopener noreferrer'],
        ]);
        await expectAccessible(page, 'a research task’s detail');
      });
    } finally {
      await browser.close();
    }
  }, 60_000);
});
