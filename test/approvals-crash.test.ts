/**
 * Approvals across crashes, with every role in child processes: a worker killed (SIGKILL)
 * while its task waits for an approval, the decision made while no worker runs, then a new
 * worker: the task completes once, its tool runs once, and its event seqs have no gap. And
 * every process killed while an approval's timer is pending: nothing decides it while all
 * are down, and once they are back the timeout lands once (the task fails with
 * `approval rejected: timeout`).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { TEST_RPC_TOKEN, archivedEvents, json, startTestApp, waitFor, type TestApp } from './helpers/app.js';
import { startOpenAiServer, type OpenAiTestServer } from './helpers/openai-server.js';
import { gatewayBase, scriptedModelEnv, startServiceProcess, testBusEnv, type ServiceProcess } from './helpers/process.js';

let t: TestApp;
let llm: OpenAiTestServer;
let features: string;
const procs: ServiceProcess[] = [];

beforeAll(async () => {
  llm = await startOpenAiServer();
  llm.setDefault((r) => {
    const told = (r.messages ?? []).some((m) => m.role === 'tool');
    if (told) return { type: 'completion', content: 'The answer is 5.' };
    const asked = String((r.messages ?? []).filter((m) => m.role === 'user').at(-1)?.content ?? '');
    if (asked.includes('2+3')) return { type: 'completion', content: '', toolCalls: [{ id: 'call-1', name: 'calculator', arguments: '{"expression":"2+3"}' }] };
    return { type: 'completion', content: `echo: ${asked}` };
  });
  const dir = mkdtempSync(join(tmpdir(), 'approvals-crash-'));
  features = join(dir, 'features.yaml');
  writeFileSync(features, 'approvals:\n  tools: [calculator]\n');
  // In this process: NATS, the database and the archiver only; the gateway, the
  // orchestrator (and its wait timers) and the workers run as child processes.
  t = await startTestApp({ ROLES: 'archiver' });
});
afterAll(async () => {
  for (const p of procs) p.kill('SIGKILL');
  await t?.stop();
  await llm?.close();
});

async function service(roles: string, timeoutSeconds: number): Promise<ServiceProcess> {
  const p = await startServiceProcess({
    ROLES: roles,
    ...testBusEnv(t.natsUrl),
    ...scriptedModelEnv(llm.baseUrl),
    INTERNAL_RPC_TOKEN: TEST_RPC_TOKEN,
    GATEWAY_HOST: '127.0.0.1',
    GATEWAY_PORT: '0',
    GRPC_HOST: '127.0.0.1',
    ORCHESTRATOR_GRPC_PORT: '0',
    CONFIG_PATH: features,
    APPROVAL_TIMEOUT_SECONDS: String(timeoutSeconds),
  });
  procs.push(p);
  return p;
}

async function kill9(...ps: ServiceProcess[]): Promise<void> {
  for (const p of ps) p.kill('SIGKILL');
  await Promise.all(ps.map((p) => p.exited));
}

async function submit(base: string, body: Record<string, unknown>): Promise<string> {
  const r = await fetch(`${base}/api/v1/tasks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const b = await json(r);
  expect(r.status, JSON.stringify(b)).toBe(200);
  return b.task_id;
}

const taskStatus = async (id: string) => (await t.app.store.getTask(id))?.status;

/** The task's pending approval once it waits (PAUSED). */
async function pendingOf(base: string, id: string): Promise<{ approval_id: string }> {
  return waitFor(async () => {
    const b = await json(await fetch(`${base}/api/v1/approvals?status=pending`));
    const a = (b.approvals as { approval_id: string; workflow_id: string }[]).find((x) => x.workflow_id === id);
    return a && (await taskStatus(id)) === 'TASK_STATUS_PAUSED' ? a : undefined;
  }, 60_000);
}

const count = (evs: { type: string }[], type: string) => evs.filter((e) => e.type === type).length;

