/**
 * SSE client process: many raw `net` sockets reading text/event-stream responses, counting
 * frames and measuring publish-to-client latency. Driven by bench/run.ts over IPC.
 *
 * Counting: every event frame has exactly one "\ndata: " line (comments, i.e. the ": stream
 * open" and heartbeat lines, have none), so frames = occurrences of that pattern, including
 * occurrences split between two reads. Reads use one shared buffer (net's `onread`), so a
 * socket read allocates nothing but a view.
 *
 * Latency: on every `sampleEvery`-th connection each frame's `pt` (publish time, µs of the
 * monotonic clock) is read and `now - pt` recorded. Those connections also count HTTP chunks
 * (one per server write), which gives the events carried per write.
 */
import net from 'node:net';
import { CHUNKED_END, PAT_DATA, PAT_PT, PAT_WRITE_END, PT_DIGITS, readPt } from '../lib/frames.js';
import { Histogram } from '../lib/hist.js';
import { emit, nowUs, serve } from '../lib/ipc.js';

const SHARED = Buffer.allocUnsafe(256 * 1024);
const SCRATCH = Buffer.allocUnsafe(16);
const HDR_END = Buffer.from('\r\n\r\n');
const PT_LEN = PAT_PT.length + PT_DIGITS;
const CARRY = 24;

const hist = new Histogram();
let totalFrames = 0;
let sampledFrames = 0;
let sampledWrites = 0;

class Conn {
  sock!: net.Socket;
  frames = 0;
  status = 0;
  head: Buffer | null = null;
  tail = Buffer.alloc(6);
  tailLen = 0;
  carry: Buffer | null = null;
  ended = false;
  closed = false;
  error?: string;
  onReady?: (err?: string) => void;
  constructor(
    readonly wf: number,
    readonly sampled: boolean,
  ) {}

  onData(view: Buffer): void {
    if (this.status === 0) {
      this.head = this.head ? Buffer.concat([this.head, view]) : Buffer.from(view);
      const i = this.head.indexOf(HDR_END);
      if (i < 0) {
        if (this.head.length > 16384) this.fail('response headers too large');
        return;
      }
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(this.head.subarray(0, 64).toString('latin1'));
      this.status = m ? Number(m[1]) : -1;
      const rest = this.head.subarray(i + 4);
      this.head = null;
      if (this.status !== 200) {
        this.fail(`HTTP ${this.status}: ${rest.subarray(0, 200).toString()}`);
        return;
      }
      this.onReady?.();
      this.onReady = undefined;
      if (rest.length) this.body(rest);
      return;
    }
    this.body(view);
  }

  private body(view: Buffer): void {
    let n = 0;
    const len = view.length;
    // A pattern split between the previous read and this one.
    if (this.tailLen) {
      const k = Math.min(6, len);
      this.tail.copy(SCRATCH, 0, 0, this.tailLen);
      view.copy(SCRATCH, this.tailLen, 0, k);
      const j = SCRATCH.subarray(0, this.tailLen + k).indexOf(PAT_DATA);
      if (j >= 0 && j < this.tailLen) n++;
    }
    let i = view.indexOf(PAT_DATA);
    while (i !== -1) {
      n++;
      i = view.indexOf(PAT_DATA, i + 7);
    }
    // Rolling window of the stream's last 6 bytes.
    if (len >= 6) {
      view.copy(this.tail, 0, len - 6, len);
      this.tailLen = 6;
    } else {
      const keep = Math.min(this.tailLen, 6 - len);
      this.tail.copy(this.tail, 0, this.tailLen - keep, this.tailLen);
      view.copy(this.tail, keep, 0, len);
      this.tailLen = keep + len;
    }
    if (this.sampled) this.sample(view);
    this.frames += n;
    totalFrames += n;
    if (this.tailLen === 6 && this.tail.equals(CHUNKED_END)) {
      // The server ended the stream (a dropped client gets a final `event: error` frame).
      this.ended = true;
      this.error = 'stream ended by the server';
      this.frames--;
      totalFrames--;
      this.sock.destroy();
    }
  }

  private sample(view: Buffer): void {
    const now = nowUs();
    const carryLen = this.carry ? this.carry.length : 0;
    const buf = this.carry ? Buffer.concat([this.carry, view]) : view;
    let j = buf.indexOf(PAT_PT);
    let frames = 0;
    while (j !== -1 && j + PT_LEN <= buf.length) {
      if (j + PT_LEN > carryLen) {
        hist.record(now - readPt(buf, j + PAT_PT.length));
        frames++;
      }
      j = buf.indexOf(PAT_PT, j + PT_LEN);
    }
    let w = buf.indexOf(PAT_WRITE_END);
    while (w !== -1) {
      if (w + 4 > carryLen) sampledWrites++;
      w = buf.indexOf(PAT_WRITE_END, w + 4);
    }
    sampledFrames += frames;
    this.carry = Buffer.from(buf.subarray(Math.max(0, buf.length - CARRY)));
  }

