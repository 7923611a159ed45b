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
import { DeltaWriter } from '../lib/delta-writer.js';

const TICK_MS = 20;

interface Conn {
  out: DeltaWriter;
  next: number;
}

let tokens = 250;
let peak = 0;
const open = new Set<Conn>();
let ticker: NodeJS.Timeout | undefined;

function tick(): void {
  for (const c of open) {
    c.out.push(`${c.next}:${nowUs()} `);
    if (++c.next === tokens) {
      open.delete(c);
      c.out.end();
    }
  }
  if (!open.size) {
    clearInterval(ticker);
    ticker = undefined;
  }
}

const server = http.createServer({ noDelay: true }, (req, res) => {
  const c: Conn = { out: new DeltaWriter(res), next: 0 };
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  res.write(': stream open\n\n');
  res.on('close', () => {
    open.delete(c);
    c.out.drop();
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
