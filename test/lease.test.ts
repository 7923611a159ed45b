/**
 * One live actor per workflow: two start messages for one task (a duplicate that escaped the
 * de-duplication window, or an early redelivery) reach two workers; the workflow still runs
 * once (one LLM call per step), and the second delivery ends as a no-op.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subjects } from '../src/bus/index.js';
import { OfflineProvider, type LlmProvider, type LlmRequest, type LlmResult } from '../src/llm/index.js';
import { json, readSse, startTestApp, waitFor, type TestApp } from './helpers/app.js';

class Counting implements LlmProvider {
  readonly name = 'offline';
  calls = 0;
  private readonly inner = new OfflineProvider({ chunkDelayMs: 20, chunkChars: 16 });
  complete(req: LlmRequest, onDelta?: (d: string) => void): Promise<LlmResult> {
    this.calls++;
    return this.inner.complete(req, onDelta);
  }
}

let g: TestApp;
let w1: TestApp;
let w2: TestApp;
const c1 = new Counting();
const c2 = new Counting();
beforeAll(async () => {
  g = await startTestApp({ ROLES: 'gateway,orchestrator,archiver', WORKER_ACK_WAIT_MS: '2000' });
  w1 = await startTestApp({ ROLES: 'worker', WORKER_ACK_WAIT_MS: '2000' }, { natsUrl: g.natsUrl, llm: c1 });
  w2 = await startTestApp({ ROLES: 'worker', WORKER_ACK_WAIT_MS: '2000' }, { natsUrl: g.natsUrl, llm: c2 });
});
afterAll(async () => {
  await w2?.stop();
  await w1?.stop();
  await g?.stop();
});

describe('workflow lease', () => {
  it('runs a workflow once when its start message is delivered twice', async () => {
    const id = randomUUID();
    const now = new Date();
    await g.app.store.insertTask({ id, sessionId: `lease-${id}`, query: 'lease me', context: {}, options: { mode: 'simple' }, mode: 'EXECUTION_MODE_SIMPLE', createdAt: now });
    const start = { task_id: id, session_id: `lease-${id}`, query: 'lease me', context: {}, mode: 'simple', model_tier: 'small', submitted_at: now.toISOString() };
    const data = new TextEncoder().encode(JSON.stringify(start));
    // Distinct message ids: both copies are stored, as after the de-duplication window.
    await Promise.all([g.app.bus.js.publish(subjects.taskStart(id), data, { msgID: `${id}-a` }), g.app.bus.js.publish(subjects.taskStart(id), data, { msgID: `${id}-b` })]);
    const { events } = await readSse(`${g.base}/api/v1/stream/sse?workflow_id=${id}`, { timeoutMs: 30_000 });
    const evs = events.filter((e) => e.event !== 'done').map((e) => JSON.parse(e.data) as { seq: number; type: string });
    expect(evs.map((e) => e.seq)).toEqual(evs.map((_, i) => i + 1));
    expect(evs.filter((e) => e.type === 'WORKFLOW_STARTED')).toHaveLength(1);
    expect(evs.at(-1)!.type).toBe('STREAM_END');
    // Both copies are consumed; the model was called once.
    await waitFor(async () => (await g.app.bus.jsm.streams.info('TASKS')).state.messages === 0, 20_000);
    expect(c1.calls + c2.calls).toBe(1);
    expect((await json(await fetch(`${g.base}/api/v1/tasks/${id}`))).status).toBe('TASK_STATUS_COMPLETED');
  }, 60_000);
});
