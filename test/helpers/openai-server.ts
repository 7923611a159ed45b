/**
 * A small local OpenAI-compatible server for tests: node:http on 127.0.0.1, port 0.
 *
 * Implements POST /v1/chat/completions, streaming (SSE `data: {chunk}` lines, a final usage
 * chunk when `stream_options.include_usage` is set, then `data: [DONE]`) and non-streaming,
 * with text and tool calls (streamed as `delta.tool_calls` fragments). GET /v1/models lists
 * the models that replies have named.
 *
 * Each request takes the next scripted reply from a queue (`enqueue`), else the default reply
 * (`setDefault`; initially an echo of the last user message). A reply may be a completion, an
 * HTTP error (429, 500, 400, ...), a connection reset (before the headers or after some
 * chunks), a stream that stalls, no answer at all, or an error object sent inside the stream. Every request is
 * recorded (model, messages, max_tokens, temperature, Authorization header, whole body).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OpenAiProvider } from '../../src/llm/index.js';

/** The service's OpenAI provider pointed at a test server, one model per tier (m-small, m-medium, m-large). */
export function scriptedProvider(server: { baseUrl: string }, timeoutMs = 10_000): OpenAiProvider {
  return new OpenAiProvider({ baseUrl: server.baseUrl, apiKey: 'sk-test', models: { small: 'm-small', medium: 'm-medium', large: 'm-large' }, timeoutMs });
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface ScriptedToolCall {
  id: string;
  name: string;
  /** JSON text of the arguments; streamed in `fragments` pieces. */
  arguments: string;
  /** Number of argument fragments when streaming (default 3). */
  fragments?: number;
}

export type Reply =
  | {
      type: 'completion';
      /** The text; an array gives the exact streamed deltas. */
      content?: string | string[];
      toolCalls?: ScriptedToolCall[];
      /** Stream the fragments of several tool calls interleaved (by index) instead of one after another. */
      interleaveToolCalls?: boolean;
      /** Model named in the response (default: the requested model). */
      model?: string;
      /** Default: 'tool_calls' with tool calls, else 'stop'. */
      finishReason?: string;
      /** null: send no usage at all. Default: estimated from the text (4 chars per token). */
      usage?: Usage | null;
      /** Wait this long before answering (a slow model). */
      delayMs?: number;
    }
  | { type: 'error'; status: number; message?: string; errorType?: string; code?: string; headers?: Record<string, string> }
  /** Streaming: send these deltas, then destroy the socket. Non-streaming or no deltas: destroy before any response. */
  | { type: 'reset'; content?: string[] }
  /** Streaming: send these deltas, then nothing more (the connection stays open). */
  | { type: 'stall'; content?: string[] }
  /** Never answer (the request stays pending until the client gives up or the server closes). */
  | { type: 'hang' }
  /** Streaming: send these deltas, then `data: {"error": {...}}`. */
  | { type: 'stream-error'; content?: string[]; message: string };

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  /** The Authorization header, e.g. "Bearer sk-test". */
  authorization: string | undefined;
  /** The parsed JSON body (undefined if it was not JSON). */
  body: any;
  model: string | undefined;
  messages: { role: string; content: unknown }[] | undefined;
  max_tokens: number | undefined;
  temperature: number | undefined;
  stream: boolean;
}

export type ReplyFn = (req: RecordedRequest) => Reply;

export interface OpenAiTestServer {
  /** Base URL for the openai SDK: `http://127.0.0.1:<port>/v1`. */
  baseUrl: string;
  /** Every request received, in arrival order. */
  requests: RecordedRequest[];
  /** Queues replies; each request takes the next one. */
  enqueue(...replies: (Reply | ReplyFn)[]): void;
  /** The reply used when the queue is empty. */
  setDefault(reply: Reply | ReplyFn): void;
  /** Clears the queue, the recorded requests, and restores the echo default. */
  reset(): void;
  /** Requests whose connection closed before their response was complete (client aborts, resets). */
  closedEarly: number;
  close(): Promise<void>;
}

const echo: ReplyFn = (req) => {
  const last = [...(req.messages ?? [])].reverse().find((m) => m.role === 'user');
  return { type: 'completion', content: `echo: ${typeof last?.content === 'string' ? last.content : ''}` };
};

const estimate = (s: string) => Math.max(1, Math.ceil(s.length / 4));

function splitText(s: string, n: number): string[] {
  if (n <= 1 || s.length <= 1) return [s];
  const size = Math.ceil(s.length / n);
  const out: string[] = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out;
}

function defaultChunks(text: string): string[] {
  // Word-sized deltas, keeping the separating whitespace with the word before it.
  return text.match(/\S+\s*|\s+/g) ?? [];
}