  fail(msg: string): void {
    this.error ??= msg;
    this.onReady?.(msg);
    this.onReady = undefined;
    this.sock.destroy();
  }
}

let conns: Conn[] = [];
let byWf: Conn[][] = [];
let progressTimer: NodeJS.Timeout | undefined;

function open(host: string, port: number, path: string, c: Conn, timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => c.fail(`no response headers after ${timeoutMs} ms`), timeoutMs);
    c.onReady = (err) => {
      clearTimeout(timer);
      resolve(err);
    };
    c.sock = net.connect({
      host,
      port,
      noDelay: true,
      onread: {
        buffer: SHARED,
        callback: (n: number) => {
          c.onData(SHARED.subarray(0, n));
          return true;
        },
      },
    });
    c.sock.on('connect', () => c.sock.write(`GET ${path} HTTP/1.1\r\nHost: ${host}:${port}\r\nAccept: text/event-stream\r\n\r\n`));
    c.sock.on('error', (err) => c.fail(err.message));
    c.sock.on('close', () => {
      c.closed = true;
      if (c.onReady) c.fail('closed before response headers');
    });
  });
}

function maxsPerWf(): number[] {
  return byWf.map((list) => list.reduce((m, c) => Math.max(m, c.frames), 0));
}

function minsPerWf(): number[] {
  return byWf.map((list) => {
    let m = Infinity;
    for (const c of list) if (!c.closed && !c.ended && c.frames < m) m = c.frames;
    return m === Infinity ? -1 : m;
  });
}

serve(
  {
    /** Opens perWorkflow connections to each workflow (bounded concurrency); resolves when all answered. */
    async open(a: {
      host: string;
      port: number;
      /** Connections go round-robin over these ports (several gateways) instead of `port`. */
      ports?: number[];
      path: string;
      workflows: string[];
      perWorkflow: number;
      sampleEvery: number;
      concurrency: number;
      timeoutMs: number;
    }) {
      const t0 = performance.now();
      const list: { c: Conn; path: string; port: number }[] = [];
      const ports = a.ports?.length ? a.ports : [a.port];
      const base = conns.length;
      byWf = a.workflows.map(() => []);
      for (let k = 0; k < a.perWorkflow; k++) {
        for (let w = 0; w < a.workflows.length; w++) {
          const idx = base + list.length;
          const c = new Conn(w, a.sampleEvery > 0 && idx % a.sampleEvery === 0);
          list.push({ c, path: `${a.path}${encodeURIComponent(a.workflows[w])}`, port: ports[idx % ports.length] });
          byWf[w].push(c);
        }
      }
      conns.push(...list.map((x) => x.c));
      let next = 0;
      const errors: string[] = [];
      const worker = async () => {
        while (next < list.length) {
          const { c, path, port } = list[next++];
          const err = await open(a.host, port, path, c, a.timeoutMs);
          if (err && errors.length < 5) errors.push(err);
        }
      };
      await Promise.all(Array.from({ length: Math.min(a.concurrency, list.length) }, worker));
      const failed = list.filter((x) => x.c.error).length;
      return { opened: list.length - failed, failed, errors, ms: Math.round(performance.now() - t0), sampled: list.filter((x) => x.c.sampled).length };
    },

    snapshot() {
      let ended = 0;
      let closed = 0;
      let min = Infinity;
      let max = 0;
      for (const c of conns) {
        if (c.ended) ended++;
        if (c.closed) closed++;
        if (c.frames < min) min = c.frames;
        if (c.frames > max) max = c.frames;
      }
      return {
        tUs: nowUs(),
        totalFrames,
        sampledFrames,
        sampledWrites,
        conns: conns.length,
        ended,
        closed,
        minFrames: conns.length ? min : 0,
        maxFrames: max,
        mins: minsPerWf(),
        maxs: maxsPerWf(),
        errors: conns
          .filter((c) => c.error)
          .slice(0, 3)
          .map((c) => c.error),
      };
    },

    histReset() {
      hist.reset();
      return true;
    },

    histGet() {
      return hist.summary();
    },

    progress(a: { on: boolean; intervalMs?: number }) {
      clearInterval(progressTimer);
      progressTimer = undefined;
      if (a.on) progressTimer = setInterval(() => emit('progress', minsPerWf()), a.intervalMs ?? 5);
      return true;
    },

    async closeAll() {
      clearInterval(progressTimer);
      const all = conns;
      conns = [];
      byWf = [];
      for (const c of all) c.sock?.destroy();
      const end = Date.now() + 5000;
      while (all.some((c) => c.sock && !c.sock.destroyed) && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
      totalFrames = 0;
      sampledFrames = 0;
      sampledWrites = 0;
      hist.reset();
      return { closed: all.length };
    },

    mem() {
      return process.memoryUsage();
    },
  },
  () => conns.forEach((c) => c.sock?.destroy()),
);
