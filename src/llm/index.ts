/**
 * The LLM interface. Every model call of the system goes through LlmProvider.complete(),
 * which streams text deltas to a callback and resolves with the full text and usage.
 *
 * Providers: `openai` talks to any OpenAI-compatible endpoint through the openai SDK (OpenAI,
 * vLLM, Ollama, llama.cpp server, LiteLLM); `offline` is a deterministic provider for the
 * embedded default and tests. Every offline response says so in its text, and its model and
 * provider names ("offline-deterministic" / "offline") are reported in task status.
 */
import { createHash } from 'node:crypto';
import OpenAI from 'openai';
import { AppError, Code } from '../kernel/index.js';

/**
 * A message of a conversation. An assistant turn may carry the tool calls the model asked
 * for; each call's result comes back as a `tool` message naming the call.
 */
export type ChatMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: LlmToolCall[] }
  | { role: 'tool'; content: string; toolCallId: string };

/** The messages as the OpenAI chat completions API takes them. */
export function toOpenAiMessages(messages: ChatMessage[]): OpenAI.Chat.Completions.ChatCompletionMessageParam[] {
  return messages.map((m) => {
    if (m.role === 'tool') return { role: 'tool', content: m.content, tool_call_id: m.toolCallId };
    if (m.role === 'assistant' && m.toolCalls?.length) {
      return {
        role: 'assistant',
        content: m.content || null,
        tool_calls: m.toolCalls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } })),
      };
    }
    return { role: m.role, content: m.content };
  });
}

/** A function the model may call; `parameters` is a JSON Schema object. */
export interface LlmTool {
  name: string;
  description?: string;
  parameters?: Record<string, unknown>;
}

/** A tool call requested by the model; `arguments` is the model's JSON text, unparsed. */
export interface LlmToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface LlmRequest {
  messages: ChatMessage[];
  tier: 'small' | 'medium' | 'large';
  /** Overrides the tier's model; empty means none. */
  model?: string;
  /** Names the provider (of the catalogue) to call; empty means the tier's or the model's own choice (LlmRouter). */
  provider?: string;
  maxTokens: number;
  temperature: number;
  /** Nucleus sampling (OpenAI `top_p`, 0-1); absent: the provider's default. */
  topP?: number;
  /** Sequences at which the model stops; the text ends before the first one. */
  stop?: string[];
  /** OpenAI `presence_penalty` / `frequency_penalty` (-2 to 2); absent: the provider's default. */
  presencePenalty?: number;
  frequencyPenalty?: number;
  /** The task and agent the call is for, when budgets are enforced in the model layer. */
  budget?: { taskId: string; agentId: string };
  /** Functions offered to the model (providers that support tool calling). */
  tools?: LlmTool[];
  toolChoice?: 'auto' | 'none' | 'required';
  signal?: AbortSignal;
}

export interface LlmUsage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  costUsd: number;
}

export interface LlmResult {
  text: string;
  model: string;
  provider: string;
  finishReason: string;
  usage: LlmUsage;
  /** Tool calls the model requested, in order (absent when there were none). */
  toolCalls?: LlmToolCall[];
  /** The answer came from the response cache (no model was called; usage is zero). */
  cacheHit?: boolean;
  /** Similarity of the request to the cached one (1 for an exact match); set with cacheHit. */
  cacheScore?: number;
}

export interface LlmProvider {
  readonly name: string;
  complete(req: LlmRequest, onDelta?: (delta: string) => void): Promise<LlmResult>;
}

export class LlmError extends AppError {
  override name = 'LlmError';
  /** HTTP status of the provider's response, when there was one. */
  readonly status?: number;
  /** The provider's Retry-After (or retry-after-ms), in milliseconds, when it sent one. */
  readonly retryAfterMs?: number;
  constructor(message: string, opts: { retryable: boolean; status?: number; cause?: unknown; retryAfterMs?: number }) {
    super(opts.retryable ? Code.Unavailable : Code.FailedPrecondition, message, {
      retryable: opts.retryable,
      cause: opts.cause,
      ...(opts.retryAfterMs !== undefined ? { retryAfter: Math.max(1, Math.ceil(opts.retryAfterMs / 1000)) } : {}),
    });
    if (opts.status) this.status = opts.status;
    if (opts.retryAfterMs !== undefined) this.retryAfterMs = opts.retryAfterMs;
  }
}

