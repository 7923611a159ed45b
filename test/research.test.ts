/**
 * The deep-research workflow (research_strategy, context.force_research): sub-questions
 * researched by tool-using agents, the coverage loop turning gaps into the next round's
 * questions, the cited report, fact extraction; and its submission checks.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, readSse, startTestApp, waitFor, type TestApp } from './helpers/app.js';
import { startOpenAiServer, type OpenAiTestServer, type RecordedRequest, scriptedProvider } from './helpers/openai-server.js';

let llm: OpenAiTestServer;
let t: TestApp;
let pages: Server;
let pageUrl = '';

beforeAll(async () => {
  llm = await startOpenAiServer();
  pages = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('JetStream stores messages in streams; consumers read them.');
  });
  await new Promise<void>((r) => pages.listen(0, '127.0.0.1', () => r()));
  pageUrl = `http://127.0.0.1:${(pages.address() as AddressInfo).port}/jetstream`;
  t = await startTestApp(
    { TOOLS_HTTP_ALLOW_HOSTS: '127.0.0.1/32', MAX_TOKENS_PER_REQUEST: '0', MAX_COST_PER_REQUEST: '0' },
    {
      llm: scriptedProvider(llm),
    },
  );
});
afterAll(async () => {
  await t?.stop();
  await llm?.close();
  await new Promise<void>((r) => pages.close(() => r()));
});

const system = (r: RecordedRequest) => String((r.messages ?? []).find((m) => m.role === 'system')?.content ?? '');
const post = (body: unknown) =>
  fetch(`${t.base}/api/v1/tasks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('research workflow', () => {
  it('plans sub-questions, researches them with tools, loops on coverage gaps, writes a cited report and extracts facts', async () => {
    llm.setDefault((r) => {
      const sys = system(r);
      const tools = (r.messages ?? []).filter((m) => m.role === 'tool').length;
      if (sys.startsWith('Break the research question'))
        return { type: 'completion', content: '["How does JetStream store messages?", "How do consumers work?"]' };
      if (sys.startsWith('You are a research agent')) {
        if (tools === 0) return { type: 'completion', content: '', toolCalls: [{ id: 'f1', name: 'web_fetch', arguments: JSON.stringify({ url: pageUrl }) }] };
        return { type: 'completion', content: `Streams hold messages (${pageUrl}).` };
      }
      if (sys.startsWith('You check research coverage')) {
        const round2 = JSON.stringify(r.messages).includes('What about retention?');
        return { type: 'completion', content: round2 ? '{"complete": true, "gaps": []}' : '{"complete": false, "gaps": ["What about retention?"]}' };
      }
      if (sys.startsWith('Extract the factual claims')) return { type: 'completion', content: `[{"fact": "Streams hold messages", "source": "${pageUrl}"}]` };
      return { type: 'completion', content: `Report: JetStream streams hold messages [1] (${pageUrl}).` };
    });
    const r = await post({ query: 'How does NATS JetStream work?', research_strategy: 'deep', context: { enable_fact_extraction: true } });
    expect(r.status).toBe(200);
    const { task_id: id } = await json(r);
    const s = await waitFor(async () => {
      const x = await json(await fetch(`${t.base}/api/v1/tasks/${id}`));
      return /COMPLETED|FAILED/.test(x.status) ? x : undefined;
    }, 30_000);
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
      facts: [{ fact: 'Streams hold messages', source: pageUrl }],
    });
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
          : { type: 'completion', content: 'answer' },
    );
    const { task_id: id } = await json(await post({ query: 'Quick look', context: { force_research: true, iterative_research_enabled: false } }));
    const s = await waitFor(async () => {
      const x = await json(await fetch(`${t.base}/api/v1/tasks/${id}`));
      return /COMPLETED|FAILED/.test(x.status) ? x : undefined;
    }, 30_000);
    expect(s.status, s.error).toBe('TASK_STATUS_COMPLETED');
    expect(s.metadata.research).toMatchObject({ strategy: 'standard', rounds: 1, max_rounds: 1, coverage: [] });
    expect(llm.requests.some((x) => system(x).startsWith('You check research coverage'))).toBe(false);
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
