/**
 * Streaming: SSE (/api/v1/stream/sse and /api/v1/tasks/{id}/stream) and WebSocket
 * (/api/v1/stream/ws) against the whole service started in-process.
 *
 * Several apps are started, one per configuration under test: the default one, a slow offline
 * provider (clients join mid-workflow), tiny retention (REPLAY_GAP), short heartbeat and
 * inactivity timers, and a tiny per-connection buffer with a provider that emits large
 * outputs behind a gate the test opens (slow-client protection).
 */
import net from 'node:net';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { OfflineProvider, type LlmProvider, type LlmRequest, type LlmResult } from '../src/llm/index.js';
import { json, readSse, startTestApp, waitFor, type SseEvent, type SseResult as BaseSseResult, type TestApp } from './helpers/app.js';

// --- helpers -------------------------------------------------------------------------------

type Frame = SseEvent;
type SseResult = BaseSseResult & { frames: Frame[] };

/** readSse, with the frames under the name this file uses. */
async function sse(url: string, opts: Parameters<typeof readSse>[1] = {}): Promise<SseResult> {
  const r = await readSse(url, opts);
  return { ...r, frames: r.events };
}

interface Ev {
  workflow_id: string;
  seq: number;
  stream_id: string;
  type: string;
  agent_id: string;
  message: string;
  timestamp: string;
  payload?: Record<string, unknown>;
  [k: string]: unknown;
}

/** The event frames of a stream (not REPLAY_GAP, not done), parsed. */
const eventsOf = (frames: Frame[]): Ev[] =>
  frames.filter((f) => f.event !== 'done' && f.event !== 'REPLAY_GAP' && f.event !== 'error').map((f) => JSON.parse(f.data) as Ev);
const seqs = (evs: { seq: number }[]) => evs.map((e) => e.seq);
const range = (from: number, to: number) => Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);
const DONE: Frame = { event: 'done', data: '[DONE]' };

/** Every frame of a complete stream: ids match seqs, event names match types, ends with done. */
function expectWellFormed(frames: Frame[]) {
  expect(frames.at(-1)).toEqual(DONE);
  expect(frames.filter((f) => f.event === 'done')).toHaveLength(1);
  for (const f of frames) {
    if (f.event === 'done' || f.event === 'REPLAY_GAP') continue;
    const e = JSON.parse(f.data) as Ev;
    expect(f.id).toBe(e.stream_id);
    expect(f.id).toBe(`${Date.parse(e.timestamp)}-${e.seq}`);
    expect(f.event).toBe(e.type === 'LLM_PARTIAL' ? 'thread.message.delta' : e.type === 'LLM_OUTPUT' ? 'thread.message.completed' : e.type);
  }
}

interface WsResult {
  status?: number;
  body?: string;
  messages: Ev[];
  code?: number;
  reason?: string;
}

/** Opens a WebSocket and collects its JSON messages until the server closes it. */
function wsCollect(url: string, opts: { onOpen?: () => void; timeoutMs?: number } = {}): Promise<WsResult> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    const messages: Ev[] = [];
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new Error(`websocket did not close within the test timeout; got ${messages.length} messages`));
    }, opts.timeoutMs ?? 20_000);
    ws.on('open', () => opts.onOpen?.());
    ws.on('message', (data, isBinary) => {
      expect(isBinary).toBe(false);
      messages.push(JSON.parse(data.toString()) as Ev);
    });
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode, body, messages });
      });
    });
    ws.on('close', (code, reason) => {
      clearTimeout(timer);
      resolve({ status: 101, messages, code, reason: reason.toString() });
    });
    ws.on('error', (err) => {
      if (!/Unexpected server response/.test(err.message)) {
        clearTimeout(timer);
        reject(err);
      }
    });
  });
}

