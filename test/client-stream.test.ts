/**
 * The API client's stream follower (followStream in src/client) against the real service, with
 * authentication on: it follows a task's stream to STREAM_END (every seq once, in order, the
 * same events the archive holds); when the connection is cut mid-stream (the body errors part
 * way through a frame) it resumes with Last-Event-ID set to the last id it yielded and the
 * events across the cuts have no gap and no repeat; a 503 is retried; a 4xx is thrown at once
 * as ApiError; `maxFailures` failed attempts in a row give up with a NetworkError.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, NetworkError, createClient, followStream, ok, type FetchLike, type StreamEvent } from '../src/client/index.js';
import { archivedEvents, startTestApp, type TestApp } from './helpers/app.js';
import { range, type Ev } from './helpers/streams.js';

let t: TestApp;
let apiKey: string;

beforeAll(async () => {
  // Deltas a word at a time, 30 ms apart: the stream is still live when the test cuts it.
  t = await startTestApp({
    GATEWAY_SKIP_AUTH: '0',
    PASSWORD_SCRYPT_N: '1024',
    RATE_LIMIT_REQUESTS: '100000',
    OFFLINE_LLM_CHUNK_DELAY_MS: '30',
    PARTIAL_CHUNK_CHARS: '8',
  });
  const reg = ok(
    await createClient({ baseUrl: t.base }).POST('/api/v1/auth/register', {
      body: { email: `client-stream-${Date.now()}-${process.pid}@example.com`, password: 'correct horse battery', name: 'Stream' },
    }),
  );
  apiKey = reg.api_key;
});
afterAll(async () => {
  await t?.stop();
});

/** Submits a task through the typed client; its workflow id and stream path. */
async function submit(query: string): Promise<{ id: string; streamUrl: string }> {
  const sub = ok(await createClient({ baseUrl: t.base, apiKey }).POST('/api/v1/tasks/stream', { body: { query, mode: 'simple' } }));
  return { id: sub.workflow_id, streamUrl: sub.stream_url };
}

