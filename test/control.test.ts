/** Pause, resume and cancel of running and queued tasks, and the control state. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSUMERS, STREAMS } from '../src/bus/index.js';
import { OfflineProvider, type LlmProvider, type LlmRequest, type LlmResult } from '../src/llm/index.js';
import { json, readSse, startTestApp, waitFor, type TestApp } from './helpers/app.js';
import { consumerDrained } from './helpers/barrier.js';

class CountingLlm implements LlmProvider {
  readonly name = 'offline';
  calls = 0;
  private readonly inner = new OfflineProvider();
  complete(req: LlmRequest, onDelta?: (d: string) => void): Promise<LlmResult> {
    this.calls++;
    return this.inner.complete(req, onDelta);
  }
}

let t: TestApp;
let queuedOnly: TestApp;
beforeAll(async () => {
  t = await startTestApp({ OFFLINE_LLM_CHUNK_DELAY_MS: '2', PARTIAL_CHUNK_CHARS: '64' });
  queuedOnly = await startTestApp({ ROLES: 'gateway,orchestrator' });
});
afterAll(async () => {
  await queuedOnly?.stop();
  await t?.stop();
});

const post = (base: string, path: string, body?: unknown) =>
  fetch(base + path, {
    method: 'POST',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
const status = async (base: string, id: string) => (await json(await fetch(`${base}/api/v1/tasks/${id}`))).status as string;
const types = (events: { event?: string; data: string }[]) => events.filter((e) => e.event !== 'done').map((e) => JSON.parse(e.data).type as string);

async function submitSlow(): Promise<string> {
  return (await json(await post(t.base, '/api/v1/tasks', { query: 'Research it. Then compare it. And write it up.', mode: 'complex' }))).task_id;
}

describe('cancel', () => {
  it('cancels a running task: WORKFLOW_CANCELLING, WORKFLOW_CANCELLED, STREAM_END; status CANCELLED', async () => {
    const id = await submitSlow();
    let sent = false;
    const stream = readSse(`${t.base}/api/v1/stream/sse?workflow_id=${id}`, {
      timeoutMs: 30_000,
      until: (e) => {
        if (!sent && e.event === 'AGENT_STARTED' && JSON.parse(e.data).agent_id === 'agent-1') {
          sent = true;
          void post(t.base, `/api/v1/tasks/${id}/cancel`, { reason: 'changed my mind' }).then(async (r) => {
            expect(r.status).toBe(200);
            expect(await json(r)).toMatchObject({ success: true, task_id: id });
          });
        }
        return false;
      },
    });
    const { events } = await stream;
    const ts = types(events);
    expect(ts.slice(-2)).toEqual(['WORKFLOW_CANCELLED', 'STREAM_END']);
    expect(ts.indexOf('WORKFLOW_CANCELLING')).toBeGreaterThan(0);
    expect(ts.indexOf('WORKFLOW_CANCELLED')).toBeGreaterThan(ts.indexOf('WORKFLOW_CANCELLING'));
    expect(ts.at(-1)).toBe('STREAM_END');
    expect(ts).not.toContain('WORKFLOW_COMPLETED');
    const agents = events.filter((e) => e.event === 'AGENT_STARTED').map((e) => JSON.parse(e.data).agent_id);
    expect(agents).not.toContain('agent-3');
    const s = await json(await fetch(`${t.base}/api/v1/tasks/${id}`));
    expect(s.status).toBe('TASK_STATUS_CANCELLED');
    expect(s.error).toContain('changed my mind');
    const c = await json(await fetch(`${t.base}/api/v1/tasks/${id}/control-state`));
    expect(c).toMatchObject({ task_id: id, is_cancelled: true, cancel_reason: 'changed my mind', status: 'TASK_STATUS_CANCELLED' });
    const again = await post(t.base, `/api/v1/tasks/${id}/cancel`);
    expect(again.status).toBe(409);
    expect((await json(again)).error).toMatch(/cannot be cancelled/);
  });

  it('cancels a queued task at once; a worker that later takes its start message only ends it', async () => {
    const { task_id } = await json(await post(queuedOnly.base, '/api/v1/tasks', { query: 'never runs' }));
    expect(await status(queuedOnly.base, task_id)).toBe('TASK_STATUS_QUEUED');
    expect((await post(queuedOnly.base, `/api/v1/tasks/${task_id}/cancel`, { reason: 'not needed' })).status).toBe(200);
    expect(await status(queuedOnly.base, task_id)).toBe('TASK_STATUS_CANCELLED');
    const list = await json(await fetch(`${queuedOnly.base}/api/v1/tasks?status=CANCELED&limit=100`));
    expect(list.tasks.map((x: { task_id: string }) => x.task_id)).toContain(task_id);

    // The start message is still queued; a worker now takes it.
    expect((await queuedOnly.app.bus.jsm.streams.info('TASKS')).state.messages).toBe(1);
    const llm = new CountingLlm();
    const worker = await startTestApp({ ROLES: 'worker' }, { natsUrl: queuedOnly.natsUrl, llm });
    try {
      const { events } = await readSse(`${queuedOnly.base}/api/v1/stream/sse?workflow_id=${task_id}`, { timeoutMs: 20_000 });
      expect(types(events)).toEqual(['WORKFLOW_CANCELLING', 'WORKFLOW_CANCELLED', 'STREAM_END']);
      expect(JSON.parse(events[0].data).payload).toMatchObject({ reason: 'not needed' });
      await waitFor(async () => (await queuedOnly.app.bus.jsm.streams.info('TASKS')).state.messages === 0);
      expect(llm.calls).toBe(0);
      const s = await json(await fetch(`${queuedOnly.base}/api/v1/tasks/${task_id}`));
      expect(s).toMatchObject({ status: 'TASK_STATUS_CANCELLED', error: 'cancelled: not needed' });
      expect(s.result).toBeUndefined();
    } finally {
      await worker.stop();
    }
  });

  it('404s an unknown task and 409s a completed one; rejects a bad body', async () => {
    expect((await post(t.base, '/api/v1/tasks/00000000-0000-4000-8000-000000000000/cancel')).status).toBe(404);
    const { task_id } = await json(await post(t.base, '/api/v1/tasks', { query: 'quick', mode: 'simple' }));
    await waitFor(async () => (await status(t.base, task_id)) === 'TASK_STATUS_COMPLETED', 20_000);
    expect((await post(t.base, `/api/v1/tasks/${task_id}/cancel`)).status).toBe(409);
    expect((await post(t.base, `/api/v1/tasks/${task_id}/pause`)).status).toBe(409);
    expect((await post(t.base, `/api/v1/tasks/${task_id}/cancel`, { reason: 5 })).status).toBe(400);
  });
});

describe('pause and resume', () => {
  it('pauses at the next checkpoint and resumes to completion', async () => {
    const id = await submitSlow();
    let paused = false;
    const stream = readSse(`${t.base}/api/v1/stream/sse?workflow_id=${id}`, {
      timeoutMs: 30_000,
      until: (e) => {
        if (!paused && e.event === 'AGENT_STARTED' && JSON.parse(e.data).agent_id === 'planner') {
          paused = true;
          void post(t.base, `/api/v1/tasks/${id}/pause`, { reason: 'lunch' });
        }
        return false;
      },
    });
    await waitFor(async () => (await status(t.base, id)) === 'TASK_STATUS_PAUSED', 20_000);
    const c = await json(await fetch(`${t.base}/api/v1/tasks/${id}/control-state`));
    expect(c).toMatchObject({ is_paused: true, is_cancelled: false, pause_reason: 'lunch' });
    expect(c.paused_at).toBeTruthy();
    expect((await post(t.base, `/api/v1/tasks/${id}/pause`)).status).toBe(409);
    // Once the archiver has taken every event published so far, the archive ends with the
    // pause: the workflow said nothing after it.
    await consumerDrained(t.natsUrl, STREAMS.events, CONSUMERS.archiver);
    const archived = (await json(await fetch(`${t.base}/api/v1/tasks/${id}/events`))).events as { seq: number; type: string }[];
    expect(archived.at(-1)).toMatchObject({ type: 'WORKFLOW_PAUSED', seq: archived.length });
    expect(await status(t.base, id)).toBe('TASK_STATUS_PAUSED');
    const r = await post(t.base, `/api/v1/tasks/${id}/resume`);
    expect(r.status).toBe(200);
    const { events } = await stream;
    const ts = types(events);
    const iPausing = ts.indexOf('WORKFLOW_PAUSING');
    const iPaused = ts.indexOf('WORKFLOW_PAUSED');
    const iResumed = ts.indexOf('WORKFLOW_RESUMED');
    expect(iPausing).toBeGreaterThan(0);
    expect(iPaused).toBeGreaterThan(iPausing);
    // Nothing moved while paused: the resume is the very next event after the pause, however
    // long the checks above took (a workflow that kept going would have put events between).
    expect(iResumed).toBe(iPaused + 1);
    expect(ts.slice(-2)).toEqual(['WORKFLOW_COMPLETED', 'STREAM_END']);
    const evs = events.filter((e) => e.event !== 'done').map((e) => JSON.parse(e.data).seq);
    expect(evs).toEqual(evs.map((_: number, i: number) => i + 1));
    expect(await status(t.base, id)).toBe('TASK_STATUS_COMPLETED');
    expect((await post(t.base, `/api/v1/tasks/${id}/resume`)).status).toBe(409);
  });

  it('cancels a paused task', async () => {
    const id = await submitSlow();
    await waitFor(async () => (await status(t.base, id)) === 'TASK_STATUS_RUNNING', 20_000);
    expect((await post(t.base, `/api/v1/tasks/${id}/pause`)).status).toBe(200);
    await waitFor(async () => (await status(t.base, id)) === 'TASK_STATUS_PAUSED', 20_000);
    expect((await post(t.base, `/api/v1/tasks/${id}/resume`, {})).status).toBe(200);
    expect((await post(t.base, `/api/v1/tasks/${id}/pause`)).status).toBe(200);
    await waitFor(async () => (await status(t.base, id)) === 'TASK_STATUS_PAUSED', 20_000);
    expect((await post(t.base, `/api/v1/tasks/${id}/cancel`)).status).toBe(200);
    await waitFor(async () => (await status(t.base, id)) === 'TASK_STATUS_CANCELLED', 20_000);
  });
});
