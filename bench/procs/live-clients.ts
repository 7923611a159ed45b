/**
 * Client process of the live benchmark: submits tasks and follows each with one SSE
 * connection, checking every token and measuring each delta's delay. Driven over IPC.
 *
 * `run` against the service: N standard tasks `POST /api/v1/tasks` (keep-alive agent) spread
 * uniformly over `spreadMs`, each submission timed from request sent to response read; each
 * accepted task is followed at once with `GET /api/v1/stream/sse?workflow_id=<id>`. Against the
 * reference the same N connections are opened at the same pace, without submissions.
 *
 * Every token is `<index>:<production µs> ` (paced-model.ts): indices must continue exactly
 * (a smaller one is a repeat, a larger one a gap) until all `tokens` arrived and `event: done`
 * closed the stream. A delta's delay is now minus the production time of its oldest token,
 * on the CLOCK_MONOTONIC every process shares. A stream is live from its first delta to its
 * end; the peak of live streams says whether they all ran at once.
 *
 * Resume check: every `resumeEvery`-th stream drops its connection after about `resumeAt` of
 * its tokens, reconnects 200 ms later with `Last-Event-ID: <id of the last frame it read>` and
 * must get exactly the rest. Deltas replayed on resume (tokens produced before the reconnect)
 * are checked but not timed: their delay is the client's own absence.
 *
 * Bounded: a stream not ended by `timeoutMs` after the start is lost, not waited for.
 */
import http from 'node:http';
import { Histogram, percentilesOf } from '../lib/hist.js';
import { emit, nowUs, serve } from '../lib/ipc.js';

const RECONNECT_MS = 200;
const DELTA_EVENT = 'thread.message.delta';
const DELTA_KEY = '"delta":"';

interface RunArgs {
  host: string;
  port: number;
  mode: 'service' | 'ref';
  n: number;
  spreadMs: number;
  tokens: number;
  resumeEvery: number;
  resumeAt: number;
  timeoutMs: number;
}

interface Totals {
  hist: Histogram;
  deltaEvents: number;
  tokens: number;
  violations: number;
  violationSamples: string[];
  live: number;
  peakLive: number;
  errors: string[];
  lastEndUs: number;
  /** First connection of each stream: from the request to the response's headers (µs). */
  openUs: number[];
}

const note = (list: string[], s: string) => {
  if (list.length < 10) list.push(s);
};

class Stream {
  expected = 0;
  carry = '';
  buf = '';
  lastId = '';
  violations = 0;
  started = false;
  ended = false;
  lost = false;
  /** Set once this stream has dropped its connection for the resume check. */
  resumeFrom?: string;
  reconnectUs = 0;
  violationsAtResume = 0;
  private req?: http.ClientRequest;
  private gen = 0;

  constructor(
    readonly index: number,
    readonly path: string,
    private readonly a: RunArgs,
    private readonly t: Totals,
    private readonly resumes: boolean,
    private readonly onDone: () => void,
  ) {}

  connect(lastEventId?: string): void {
    const gen = ++this.gen;
    this.buf = '';
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (lastEventId) headers['last-event-id'] = lastEventId;
    const t0 = nowUs();
    const req = http.get({ host: this.a.host, port: this.a.port, path: this.path, headers, agent: false }, (res) => {
      if (gen === 1) this.t.openUs.push(nowUs() - t0);
      if (res.statusCode !== 200) {
        this.fail(`HTTP ${res.statusCode} on ${lastEventId ? 'resume' : 'open'}`);
        res.resume();
        return;
      }
      res.setEncoding('utf8');
      res.on('data', (s: string) => {
        if (gen === this.gen) this.onData(s);
      });
      res.on('end', () => {
        if (gen === this.gen && !this.ended) this.fail(`stream closed by the server without event: done after ${this.expected} tokens`);
      });
      res.on('error', () => {});
    });
    req.on('error', (err) => {
      if (gen === this.gen && !this.ended) this.fail(`connection error: ${err.message}`);
    });
    this.req = req;
  }

  private onData(s: string): void {
    const now = nowUs();
    this.buf += s;
    let i: number;
    while ((i = this.buf.indexOf('\n\n')) >= 0) {
      const frame = this.buf.slice(0, i);
      this.buf = this.buf.slice(i + 2);
      this.onFrame(frame, now);
      if (this.ended) return;
      if (this.resumes && this.resumeFrom === undefined && this.expected >= this.a.resumeAt * this.a.tokens) {
        this.dropAndResume();
        return;
      }
    }
  }