async function collect(events: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const out: StreamEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

/** The events of a complete stream: well formed, every seq from 1 to STREAM_END's once, in order. */
function expectComplete(events: StreamEvent[]): Ev[] {
  const evs = events.map((e) => e.data as Ev);
  expect(evs.at(-1)?.type).toBe('STREAM_END');
  expect(evs.map((e) => e.seq)).toEqual(range(1, evs.at(-1)!.seq));
  for (const e of events) {
    const d = e.data as Ev;
    expect(e.id).toBe(d.stream_id);
    expect(e.id).toBe(`${Date.parse(d.timestamp)}-${d.seq}`);
    expect(e.event).toBe(d.type === 'LLM_PARTIAL' ? 'thread.message.delta' : d.type === 'LLM_OUTPUT' ? 'thread.message.completed' : d.type);
  }
  return evs;
}

/**
 * An SSE response whose body breaks after its `frames`-th event frame (one with an id), part way
 * into the next frame, as a connection lost mid-stream does.
 */
function cutAfter(res: Response, frames: number): Response {
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  const enc = new TextEncoder();
  let pending = '';
  let seen = 0;
  let cut = false;
  const body = new ReadableStream<Uint8Array>({
    async pull(ctrl) {
      if (cut) return ctrl.error(new TypeError('terminated: connection cut by the test'));
      for (;;) {
        const { value, done } = await reader.read();
        if (done) {
          if (pending) ctrl.enqueue(enc.encode(pending));
          return ctrl.close();
        }
        pending += dec.decode(value, { stream: true });
        let out = '';
        for (let i = pending.indexOf('\n\n'); i >= 0; i = pending.indexOf('\n\n')) {
          const frame = pending.slice(0, i + 2);
          pending = pending.slice(i + 2);
          out += frame;
          if (/^id: /m.test(frame) && ++seen === frames) {
            // What arrived up to here is read first; the next read fails (error() would drop it).
            ctrl.enqueue(enc.encode(out + pending.slice(0, 12)));
            cut = true;
            await reader.cancel();
            return;
          }
        }
        if (out) return ctrl.enqueue(enc.encode(out));
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
}

describe('followStream', () => {
  it("follows a task's stream to its end: every event once, in order, as the archive holds them", async () => {
    const { id, streamUrl } = await submit('What is the capital of France?');
    expect(streamUrl).toBe(`/api/v1/stream/sse?workflow_id=${id}`);
    const events = await collect(followStream({ baseUrl: t.base, apiKey, workflowId: id }));
    const evs = expectComplete(events);
    expect(evs.length).toBeGreaterThan(5);
    expect(evs.map((e) => e.type)).toContain('LLM_PARTIAL');
    const archived = await archivedEvents(t.base, id, 30_000, { 'X-API-Key': apiKey });
    expect(evs.map((e) => [e.seq, e.type])).toEqual(archived.map((e) => [e.seq, e.type]));

    // Resuming from an id gives exactly the events after it; `types` filters them.
    const mid = events[Math.floor(events.length / 2)];
    const rest = await collect(followStream({ baseUrl: t.base, apiKey, workflowId: id, lastEventId: mid.id }));
    expect(rest.map((e) => e.id)).toEqual(events.slice(events.indexOf(mid) + 1).map((e) => e.id));
    const only = await collect(followStream({ baseUrl: t.base, apiKey, workflowId: id, path: streamUrl, types: ['WORKFLOW_STARTED', 'STREAM_END'] }));
    expect(only.map((e) => e.event)).toEqual(['WORKFLOW_STARTED', 'STREAM_END']);
  });

  it('resumes a connection cut mid-stream with Last-Event-ID: no gap, no repeat', async () => {
    const { id, streamUrl } = await submit('Explain in a few sentences why the sky is blue.');
    const requests: (string | null)[] = [];
    const statuses: string[] = [];
    const yielded: StreamEvent[] = [];
    const cuts = [3, 5]; // the first connection breaks after 3 events, the second after 5 more
    const cutting: FetchLike = async (req) => {
      requests.push(req.headers.get('last-event-id'));
      statuses.push(ok(await createClient({ baseUrl: t.base, apiKey }).GET('/api/v1/tasks/{id}', { params: { path: { id } } })).status);
      expect(req.headers.get('x-api-key')).toBe(apiKey);
      const res = await fetch(req);
      const n = cuts[requests.length - 1];
      return n === undefined ? res : cutAfter(res, n);
    };
    for await (const e of followStream({ baseUrl: t.base, apiKey, workflowId: id, path: streamUrl, fetch: cutting })) yielded.push(e);

    const evs = expectComplete(yielded);
    expect(requests).toHaveLength(3);
    // Each reconnect named the last event yielded before its cut.
    expect(requests).toEqual([null, yielded[2].id, yielded[7].id]);
    expect(evs.length).toBeGreaterThan(8); // events came after the second cut too
    // The first cut was mid-run: the task was still running when the follower reconnected.
    expect(statuses[1]).toBe('TASK_STATUS_RUNNING');
  });

  it('a 503 is retried; a 4xx is thrown at once as ApiError', async () => {
    const { id } = await submit('What is 2 + 2?');
    let calls = 0;
    const flaky: FetchLike = async (req) => (++calls <= 2 ? new Response(JSON.stringify({ error: 'Service unavailable' }), { status: 503 }) : fetch(req));
    expectComplete(await collect(followStream({ baseUrl: t.base, apiKey, workflowId: id, fetch: flaky })));
    expect(calls).toBe(3);

    let asked = 0;
    const counting: FetchLike = (req) => (asked++, fetch(req));
    const unknown = followStream({ baseUrl: t.base, apiKey, workflowId: '00000000-0000-4000-8000-000000000000', fetch: counting });
    await expect(collect(unknown)).rejects.toMatchObject({ name: 'ApiError', status: 404, message: 'Task not found' });
    const denied = followStream({ baseUrl: t.base, workflowId: id, fetch: counting });
    await expect(collect(denied)).rejects.toBeInstanceOf(ApiError);
    expect(asked).toBe(2);
  });

  it('gives up after maxFailures failed attempts in a row with a NetworkError', async () => {
    let calls = 0;
    const down: FetchLike = async () => {
      calls++;
      throw new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
    };
    const started = Date.now();
    const err = await collect(followStream({ baseUrl: t.base, workflowId: '00000000-0000-4000-8000-000000000000', fetch: down, maxFailures: 3 })).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as NetworkError).reason).toBe('ECONNREFUSED');
    expect(calls).toBe(3);
    // Backoff between the attempts: 0.5 s, then 1 s.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
  });
});
