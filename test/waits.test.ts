/**
 * The durable wait (runtime/wait.ts, tasks/waits.ts) under a workflow written in the test: a
 * waiting workflow holds no worker slot, no lease and no in-progress message; its decision,
 * stored first, wakes it on any worker (also one started after the decision); a second
 * decision acts on nothing; the durable timer decides a wait nobody answered; a cancel ends a
 * waiting task at once; the time waited does not count against the task's time limit.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSUMERS, STREAMS, kvKeys } from '../src/bus/index.js';
import { createLogger } from '../src/kernel/index.js';
import { Worker, waitFor, type WorkflowRunner } from '../src/runtime/index.js';
import { WaitStore, type TaskOutcome } from '../src/tasks/index.js';
import { archivedEvents, json, startTestApp, waitFor as until, type TestApp } from './helpers/app.js';

let t: TestApp;
let waits: WaitStore;
const workers: Worker[] = [];
/** How many times each task's code after the wait ran (it must be once). */
const resumedRuns = new Map<string, number>();

/** A workflow of two steps around one wait; the query says how long the wait lasts (ms). */
const runner: WorkflowRunner = async (ctx, task): Promise<TaskOutcome> => {
  await ctx.step('before', async () => {
    ctx.emit('PROGRESS', 'test', 'before the wait');
    return true;
  });
  const d = await waitFor<{ answer?: string; timed_out?: boolean }>(ctx, {
    key: 'gate',
    kind: 'test',
    timeoutMs: Number(/wait (\d+)/.exec(task.query)?.[1] ?? 60_000),
    request: { question: task.query },
    owner: { userId: task.user_id, tenantId: task.tenant_id, sessionId: task.session_id },
    onOpen: (row) => ctx.emit('WAITING', 'test', 'waiting for a person', { wait_id: row.id }),
    onDecided: (x) => ctx.emit('PROGRESS', 'test', 'decided', { decision: x.decision, timed_out: x.timedOut }),
  });
  resumedRuns.set(task.task_id, (resumedRuns.get(task.task_id) ?? 0) + 1);
  await ctx.step('after', async () => {
    ctx.emit('PROGRESS', 'test', 'after the wait');
    return true;
  });
  return { status: 'TASK_STATUS_COMPLETED', result: d.timedOut ? 'timed out' : (d.decision.answer ?? '') };
};

