/**
 * Benchmark: the OpenAI-compatible layer (/v1/chat/completions, stream: true).
 *
 * One local OpenAI-compatible model server (node:http, in this process) streams N tokens per
 * request. The same `openai` npm client streams a completion from it twice over:
 * - direct: straight from the model server (the reference);
 * - layer: through the service (gateway -> orchestrator -> worker -> model call with the
 *   OpenAiProvider against that server -> LLM_PARTIAL events in JetStream -> the feed -> chat
 *   completion chunks), model svc-chat (simple mode: one model call).
 * Measured per request: time to the first content chunk (from the call), content chunks and
 * tokens received, and the stream's rate (chunks/s and tokens/s, from the first content chunk
 * to the end). Two model paces: as fast as the server can write (the pipeline's capacity), and
 * one token every 5 ms (a fast real model). Sequential requests (medians), then 10 at once
 * (aggregate rates). The layer coalesces deltas into events of up to PARTIAL_CHUNK_CHARS
 * characters or 50 ms (src/agents DeltaCoalescer), so it sends fewer, larger chunks than the
 * model: tokens/s is the like-for-like rate, chunks/s shows the coalescing.
 *
 * Everything runs in one process (service, model server and clients share the CPU) against a
 * throwaway nats-server and PostgreSQL.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { OpenAiProvider } from '../src/llm/index.js';
import { inProcessService, type Nats, type Pg } from './lib/infra.js';
import { fmtInt, fmtRatio, table } from './lib/report.js';

interface ModelServer {
  baseUrl: string;
  close(): Promise<void>;
}

/** Streams `settings.tokens` tokens ("t<i> ") per chat completion, `settings.paceMs` apart (0: as fast as it can write). */
async function startModelServer(settings: { tokens: number; paceMs: number }): Promise<ModelServer> {
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (b: Buffer) => (raw += b.toString('utf8')));
    req.on('end', () => {
      const body = JSON.parse(raw || '{}') as { model?: string; stream_options?: { include_usage?: boolean } };
      const id = `chatcmpl-bench-${Math.random().toString(36).slice(2)}`;
      const created = Math.floor(Date.now() / 1000);
      const model = body.model ?? 'bench';
      const { tokens, paceMs } = settings;
      const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
        `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(chunk({ role: 'assistant', content: '' }));
      let i = 0;
      let closed = false;
      res.on('close', () => (closed = true));
      const end = () => {
        res.write(chunk({}, 'stop'));
        if (body.stream_options?.include_usage) {
          const usage = { prompt_tokens: 10, completion_tokens: tokens, total_tokens: tokens + 10 };
          res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [], usage })}\n\n`);
        }
        res.end('data: [DONE]\n\n');
      };
      if (paceMs <= 0) {
        for (; i < tokens; i++) res.write(chunk({ content: `t${i} ` }));
        end();
        return;
      }
      const tick = () => {
        if (closed) return;
        res.write(chunk({ content: `t${i} ` }));
        if (++i === tokens) end();
        else setTimeout(tick, paceMs);
      };
      setTimeout(tick, paceMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

interface StreamStat {
  /** From the call to the first chunk with content (ms). */
  ttfcMs: number;
  chunks: number;
  tokens: number;
  /** From the first content chunk to the end of the stream (ms). */
  streamMs: number;
  totalMs: number;
}

/** One streamed completion; counts content chunks and the tokens ("t<i> ") of the text. */
async function streamOnce(client: OpenAI, model: string, q: string): Promise<StreamStat> {
  const t0 = performance.now();
  let first = 0;
  let chunks = 0;
  let all = '';
  const stream = await client.chat.completions.create({ model, messages: [{ role: 'user', content: q }], stream: true });
  for await (const c of stream) {
    const text = c.choices[0]?.delta?.content;
    if (!text) continue;
    if (!first) first = performance.now();
    chunks++;
    all += text;
  }
  const end = performance.now();
  // Counted on the whole text: a coalesced chunk may end inside a token.
  const tokens = (all.match(/t\d+ /g) ?? []).length;
  return { ttfcMs: first - t0, chunks, tokens, streamMs: end - first, totalMs: end - t0 };
}

const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)] ?? NaN;

interface Side {
  ttfcMs: number;
  chunksPerSecond: number;
  tokensPerSecond: number;
  chunksPerRequest: number;
  tokensPerRequest: number;
  /** 10 streams at once: tokens and chunks delivered per second, all streams together. */
  concurrent: { tokensPerSecond: number; chunksPerSecond: number; ttfcMsP50: number };
}

async function measure(client: OpenAI, model: string, reps: number, tag: string): Promise<Side> {
  for (let i = 0; i < 3; i++) await streamOnce(client, model, `${tag} warm ${i}`);
  const s: StreamStat[] = [];
  for (let i = 0; i < reps; i++) s.push(await streamOnce(client, model, `${tag} ${i} ${Math.random()}`));
  const t0 = performance.now();
  const c = await Promise.all(Array.from({ length: 10 }, (_, i) => streamOnce(client, model, `${tag} c${i} ${Math.random()}`)));
  const wall = (performance.now() - t0) / 1000;
  return {
    ttfcMs: median(s.map((x) => x.ttfcMs)),
    chunksPerSecond: median(s.map((x) => (x.chunks * 1000) / Math.max(x.streamMs, 0.001))),
    tokensPerSecond: median(s.map((x) => (x.tokens * 1000) / Math.max(x.streamMs, 0.001))),
    chunksPerRequest: median(s.map((x) => x.chunks)),
    tokensPerRequest: median(s.map((x) => x.tokens)),
    concurrent: {
      tokensPerSecond: c.reduce((n, x) => n + x.tokens, 0) / wall,
      chunksPerSecond: c.reduce((n, x) => n + x.chunks, 0) / wall,
      ttfcMsP50: median(c.map((x) => x.ttfcMs)),
    },
  };
}