  private onFrame(frame: string, now: number): void {
    let event = '';
    let data = '';
    let id = '';
    for (const line of frame.split('\n')) {
      if (line.startsWith('id: ')) id = line.slice(4);
      else if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data = line.slice(6);
    }
    if (event === DELTA_EVENT) this.onDelta(data, now);
    else if (event === 'done') this.finish();
    else if (event === 'REPLAY_GAP') this.violation(`replay gap reported on resume: ${data.slice(0, 200)}`);
    else if (event === 'error') this.fail(`server error event: ${data.slice(0, 200)}`);
    if (id) this.lastId = id;
  }

  private onDelta(data: string, now: number): void {
    const k = data.indexOf(DELTA_KEY);
    if (k < 0) return;
    const text = this.carry + data.slice(k + DELTA_KEY.length, data.indexOf('"', k + DELTA_KEY.length));
    const cut = text.lastIndexOf(' ');
    // A piece may end inside a token (the service cuts long pieces by length): keep the rest.
    this.carry = text.slice(cut + 1);
    if (cut < 0) return;
    if (!this.started) {
      this.started = true;
      this.t.peakLive = Math.max(this.t.peakLive, ++this.t.live);
    }
    this.t.deltaEvents++;
    let firstUs = -1;
    for (const tok of text.slice(0, cut).split(' ')) {
      if (!tok) continue;
      const c = tok.indexOf(':');
      const idx = Number(tok.slice(0, c));
      const us = Number(tok.slice(c + 1));
      if (firstUs < 0) firstUs = us;
      if (idx === this.expected) {
        this.expected++;
        this.t.tokens++;
      } else if (idx < this.expected) {
        this.violation(`stream ${this.index}: token ${idx} repeated (expected ${this.expected})`);
      } else {
        this.violation(`stream ${this.index}: gap, token ${idx} after ${this.expected - 1}`);
        this.t.tokens++;
        this.expected = idx + 1;
      }
    }
    // Tokens produced while this client was away are replay, not delivery delay.
    if (firstUs >= 0 && !(this.resumeFrom !== undefined && firstUs < this.reconnectUs)) this.t.hist.record(now - firstUs);
  }

  private violation(s: string): void {
    this.violations++;
    this.t.violations++;
    note(this.t.violationSamples, s);
  }

  private dropAndResume(): void {
    this.resumeFrom = this.lastId;
    this.violationsAtResume = this.violations;
    this.gen++;
    this.req?.destroy();
    if (!this.lastId) {
      this.fail('resume: no event id read before the disconnect');
      return;
    }
    setTimeout(() => {
      if (this.ended) return;
      this.reconnectUs = nowUs();
      this.connect(this.resumeFrom);
    }, RECONNECT_MS);
  }

  /** Exact: after the reconnect, every remaining token once, in order, and the stream ended. */
  get resumeExact(): boolean {
    return this.resumeFrom !== undefined && this.ended && !this.lost && this.violations === this.violationsAtResume && this.expected === this.a.tokens;
  }

  get completed(): boolean {
    return this.ended && !this.lost && this.expected === this.a.tokens && this.carry === '';
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.gen++;
    this.req?.destroy();
    if (this.started) this.t.live--;
    this.t.lastEndUs = nowUs();
    if (this.expected !== this.a.tokens) note(this.t.errors, `stream ${this.index}: ended after ${this.expected} of ${this.a.tokens} tokens`);
    this.onDone();
  }

  fail(msg: string): void {
    if (this.ended) return;
    note(this.t.errors, `stream ${this.index}: ${msg}`);
    this.lost = true;
    this.finish();
  }
}

/** POST /api/v1/tasks; resolves with the workflow id (or an error) and the answer time. */
function submit(agent: http.Agent, a: RunArgs, i: number): Promise<{ id?: string; error?: string; us: number }> {
  const body = JSON.stringify({ query: `live stream ${i}: tell a long story`, mode: 'standard' });
  const t0 = nowUs();
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: a.host,
        port: a.port,
        method: 'POST',
        path: '/api/v1/tasks',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (s: string) => (text += s));
        res.on('end', () => {
          const us = nowUs() - t0;
          if (res.statusCode !== 200 && res.statusCode !== 201) {
            resolve({ error: `HTTP ${res.statusCode}: ${text.slice(0, 200)}`, us });
            return;
          }
          try {
            const j = JSON.parse(text) as { workflow_id?: string; task_id?: string };
            const id = j.workflow_id ?? j.task_id;
            resolve(id ? { id, us } : { error: `no task id in ${text.slice(0, 200)}`, us });
          } catch {
            resolve({ error: `unreadable answer ${text.slice(0, 200)}`, us });
          }
        });
      },
    );
    req.on('error', (err) => resolve({ error: err.message, us: nowUs() - t0 }));
    // Bounded like the streams: an unanswered submission is a failure, not a wait.
    req.setTimeout(a.timeoutMs, () => req.destroy(new Error(`no answer within ${a.timeoutMs} ms`)));
    req.end(body);
  });
}

