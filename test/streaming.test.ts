/**
 * Streaming: SSE (/api/v1/stream/sse and /api/v1/tasks/{id}/stream) and WebSocket
 * (/api/v1/stream/ws) against the whole service started in-process, default configuration.
 * Other configurations (live fan-out, retention gaps, heartbeats, slow clients):
 * streaming-limits.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startTestApp, type TestApp } from './helpers/app.js';
import { DONE, eventsOf, expectWellFormed, range, seqs, sse, sseUrl, submit, wsCollect, type Ev, type Frame } from './helpers/streams.js';

// --- default configuration -----------------------------------------------------------------

describe('SSE and WebSocket (default configuration)', () => {
  let t: TestApp;
  /** A completed standard-mode workflow and its full stream, read once. */
  let ref: { id: string; frames: Frame[]; events: Ev[] };

  beforeAll(async () => {
    t = await startTestApp({ PARTIAL_CHUNK_CHARS: '40' });
    const id = await submit(t, { query: 'Compare rivers and lakes. Then list three famous rivers.', mode: 'complex' });
    const r = await sse(sseUrl(t, id));
    expect(r.status).toBe(200);
    expect(r.closedByServer).toBe(true);
    ref = { id, frames: r.frames, events: eventsOf(r.frames) };
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('streams every event once, in seq order, with id/event/data, then done', async () => {
    const { events, frames } = ref;
    expectWellFormed(frames);
    expect(seqs(events)).toEqual(range(1, events.length));
    expect(events.length).toBeGreaterThan(10);
    expect(events[0].type).toBe('WORKFLOW_STARTED');
    expect(events.at(-1)!.type).toBe('STREAM_END');
    expect(events.filter((e) => e.type === 'LLM_PARTIAL').length).toBeGreaterThan(5);
    for (const e of events) expect(e.workflow_id).toBe(ref.id);
    expect(frames.some((f) => f.event === 'REPLAY_GAP')).toBe(false);
  });

  it('sets the event-stream headers, X-Workflow-ID and CORS', async () => {
    const r = await sse(sseUrl(t, ref.id), { headers: { Origin: 'http://example.test' } });
    expect(r.headers.get('content-type')).toBe('text/event-stream');
    expect(r.headers.get('cache-control')).toBe('no-cache');
    expect(r.headers.get('x-workflow-id')).toBe(ref.id);
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
  });

  describe('resume', () => {
    const k = 7;
    const expected = () => ref.events.filter((e) => e.seq > k);

    it('last_event_id as a stream id <ms>-<seq> replays exactly the later events', async () => {
      const sid = ref.events[k - 1].stream_id;
      expect(sid).toMatch(/^\d+-7$/);
      const r = await sse(sseUrl(t, ref.id, `&last_event_id=${encodeURIComponent(sid)}`));
      expectWellFormed(r.frames);
      expect(eventsOf(r.frames)).toEqual(expected());
      expect(r.frames.map((f) => f.id).slice(0, -1)).toEqual(expected().map((e) => e.stream_id));
    });

    it('last_event_id as a numeric seq replays exactly the later events', async () => {
      const r = await sse(sseUrl(t, ref.id, `&last_event_id=${k}`));
      expectWellFormed(r.frames);
      expect(eventsOf(r.frames)).toEqual(expected());
    });

    it('the Last-Event-ID header (stream id or seq) resumes the same way', async () => {
      for (const v of [ref.events[k - 1].stream_id, String(k)]) {
        const r = await sse(sseUrl(t, ref.id), { headers: { 'Last-Event-ID': v } });
        expectWellFormed(r.frames);
        expect(eventsOf(r.frames), v).toEqual(expected());
      }
    });

    it('resuming after the last event ends at once with done', async () => {
      const last = ref.events.at(-1)!;
      for (const q of [`&last_event_id=${last.seq}`, `&last_event_id=${last.stream_id}`]) {
        const r = await sse(sseUrl(t, ref.id, q), { timeoutMs: 5_000 });
        expect(r.closedByServer, q).toBe(true);
        expect(r.frames, q).toEqual([DONE]);
      }
    });

    it('resuming from 0 replays everything', async () => {
      const r = await sse(sseUrl(t, ref.id, '&last_event_id=0'));
      expect(eventsOf(r.frames)).toEqual(ref.events);
    });
  });

  describe('types filter', () => {
    it('accepts raw type names, comma-separated, and still ends with done', async () => {
      const r = await sse(sseUrl(t, ref.id, '&types=LLM_PARTIAL,AGENT_COMPLETED'));
      expectWellFormed(r.frames);
      const want = ref.events.filter((e) => e.type === 'LLM_PARTIAL' || e.type === 'AGENT_COMPLETED');
      expect(want.length).toBeGreaterThan(3);
      expect(eventsOf(r.frames)).toEqual(want);
      expect(new Set(r.frames.slice(0, -1).map((f) => f.event))).toEqual(new Set(['thread.message.delta', 'AGENT_COMPLETED']));
    });

    it('accepts the SSE names (thread.message.delta / thread.message.completed) and spaces', async () => {
      const r = await sse(sseUrl(t, ref.id, `&types=${encodeURIComponent('thread.message.completed, WORKFLOW_COMPLETED ,thread.message.delta')}`));
      expectWellFormed(r.frames);
      const want = ref.events.filter((e) => ['LLM_OUTPUT', 'LLM_PARTIAL', 'WORKFLOW_COMPLETED'].includes(e.type));
      expect(eventsOf(r.frames)).toEqual(want);
    });

    it('combines with a resume point', async () => {
      const partials = ref.events.filter((e) => e.type === 'LLM_PARTIAL');
      const after = partials[2].seq;
      const r = await sse(sseUrl(t, ref.id, `&types=LLM_PARTIAL&last_event_id=${after}`));
      expectWellFormed(r.frames);
      expect(eventsOf(r.frames)).toEqual(partials.slice(3));
    });

    it('a filter that matches nothing still sends done', async () => {
      const r = await sse(sseUrl(t, ref.id, '&types=TOOL_INVOKED'), { timeoutMs: 5_000 });
      expect(r.frames).toEqual([DONE]);
    });
  });

  describe('errors', () => {
    it('400 JSON for a missing or invalid workflow_id and an invalid last_event_id', async () => {
      const cases: [string, Record<string, string>, RegExp][] = [
        [`${t.base}/api/v1/stream/sse`, {}, /workflow_id is required/],
        [`${t.base}/api/v1/stream/sse?workflow_id=`, {}, /workflow_id is required/],
        [`${t.base}/api/v1/stream/sse?workflow_id=not-a-uuid`, {}, /invalid workflow_id/],
        [`${t.base}/api/v1/stream/sse?workflow_id=svc.events.%3E`, {}, /invalid workflow_id/],
        [sseUrl(t, ref.id, '&last_event_id=abc'), {}, /last_event_id/],
        [sseUrl(t, ref.id, '&last_event_id=-3'), {}, /last_event_id/],
        [sseUrl(t, ref.id, '&last_event_id=1-2-3'), {}, /last_event_id/],
        [sseUrl(t, ref.id), { 'Last-Event-ID': 'not-an-id' }, /last_event_id/],
        [`${t.base}/api/v1/tasks/not-a-uuid/stream`, {}, /invalid workflow_id/],
        [`${t.base}/api/v1/tasks/${ref.id}/stream?last_event_id=x1`, {}, /last_event_id/],
      ];
      for (const [url, headers, re] of cases) {
        const r = await sse(url, { headers, timeoutMs: 5_000 });
        expect(r.status, url).toBe(400);
        expect(r.headers.get('content-type'), url).toBe('application/json');
        const body = JSON.parse(r.body!);
        expect(Object.keys(body), url).toEqual(['error']);
        expect(body.error, url).toMatch(re);
      }
    });
  });

  describe('GET /api/v1/tasks/{id}/stream', () => {
    it('streams like /api/v1/stream/sse, with resume and types', async () => {
      const full = await sse(`${t.base}/api/v1/tasks/${ref.id}/stream`);
      expect(full.status).toBe(200);
      expect(full.headers.get('content-type')).toBe('text/event-stream');
      expect(full.frames).toEqual(ref.frames);
      const resumed = await sse(`${t.base}/api/v1/tasks/${ref.id}/stream`, { headers: { 'Last-Event-ID': ref.events[4].stream_id } });
      expect(eventsOf(resumed.frames)).toEqual(ref.events.slice(5));
      const q = await sse(`${t.base}/api/v1/tasks/${ref.id}/stream?last_event_id=3&types=AGENT_STARTED`);
      expectWellFormed(q.frames);
      expect(eventsOf(q.frames)).toEqual(ref.events.filter((e) => e.seq > 3 && e.type === 'AGENT_STARTED'));
    });

    it('streams a task submitted through POST /api/v1/tasks/stream from its stream_url', async () => {
      const res = await fetch(`${t.base}/api/v1/tasks/stream`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'stream url', mode: 'simple' }),
      });
      expect(res.status).toBe(201);
      const b = await json(res);
      const [viaUrl, viaTask] = await Promise.all([sse(t.base + b.stream_url), sse(`${t.base}/api/v1/tasks/${b.task_id}/stream`)]);
      expectWellFormed(viaUrl.frames);
      expect(seqs(eventsOf(viaUrl.frames))).toEqual(range(1, eventsOf(viaUrl.frames).length));
      expect(viaTask.frames).toEqual(viaUrl.frames);
    });
  });

  describe('WebSocket /api/v1/stream/ws', () => {
    const wsUrl = (q: string) => `ws://127.0.0.1:${t.app.gatewayPort}/api/v1/stream/ws${q}`;

    it('sends one JSON event per message, in order, STREAM_END last, then closes', async () => {
      const r = await wsCollect(wsUrl(`?workflow_id=${ref.id}`));
      expect(r.status).toBe(101);
      expect(r.messages).toEqual(ref.events.map((e) => expect.objectContaining({ seq: e.seq, type: e.type, stream_id: e.stream_id, message: e.message })));
      expect(r.messages.at(-1)!.type).toBe('STREAM_END');
      expect(r.code).toBe(1000);
    });

    it('follows a workflow live from submission', async () => {
      const id = await submit(t, { query: 'Live over websocket. And then some more.', mode: 'complex' });
      const r = await wsCollect(wsUrl(`?workflow_id=${id}`));
      expect(seqs(r.messages)).toEqual(range(1, r.messages.length));
      expect(r.messages[0].type).toBe('WORKFLOW_STARTED');
      expect(r.messages.at(-1)!.type).toBe('STREAM_END');
      expect(r.code).toBe(1000);
    });

    it('resumes with last_event_id', async () => {
      const r = await wsCollect(wsUrl(`?workflow_id=${ref.id}&last_event_id=${ref.events[9].stream_id}`));
      expect(seqs(r.messages)).toEqual(range(11, ref.events.length));
    });

    it('answers 400 without upgrading for a missing or invalid workflow_id or last_event_id', async () => {
      for (const [q, re] of [
        ['', /workflow_id is required/],
        ['?workflow_id=', /workflow_id is required/],
        ['?workflow_id=nope', /invalid workflow_id/],
        [`?workflow_id=${ref.id}&last_event_id=abc`, /last_event_id/],
      ] as const) {
        const r = await wsCollect(wsUrl(q), { timeoutMs: 5_000 });
        expect(r.status, q).toBe(400);
        expect(JSON.parse(r.body!).error, q).toMatch(re);
        expect(r.messages).toEqual([]);
      }
    });
  });
});
