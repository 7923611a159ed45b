/**
 * What a research task read survives a crash: a worker is killed (SIGKILL) while a research
 * agent reads its second page; the next worker reads the sources already read back from the
 * journal (no search and no recorded page read again), and the report cites both pages.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { json, startTestApp, waitFor, type TestApp } from './helpers/app.js';
import { startOpenAiServer, type OpenAiTestServer, type RecordedRequest } from './helpers/openai-server.js';
import { scriptedModelEnv, startServiceProcess, testBusEnv, type ServiceProcess } from './helpers/process.js';
import { startServer, type TestServer } from './helpers/tools-web.js';

let t: TestApp;
let llm: OpenAiTestServer;
let pages: TestServer;
let search: TestServer;
const hits: Record<string, number> = {};
const procs: ServiceProcess[] = [];
/** The first read of /slow waits here until released. */
let releaseSlow: (() => void)[] = [];

const system = (r: RecordedRequest) => String((r.messages ?? []).find((m) => m.role === 'system')?.content ?? '');
const numberOf = (prompt: string, path: string) => Number(new RegExp(`\\[(\\d+)\\][^\\n]*\\nURL: [^\\n]*${path}`).exec(prompt)?.[1] ?? 0);

beforeAll(async () => {
  llm = await startOpenAiServer();
  pages = await startServer((req, res) => {
    const path = req.url ?? '/';
    hits[path] = (hits[path] ?? 0) + 1;
    const send = () => res.writeHead(200, { 'content-type': 'text/plain' }).end(`The page ${path} says that streams keep messages.`);
    if (path === '/slow' && hits[path] === 1) releaseSlow.push(send);
    else send();
  });
  search = await startServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ results: [{ title: 'A', url: `${pages.origin}/a`, content: 'a' }] })),
  );
  llm.setDefault((r) => {
    const sys = system(r);
    const tools = (r.messages ?? []).filter((m) => m.role === 'tool').length;
    if (sys.startsWith('Break the research question')) return { type: 'completion', content: '["Where are messages kept?"]' };
    if (sys.startsWith('You are a research agent')) {
      const read = (id: string, path: string) => ({
        type: 'completion' as const,
        content: '',
        toolCalls: [{ id, name: 'web_fetch', arguments: JSON.stringify({ url: `${pages.origin}${path}` }) }],
      });
      if (tools === 0) return read('c1', '/a');
      if (tools === 1) return read('c2', '/slow');
      return { type: 'completion', content: 'Both pages say streams keep messages.' };
    }
    const prompt = String((r.messages ?? []).at(-1)?.content ?? '');
    return { type: 'completion', content: `Streams keep messages [${numberOf(prompt, '/slow')}]. The page /a says so too [${numberOf(prompt, '/a')}].` };
  });
  t = await startTestApp({ ROLES: 'gateway,orchestrator,archiver', WORKER_ACK_WAIT_MS: '1500' });
});
afterAll(async () => {
  for (const p of procs) p.kill('SIGKILL');
  releaseSlow.forEach((f) => f());
  await t?.stop();
  await llm?.close();
});

async function worker(): Promise<ServiceProcess> {
  const p = await startServiceProcess({
    ROLES: 'worker',
    ...testBusEnv(t.natsUrl),
    ...scriptedModelEnv(llm.baseUrl),
    TOOLS_HTTP_ALLOW_HOSTS: '127.0.0.1/32',
    WEB_SEARCH_PROVIDER: 'searxng',
    SEARXNG_URL: search.origin,
  });
  procs.push(p);
  return p;
}

it('a worker killed mid-research: the next one cites what the first read, reading nothing recorded again', async () => {
  const w1 = await worker();
  const r = await fetch(`${t.base}/api/v1/tasks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: 'Where does JetStream keep messages?', research_strategy: 'quick' }),
  });
  const { task_id: id } = await json(r);
  await waitFor(async () => (releaseSlow.length ? true : undefined), 30_000, 20);
  w1.kill('SIGKILL');
  await w1.exited;
  releaseSlow.forEach((f) => f());
  releaseSlow = [];

  const w2 = await worker();
  const s = await waitFor(async () => {
    const x = await json(await fetch(`${t.base}/api/v1/tasks/${id}`));
    return /COMPLETED|FAILED/.test(x.status) ? x : undefined;
  }, 60_000);
  expect(s.status, JSON.stringify(s)).toBe('TASK_STATUS_COMPLETED');
  expect(s.result).toBe('Streams keep messages [1]. The page /a says so too [2].');
  expect(s.metadata.citations.map((c: { url: string }) => new URL(c.url).pathname)).toEqual(['/slow', '/a']);
  // The first search and the read of /a were journaled: neither ran again; /slow was cut off and read again.
  expect(search.requests).toHaveLength(1);
  expect(hits['/a']).toBe(1);
  expect(hits['/slow']).toBe(2);
  w2.kill('SIGTERM');
  await w2.exited;
}, 180_000);