const post = (t: TestApp, body: unknown) =>
  fetch(`${t.base}/api/v1/tasks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

async function submit(t: TestApp, body: Record<string, unknown>): Promise<string> {
  const res = await post(t, body);
  expect(res.status).toBe(200);
  return (await json(res)).task_id as string;
}

async function waitTerminal(t: TestApp, id: string) {
  return waitFor(async () => {
    const s = await json(await fetch(`${t.base}/api/v1/tasks/${id}`));
    return ['TASK_STATUS_COMPLETED', 'TASK_STATUS_FAILED'].includes(s.status) ? s : undefined;
  }, 30_000);
}

const sseUrl = (t: TestApp, id: string, q = '') => `${t.base}/api/v1/stream/sse?workflow_id=${id}${q}`;
const gw = (t: TestApp) => t.app.gateway!;
/** Private state of the gateway, read to check fan-out and slow-client handling. */
const sseSet = (t: TestApp) => (gw(t) as unknown as { sse: Set<unknown> }).sse;
/** Core NATS subscriptions of the app's connection on one workflow's event subject. */
function eventSubs(t: TestApp, id: string): number {
  const subs = (t.app.bus.nc as unknown as { protocol: { subscriptions: { all(): { subject: string }[] } } }).protocol.subscriptions.all();
  return subs.filter((s) => s.subject === `svc.events.${id}`).length;
}

/**
 * Offline provider with test hooks read from the user message: `[gate:<key>]` waits until the
 * test opens that gate; `[synth-gate:<key>]` does so for the synthesizer only; `[big:<n>]`
 * answers with n characters (and, as planner, with 8 subtasks) so one workflow produces many
 * megabytes of events; `[pace]` yields to the event loop between its 64 kB deltas.
 */
class TestLlm implements LlmProvider {
  readonly name = 'offline';
  private readonly inner = new OfflineProvider({ chunkDelayMs: 0 });
  private readonly gates = new Map<string, { promise: Promise<void>; open: () => void }>();

  gate(key: string) {
    let g = this.gates.get(key);
    if (!g) {
      let open!: () => void;
      const promise = new Promise<void>((r) => (open = r));
      g = { promise, open };
      this.gates.set(key, g);
    }
    return g;
  }

  async complete(req: LlmRequest, onDelta?: (delta: string) => void): Promise<LlmResult> {
    const user = [...req.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
    const system = req.messages.find((m) => m.role === 'system')?.content ?? '';
    const gate = /\[gate:([\w-]+)\]/.exec(user);
    if (gate) await this.gate(gate[1]).promise;
    const synthGate = /\[synth-gate:([\w-]+)\]/.exec(user);
    if (synthGate && user.startsWith('Combine these subtask results')) await this.gate(synthGate[1]).promise;
    const big = /\[big:(\d+)\]/.exec(user);
    if (!big) return this.inner.complete(req, onDelta);
    const text = /json array of subtasks/i.test(system)
      ? JSON.stringify(range(1, 8).map((i) => ({ id: `part-${i}`, description: `part ${i}` })))
      : 'x'.repeat(Number(big[1]));
    for (let i = 0; i < text.length; i += 65_536) {
      if (user.includes('[pace]')) await new Promise((r) => setTimeout(r, 1));
      onDelta?.(text.slice(i, i + 65_536));
    }
    return {
      text,
      model: 'offline-deterministic',
      provider: 'offline',
      finishReason: 'stop',
      usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2, costUsd: 0 },
    };
  }
}

/** A raw HTTP client that sends its request and then does not read until drain() is called. */
function stalledClient(t: TestApp, path: string) {
  const sock = net.connect(t.app.gatewayPort!, '127.0.0.1');
  sock.pause();
  sock.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
  sock.on('error', () => {});
  const chunks: Buffer[] = [];
  const closed = new Promise<void>((resolve) => sock.on('close', () => resolve()));
  let reading = false;
  return {
    sock,
    /** Starts reading; what arrived so far is in received(). */
    resume() {
      if (!reading) sock.on('data', (c: Buffer) => chunks.push(c));
      reading = true;
      sock.resume();
    },
    received: () => Buffer.concat(chunks),
    /** Resumes reading and resolves with everything received once the server closed. */
    async drain(): Promise<string> {
      this.resume();
      await closed;
      return Buffer.concat(chunks).toString('utf8');
    },
  };
}

/** Decodes an HTTP/1.1 chunked response (possibly incomplete). */
function dechunk(raw: string): { head: string; body: string } {
  const i = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, i);
  let rest = raw.slice(i + 4);
  let body = '';
  for (;;) {
    const j = rest.indexOf('\r\n');
    if (j < 0) break;
    const n = parseInt(rest.slice(0, j), 16);
    if (!n || rest.length < j + 2 + n) break;
    body += rest.slice(j + 2, j + 2 + n);
    rest = rest.slice(j + 2 + n + 2);
  }
  return { head, body };
}

/** The seqs of the SSE event frames in a decoded body, and its non-event frames. */
function sseBody(body: string): { seqs: number[]; others: string[] } {
  const seqs: number[] = [];
  const others: string[] = [];
  for (const b of body.split('\n\n')) {
    if (!b || b.startsWith(':')) continue;
    if (/^id: /.test(b)) seqs.push(JSON.parse(b.slice(b.indexOf('data: ') + 6)).seq as number);
    else others.push(b);
  }
  return { seqs, others };
}

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

// --- slow provider: clients joining mid-workflow, fan-out -----------------------------------

describe('live fan-out (slow offline provider)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ OFFLINE_LLM_CHUNK_DELAY_MS: '3', PARTIAL_CHUNK_CHARS: '8' });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('clients joining mid-workflow see every seq exactly once, in order; resuming mid-workflow too', async () => {
    const id = await submit(t, { query: 'Describe tides. Then explain the moon. And then summarise.', mode: 'complex' });
    let joined: Promise<SseResult> | undefined;
    let resumed: Promise<SseResult> | undefined;
    let endedAtJoin: boolean | undefined;
    let resumeAfter = 0;
    const first = sse(sseUrl(t, id), {
      until: (f) => {
        if (!joined && f.event !== 'done' && JSON.parse(f.data).seq >= 10) {
          endedAtJoin = gw(t).hub.feeds.get(id)?.ended;
          resumeAfter = JSON.parse(f.data).seq;
          joined = sse(sseUrl(t, id));
          resumed = sse(sseUrl(t, id), { headers: { 'Last-Event-ID': f.id! } });
        }
        return false;
      },
    });
    const a = await first;
    expect(joined, 'the first client saw seq 10').toBeDefined();
    const [b, c] = await Promise.all([joined!, resumed!]);
    expect(endedAtJoin, 'the second client joined before the workflow ended').toBe(false);
    const all = eventsOf(a.frames);
    expect(all.length).toBeGreaterThan(50);
    expect(seqs(all)).toEqual(range(1, all.length));
    expect(all.at(-1)!.type).toBe('STREAM_END');
    expectWellFormed(a.frames);
    expectWellFormed(b.frames);
    expect(eventsOf(b.frames)).toEqual(all);
    expectWellFormed(c.frames);
    expect(eventsOf(c.frames)).toEqual(all.filter((e) => e.seq > resumeAfter));
  });

  it('N clients of one workflow share one upstream NATS subscription and all get the same events', async () => {
    const id = await submit(t, { query: 'Explain fan out. Then explain fan in.', mode: 'complex' });
    const n = 8;
    const clients = Array.from({ length: n }, () => sse(sseUrl(t, id)));
    const wsClient = wsCollect(`ws://127.0.0.1:${t.app.gatewayPort}/api/v1/stream/ws?workflow_id=${id}`);
    const feed = await waitFor(async () => {
      const f = gw(t).hub.feeds.get(id);
      return f && f.subscribers.size === n + 1 ? f : undefined;
    });
    expect(feed.ended).toBe(false);
    expect(eventSubs(t, id)).toBe(1);
    expect([...gw(t).hub.feeds.keys()].filter((k) => k === id)).toHaveLength(1);
    const results = await Promise.all(clients);
    const ws = await wsClient;
    const first = eventsOf(results[0].frames);
    expect(seqs(first)).toEqual(range(1, first.length));
    for (const r of results) {
      expectWellFormed(r.frames);
      expect(eventsOf(r.frames)).toEqual(first);
    }
    expect(seqs(ws.messages)).toEqual(seqs(first));
    // The feed (and its subscription) goes away after its last client left.
    expect(feed.subscribers.size).toBe(0);
    await waitFor(async () => eventSubs(t, id) === 0 && !gw(t).hub.feeds.has(id), 15_000, 100);
  });
});

