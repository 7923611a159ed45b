/**
 * Reference for the live benchmark: a node:http server that produces, for every SSE
 * connection, the same token stream as the paced model (one token per 20 ms, text
 * `<index>:<production time µs> `) and writes it itself as the service's delta frames with
 * 50 ms coalescing (the service's flush bound), then `event: done`. No model server, no NATS,
 * no runtime: what delivering those streams costs on this machine. Driven over IPC.
 *
 * One shared 20 ms ticker produces every stream's tokens, as in paced-model.ts.
 */
import http from 'node:http';
import { nowUs, serve } from '../lib/ipc.js';
import { listenLocal } from '../lib/listen.js';

const TICK_MS = 20;
const FLUSH_MS = 50;

interface Conn {
  res: http.ServerResponse;
  next: number;
  pending: string;
  timer?: NodeJS.Timeout;
  id: number;
}

let tokens = 250;
let peak = 0;
const open = new Set<Conn>();
let ticker: NodeJS.Timeout | undefined;

function flush(c: Conn): void {
  clearTimeout(c.timer);
  c.timer = undefined;
  if (!c.pending) return;
  c.res.write(`id: ${++c.id}\nevent: thread.message.delta\ndata: {"type":"LLM_PARTIAL","delta":"${c.pending}"}\n\n`);
  c.pending = '';
}

function tick(): void {
  for (const c of open) {
    c.pending += `${c.next}:${nowUs()} `;
    c.timer ??= setTimeout(() => flush(c), FLUSH_MS);
    if (++c.next === tokens) {
      open.delete(c);
      flush(c);
      c.res.end('event: done\ndata: [DONE]\n\n');
    }
  }
  if (!open.size) {
    clearInterval(ticker);
    ticker = undefined;
  }
}

const server = http.createServer({ noDelay: true }, (req, res) => {
  const c: Conn = { res, next: 0, pending: '', id: 0 };
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  res.write(': stream open\n\n');
  res.on('close', () => {
    open.delete(c);
    clearTimeout(c.timer);
  });
  open.add(c);
  peak = Math.max(peak, open.size);
  ticker ??= setInterval(tick, TICK_MS);
});

serve(
  {
    listen(a: { tokens: number }) {
      tokens = a.tokens;
      return listenLocal(server, 20000);
    },
    stats() {
      return { open: open.size, peakOpen: peak };
    },
  },
  () => server.close(),
);