export async function runOpenAi(o: { nats: Nats; pg: Pg; quick: boolean; log: (s: string) => void }) {
  const reps = o.quick ? 8 : 25;
  const paces = [
    { key: 'burst', title: 'model streams as fast as it can write', tokens: o.quick ? 1000 : 2000, paceMs: 0 },
    { key: 'paced', title: 'model streams one token every 5 ms', tokens: 200, paceMs: 5 },
  ];
  const settings = { tokens: 0, paceMs: 0 };
  const model = await startModelServer(settings);
  const { app, base } = await inProcessService(
    o.nats,
    o.pg,
    'bench_openai',
    new OpenAiProvider({
      baseUrl: model.baseUrl,
      apiKey: 'sk-bench',
      models: { small: 'bench-small', medium: 'bench-medium', large: 'bench-large' },
      timeoutMs: 60_000,
    }),
    { GATEWAY_SKIP_AUTH: '1' },
  );
  const results: Record<string, { tokens: number; paceMs: number; direct: Side; layer: Side }> = {};
  try {
    const direct = new OpenAI({ baseURL: model.baseUrl, apiKey: 'sk-bench', maxRetries: 0, timeout: 120_000 });
    const layer = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'sk-bench', maxRetries: 0, timeout: 120_000 });
    for (const p of paces) {
      settings.tokens = p.tokens;
      settings.paceMs = p.paceMs;
      o.log(`openai: ${p.title}, ${p.tokens} tokens: direct`);
      const d = await measure(direct, 'bench-small', reps, 'direct');
      o.log(`openai: ${p.title}, ${p.tokens} tokens: through /v1/chat/completions`);
      const l = await measure(layer, 'svc-chat', reps, 'layer');
      results[p.key] = { tokens: p.tokens, paceMs: p.paceMs, direct: d, layer: l };
    }
  } finally {
    await app.stop();
    await model.close();
  }
  const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');
  const report =
    paces
      .map((p) => {
        const { direct: d, layer: l } = results[p.key]!;
        return table(
          `OpenAI-compatible layer vs the model server direct: ${p.title}, ${p.tokens} tokens per completion (openai client, stream: true)`,
          ['measure', 'through /v1 (svc-chat)', 'direct to the model server', 'ratio (layer / direct)'],
          [
            ['time to first content chunk, median (ms)', f1(l.ttfcMs), f1(d.ttfcMs), fmtRatio(l.ttfcMs / d.ttfcMs)],
            ['content chunks per completion', fmtInt(l.chunksPerRequest), fmtInt(d.chunksPerRequest), fmtRatio(l.chunksPerRequest / d.chunksPerRequest)],
            ['tokens received per completion', fmtInt(l.tokensPerRequest), fmtInt(d.tokensPerRequest), fmtRatio(l.tokensPerRequest / d.tokensPerRequest)],
            ['chunks/s within a stream, median', fmtInt(l.chunksPerSecond), fmtInt(d.chunksPerSecond), fmtRatio(l.chunksPerSecond / d.chunksPerSecond)],
            ['tokens/s within a stream, median', fmtInt(l.tokensPerSecond), fmtInt(d.tokensPerSecond), fmtRatio(l.tokensPerSecond / d.tokensPerSecond)],
            [
              '10 streams at once: tokens/s, all together',
              fmtInt(l.concurrent.tokensPerSecond),
              fmtInt(d.concurrent.tokensPerSecond),
              fmtRatio(l.concurrent.tokensPerSecond / d.concurrent.tokensPerSecond),
            ],
            [
              '10 streams at once: chunks/s, all together',
              fmtInt(l.concurrent.chunksPerSecond),
              fmtInt(d.concurrent.chunksPerSecond),
              fmtRatio(l.concurrent.chunksPerSecond / d.concurrent.chunksPerSecond),
            ],
            [
              '10 streams at once: time to first content chunk p50 (ms)',
              f1(l.concurrent.ttfcMsP50),
              f1(d.concurrent.ttfcMsP50),
              fmtRatio(l.concurrent.ttfcMsP50 / d.concurrent.ttfcMsP50),
            ],
          ],
          [
            `${reps} sequential completions (medians) after 3 warm-up ones, then 10 at once. The layer's time includes submitting the task, the worker's start, the model call and the events' trip through JetStream.`,
            "Time to first content chunk through the layer includes the agent's coalescing window: a delta waits up to 50 ms for more text before its LLM_PARTIAL event is sent.",
            'The layer sends the deltas the service coalesced (up to PARTIAL_CHUNK_CHARS characters, or what arrived within 50 ms) as one chunk each: fewer, larger chunks; compare tokens/s.',
          ],
        );
      })
      .join('') + '\n';
  return { results, report };
}
