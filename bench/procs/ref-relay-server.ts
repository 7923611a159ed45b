/**
 * Floor for the live benchmark: a node:http server that, for every SSE connection, streams a
 * completion from the paced model (node:http client, keep-alive) and relays its tokens to the
 * client as the service's delta frames with the same 50 ms coalescing, then `event: done`. No
 * NATS, no database, no runtime, no openai SDK: the least a process that both reads the model
 * and writes the streams does per token. It tells how much of a core the two ends of the
 * service's hot path cost by themselves on this machine, next to the reference (which only
 * writes). The model's SSE is parsed with the parser the service uses (eventsource-parser),
 * one `JSON.parse` per chunk. Driven over IPC.
 */
import http from 'node:http';
import { createParser } from 'eventsource-parser';
import { serve } from '../lib/ipc.js';
import { listenLocal } from '../lib/listen.js';
import { DeltaWriter } from '../lib/delta-writer.js';

let modelPort = 0;
let peak = 0;
let open = 0;
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
const body = JSON.stringify({ model: 'paced', stream: true, messages: [{ role: 'user', content: 'tell a long story' }] });

function relay(res: http.ServerResponse): void {
  const out = new DeltaWriter(res);
  const parser = createParser({
    onEvent: (e) => {
      if (e.data.startsWith('[DONE]')) return;
      const text = (JSON.parse(e.data) as { choices: { delta?: { content?: string } }[] }).choices[0]?.delta?.content;
      if (text) out.push(text);
    },
  });
  const req = http.request(
    { host: '127.0.0.1', port: modelPort, method: 'POST', path: '/v1/chat/completions', agent, headers: { 'content-type': 'application/json' } },
    (up) => {
      up.setEncoding('utf8');
      up.on('data', (s: string) => parser.feed(s));
      up.on('end', () => {
        open--;
        out.end();
      });
    },
  );
  req.on('error', (err) => res.destroy(err));
  res.on('close', () => {
    out.drop();
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