// --- tiny retention: explicit gaps -----------------------------------------------------------

describe('replay gap (EVENTS_MAX_PER_WORKFLOW=16, STREAMING_RING_CAPACITY=16)', () => {
  const llm = new TestLlm();
  let t: TestApp;
  let id: string;
  let total: number;
  beforeAll(async () => {
    t = await startTestApp({ EVENTS_MAX_PER_WORKFLOW: '16', STREAMING_RING_CAPACITY: '16', PARTIAL_CHUNK_CHARS: '5' }, { llm });
    id = await submit(t, { query: 'Produce many events. Then produce more. And then finish.', mode: 'complex' });
    await waitTerminal(t, id);
    // The archived STREAM_END carries the number of events the workflow produced.
    const h = await waitFor(async () => {
      const b = await json(await fetch(`${t.base}/api/v1/tasks/${id}/events?limit=5000`));
      return b.events.at(-1)?.type === 'STREAM_END' ? b : undefined;
    });
    total = h.events.at(-1).seq;
    expect(total).toBeGreaterThan(100);
  });
  afterAll(async () => {
    await t?.stop();
  });

  function expectGapThenTail(frames: Frame[], after: number) {
    expect(frames[0].event).toBe('REPLAY_GAP');
    const gap = JSON.parse(frames[0].data);
    expect(gap).toMatchObject({ type: 'REPLAY_GAP', requested_after: after });
    const evs = eventsOf(frames);
    expect(gap.first_available_seq).toBe(evs[0].seq);
    expect(evs[0].seq).toBeGreaterThan(after + 1);
    // No silent gap: from the first retained event to STREAM_END, contiguous.
    expect(seqs(evs)).toEqual(range(gap.first_available_seq, total));
    expect(evs.length).toBeLessThanOrEqual(16);
    expect(evs.at(-1)!.type).toBe('STREAM_END');
    expect(frames.filter((f) => f.event === 'REPLAY_GAP')).toHaveLength(1);
    expectWellFormed(frames);
  }

  it('resuming from seq 1 after the early events expired yields REPLAY_GAP, then the retained events', async () => {
    const r = await sse(sseUrl(t, id, '&last_event_id=1'));
    expectGapThenTail(r.frames, 1);
    const byHeader = await sse(sseUrl(t, id), { headers: { 'Last-Event-ID': '3' } });
    expectGapThenTail(byHeader.frames, 3);
  });

  it('a fresh client (no resume point) is told about the expired events too', async () => {
    const r = await sse(sseUrl(t, id));
    expectGapThenTail(r.frames, 0);
  });

  it('resuming inside the retained window gives no gap', async () => {
    const after = total - 5;
    const r = await sse(sseUrl(t, id, `&last_event_id=${after}`));
    expect(r.frames.some((f) => f.event === 'REPLAY_GAP')).toBe(false);
    expect(seqs(eventsOf(r.frames))).toEqual(range(after + 1, total));
  });

  it('the ring of a live feed trims too: a late resume from 1 gets the gap', async () => {
    const live = await submit(t, { query: '[gate:gap-live] Another long one. Then more. And then done.', mode: 'complex' });
    const client = sse(sseUrl(t, live));
    await waitFor(async () => gw(t).hub.feeds.get(live)?.subscribers.size === 1);
    llm.gate('gap-live').open();
    const l = await client;
    expect(l.frames.some((f) => f.event === 'REPLAY_GAP')).toBe(false);
    // With a 16-event ring, a live client the machine cannot schedule fast enough may be
    // dropped (event: error) during a burst; whatever it did get is a contiguous prefix.
    const got = eventsOf(l.frames);
    expect(seqs(got)).toEqual(range(1, got.length));
    const history = await waitFor(async () => {
      const h = await json(await fetch(`${t.base}/api/v1/tasks/${live}`));
      return h.status === 'TASK_STATUS_COMPLETED' ? h : undefined;
    });
    expect(history.status).toBe('TASK_STATUS_COMPLETED');
    const all = l.frames.some((f) => f.event === 'error') ? range(1, gw(t).hub.feeds.get(live)!.lastSeq).map((seq) => ({ seq })) : got;
    expect(all.length).toBeGreaterThan(100);
    // The feed lingers after its client left; its ring now holds the last 16 events.
    expect(gw(t).hub.feeds.get(live)?.ring.length).toBe(16);
    const r = await sse(sseUrl(t, live, '&last_event_id=1'));
    expect(JSON.parse(r.frames[0].data)).toMatchObject({ type: 'REPLAY_GAP', requested_after: 1, first_available_seq: all.length - 15 });
    expect(seqs(eventsOf(r.frames))).toEqual(range(all.length - 15, all.length));
  });

  it('WebSocket sends the gap as a JSON message first', async () => {
    const r = await wsCollect(`ws://127.0.0.1:${t.app.gatewayPort}/api/v1/stream/ws?workflow_id=${id}&last_event_id=1`);
    expect(r.messages[0]).toMatchObject({ type: 'REPLAY_GAP', requested_after: 1 });
    const first = (r.messages[0] as unknown as { first_available_seq: number }).first_available_seq;
    expect(seqs(r.messages.slice(1))).toEqual(range(first, total));
    expect(r.code).toBe(1000);
  });
});