const abortedError = (cause?: unknown) => new LlmError('request aborted', { retryable: true, cause });

/** Rough token estimate used where a provider reports no usage: ~4 characters per token. */
export const estimateTokens = (s: string) => Math.max(1, Math.ceil(s.length / 4));

export const OFFLINE_MODEL = 'offline-deterministic';
export const OFFLINE_LABEL = '[offline provider: deterministic response, no language model was called]';

/**
 * Deterministic offline provider: the same messages always give the same text. It answers
 * with a labelled, structured restatement of the request so workflows exercise their whole
 * path (streaming, usage, multi-step composition) without a model.
 */
export class OfflineProvider implements LlmProvider {
  readonly name = 'offline';
  /**
   * `chunkDelayMs` paces the stream (OFFLINE_LLM_CHUNK_DELAY_MS): then it comes word by word,
   * like a model. `chunkChars` forces pieces of that many characters; without either, the text
   * comes in 48-character pieces as fast as possible.
   */
  constructor(private readonly opts: { chunkDelayMs: number; chunkChars?: number } = { chunkDelayMs: 0 }) {}

  private pieces(text: string): string[] {
    if (this.opts.chunkChars === undefined && this.opts.chunkDelayMs > 0) return text.match(/\s*\S+\s*/g) ?? [text];
    const chunkChars = Math.max(2, this.opts.chunkChars ?? 48);
    const out: string[] = [];
    for (let i = 0; i < text.length;) {
      // Never split a surrogate pair: each delta must be valid text on its own (it is sent as JSON).
      let end = Math.min(text.length, i + chunkChars);
      if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end--;
      out.push(text.slice(i, end));
      i = end;
    }
    return out;
  }

  async complete(req: LlmRequest, onDelta?: (delta: string) => void): Promise<LlmResult> {
    if (req.signal?.aborted) throw abortedError();
    const text = cutAtStop(offlineAnswer(req.messages), req.stop);
    if (onDelta) {
      for (const piece of this.pieces(text)) {
        if (req.signal?.aborted) throw abortedError();
        if (this.opts.chunkDelayMs > 0) await sleep(this.opts.chunkDelayMs, req.signal);
        onDelta(piece);
      }
    }
    const inputTokens = req.messages.reduce((n, m) => n + estimateTokens(m.content), 0);
    const outputTokens = estimateTokens(text);
    return {
      text,
      model: OFFLINE_MODEL,
      provider: this.name,
      finishReason: 'stop',
      usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens, costUsd: 0 },
    };
  }
}

/** The text up to the first of the stop sequences (as a model honouring `stop` would end it). */
function cutAtStop(text: string, stop: string[] | undefined): string {
  let end = text.length;
  for (const s of stop ?? []) {
    const i = s ? text.indexOf(s) : -1;
    if (i >= 0 && i < end) end = i;
  }
  return text.slice(0, end);
}

function offlineAnswer(messages: ChatMessage[]): string {
  const user = [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';
  const system = messages.find((m) => m.role === 'system')?.content ?? '';
  const digest = createHash('sha256').update(JSON.stringify(messages)).digest('hex').slice(0, 12);
  // Instructions a workflow gives in its system prompt select the answer's shape.
  if (/respond with a json array of subtasks/i.test(system)) {
    // Steps of a request build on each other ("... Then ..."): each depends on the one before.
    const parts = splitIntoSubtasks(user);
    return JSON.stringify(parts.map((p, i) => ({ id: `subtask-${i + 1}`, description: p, dependencies: i ? [`subtask-${i}`] : [] })));
  }
  const q = user.length > 400 ? `${user.slice(0, isHighSurrogate(user.charCodeAt(399)) ? 399 : 400)}...` : user;
  return (
    `${OFFLINE_LABEL} Request ${digest}: "${q}". ` +
    'This deterministic answer restates the request so the workflow can run end to end; ' +
    'configure LLM_BASE_URL and LLM_API_KEY to get answers from a real model.'
  );
}

/** Splits a request into 2-4 deterministic subtasks (by sentence / conjunction). */
function splitIntoSubtasks(q: string): string[] {
  const pieces = q
    .split(/(?<=[.;?!])\s+|\s+(?:and then|then|and)\s+/i)
    .map((s) => s.trim())
    .filter((s) => s.length > 2);
  const out = pieces.slice(0, 4);
  while (out.length < 2) out.push(out.length === 0 ? `Understand: ${q}` : `Answer: ${q}`);
  return out;
}

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortedError());
    const onAbort = () => {
      clearTimeout(t);
      reject(abortedError());
    };
    // The listener is removed when the timer fires: one long-lived signal serves many sleeps.
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export interface OpenAiProviderOptions {
  baseUrl?: string;
  apiKey?: string;
  /** Model used per tier when the request names none. */
  models: Record<'small' | 'medium' | 'large', string>;
  /** USD per 1k prompt / completion tokens by model, for cost accounting. */
  prices?: Record<string, { prompt: number; completion: number }>;
  /** Longest wait for the response headers, and then between two streamed chunks. */
  timeoutMs: number;
  providerName?: string;
}