it('a worker killed while its task waits; decided while no worker runs; the next worker completes it once', async () => {
  const front = await service('gateway,orchestrator', 600);
  const base = await gatewayBase(front);
  const w1 = await service('worker', 600);
  const id = await submit(base, { query: 'What is 2+3?', mode: 'standard' });
  const a = await pendingOf(base, id);
  await kill9(w1);

  // No worker runs: the decision is stored, the task stays PAUSED.
  const r = await fetch(`${base}/api/v1/approvals/decision`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ approval_id: a.approval_id, workflow_id: id, approved: true }),
  });
  expect(await json(r)).toEqual({ success: true, approval_id: a.approval_id, workflow_id: id, status: 'approved' });
  await sleep(1500);
  expect(await taskStatus(id)).toBe('TASK_STATUS_PAUSED');
  const [w] = await t.app.store.sql`SELECT status, consumed_at FROM task_waits WHERE id = ${a.approval_id}`;
  expect(w).toMatchObject({ status: 'decided', consumed_at: null });

  const w2 = await service('worker', 600);
  await waitFor(async () => (await taskStatus(id)) === 'TASK_STATUS_COMPLETED', 60_000);
  const row = await t.app.store.getTask(id);
  expect(row?.result).toBe('The answer is 5.');
  const evs = await archivedEvents(base, id);
  expect(evs.map((e) => e.seq)).toEqual(evs.map((_, i) => i + 1));
  for (const type of ['APPROVAL_REQUESTED', 'APPROVAL_DECISION', 'TOOL_OBSERVATION', 'WORKFLOW_COMPLETED', 'STREAM_END'])
    expect(count(evs, type), type).toBe(1);
  const [{ n }] = await t.app.store.sql`SELECT count(*)::int AS n FROM tool_calls WHERE task_id = ${id}::uuid AND tool = 'calculator'`;
  expect(n).toBe(1);
  await kill9(w2, front);
}, 240_000);

it('every process restarted while an approval timer is pending: the timeout lands once', async () => {
  const timeout = 4;
  let front = await service('gateway,orchestrator', timeout);
  let base = await gatewayBase(front);
  let worker = await service('worker', timeout);
  const id = await submit(base, { query: 'nobody will answer', mode: 'simple', context: { require_approval: true } });
  const a = await pendingOf(base, id);
  await kill9(worker, front);

  // Past the timer with nothing running: nothing decides it.
  const [open] = await t.app.store.sql`SELECT due_at FROM task_waits WHERE id = ${a.approval_id}`;
  await sleep(Math.max(0, new Date(open.due_at).getTime() - Date.now()) + 1000);
  const [still] = await t.app.store.sql`SELECT status FROM task_waits WHERE id = ${a.approval_id}`;
  expect(still.status).toBe('pending');

  front = await service('gateway,orchestrator', timeout);
  base = await gatewayBase(front);
  worker = await service('worker', timeout);
  await waitFor(async () => (await taskStatus(id)) === 'TASK_STATUS_FAILED', 60_000);
  expect((await t.app.store.getTask(id))?.error).toBe('approval rejected: timeout');
  const evs = (await archivedEvents(base, id)) as { seq: number; type: string; payload?: Record<string, unknown> }[];
  expect(evs.map((e) => e.seq)).toEqual(evs.map((_, i) => i + 1));
  expect(count(evs, 'APPROVAL_REQUESTED')).toBe(1);
  expect(evs.filter((e) => e.type === 'APPROVAL_DECISION').map((e) => e.payload)).toEqual([
    { approval_id: a.approval_id, approved: false, feedback: '', approved_by: 'timeout', reason: 'timeout' },
  ]);
  expect(count(evs, 'STREAM_END')).toBe(1);
  expect(llm.requests.filter((r) => JSON.stringify(r.messages).includes('nobody will answer'))).toHaveLength(0);
  const [w] = await t.app.store.sql`SELECT status, decided_by, timed_out FROM task_waits WHERE id = ${a.approval_id}`;
  expect(w).toMatchObject({ status: 'decided', decided_by: 'timeout', timed_out: true });
  await kill9(worker, front);
}, 240_000);