// --- heartbeats and inactivity ---------------------------------------------------------------

describe('heartbeat and inactivity (SSE_HEARTBEAT_SECONDS=1, SSE_INACTIVITY_SECONDS=2)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ SSE_HEARTBEAT_SECONDS: '1', SSE_INACTIVITY_SECONDS: '2' });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('sends heartbeat comments and closes a stream that never gets an event', async () => {
    const id = randomUUID();
    const r = await sse(sseUrl(t, id), { timeoutMs: 20_000 });
    expect(r.status).toBe(200);
    expect(r.closedByServer).toBe(true);
    expect(r.frames).toEqual([]);
    expect(r.comments.filter((c) => c === 'heartbeat').length).toBeGreaterThanOrEqual(1);
    expect(r.comments.at(-1)).toMatch(/closing after 2 seconds without events.*Last-Event-ID/);
    expect(sseSet(t).size).toBe(0);
  });
});

// --- slow-client protection ------------------------------------------------------------------

describe('slow clients (STREAM_MAX_BUFFER_BYTES=1024)', () => {
  const llm = new TestLlm();
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ STREAM_MAX_BUFFER_BYTES: '1024', PARTIAL_CHUNK_CHARS: '8192' }, { llm });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('drops a client that does not read while a normal client still gets everything', async () => {
    // 8 subtasks of 400 kB each: over 10 MB of events, more than the kernel buffers of a socket
    // nobody reads. Paced, so the normal client (in this process) keeps up.
    const id = await submit(t, { query: '[gate:slow-1] [big:400000] [pace] big output', mode: 'complex', max_concurrent_agents: 1 }); // one subtask at a time, as paced
    const slow = stalledClient(t, `/api/v1/stream/sse?workflow_id=${id}`);
    const feed = await waitFor(async () => {
      const f = gw(t).hub.feeds.get(id);
      return f?.subscribers.size === 1 ? f : undefined;
    });
    const slowSub = [...feed.subscribers][0];
    expect(sseSet(t).has(slowSub)).toBe(true);
    let slowGoneAtEnd: boolean | undefined;
    const normal = sse(sseUrl(t, id), {
      timeoutMs: 60_000,
      until: (f) => {
        if (f.event === 'STREAM_END') slowGoneAtEnd = !feed.subscribers.has(slowSub) && !sseSet(t).has(slowSub);
        return false;
      },
    });
    await waitFor(async () => feed.subscribers.size === 2);
    llm.gate('slow-1').open();
    const r = await normal;
    expectWellFormed(r.frames);
    const evs = eventsOf(r.frames);
    expect(seqs(evs)).toEqual(range(1, evs.length));
    expect(evs.at(-1)!.type).toBe('STREAM_END');
    expect(evs.filter((e) => e.type === 'LLM_OUTPUT')).toHaveLength(10);
    expect(r.frames.some((f) => f.event === 'error')).toBe(false);
    // The slow client was gone before the stream ended for the normal one.
    expect(slowGoneAtEnd).toBe(true);
    expect(sseSet(t).size).toBe(0);
    // What it was sent: a contiguous prefix, then the drop notice, and no done.
    const { head, body } = dechunk(await slow.drain());
    expect(head).toMatch(/^HTTP\/1\.1 200 OK/);
    const { seqs: got, others } = sseBody(body);
    expect(others).toHaveLength(1);
    expect(others[0]).toMatch(/^event: error\ndata: \{"error":"client too slow/);
    expect(body.endsWith(`${others[0]}\n\n`)).toBe(true);
    expect(got.length).toBeGreaterThan(0);
    expect(got).toEqual(range(1, got.length));
    expect(got.length).toBeLessThan(evs.length);
    expect(body).not.toContain('event: done');
  }, 90_000);
});