/** Any OpenAI-compatible endpoint, streamed, with usage. */
export class OpenAiProvider implements LlmProvider {
  readonly name: string;
  private readonly client: OpenAI;
  constructor(private readonly opts: OpenAiProviderOptions) {
    this.name = opts.providerName ?? 'openai';
    this.client = new OpenAI({
      baseURL: opts.baseUrl,
      apiKey: opts.apiKey ?? 'not-set',
      timeout: opts.timeoutMs,
      maxRetries: 0, // retries are the workflow's decision (journal + redelivery)
    });
  }

  async complete(req: LlmRequest, onDelta?: (delta: string) => void): Promise<LlmResult> {
    const model = req.model || this.opts.models[req.tier];
    if (req.signal?.aborted) throw abortedError(req.signal.reason);
    let text = '';
    let finishReason = 'stop';
    let usage: OpenAI.CompletionUsage | undefined;
    let reportedModel = model;
    const tools = new ToolCallAccumulator();

    // One controller for the caller's signal and the idle timeout. The SDK's own timeout stops
    // at the response headers, and its stream ends silently (no error) when aborted, so both
    // cases are detected here rather than inferred from the stream.
    const controller = new AbortController();
    const onAbort = () => controller.abort();
    req.signal?.addEventListener('abort', onAbort, { once: true });
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, this.opts.timeoutMs);
    };
    const interrupted = () =>
      timedOut
        ? new LlmError(`LLM provider timed out: no data for ${this.opts.timeoutMs} ms`, { retryable: true })
        : req.signal?.aborted
          ? abortedError(req.signal.reason)
          : undefined;
    try {
      arm();
      const stream = await this.client.chat.completions.create(
        {
          model,
          messages: toOpenAiMessages(req.messages),
          max_tokens: req.maxTokens,
          temperature: req.temperature,
          ...(req.topP !== undefined ? { top_p: req.topP } : {}),
          ...(req.stop?.length ? { stop: req.stop } : {}),
          ...(req.presencePenalty !== undefined ? { presence_penalty: req.presencePenalty } : {}),
          ...(req.frequencyPenalty !== undefined ? { frequency_penalty: req.frequencyPenalty } : {}),
          ...(req.tools?.length
            ? {
                tools: req.tools.map((t) => ({
                  type: 'function' as const,
                  function: {
                    name: t.name,
                    ...(t.description ? { description: t.description } : {}),
                    parameters: t.parameters ?? { type: 'object', properties: {} },
                  },
                })),
                ...(req.toolChoice ? { tool_choice: req.toolChoice } : {}),
              }
            : {}),
          stream: true,
          stream_options: { include_usage: true },
        },
        { signal: controller.signal },
      );
      for await (const chunk of stream) {
        arm();
        if (chunk.model) reportedModel = chunk.model;
        if (chunk.usage) usage = chunk.usage;
        const choice = chunk.choices?.[0];
        const delta = choice?.delta?.content;
        if (delta) {
          text += delta;
          onDelta?.(delta);
        }
        if (choice?.delta?.tool_calls) tools.add(choice.delta.tool_calls);
        if (choice?.finish_reason) finishReason = choice.finish_reason;
      }
      const stop = interrupted();
      if (stop) throw stop;
    } catch (err) {
      throw interrupted() ?? toLlmError(err);
    } finally {
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onAbort);
    }
    const inputTokens = usage?.prompt_tokens ?? req.messages.reduce((n, m) => n + estimateTokens(m.content), 0);
    const outputTokens = usage?.completion_tokens ?? estimateTokens(text);
    // Own keys only: a model named "constructor" (model_override) has no price, not Object's.
    const prices = this.opts.prices;
    const priceOf = (m: string) => (prices && Object.hasOwn(prices, m) ? prices[m] : undefined);
    const price = priceOf(reportedModel) ?? priceOf(model);
    const costUsd = price ? (inputTokens / 1000) * price.prompt + (outputTokens / 1000) * price.completion : 0;
    const toolCalls = tools.result();
    return {
      text,
      model: reportedModel,
      provider: this.name,
      finishReason,
      usage: { inputTokens, outputTokens, totalTokens: usage?.total_tokens ?? inputTokens + outputTokens, costUsd },
      ...(toolCalls.length ? { toolCalls } : {}),
    };
  }
}

