/**
 * HTTP load generator for the task-intake benchmark: keep-alive HTTP/1.1 over raw `net`
 * sockets (one request in flight per connection, Content-Length responses), so the client
 * costs little and adds no pooling logic of its own. Driven by bench/run.ts over IPC.
 *
 * closed: `concurrency` connections each send the next request as soon as the previous answer
 *         arrived, until `count` requests or `durationMs` (whichever first).
 * rate:   one request every 1/rate s (open loop) on an idle connection, for `durationMs`.
 * Every request records its send and answer times (µs, monotonic clock) and the task_id.
 */
import net from 'node:net';
import { nowUs, serve } from '../lib/ipc.js';

const HDR_END = Buffer.from('\r\n\r\n');

interface Answer {
  status: number;
  body: Buffer;
}

class Conn {
  private sock?: net.Socket;
  private buf: Buffer = Buffer.alloc(0);
  private waiting?: { resolve: (a: Answer) => void; reject: (e: Error) => void };
  busy = false;
  constructor(
    private readonly host: string,
    private readonly port: number,
  ) {}

  private connect(): net.Socket {
    const s = net.connect({ host: this.host, port: this.port, noDelay: true });
    s.on('data', (d) => this.onData(d));
    s.on('error', (err) => this.fail(err));
    s.on('close', () => {
      if (this.sock === s) this.sock = undefined;
      this.fail(new Error('connection closed'));
    });
    return s;
  }

  private fail(err: Error): void {
    const w = this.waiting;
    this.waiting = undefined;
    this.buf = Buffer.alloc(0);
    w?.reject(err);
  }

  private onData(d: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
    const i = this.buf.indexOf(HDR_END);
    if (i < 0) return;
    const head = this.buf.subarray(0, i).toString('latin1');
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0);
    const cl = /\r\ncontent-length:\s*(\d+)/i.exec(head);
    if (!cl) {
      this.fail(new Error(`response without Content-Length: ${head.slice(0, 200)}`));
      this.sock?.destroy();
      return;
    }
    const len = Number(cl[1]);
    if (this.buf.length < i + 4 + len) return;
    const body = this.buf.subarray(i + 4, i + 4 + len);
    this.buf = this.buf.subarray(i + 4 + len);
    const w = this.waiting;
    this.waiting = undefined;
    w?.resolve({ status, body });
  }

  request(raw: Buffer): Promise<Answer> {
    this.sock ??= this.connect();
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.sock!.write(raw);
    });
  }

  close(): void {
    this.sock?.destroy();
  }
}

let conns: Conn[] = [];
let target = { host: '127.0.0.1', port: 0, path: '/api/v1/tasks' };
let counter = 0;

function requestBytes(): Buffer {
  const body = JSON.stringify({ query: `Bench task ${++counter}: summarize the benefits of event sourcing in one sentence`, mode: 'simple' });
  return Buffer.from(
    `POST ${target.path} HTTP/1.1\r\nHost: ${target.host}:${target.port}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

interface Rec {
  id: string;
  sendUs: number;
  answerUs: number;
  status: number;
}

async function one(c: Conn, out: Rec[], errors: string[]): Promise<void> {
  const sendUs = nowUs();
  try {
    const a = await c.request(requestBytes());
    const answerUs = nowUs();
    let id = '';
    if (a.status === 200 || a.status === 201) {
      try {
        id = (JSON.parse(a.body.toString()) as { task_id?: string }).task_id ?? '';
      } catch {
        /* counted as an error below */
      }
    }
    if (!id && errors.length < 5) errors.push(`HTTP ${a.status}: ${a.body.subarray(0, 200).toString()}`);
    out.push({ id, sendUs, answerUs, status: a.status });
  } catch (err) {
    if (errors.length < 5) errors.push((err as Error).message);
    out.push({ id: '', sendUs, answerUs: nowUs(), status: 0 });
  }
}

function summary(recs: Rec[], errors: string[], t0: number) {
  const statuses: Record<string, number> = {};
  for (const r of recs) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
  // Compact: [id, sendUs, answerUs] for accepted tasks only; times relative to t0.
  const accepted = recs.filter((r) => r.id).map((r) => [r.id, r.sendUs - t0, r.answerUs - t0]);
  return { t0Us: t0, sent: recs.length, accepted, statuses, errors };
}

serve({
  init(a: { host: string; port: number; path: string; conns: number }) {
    conns.forEach((c) => c.close());
    target = { host: a.host, port: a.port, path: a.path };
    conns = Array.from({ length: a.conns }, () => new Conn(a.host, a.port));
    return true;
  },

  async closed(a: { concurrency: number; count?: number; durationMs?: number }) {
    const recs: Rec[] = [];
    const errors: string[] = [];
    const t0 = nowUs();
    const end = performance.now() + (a.durationMs ?? 60_000);
    let left = a.count ?? Infinity;
    await Promise.all(
      conns.slice(0, a.concurrency).map(async (c) => {
        while (left > 0 && performance.now() < end) {
          left--;
          await one(c, recs, errors);
        }
      }),
    );
    return summary(recs, errors, t0);
  },

  async rate(a: { rate: number; durationMs: number }) {
    const recs: Rec[] = [];
    const errors: string[] = [];
    const t0 = nowUs();
    const start = performance.now();
    const total = Math.floor((a.rate * a.durationMs) / 1000);
    let sent = 0;
    let skipped = 0;
    const inflight: Promise<void>[] = [];
    while (sent < total) {
      const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * a.rate) + 1);
      while (sent < due) {
        sent++;
        const c = conns.find((x) => !x.busy);
        if (!c) {
          skipped++;
          continue;
        }
        c.busy = true;
        inflight.push(one(c, recs, errors).finally(() => (c.busy = false)));
      }
      const nextAt = start + (sent * 1000) / a.rate;
      await new Promise((r) => setTimeout(r, Math.max(0, nextAt - performance.now())));
    }
    await Promise.all(inflight);
    return { ...summary(recs, errors, t0), skipped };
  },

  close() {
    conns.forEach((c) => c.close());
    conns = [];
    return true;
  },
});