// --- a client catching up after a stall --------------------------------------------------------

describe('catching up after a stall (STREAM_MAX_BUFFER_BYTES=32 MB, no heartbeats)', () => {
  const llm = new TestLlm();
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ STREAM_MAX_BUFFER_BYTES: String(32 * 1024 * 1024), PARTIAL_CHUNK_CHARS: '8192', SSE_HEARTBEAT_SECONDS: '3600' }, { llm });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('a client that stalled and reads again gets everything while the workflow is quiet', async () => {
    const id = await submit(t, { query: '[gate:tail-go] [synth-gate:tail-hold] [big:400000] catch up', mode: 'complex' });
    // A first client keeps the feed; the workflow runs up to its synthesizer and waits there.
    const keeper = sse(sseUrl(t, id), { timeoutMs: 60_000, until: (f) => f.event === 'AGENT_STARTED' && JSON.parse(f.data).agent_id === 'synthesizer' });
    const feed = await waitFor(async () => {
      const f = gw(t).hub.feeds.get(id);
      return f?.subscribers.size === 1 ? f : undefined;
    });
    llm.gate('tail-go').open();
    const k = await keeper;
    const held = eventsOf(k.frames).at(-1)!;
    expect(held).toMatchObject({ type: 'AGENT_STARTED', agent_id: 'synthesizer' });
    expect(feed.lastSeq).toBe(held.seq);
    // A second client that does not read: the replay (over 10 MB, one write with this buffer
    // limit) stalls its socket, with most of it buffered in the server.
    const c = stalledClient(t, `/api/v1/stream/sse?workflow_id=${id}`);
    await waitFor(async () => [...feed.subscribers].find((s) => s.backpressured));
    // It reads again while no new event arrives: everything up to the held point must come through.
    c.resume();
    await waitFor(async () => c.received().includes(`"seq":${held.seq},`), 20_000, 50);
    expect(sseBody(dechunk(c.received().toString('utf8')).body).seqs).toEqual(range(1, held.seq));
    // Then the rest of the workflow, and the end.
    llm.gate('tail-hold').open();
    const { body } = dechunk(await c.drain());
    const { seqs: all, others } = sseBody(body);
    expect(all).toEqual(range(1, all.length));
    expect(all.length).toBeGreaterThan(held.seq);
    expect(others).toEqual(['event: done\ndata: [DONE]']);
  }, 90_000);
});