export async function startOpenAiServer(): Promise<OpenAiTestServer> {
  let queue: (Reply | ReplyFn)[] = [];
  let fallback: Reply | ReplyFn = echo;
  const requests: RecordedRequest[] = [];
  let seq = 0;
  const state = { closedEarly: 0 };

  const server = createServer((req, res) => {
    const bodyParts: Buffer[] = [];
    req.on('data', (b: Buffer) => bodyParts.push(b));
    req.on('end', () => {
      const raw = Buffer.concat(bodyParts).toString('utf8');
      let body: any;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        body = undefined;
      }
      const path = (req.url ?? '/').split('?')[0]!;
      const rec: RecordedRequest = {
        method: req.method ?? 'GET',
        path,
        headers: req.headers,
        authorization: req.headers.authorization,
        body,
        model: body?.model,
        messages: body?.messages,
        max_tokens: body?.max_tokens ?? body?.max_completion_tokens,
        temperature: body?.temperature,
        stream: body?.stream === true,
      };
      res.on('close', () => {
        if (!res.writableFinished) state.closedEarly++;
      });
      if (req.method === 'GET' && path === '/v1/models') {
        sendJson(res, 200, { object: 'list', data: [] });
        return;
      }
      if (req.method !== 'POST' || path !== '/v1/chat/completions') {
        sendJson(res, 404, { error: { message: `no route ${req.method} ${path}`, type: 'invalid_request_error' } });
        return;
      }
      requests.push(rec);
      if (!body || typeof body.model !== 'string' || !Array.isArray(body.messages)) {
        sendJson(res, 400, { error: { message: 'model and messages are required', type: 'invalid_request_error' } });
        return;
      }
      const next = queue.length ? queue.shift()! : fallback;
      const reply = typeof next === 'function' ? next(rec) : next;
      const id = `chatcmpl-test-${++seq}`;
      if (reply.type === 'completion' && reply.delayMs) setTimeout(() => respond(rec, reply, res, id), reply.delayMs);
      else respond(rec, reply, res, id);
    });
  });

  function respond(rec: RecordedRequest, reply: Reply, res: ServerResponse, id: string): void {
    const model = (reply.type === 'completion' && reply.model) || rec.model || 'unknown';
    const created = Math.floor(Date.now() / 1000);
    if (reply.type === 'error') {
      sendJson(
        res,
        reply.status,
        {
          error: { message: reply.message ?? `scripted error ${reply.status}`, type: reply.errorType ?? 'server_error', code: reply.code ?? null, param: null },
        },
        reply.headers,
      );
      return;
    }
    if (reply.type === 'hang') return;
    if (!rec.stream) {
      if (reply.type !== 'completion') {
        res.socket?.destroy();
        return;
      }
      const text = Array.isArray(reply.content) ? reply.content.join('') : (reply.content ?? '');
      const toolCalls = reply.toolCalls ?? [];
      sendJson(res, 200, {
        id,
        object: 'chat.completion',
        created,
        model,
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: toolCalls.length && !text ? null : text,
              refusal: null,
              ...(toolCalls.length
                ? { tool_calls: toolCalls.map((t) => ({ id: t.id, type: 'function', function: { name: t.name, arguments: t.arguments } })) }
                : {}),
            },
            finish_reason: reply.finishReason ?? (toolCalls.length ? 'tool_calls' : 'stop'),
            logprobs: null,
          },
        ],
        ...(reply.usage === null ? {} : { usage: reply.usage ?? usageFor(rec, text) }),
      });
      return;
    }

    // Streaming.
    const deltas = reply.type === 'completion' ? (Array.isArray(reply.content) ? reply.content : defaultChunks(reply.content ?? '')) : (reply.content ?? []);
    if (reply.type === 'reset' && deltas.length === 0) {
      res.socket?.destroy();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) =>
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }], ...extra })}\n\n`;

    res.write(chunk({ role: 'assistant', content: '' }));
    for (const d of deltas) res.write(chunk({ content: d }));
    if (reply.type === 'reset') {
      // Once the chunks are handed to the socket, cut the connection without ending the response.
      res.write('\n', () => res.socket?.destroy());
      return;
    }
    if (reply.type === 'stall') return;
    if (reply.type === 'stream-error') {
      res.end(`data: ${JSON.stringify({ error: { message: reply.message, type: 'server_error', code: null } })}\n\n`);
      return;
    }
    for (const frag of toolCallFragments(reply.toolCalls ?? [], reply.interleaveToolCalls ?? false)) res.write(chunk({ tool_calls: [frag] }));
    const finish = reply.finishReason ?? (reply.toolCalls?.length ? 'tool_calls' : 'stop');
    res.write(chunk({}, finish));
    if (reply.usage !== null && rec.body?.stream_options?.include_usage) {
      const text = deltas.join('');
      res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [], usage: reply.usage ?? usageFor(rec, text) })}\n\n`);
    }
    res.end('data: [DONE]\n\n');
  }

  function usageFor(rec: RecordedRequest, text: string): Usage {
    const prompt = (rec.messages ?? []).reduce((n, m) => n + estimate(typeof m.content === 'string' ? m.content : JSON.stringify(m.content)), 0);
    const completion = estimate(text);
    return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    enqueue(...replies) {
      queue.push(...replies);
    },
    setDefault(reply) {
      fallback = reply;
    },
    reset() {
      queue = [];
      requests.length = 0;
      fallback = echo;
      state.closedEarly = 0;
    },
    get closedEarly() {
      return state.closedEarly;
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

type ToolCallFragment = { index: number; id?: string; type?: 'function'; function: { name?: string; arguments: string } };

function toolCallFragments(calls: ScriptedToolCall[], interleave: boolean): ToolCallFragment[] {
  const perCall = calls.map((c, index) => {
    const parts = splitText(c.arguments, c.fragments ?? 3);
    const frags: ToolCallFragment[] = [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }];
    for (const p of parts) frags.push({ index, function: { arguments: p } });
    return frags;
  });
  if (!interleave) return perCall.flat();
  const out: ToolCallFragment[] = [];
  for (let i = 0; perCall.some((f) => i < f.length); i++) for (const f of perCall) if (i < f.length) out.push(f[i]!);
  return out;
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const data = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data), ...headers });
  res.end(data);
}
