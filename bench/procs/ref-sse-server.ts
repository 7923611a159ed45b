/**
 * Reference SSE servers for the fan-out and idle-connection benchmarks: `uws` (a bare
 * uWebSockets.js app, the ceiling) or `http` (node:http). No NATS and no per-event work: the
 * frames are the gateway's own encoding of a benchmark event, pre-encoded once; each write
 * carries `burst` of them (one buffer shared by every client of a channel, the publish time
 * patched in once per write). Clients choose their channel with `?workflow_id=`.
 *
 * Modes: `saturate` writes a burst to every client that is not back-pressured, every
 * event-loop turn (as fast as the clients drain); `rate` writes bursts at a fixed rate per
 * channel. Back-pressure: uWS `write()` false -> wait for onWritable; node:http `write()`
 * false -> wait for 'drain'. Driven by bench/run.ts over IPC.
 */
import http from 'node:http';
import uWS, { type HttpResponse } from 'uWebSockets.js';
import { patchPt } from '../lib/frames.js';
import { nowUs, serve } from '../lib/ipc.js';
import { RateScheduler } from '../lib/schedule.js';
import { listenLocal } from '../lib/listen.js';

const kind = process.argv[2];
if (kind !== 'uws' && kind !== 'http') throw new Error('usage: ref-sse-server.ts uws|http');

// The gateway's SSE response headers (development CORS policy: any origin).
const HEADERS: Record<string, string> = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'GET, POST, PUT, PATCH, DELETE, OPTIONS',
  'Access-Control-Allow-Headers':
    'Content-Type, Authorization, X-API-Key, Idempotency-Key, traceparent, tracestate, Last-Event-ID, X-Session-ID, If-Match, Cache-Control',
  'Access-Control-Expose-Headers': 'X-Workflow-ID, X-Session-ID, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, ETag',
};

interface Client {
  write(buf: Buffer): boolean;
  bp: boolean;
  closed: boolean;
}

const channels = new Map<string, Set<Client>>();
let channelList: Set<Client>[] = [];
let batch: Buffer = Buffer.alloc(0);
let frameLen = 0;
let ptOffset = 0;
let burst = 10;
let writes = 0;
let mode: 'idle' | 'saturate' | 'rate' = 'idle';
let scheduler: RateScheduler | undefined;
let pumpScheduled = false;

function channel(wf: string): Set<Client> {
  let s = channels.get(wf);
  if (!s) {
    s = new Set();
    channels.set(wf, s);
    channelList = [...channels.values()];
  }
  return s;
}

/** One write's buffer: `burst` pre-encoded frames, the current time patched into each. */
function nextBatch(): Buffer {
  const b = Buffer.from(batch); // a fresh buffer per write: node:http may hold it queued
  const now = nowUs();
  for (let k = 0; k < burst; k++) patchPt(b, k * frameLen + ptOffset, now);
  return b;
}

function writeChannel(set: Set<Client>): boolean {
  let any = false;
  let b: Buffer | undefined;
  for (const c of set) {
    if (c.bp || c.closed) continue;
    b ??= nextBatch();
    c.write(b);
    writes++;
    any = true;
  }
  return any;
}

function pump(): void {
  pumpScheduled = false;
  if (mode !== 'saturate') return;
  let any = false;
  for (const set of channelList) if (writeChannel(set)) any = true;
  if (any) schedulePump();
}

function schedulePump(): void {
  if (pumpScheduled || mode !== 'saturate') return;
  pumpScheduled = true;
  setImmediate(pump);
}

function onWritableAgain(c: Client): void {
  c.bp = false;
  schedulePump();
}

async function listen(): Promise<number> {
  if (kind === 'uws') {
    const app = uWS.App();
    app.get('/api/v1/stream/sse', (res: HttpResponse, req) => {
      const wf = new URLSearchParams(req.getQuery() ?? '').get('workflow_id') ?? '';
      const set = channel(wf);
      const c: Client = {
        bp: false,
        closed: false,
        write(buf) {
          let ok = true;
          res.cork(() => {
            ok = res.write(buf);
          });
          if (!ok) {
            c.bp = true;
            res.onWritable(() => {
              onWritableAgain(c);
              return true;
            });
          }
          return ok;
        },
      };
      res.onAborted(() => {
        c.closed = true;
        set.delete(c);
      });
      res.cork(() => {
        res.writeStatus('200 OK');
        for (const [k, v] of Object.entries({ ...HEADERS, 'X-Workflow-ID': wf })) res.writeHeader(k, v);
        res.write(': stream open\n\n');
      });
      set.add(c);
    });
    return new Promise((resolve, reject) => {
      app.listen('127.0.0.1', 0, (sock) => {
        if (!sock) reject(new Error('uWS could not listen'));
        else resolve(uWS.us_socket_local_port(sock));
      });
    });
  }
  const server = http.createServer({ noDelay: true }, (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname !== '/api/v1/stream/sse') {
      res.writeHead(404).end();
      return;
    }
    const wf = url.searchParams.get('workflow_id') ?? '';
    const set = channel(wf);
    const c: Client = {
      bp: false,
      closed: false,
      write(buf) {
        const ok = res.write(buf);
        if (!ok) {
          c.bp = true;
          res.once('drain', () => onWritableAgain(c));
        }
        return ok;
      },
    };
    res.on('close', () => {
      c.closed = true;
      set.delete(c);
    });
    res.writeHead(200, { ...HEADERS, 'X-Workflow-ID': wf });
    res.write(': stream open\n\n');
    set.add(c);
  });
  return listenLocal(server, 20000);
}

function stopWriting(): void {
  for (const [wf, s] of channels) if (!s.size) channels.delete(wf);
  channelList = [...channels.values()];
  mode = 'idle';
  scheduler?.stop();
  scheduler = undefined;
}

serve({
  listen,
  setFrame(a: { frameB64: string; ptOffset: number; burst: number }) {
    const frame = Buffer.from(a.frameB64, 'base64');
    frameLen = frame.length;
    ptOffset = a.ptOffset;
    burst = a.burst;
    batch = Buffer.concat(Array.from({ length: burst }, () => frame));
    return { frameBytes: frameLen, writeBytes: batch.length };
  },
  saturate() {
    stopWriting();
    mode = 'saturate';
    writes = 0;
    schedulePump();
    return true;
  },
  rate(a: { eventsPerSecPerChannel: number }) {
    stopWriting();
    mode = 'rate';
    writes = 0;
    const list = channelList;
    scheduler = new RateScheduler(list.length, a.eventsPerSecPerChannel / burst, (i) => writeChannel(list[i]));
    scheduler.start();
    return { channels: list.length };
  },
  stop() {
    stopWriting();
    return { writes };
  },
  stats() {
    let n = 0;
    for (const s of channels.values()) n += s.size;
    return { clients: n, channels: channels.size, mem: process.memoryUsage() };
  },
});