async function run(a: RunArgs) {
  const t: Totals = {
    hist: new Histogram(),
    deltaEvents: 0,
    tokens: 0,
    violations: 0,
    violationSamples: [],
    live: 0,
    peakLive: 0,
    errors: [],
    lastEndUs: 0,
    openUs: [],
  };
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const streams: Stream[] = [];
  const submitUs: number[] = [];
  /** Failed submissions by answer (status and body). */
  const submitErrors: Record<string, number> = {};
  let submitFailed = 0;
  let ended = 0;
  let maxLagMs = 0;
  let allEnded!: () => void;
  const done = new Promise<void>((r) => (allEnded = r));
  const onDone = () => {
    if (++ended === a.n) allEnded();
  };
  const t0 = nowUs();
  const progress = setInterval(() => emit('progress', { ended, live: t.live, peakLive: t.peakLive, tokens: t.tokens, submitted: submitUs.length }), 2000);

  const start = (i: number) => {
    maxLagMs = Math.max(maxLagMs, (nowUs() - t0) / 1000 - (i * a.spreadMs) / a.n);
    const resumes = a.mode === 'service' && a.resumeEvery > 0 && i % a.resumeEvery === 0;
    if (a.mode === 'ref') {
      const s = new Stream(i, `/s/${i}`, a, t, false, onDone);
      streams.push(s);
      s.connect();
      return;
    }
    void submit(agent, a, i).then((r) => {
      submitUs.push(r.us);
      if (!r.id) {
        submitFailed++;
        const e = r.error ?? 'unknown';
        submitErrors[e] = (submitErrors[e] ?? 0) + 1;
        onDone();
        return;
      }
      const s = new Stream(i, `/api/v1/stream/sse?workflow_id=${encodeURIComponent(r.id)}`, a, t, resumes, onDone);
      streams.push(s);
      s.connect();
    });
  };
  // Uniform spread: stream i starts at i * spreadMs / n (a timer per millisecond slot).
  let next = 0;
  await new Promise<void>((resolve) => {
    const step = () => {
      const due = Math.min(a.n, Math.floor((((nowUs() - t0) / 1000) * a.n) / a.spreadMs) + 1);
      while (next < due) start(next++);
      if (next < a.n) setTimeout(step, 1);
      else resolve();
    };
    step();
  });

  const timer = setTimeout(allEnded, a.timeoutMs);
  await done;
  clearTimeout(timer);
  clearInterval(progress);
  for (const s of streams) if (!s.ended) s.fail(`lost: not ended within ${a.timeoutMs} ms (${s.expected} tokens read)`);
  agent.destroy();

  const resumed = streams.filter((s) => s.resumeFrom !== undefined);
  const seconds = (Math.max(t.lastEndUs, t0) - t0) / 1e6;
  return {
    mode: a.mode,
    n: a.n,
    tokensPerStream: a.tokens,
    submitted: a.mode === 'service' ? submitUs.length - submitFailed : undefined,
    submitFailed,
    submitErrors,
    submitLatencyUs: a.mode === 'service' ? percentilesOf(submitUs) : undefined,
    maxStartLagMs: +maxLagMs.toFixed(1),
    openLatencyUs: percentilesOf(t.openUs),
    streamsOpened: streams.length,
    completed: streams.filter((s) => s.completed).length,
    lost: streams.filter((s) => s.lost).length,
    tokensDelivered: t.tokens,
    tokensExpected: a.n * a.tokens,
    orderViolations: t.violations,
    violationSamples: t.violationSamples,
    deltaEvents: t.deltaEvents,
    seconds,
    eventsPerSecond: t.deltaEvents / seconds,
    deltaLatencyUs: t.hist.summary(),
    peakLive: t.peakLive,
    resumes: { attempted: resumed.length, exact: resumed.filter((s) => s.resumeExact).length },
    errors: t.errors,
  };
}

export type LiveRun = Awaited<ReturnType<typeof run>>;

serve({ run: (a: RunArgs) => run(a) });