/**
 * Reassembles tool calls from streamed `delta.tool_calls` fragments: the first fragment of a
 * call carries its index, id and name; later ones (same index) carry pieces of the arguments.
 * A fragment with a new id at an index already in use starts a new call (servers that send
 * every call whole at index 0).
 */
class ToolCallAccumulator {
  private readonly calls: LlmToolCall[] = [];
  private readonly byIndex = new Map<number, LlmToolCall>();
  add(fragments: OpenAI.Chat.Completions.ChatCompletionChunk.Choice.Delta.ToolCall[]): void {
    for (const f of fragments) {
      const index = f.index ?? 0;
      let call = this.byIndex.get(index);
      if (!call || (f.id && call.id && f.id !== call.id)) {
        call = { id: '', name: '', arguments: '' };
        this.calls.push(call);
        this.byIndex.set(index, call);
      }
      if (f.id && !call.id) call.id = f.id;
      if (f.function?.name && !call.name) call.name = f.function.name;
      if (f.function?.arguments) call.arguments += f.function.arguments;
    }
  }
  result(): LlmToolCall[] {
    return this.calls.filter((c) => c.name);
  }
}

function toLlmError(err: unknown): LlmError {
  if (err instanceof LlmError) return err;
  if (err instanceof OpenAI.APIError) {
    const status = err.status ?? 0;
    // 408/409/429/5xx and connection failures may succeed later; 4xx otherwise will not.
    const retryable = status === 0 || status === 408 || status === 409 || status === 429 || status >= 500;
    const retryAfterMs = retryAfterOf(err.headers);
    return new LlmError(`LLM provider error${status ? ` (${status})` : ''}: ${err.message}`, {
      retryable,
      status,
      cause: err,
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    });
  }
  const e = err as Error;
  if (e?.name === 'AbortError') return abortedError(err);
  return new LlmError(`LLM provider error: ${e?.message ?? String(err)}`, { retryable: true, cause: err });
}
/**
 * The wait a provider asks for before a retry, in milliseconds: `retry-after-ms` (OpenAI's),
 * else `Retry-After` as seconds or as an HTTP date. Undefined when absent or unreadable.
 */
export function retryAfterOf(headers: Headers | Record<string, string | string[] | undefined> | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined;
  const get = (name: string): string | undefined => {
    if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
    const v = (headers as Record<string, string | string[] | undefined>)[name];
    return Array.isArray(v) ? v[0] : v;
  };
  const ms = get('retry-after-ms')?.trim();
  if (ms && /^\d+(\.\d+)?$/.test(ms)) return Math.round(Number(ms));
  const ra = get('retry-after')?.trim();
  if (!ra) return undefined;
  if (/^\d+(\.\d+)?$/.test(ra)) return Math.round(Number(ra) * 1000);
  const at = Date.parse(ra);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export * from './catalogue.js';
export * from './router.js';
export * from './cache.js';
export * from './model-service.js';
export * from './usage.js';
export * from './budget.js';
