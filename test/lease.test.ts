/**
 * One live actor per workflow: two start messages for one task (a duplicate that escaped the
 * de-duplication window, or an early redelivery) reach two different workers while the first
 * one runs the workflow; the second worker is refused the lease, the workflow runs once (one
 * LLM call per step), and the second delivery ends as a no-op once the first is done.
 *
 * The deliveries are steered: a worker's consumer pulls the next message as soon as it has
 * one, so two copies published together often both reach the same worker, where the second
 * is folded into the running actor and the lease is never consulted. Here the first worker
 * stops taking messages once it runs the workflow, so the second copy can only reach the
 * second worker, and the test checks that it did.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Worker } from '../src/runtime/index.js';
import { kvKeys, subjects } from '../src/bus/index.js';
import { OfflineProvider, type LlmProvider, type LlmRequest, type LlmResult } from '../src/llm/index.js';
import { json, readSse, startTestApp, waitFor, type TestApp } from './helpers/app.js';

class Counting implements LlmProvider {
  readonly name = 'offline';
  calls = 0;
  /** Resolves when the test lets the model answer. */
  gate: Promise<void> = Promise.resolve();
  private readonly inner = new OfflineProvider({ chunkDelayMs: 5, chunkChars: 16 });
  async complete(req: LlmRequest, onDelta?: (d: string) => void): Promise<LlmResult> {
    this.calls++;
    await this.gate;
    return this.inner.complete(req, onDelta);
  }
}

/** What each Worker instance did, seen through its (private) activation and lease methods. */
interface Seen {
  worker: Worker;
  kind: 'delivery' | 'lease';
  taskId: string;
  leased?: boolean;
}
const seen: Seen[] = [];
type WorkerInternals = {
  activate(msg: { data: Uint8Array }): void;
  acquireLease(id: string): Promise<number | undefined>;
  intake?: { close(): void };
};
const proto = Worker.prototype as unknown as WorkerInternals;
const activate = proto.activate;
const acquireLease = proto.acquireLease;
vi.spyOn(proto, 'activate').mockImplementation(function (this: Worker, msg) {
  seen.push({ worker: this, kind: 'delivery', taskId: (JSON.parse(new TextDecoder().decode(msg.data)) as { task_id: string }).task_id });
  return activate.call(this, msg);
});
vi.spyOn(proto, 'acquireLease').mockImplementation(async function (this: Worker, id) {
  const rev = await acquireLease.call(this, id);
  seen.push({ worker: this, kind: 'lease', taskId: id, leased: rev !== undefined });
  return rev;
});

let g: TestApp;
let w1: TestApp;
let w2: TestApp | undefined;
const c1 = new Counting();
const c2 = new Counting();
beforeAll(async () => {
  g = await startTestApp({ ROLES: 'gateway,orchestrator,archiver', WORKER_ACK_WAIT_MS: '2000' });
  w1 = await startTestApp({ ROLES: 'worker', WORKER_ACK_WAIT_MS: '2000' }, { natsUrl: g.natsUrl, llm: c1 });
});
afterAll(async () => {
  await w2?.stop();
  await w1?.stop();
  await g?.stop();
});

describe('workflow lease', () => {
  it('runs a workflow once when its start message reaches a second worker while the first runs it', async () => {
    const id = randomUUID();
    const now = new Date();
    await g.app.store.insertTask({
      id,
      session_id: `lease-${id}`,
      query: 'lease me',
      context: {},
      options: { mode: 'simple' },
      mode: 'EXECUTION_MODE_SIMPLE',
      created_at: now,
    });
    const start = {
      task_id: id,
      session_id: `lease-${id}`,
      query: 'lease me',
      context: {},
      mode: 'simple',
      model_tier: 'small',
      submitted_at: now.toISOString(),
    };
    const data = new TextEncoder().encode(JSON.stringify(start));
    const sse = readSse(`${g.base}/api/v1/stream/sse?workflow_id=${id}`, { timeoutMs: 40_000 });

    // Worker 1 takes the first copy and holds the model call (and so the lease) until released.
    let release!: () => void;
    c1.gate = new Promise((r) => (release = r));
    await g.app.bus.js.publish(subjects.taskStart(id), data, { msgID: `${id}-a` });
    await waitFor(async () => c1.calls === 1, 20_000);
    const lease = await g.app.bus.kv.leases.get(kvKeys.lease(id));
    expect(lease?.operation).toBe('PUT');
    // Worker 1 takes no further message; worker 2 joins and is the only one pulling.
    (w1.app.worker as unknown as WorkerInternals).intake!.close();
    w2 = await startTestApp({ ROLES: 'worker', WORKER_ACK_WAIT_MS: '2000' }, { natsUrl: g.natsUrl, llm: c2 });
    // Distinct message ids: both copies are stored, as after the de-duplication window.
    await g.app.bus.js.publish(subjects.taskStart(id), data, { msgID: `${id}-b` });
    const on = (w: TestApp, kind: Seen['kind']) => seen.filter((s) => s.taskId === id && s.worker === w.app.worker && s.kind === kind);
    // The second copy reached worker 2, which was refused the lease while worker 1 ran the workflow.
    await waitFor(async () => on(w2!, 'lease').some((s) => s.leased === false), 20_000);
    expect(on(w1, 'delivery')).toHaveLength(1);
    expect(on(w1, 'lease').map((s) => s.leased)).toEqual([true]);
    expect(c2.calls).toBe(0);
    release();

    const { events } = await sse;
    const evs = events.filter((e) => e.event !== 'done').map((e) => JSON.parse(e.data) as { seq: number; type: string });
    expect(evs.map((e) => e.seq)).toEqual(evs.map((_, i) => i + 1));
    expect(evs.filter((e) => e.type === 'WORKFLOW_STARTED')).toHaveLength(1);
    expect(evs.at(-1)!.type).toBe('STREAM_END');
    // Both copies are consumed: worker 2's redelivery, after worker 1 finished, was a no-op.
    await waitFor(async () => (await g.app.bus.jsm.streams.info('TASKS')).state.messages === 0, 20_000);
    expect(on(w2!, 'lease').some((s) => s.leased === true)).toBe(true);
    expect(c1.calls + c2.calls).toBe(1);
    expect((await json(await fetch(`${g.base}/api/v1/tasks/${id}`))).status).toBe('TASK_STATUS_COMPLETED');
  }, 60_000);
});