function startWorker(o: { taskTimeoutSeconds?: number } = {}): Promise<Worker> {
  const w = new Worker(
    t.app.bus,
    t.app.store,
    runner,
    { concurrency: 8, ackWaitMs: 1500, maxDeliver: 5, taskTimeoutSeconds: o.taskTimeoutSeconds ?? 600, waits },
    createLogger({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
  );
  workers.push(w);
  return w.start().then(() => w);
}

beforeAll(async () => {
  // No worker role: the workers of this file run the test's workflow.
  t = await startTestApp({ ROLES: 'gateway,orchestrator,archiver' });
  waits = new WaitStore(t.app.store.sql, t.app.store, t.app.bus);
});
afterAll(async () => {
  for (const w of workers) await w.stop();
  await t?.stop();
});

async function submit(query: string): Promise<string> {
  const res = await fetch(`${t.base}/api/v1/tasks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, mode: 'simple' }),
  });
  expect(res.status).toBe(200);
  return ((await json(res)) as { task_id: string }).task_id;
}

const status = async (id: string) => (await t.app.store.getTask(id))?.status;
const untilStatus = (id: string, s: string, ms = 15_000) => until(async () => (await status(id)) === s, ms);
const pendingWait = (id: string) => until(async () => (await waits.byKey(id, 'gate'))?.status === 'pending' && (await status(id)) === 'TASK_STATUS_PAUSED');

async function seqsOf(id: string): Promise<{ seq: number; type: string; message: string }[]> {
  return (await archivedEvents(t.base, id, 20_000)) as { seq: number; type: string; message: string }[];
}

describe('durable wait', () => {
  it('passivates: the waiting task holds no slot, no lease, no in-progress message; a decision resumes it once', async () => {
    const w = await startWorker();
    const id = await submit('approve me');
    await pendingWait(id);
    await until(async () => w.inFlight === 0);
    expect((await t.app.bus.kv.leases.get(kvKeys.lease(id)))?.operation ?? 'none').not.toBe('PUT');
    const ci = await t.app.bus.jsm.consumers.info(STREAMS.tasks, CONSUMERS.workers);
    expect(ci.num_ack_pending).toBe(0);
    const row = (await waits.byKey(id, 'gate'))!;
    const first = await waits.decide(row.id, { answer: 'yes' }, { by: 'tester' });
    expect(first.changed).toBe(true);
    const second = await waits.decide(row.id, { answer: 'no' }, { by: 'someone else' });
    expect(second.changed).toBe(false);
    await untilStatus(id, 'TASK_STATUS_COMPLETED');
    expect((await t.app.store.getTask(id))?.result).toBe('yes');
    expect(resumedRuns.get(id)).toBe(1);
    const evs = await seqsOf(id);
    expect(evs.map((e) => e.seq)).toEqual(evs.map((_, i) => i + 1));
    expect(evs.filter((e) => e.type === 'WAITING')).toHaveLength(1);
    expect(evs.filter((e) => e.message === 'decided')).toHaveLength(1);
    expect(evs.filter((e) => e.type === 'ERROR_RECOVERY')).toHaveLength(0);
    const done = (await waits.byKey(id, 'gate'))!;
    expect(done.decided_by).toBe('tester');
    expect(done.consumed_at).not.toBeNull();
  });

  it('a decision made while no worker runs is not lost: a worker started later resumes the task', async () => {
    for (const w of workers.splice(0)) await w.stop();
    await startWorker();
    const id = await submit('decide while nobody works');
    await pendingWait(id);
    for (const w of workers.splice(0)) await w.stop();
    const row = (await waits.byKey(id, 'gate'))!;
    expect((await waits.decide(row.id, { answer: 'late' })).changed).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    expect(await status(id)).toBe('TASK_STATUS_PAUSED');
    await startWorker();
    await untilStatus(id, 'TASK_STATUS_COMPLETED');
    expect((await t.app.store.getTask(id))?.result).toBe('late');
    expect(resumedRuns.get(id)).toBe(1);
  });

  it('the durable timer decides a wait nobody answered', async () => {
    const id = await submit('wait 300 ms');
    await pendingWait(id);
    await until(async () => (await t.app.waitTimers!.runOnce()).timedOut > 0 || (await waits.byKey(id, 'gate'))?.status === 'decided', 10_000, 100);
    await untilStatus(id, 'TASK_STATUS_COMPLETED');
    expect((await t.app.store.getTask(id))?.result).toBe('timed out');
    const row = (await waits.byKey(id, 'gate'))!;
    expect(row.timed_out).toBe(true);
    expect(row.decided_by).toBe('timeout');
  });

  it('a decided wait whose wake was lost is woken again by the timers', async () => {
    for (const w of workers.splice(0)) await w.stop();
    await startWorker();
    const id = await submit('lost wake');
    await pendingWait(id);
    const row = (await waits.byKey(id, 'gate'))!;
    // The decision is stored but its wake never published (a crash between the two).
    await t.app.store
      .sql`UPDATE task_waits SET status = 'decided', decision = ${t.app.store.sql.json({ answer: 'found' })}, decided_at = now() - interval '1 minute' WHERE id = ${row.id}`;
    await new Promise((r) => setTimeout(r, 200));
    expect(await status(id)).toBe('TASK_STATUS_PAUSED');
    // The orchestrator's own timer pass (once a second) may get there first; either pass wakes it.
    await t.app.waitTimers!.runOnce();
    await untilStatus(id, 'TASK_STATUS_COMPLETED');
    expect((await t.app.store.getTask(id))?.result).toBe('found');
  });

  it('cancel ends a waiting task at once, and its wait can no longer be decided', async () => {
    const id = await submit('cancel me while waiting');
    await pendingWait(id);
    const started = Date.now();
    const res = await fetch(`${t.base}/api/v1/tasks/${id}/cancel`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(200);
    await untilStatus(id, 'TASK_STATUS_CANCELLED', 5000);
    expect(Date.now() - started).toBeLessThan(3000);
    const row = (await waits.byKey(id, 'gate'))!;
    expect(row.status).toBe('closed');
    expect((await waits.decide(row.id, { answer: 'too late' })).changed).toBe(false);
    expect(resumedRuns.get(id)).toBeUndefined();
    const evs = await seqsOf(id);
    expect(evs.map((e) => e.type)).toContain('WORKFLOW_CANCELLED');
    expect(evs.map((e) => e.seq)).toEqual(evs.map((_, i) => i + 1));
  });

  it('time spent waiting does not count against the task time limit', async () => {
    for (const w of workers.splice(0)) await w.stop();
    await startWorker({ taskTimeoutSeconds: 2 });
    const id = await submit('slow person');
    await pendingWait(id);
    await new Promise((r) => setTimeout(r, 2500));
    const row = (await waits.byKey(id, 'gate'))!;
    await waits.decide(row.id, { answer: 'after the limit' });
    await untilStatus(id, 'TASK_STATUS_COMPLETED');
    expect((await t.app.store.getTask(id))?.result).toBe('after the limit');
  });

  it('many waiting tasks hold no worker slot', async () => {
    for (const w of workers.splice(0)) await w.stop();
    const w = await startWorker();
    const ids = await Promise.all(Array.from({ length: 40 }, (_, i) => submit(`crowd ${i} ${randomUUID()}`)));
    await until(async () => (await Promise.all(ids.map((id) => waits.byKey(id, 'gate')))).every((r) => r?.status === 'pending'), 20_000);
    await until(async () => w.inFlight === 0);
    // Concurrency is 8: five times as many tasks wait at once.
    expect((await Promise.all(ids.map(status))).every((s) => s === 'TASK_STATUS_PAUSED')).toBe(true);
    for (const id of ids) await waits.decide((await waits.byKey(id, 'gate'))!.id, { answer: id });
    await until(async () => (await Promise.all(ids.map(status))).every((s) => s === 'TASK_STATUS_COMPLETED'), 30_000);
  });

  it('waits open at the same time count once in the time waited', async () => {
    const taskId = randomUUID();
    const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
    for (const [key, from, to] of [
      ['a', 0, 60],
      ['b', 30, 90],
      ['c', 200, 210],
    ] as const) {
      const w = await waits.open({ taskId, key, kind: 'test', request: {}, dueAt: at(3600) });
      await t.app.store.sql`UPDATE task_waits SET status = 'decided', created_at = ${at(from)}, decided_at = ${at(to)} WHERE id = ${w.id}`;
    }
    // [0, 90] and [200, 210]: 100 s, not 60 + 60 + 10.
    expect(await waits.waitedMs(taskId)).toBe(100_000);
  });

  it('a wait of a task that ended cannot be decided', async () => {
    const id = await submit('ends before the decision');
    await pendingWait(id);
    await t.app.store.finishTask(id, { status: 'TASK_STATUS_FAILED', error: 'ended elsewhere' }, new Date());
    const row = (await waits.byKey(id, 'gate'))!;
    expect((await waits.decide(row.id, { answer: 'too late' })).changed).toBe(false);
  });
});
