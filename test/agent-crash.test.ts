/**
 * The crash test of the agent loop: a worker process is killed (SIGKILL) in the middle of a
 * tool loop; another worker finishes the task. No model call whose result was journaled is
 * paid for again and no recorded tool call runs again; a cut-off call of a tool that is safe
 * to retry (web_fetch) runs again, one that is not (python_executor) is not run again and
 * the model is told it was interrupted.
 *
 * The model is a local OpenAI-compatible server (real openai SDK in the workers) whose answer
 * depends only on the conversation so far, so both workers see the same script:
 *   turn 1 → web_fetch /fast, turn 2 → web_fetch /slow (held until the kill),
 *   turn 3 → python_executor sleeping 60 s (the second kill lands here), turn 4 → the answer.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { json, readSse, startTestApp, waitFor, type TestApp } from './helpers/app.js';
import { startOpenAiServer, type OpenAiTestServer } from './helpers/openai-server.js';
import { scriptedModelEnv, startServiceProcess, testBusEnv, type ServiceProcess } from './helpers/process.js';

let t: TestApp;
let llm: OpenAiTestServer;
let pages: Server;
let pagesBase = '';
const hits: Record<string, number> = {};
const procs: ServiceProcess[] = [];
/** Requests to /slow wait here until released. */
let releaseSlow: (() => void)[] = [];

beforeAll(async () => {
  llm = await startOpenAiServer();
  pages = createServer((req, res) => {
    const path = req.url ?? '/';
    hits[path] = (hits[path] ?? 0) + 1;
    const send = () => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`content of ${path}`);
    };
    if (path === '/slow' && hits[path] === 1) releaseSlow.push(send);
    else send();
  });
  await new Promise<void>((r) => pages.listen(0, '127.0.0.1', () => r()));
  pagesBase = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
  llm.setDefault((req) => {
    const tools = (req.messages ?? []).filter((m) => m.role === 'tool').length;
    if (tools === 0)
      return {
        type: 'completion',
        content: 'First the fast page.',
        toolCalls: [{ id: 'c1', name: 'web_fetch', arguments: JSON.stringify({ url: `${pagesBase}/fast` }) }],
      };
    if (tools === 1)
      return {
        type: 'completion',
        content: 'Now the slow page.',
        toolCalls: [{ id: 'c2', name: 'web_fetch', arguments: JSON.stringify({ url: `${pagesBase}/slow` }) }],
      };
    if (tools === 2)
      return {
        type: 'completion',
        content: 'Now some Python.',
        toolCalls: [{ id: 'c3', name: 'python_executor', arguments: JSON.stringify({ code: 'import time\ntime.sleep(60)' }) }],
      };
    return { type: 'completion', content: 'All done.' };
  });
  t = await startTestApp({ ROLES: 'gateway,orchestrator,archiver', WORKER_ACK_WAIT_MS: '1500' });
});
afterAll(async () => {
  for (const p of procs) p.kill('SIGKILL');
  releaseSlow.forEach((f) => f());
  await t?.stop();
  await llm?.close();
  await new Promise<void>((r) => pages.close(() => r()));
});

async function worker(): Promise<ServiceProcess> {
  const p = await startServiceProcess({
    ROLES: 'worker',
    ...testBusEnv(t.natsUrl),
    ...scriptedModelEnv(llm.baseUrl),
    TOOLS_HTTP_ALLOW_HOSTS: '127.0.0.1/32',
    PYTHON_EXECUTOR_TIMEOUT_MS: '90000',
  });
  procs.push(p);
  return p;
}

it('a worker killed mid tool loop: the next one pays for no recorded model call and reruns only what may be rerun', async () => {
  const w1 = await worker();
  const r = await fetch(`${t.base}/api/v1/tasks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: 'Fetch two pages, then run some Python.', mode: 'standard', context: { role: 'generalist' } }),
  });
  const { task_id: id } = await json(r);
  // Kill 1: while the slow page is being fetched (turns 1-2 and the /fast fetch are journaled).
  await waitFor(async () => (releaseSlow.length ? true : undefined), 30_000, 20);
  w1.kill('SIGKILL');
  await w1.exited;
  releaseSlow.forEach((f) => f());
  releaseSlow = [];
  expect(llm.requests).toHaveLength(2);

  // Kill 2: the second worker reruns the cut-off fetch (safe to retry), pays for turn 3 and
  // starts the Python call; it is killed while Python sleeps.
  const w2 = await worker();
  await waitFor(async () => (llm.requests.length === 3 ? true : undefined), 30_000, 20);
  await waitFor(async () => {
    const { events } = await readSse(`${t.base}/api/v1/stream/sse?workflow_id=${id}`, {
      timeoutMs: 2000,
      until: (e) => e.event === 'TOOL_INVOKED' && e.data.includes('python_executor'),
    });
    return events.some((e) => e.event === 'TOOL_INVOKED' && e.data.includes('python_executor')) ? true : undefined;
  }, 30_000);
  w2.kill('SIGKILL');
  await w2.exited;

  const w3 = await worker();
  const s = await waitFor(async () => {
    const x = await json(await fetch(`${t.base}/api/v1/tasks/${id}`));
    return /COMPLETED|FAILED/.test(x.status) ? x : undefined;
  }, 60_000);
  expect(s.status, JSON.stringify(s)).toBe('TASK_STATUS_COMPLETED');
  expect(s.result).toBe('All done.');

  // Four model calls in all: none journaled was made again.
  expect(llm.requests).toHaveLength(4);
  // /fast (recorded) fetched once; /slow cut off and fetched again (web_fetch is safe to retry).
  expect(hits['/fast']).toBe(1);
  expect(hits['/slow']).toBe(2);
  // Python was cut off and not run again: the model was told.
  const lastTool = (llm.requests[3]!.messages as { role: string; content: string; tool_call_id?: string }[]).filter((m) => m.role === 'tool').at(-1)!;
  expect(lastTool.tool_call_id).toBe('c3');
  expect(lastTool.content).toMatch(/interrupted/);
  const { events } = await readSse(`${t.base}/api/v1/stream/sse?workflow_id=${id}`, { timeoutMs: 30_000 });
  const evs = events.filter((e) => e.event !== 'done').map((e) => JSON.parse(e.data) as { seq: number; type: string; payload?: any });
  expect(evs.map((e) => e.seq)).toEqual(evs.map((_, i) => i + 1));
  const obs = evs.filter((e) => e.type === 'TOOL_OBSERVATION');
  expect(obs.map((e) => [e.payload.call_id, e.payload.success])).toEqual([
    ['c1', true],
    ['c2', true],
    ['c3', false],
  ]);
  expect(obs[2]!.payload.interrupted).toBe(true);
  expect(evs.filter((e) => e.type === 'ERROR_RECOVERY').length).toBeGreaterThanOrEqual(2);
  w3.kill('SIGTERM');
  await w3.exited;
}, 180_000);
