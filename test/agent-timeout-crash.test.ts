/**
 * AGENT_TIMEOUT_SECONDS across a crash: a worker process is killed (SIGKILL) while its agent
 * waits on a model call that never answers; the next worker takes the workflow over only after
 * the agent's deadline (counted from its first, journaled model call) has passed. It must not
 * give the agent a fresh full timeout: the task fails at once with the timeout error, and the
 * model is not called again.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { json, startTestApp, waitFor, type TestApp } from './helpers/app.js';
import { startOpenAiServer, type OpenAiTestServer } from './helpers/openai-server.js';
import { scriptedModelEnv, startServiceProcess, testBusEnv, type ServiceProcess } from './helpers/process.js';

const TIMEOUT_S = 4;
let t: TestApp;
let llm: OpenAiTestServer;
const procs: ServiceProcess[] = [];
/** When each model request arrived. */
const arrivals: number[] = [];

beforeAll(async () => {
  llm = await startOpenAiServer();
  llm.setDefault((req) => {
    arrivals.push(Date.now());
    const tools = (req.messages ?? []).filter((m) => m.role === 'tool').length;
    // Turn 1 asks for a quick tool (journaled with its start time); every later turn hangs.
    if (tools === 0) return { type: 'completion', content: '', toolCalls: [{ id: 'c1', name: 'file_list', arguments: '{}' }] };
    return { type: 'hang' };
  });
  t = await startTestApp({ ROLES: 'gateway,orchestrator,archiver', WORKER_ACK_WAIT_MS: '1500' });
});
afterAll(async () => {
  for (const p of procs) p.kill('SIGKILL');
  await t?.stop();
  await llm?.close();
});

async function worker(): Promise<ServiceProcess> {
  const p = await startServiceProcess({
    ROLES: 'worker',
    ...testBusEnv(t.natsUrl),
    ...scriptedModelEnv(llm.baseUrl),
    AGENT_TIMEOUT_SECONDS: String(TIMEOUT_S),
  });
  procs.push(p);
  return p;
}

it('a worker killed mid-agent: the next one continues the journaled deadline (already passed) instead of a fresh one', async () => {
  const w1 = await worker();
  const r = await fetch(`${t.base}/api/v1/tasks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: 'List my files, then think for a long time.', mode: 'standard' }),
  });
  const { task_id: id } = await json(r);
  // Turn 1 answered (journaled), turn 2 hangs: kill the worker there.
  await waitFor(async () => (arrivals.length === 2 ? true : undefined), 30_000, 20);
  w1.kill('SIGKILL');
  await w1.exited;
  // The workflow is down until the agent's whole time has passed.
  const deadline = arrivals[0]! + TIMEOUT_S * 1000;
  await sleep(Math.max(0, deadline - Date.now()) + 500);

  const w2 = await worker();
  const s = await waitFor(async () => {
    const x = await json(await fetch(`${t.base}/api/v1/tasks/${id}`));
    return /COMPLETED|FAILED|TIMEOUT|CANCELLED/.test(x.status) ? x : undefined;
  }, 60_000);
  expect(s.status).toBe('TASK_STATUS_FAILED');
  expect(s.error).toBe(`agent standard-agent timed out: its execution took longer than AGENT_TIMEOUT_SECONDS (${TIMEOUT_S} s)`);
  // No fresh timeout: the second worker made no model call (a fresh clock would have asked turn 2 again and waited).
  expect(arrivals).toHaveLength(2);
  w2.kill('SIGTERM');
  await w2.exited;
}, 120_000);
