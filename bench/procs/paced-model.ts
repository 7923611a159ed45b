/**
 * Paced model server for the live benchmark: an OpenAI-compatible endpoint (node:http) whose
 * completions produce one token every 20 ms (50 tokens/s), so the service streams at a human
 * pace and the benchmark measures delivery, not generation. Driven by bench/run.ts over IPC.
 *
 * `POST /v1/chat/completions` with `stream: true` answers SSE chunks, one token per chunk, then
 * a chunk with `finish_reason: "stop"`, a usage chunk when `stream_options.include_usage` is set,
 * then `data: [DONE]`; `stream: false` answers the same tokens at once. `GET /v1/models` lists
 * the one model. With `paceAll`, a non-streamed answer waits as long as a streamed one would
 * take (a model of fixed latency). Every token's text is `<index>:<production time, µs of CLOCK_MONOTONIC> `, so a
 * client can check order and completeness and measure delay with the clock every process shares.
 *
 * One shared 20 ms ticker serves every open completion (one timer, not one per stream, which is
 * cheaper and treats the 1,000th stream like the first). Counts: completions started, finished,
 * open at once (peak), requests per path.
 */
import http from 'node:http';
import { nowUs, serve } from '../lib/ipc.js';
import { listenLocal } from '../lib/listen.js';

const TICK_MS = 20;
const MODEL = 'paced-50tps';

interface Open {
  id: string;
  res: http.ServerResponse;
  next: number;
  usage: boolean;
}

let tokens = 250;
/** Non-streamed answers also take `tokens` ticks (the scaling benchmark's fixed-latency model). */
let paceAll = false;
/**
 * Tool-call turns before the answer (the scaling benchmark's 3 model turns): while a request
 * carries fewer tool results than this and offers the calculator, the answer, after the same
 * pace, is a calculator call instead of text.
 */
let toolTurns = 0;
let seq = 0;
let started = 0;
let finished = 0;
let peak = 0;
let ticks = 0;
let maxTickLagMs = 0;
const paths: Record<string, number> = {};
const open = new Set<Open>();
let ticker: NodeJS.Timeout | undefined;
let lastTick = 0;

const token = (i: number) => `${i}:${nowUs()} `;

function chunk(id: string, delta: Record<string, unknown>, finish: string | null = null): string {
  const c = { id, object: 'chat.completion.chunk', created: 0, model: MODEL, choices: [{ index: 0, delta, finish_reason: finish }] };
  return `data: ${JSON.stringify(c)}\n\n`;
}

function finish(o: Open): void {
  open.delete(o);
  let tail = chunk(o.id, {}, 'stop');
  if (o.usage) {
    const u = {
      id: o.id,
      object: 'chat.completion.chunk',
      created: 0,
      model: MODEL,
      choices: [],
      usage: { prompt_tokens: 10, completion_tokens: tokens, total_tokens: 10 + tokens },
    };
    tail += `data: ${JSON.stringify(u)}\n\n`;
  }
  o.res.end(`${tail}data: [DONE]\n\n`);
  finished++;
}

function tick(): void {
  const now = performance.now();
  if (lastTick) maxTickLagMs = Math.max(maxTickLagMs, now - lastTick - TICK_MS);
  lastTick = now;
  ticks++;
  for (const o of open) {
    o.res.write(chunk(o.id, { content: token(o.next) }));
    if (++o.next === tokens) finish(o);
  }
  if (!open.size) {
    clearInterval(ticker);
    ticker = undefined;
    lastTick = 0;
  }
}

function startStream(res: http.ServerResponse, usage: boolean): void {
  const o: Open = { id: `chatcmpl-${++seq}`, res, next: 0, usage };
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.write(chunk(o.id, { role: 'assistant', content: '' }));
  res.on('close', () => {
    if (open.delete(o)) finished++;
  });
  started++;
  open.add(o);
  peak = Math.max(peak, open.size);
  ticker ??= setInterval(tick, TICK_MS);
}

/** A calculator call as the answer, after the pace of a `tokens`-token answer. */
function toolCall(res: http.ServerResponse, stream: boolean): void {
  started++;
  const id = `chatcmpl-${++seq}`;
  const call = { id: `call_${seq}`, type: 'function', function: { name: 'calculator', arguments: JSON.stringify({ expression: '6*7' }) } };
  setTimeout(() => {
    finished++;
    if (stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.end(`${chunk(id, { role: 'assistant', tool_calls: [{ index: 0, ...call }] })}${chunk(id, {}, 'tool_calls')}data: [DONE]\n\n`);
      return;
    }
    const body = {
      id,
      object: 'chat.completion',
      created: 0,
      model: MODEL,
      choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [call] }, finish_reason: 'tool_calls' }],
    };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  }, tokens * TICK_MS);
}

function complete(res: http.ServerResponse): void {
  started++;
  if (paceAll) {
    // The same duration as a streamed answer of `tokens` tokens: a model of fixed latency.
    setTimeout(() => answer(res), tokens * TICK_MS);
    return;
  }
  answer(res);
}

function answer(res: http.ServerResponse): void {
  let text = '';
  for (let i = 0; i < tokens; i++) text += token(i);
  finished++;
  const body = {
    id: `chatcmpl-${++seq}`,
    object: 'chat.completion',
    created: 0,
    model: MODEL,
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 10, completion_tokens: tokens, total_tokens: 10 + tokens },
  };
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

const server = http.createServer({ noDelay: true }, (req, res) => {
  const path = (req.url ?? '/').split('?')[0];
  const key = `${req.method} ${path}`;
  paths[key] = (paths[key] ?? 0) + 1;
  if (req.method === 'GET' && path === '/v1/models') {
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ object: 'list', data: [{ id: MODEL, object: 'model', owned_by: 'bench' }] }));
    return;
  }
  if (req.method !== 'POST' || path !== '/v1/chat/completions') {
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
    return;
  }
  const parts: Buffer[] = [];
  req.on('data', (d: Buffer) => parts.push(d));
  req.on('end', () => {
    let body: {
      stream?: boolean;
      stream_options?: { include_usage?: boolean };
      messages?: { role?: string }[];
      tools?: { function?: { name?: string } }[];
    };
    try {
      body = JSON.parse(Buffer.concat(parts).toString('utf8'));
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"invalid JSON"}}');
      return;
    }
    const toolResults = (body.messages ?? []).filter((m) => m.role === 'tool').length;
    if (toolResults < toolTurns && body.tools?.some((t) => t.function?.name === 'calculator')) toolCall(res, body.stream === true);
    else if (body.stream) startStream(res, body.stream_options?.include_usage === true);
    else complete(res);
  });
});

serve(
  {
    listen(a: { tokens: number; paceAll?: boolean; toolTurns?: number }) {
      tokens = a.tokens;
      paceAll = a.paceAll === true;
      toolTurns = a.toolTurns ?? 0;
      return listenLocal(server, 20000);
    },
    /** Counts since the last reset; `maxTickLagMs`: the ticker's worst delay (the model's own lateness). */
    stats() {
      return { started, finished, open: open.size, peakOpen: peak, ticks, maxTickLagMs: +maxTickLagMs.toFixed(1), paths: { ...paths } };
    },
    reset() {
      started = finished = peak = ticks = maxTickLagMs = 0;
      for (const k of Object.keys(paths)) delete paths[k];
      return true;
    },
  },
  () => server.close(),
);
