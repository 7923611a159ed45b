/**
 * Floor for the live benchmark: a node:http server that, for every SSE connection, streams a
 * completion from the paced model (node:http client, keep-alive) and relays its tokens to the
 * client as the service's delta frames with the same 50 ms coalescing, then `event: done`. No
 * NATS, no database, no runtime, no openai SDK: the least a process that both reads the model
 * and writes the streams does per token. It tells how much of a core the two ends of the
 * service's hot path cost by themselves on this machine, next to the reference (which only
 * writes). Driven over IPC.
 */
import http from 'node:http';
import { serve } from '../lib/ipc.js';
import { listenLocal } from '../lib/listen.js';

const FLUSH_MS = 50;

let modelPort = 0;
let peak = 0;
let open = 0;
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
const body = JSON.stringify({ model: 'paced', stream: true, messages: [{ role: 'user', content: 'tell a long story' }] });

function relay(res: http.ServerResponse): void {
  let pending = '';
  let id = 0;
  let timer: NodeJS.Timeout | undefined;
  let buf = '';
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    if (!pending) return;
    res.write(`id: ${++id}\nevent: thread.message.delta\ndata: {"type":"LLM_PARTIAL","delta":"${pending}"}\n\n`);
    pending = '';
  };
  const req = http.request(
    { host: '127.0.0.1', port: modelPort, method: 'POST', path: '/v1/chat/completions', agent, headers: { 'content-type': 'application/json' } },
    (up) => {
      up.setEncoding('utf8');
      up.on('data', (s: string) => {
        buf += s;
        let end: number;
        while ((end = buf.indexOf('\n\n')) >= 0) {
          const ev = buf.slice(0, end);
          buf = buf.slice(end + 2);
          if (!ev.startsWith('data: ') || ev.startsWith('data: [DONE]')) continue;
          const chunk = JSON.parse(ev.slice(6)) as { choices: { delta?: { content?: string } }[] };
          const text = chunk.choices[0]?.delta?.content;
          if (!text) continue;
          pending += text;
          timer ??= setTimeout(flush, FLUSH_MS);
        }
      });
      up.on('end', () => {
        flush();
        open--;
        res.end('event: done\ndata: [DONE]\n\n');
      });
    },
  );
  req.on('error', (err) => res.destroy(err));
  res.on('close', () => {
    clearTimeout(timer);
    req.destroy();
  });
  req.end(body);
}

const server = http.createServer({ noDelay: true }, (_req, res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  res.write(': stream open\n\n');
  peak = Math.max(peak, ++open);
  relay(res);
});

serve(
  {
    listen(a: { modelPort: number }) {
      modelPort = a.modelPort;
      return listenLocal(server, 20000);
    },
    stats() {
      return { open, peakOpen: peak };
    },
  },
  () => server.close(),
);
