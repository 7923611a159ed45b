/**
 * The deep-research workflow (research_strategy, context.force_research): a first search,
 * sub-questions researched by tool-using agents, the coverage loop turning gaps into the next
 * round's questions, the cited report; a missing or failing search backend and a task that
 * read nothing fail clearly; and its submission checks. Citations, verification and facts in
 * detail: research-citations.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, readSse, startTestApp, waitFor, type TestApp } from './helpers/app.js';
import { startOpenAiServer, type OpenAiTestServer, type RecordedRequest, type Reply, scriptedProvider } from './helpers/openai-server.js';
import { startServer, type TestServer } from './helpers/tools-web.js';

let llm: OpenAiTestServer;
let t: TestApp;
let pages: TestServer;
let search: TestServer;
let searchDown = false;
let pageUrl = '';
/** The URL the search backend returns (pageUrl unless a test points it elsewhere). */
let resultUrl = '';

beforeAll(async () => {
  llm = await startOpenAiServer();
  pages = await startServer((req, res) =>
    req.url === '/missing'
      ? res.writeHead(404).end()
      : res.writeHead(200, { 'content-type': 'text/plain' }).end('JetStream stores messages in streams; consumers read them.'),
  );
  pageUrl = `${pages.origin}/jetstream`;
  search = await startServer((_req, res) => {
    if (searchDown) return void res.writeHead(500).end('down');
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ results: [{ title: 'JetStream', url: resultUrl || pageUrl, content: 'JetStream stores messages.' }] }));
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
const post = (body: unknown, app = t) =>
  fetch(`${app.base}/api/v1/tasks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const finished = (id: string, app = t) =>
  waitFor(async () => {
    const x = await json(await fetch(`${app.base}/api/v1/tasks/${id}`));
    return /COMPLETED|FAILED/.test(x.status) ? x : undefined;
  }, 30_000);
/** A research agent that fetches the page once, then answers from it. */
const readsThePage = (r: RecordedRequest): Reply =>
  (r.messages ?? []).some((m) => m.role === 'tool')
    ? { type: 'completion', content: `Streams hold messages (${pageUrl}).` }
    : { type: 'completion', content: '', toolCalls: [{ id: 'f1', name: 'web_fetch', arguments: JSON.stringify({ url: pageUrl }) }] };

describe('research workflow', () => {
  it('plans sub-questions, researches them with tools, loops on coverage gaps, writes a cited report and extracts facts', async () => {
    llm.setDefault((r) => {
      const sys = system(r);
      if (sys.startsWith('Break the research question'))
        return { type: 'completion', content: '["How does JetStream store messages?", "How do consumers work?"]' };
      if (sys.startsWith('You are a research agent')) return readsThePage(r);
      if (sys.startsWith('You check research coverage')) {
        const round2 = JSON.stringify(r.messages).includes('What about retention?');
        return { type: 'completion', content: round2 ? '{"complete": true, "gaps": []}' : '{"complete": false, "gaps": ["What about retention?"]}' };
      }
      if (sys.startsWith('Extract the facts')) return { type: 'completion', content: '[{"statement": "Streams hold messages", "source_citation": [1]}]' };
      return { type: 'completion', content: `Report: JetStream streams hold messages [1] (${pageUrl}).` };
    });
    const r = await post({ query: 'How does NATS JetStream work?', research_strategy: 'deep', context: { enable_fact_extraction: true } });
    expect(r.status).toBe(200);
    const { task_id: id } = await json(r);
    const s = await finished(id);
    expect(s.status, s.error).toBe('TASK_STATUS_COMPLETED');
    expect(s.mode).toBe('EXECUTION_MODE_COMPLEX');
    expect(s.result).toBe(`Report: JetStream streams hold messages [1] (${pageUrl}).`);
    expect(s.metadata.research).toMatchObject({
      strategy: 'deep',
      rounds: 2,
      max_rounds: 3,
      questions: [
        { round: 1, question: 'How does JetStream store messages?' },
        { round: 1, question: 'How do consumers work?' },
        { round: 2, question: 'What about retention?' },
      ],
      coverage: [
        { round: 1, complete: false, gaps: ['What about retention?'] },
        { round: 2, complete: true, gaps: [] },
      ],
      pages_read: 1,
    });
    expect(s.metadata.citations).toEqual([{ url: pageUrl, title: 'JetStream', source: '127.0.0.1', credibility_score: 0.2, quality_score: 0.61 }]);
    expect(s.metadata.extracted_facts).toMatchObject([{ statement: 'Streams hold messages', source_citation: [1] }]);
    expect(s.metadata.agents_used).toBe(3);
    // The researchers were offered the research tools only, and fetched the page.
    const researcher = llm.requests.find((x) => system(x).startsWith('You are a research agent'))!;
    expect(((researcher.body.tools ?? []) as { function: { name: string } }[]).map((x) => x.function.name).sort()).toEqual([
      'web_crawl',
      'web_fetch',
      'web_search',
      'web_subpage_fetch',
    ]);
    const { events } = await readSse(`${t.base}/api/v1/stream/sse?workflow_id=${id}`, { timeoutMs: 20_000 });
    const obs = events.filter((e) => e.event === 'TOOL_OBSERVATION').map((e) => JSON.parse(e.data).payload);
    expect(obs).toHaveLength(3);
    expect(obs.every((o) => o.success && o.output.includes('JetStream stores messages'))).toBe(true);
    // The report's request carried every finding.
    const synth = llm.requests.find((x) => JSON.stringify(x.messages).includes('Write a research report'))!;
    expect(JSON.stringify(synth.messages)).toContain('What about retention?');
  });

  it('iterative_research_enabled=false runs one round; force_research selects the workflow (standard strategy)', async () => {
    llm.reset();
    llm.setDefault((r) =>
      system(r).startsWith('Break the research question')
        ? { type: 'completion', content: '["Only question"]' }
        : system(r).startsWith('You check research coverage')
          ? { type: 'completion', content: '{"complete": false, "gaps": ["never asked"]}' }
          : system(r).startsWith('You are a research agent')
            ? readsThePage(r)
            : { type: 'completion', content: 'answer' },
    );
    const { task_id: id } = await json(await post({ query: 'Quick look', context: { force_research: true, iterative_research_enabled: false } }));
    const s = await finished(id);
    expect(s.status, s.error).toBe('TASK_STATUS_COMPLETED');
    // The report cited nothing: no citations, and no verification or facts were asked for.
    expect(s.metadata.citations).toEqual([]);
    expect(s.metadata).not.toHaveProperty('verification');
    expect(s.metadata).not.toHaveProperty('extracted_facts');
    expect(s.metadata.unified_response).toMatchObject({ task_id: id, status: 'TASK_STATUS_COMPLETED', result: 'answer' });
    expect(s.metadata.research).toMatchObject({ strategy: 'standard', rounds: 1, max_rounds: 1, coverage: [] });
    expect(llm.requests.some((x) => system(x).startsWith('You check research coverage'))).toBe(false);
  });

  it('a failing search backend fails the task at once, saying so; agents that read nothing get the search results read for them, or a failure', async () => {
    llm.reset();
    searchDown = true;
    try {
      const { task_id: id } = await json(await post({ query: 'Anything', research_strategy: 'quick' }));
      const s = await finished(id);
      expect(s.status).toBe('TASK_STATUS_FAILED');
      expect(s.error).toBe('research could not search the web: the search backend failed: searxng search failed: HTTP 500 Internal Server Error');
      expect(llm.requests).toHaveLength(0);
    } finally {
      searchDown = false;
    }
    // Researchers that only answer, reading nothing: the workflow reads the search results itself.
    llm.setDefault((r) =>
      system(r).startsWith('Break the research question')
        ? { type: 'completion', content: '["Q"]' }
        : JSON.stringify(r.messages).includes('Write a research report')
          ? { type: 'completion', content: 'Streams hold messages [1].' }
          : { type: 'completion', content: 'I know this already.' },
    );
    const lazy = await finished((await json(await post({ query: 'Anything', research_strategy: 'quick' }))).task_id);
    expect(lazy.status, lazy.error).toBe('TASK_STATUS_COMPLETED');
    expect(lazy.result).toBe('Streams hold messages [1].');
    expect(lazy.metadata.citations.map((c: { url: string }) => c.url)).toEqual([pageUrl]);
    // ...and when none of them can be read, there is nothing to cite: no report.
    llm.reset();
    llm.setDefault((r) =>
      system(r).startsWith('Break the research question') ? { type: 'completion', content: '["Q"]' } : { type: 'completion', content: 'I know this already.' },
    );
    resultUrl = `${pages.origin}/missing`;
    try {
      const s = await finished((await json(await post({ query: 'Anything', research_strategy: 'quick' }))).task_id);
      expect(s.status).toBe('TASK_STATUS_FAILED');
      expect(s.error).toBe('research read no web page: none of the 1 search results was fetched, so there is nothing to cite');
      expect(llm.requests.some((x) => JSON.stringify(x.messages).includes('Write a research report'))).toBe(false);
    } finally {
      resultUrl = '';
    }
  });

  it('without a search backend the task fails at once, naming the setting', async () => {
    llm.reset();
    const bare = await startTestApp({ MAX_TOKENS_PER_REQUEST: '0', MAX_COST_PER_REQUEST: '0' }, { llm: scriptedProvider(llm) });
    try {
      const { task_id: id } = await json(await post({ query: 'Anything', context: { force_research: true } }, bare));
      const s = await finished(id, bare);
      expect(s.status).toBe('TASK_STATUS_FAILED');
      expect(s.error).toBe(
        'research needs a web search backend: web search is not configured: set WEB_SEARCH_PROVIDER to one of searxng, brave, tavily, serper',
      );
      expect(llm.requests).toHaveLength(0);
    } finally {
      await bare.stop();
    }
  });

  it('refuses bad research settings with 400', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ context: { research_strategy: 'bogus' } }, 'research_strategy must be one of: quick, standard, deep, academic'],
      [{ research_strategy: 'quick', context: { iterative_max_iterations: 9 } }, 'context.iterative_max_iterations must be an integer from 1 to 5'],
      [
        { context: { enable_fact_extraction: true } },
        'context.enable_fact_extraction applies to the research workflow: set research_strategy or context.force_research',
      ],
      [{ context: { force_research: 'yes' } }, 'context.force_research must be a boolean'],
      [{ research_strategy: 'quick', context: { template: 'release-notes' } }, 'the research workflow cannot be combined with a template or a skill'],
    ];
    for (const [fields, msg] of cases) {
      const r = await post({ query: 'x', ...fields });
      expect(r.status, JSON.stringify(fields)).toBe(400);
      expect((await json(r)).error).toBe(msg);
    }
  });
});
