/**
 * `openai`: any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp server, LiteLLM)
 * through the openai SDK, streamed, with usage, tool calls and the provider's Retry-After.
 * The SDK makes the request and maps a refused one to its errors; the streamed body is read
 * here (sse-data.ts), at a fraction of the SDK stream's CPU cost per chunk.
 */
import type OpenAI from 'openai';
import { lazyImport } from '../kernel/index.js';
import { readSseData } from './sse-data.js';
import { wireNames, type WireNames } from './wire-names.js';
import { abortedError, estimateTokens, LlmError, type ChatMessage, type LlmProvider, type LlmRequest, type LlmResult, type LlmToolCall } from './provider.js';

/** The messages as the OpenAI chat completions API takes them. */
export function toOpenAiMessages(messages: ChatMessage[], names?: WireNames): OpenAI.Chat.Completions.ChatCompletionMessageParam[] {
  const wire = (n: string) => (names ? names.toWire(n) : n);
  return messages.map((m) => {
    if (m.role === 'tool') return { role: 'tool', content: m.content, tool_call_id: m.toolCallId };
    if (m.role === 'assistant' && m.toolCalls?.length) {
      return {
        role: 'assistant',
        content: m.content || null,
        tool_calls: m.toolCalls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: wire(c.name), arguments: c.arguments } })),
      };
    }
    return { role: m.role, content: m.content };
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

/**
 * The openai SDK, loaded at the first model call (about 11 MB a process that never calls a
 * model, or not yet, does not hold); `loaded` once it is, for the error mapping.
 */
const openAiSdk = lazyImport(async () => (loaded = (await import('openai')).default));
let loaded: typeof OpenAI | undefined;

/** Any OpenAI-compatible endpoint, streamed, with usage. */
export class OpenAiProvider implements LlmProvider {
  readonly name: string;
  private client?: OpenAI;
  constructor(private readonly opts: OpenAiProviderOptions) {
    this.name = opts.providerName ?? 'openai';
  }

  private async clientOf(): Promise<OpenAI> {
    const Sdk = await openAiSdk();
    return (this.client ??= new Sdk({
      baseURL: this.opts.baseUrl,
      apiKey: this.opts.apiKey ?? 'not-set',
      timeout: this.opts.timeoutMs,
      maxRetries: 0, // retries are the workflow's decision (journal + redelivery)
    }));
  }

  async complete(req: LlmRequest, onDelta?: (delta: string) => void): Promise<LlmResult> {
    const model = req.model || this.opts.models[req.tier];
    if (req.signal?.aborted) throw abortedError(req.signal.reason);
    let text = '';
    let finishReason = 'stop';
    let usage: OpenAI.CompletionUsage | undefined;
    let reportedModel = model;
    const tools = new ToolCallAccumulator();
    // Tools from elsewhere (`mcp.<server>.<tool>`) as the API accepts function names.
    const names = req.tools?.length || req.messages.some((m) => m.role === 'assistant' && m.toolCalls?.length) ? wireNames(toolNamesOf(req)) : undefined;

    // One controller for the caller's signal and the idle timeout. The SDK's own timeout stops
    // at the response headers; an aborted body read rejects with a bare AbortError, so both
    // cases are told apart here rather than inferred from the error.
    const controller = new AbortController();
    // `stopped` mirrors controller.signal.aborted: read per chunk, and a plain variable is
    // cheaper than AbortSignal's checked getter.
    let stopped = false;
    const onAbort = () => {
      stopped = true;
      controller.abort();
    };
    req.signal?.addEventListener('abort', onAbort, { once: true });
    let timedOut = false;
    // One timer for the whole call, pushed back at each chunk (refresh() re-arms it in place).
    const timer = setTimeout(() => {
      timedOut = true;
      onAbort();
    }, this.opts.timeoutMs);
    const interrupted = () =>
      timedOut
        ? new LlmError(`LLM provider timed out: no data for ${this.opts.timeoutMs} ms`, { retryable: true })
        : req.signal?.aborted
          ? abortedError(req.signal.reason)
          : undefined;
    try {
      const client = await this.clientOf();
      const response = await client.chat.completions
        .create(
          {
            model,
            messages: toOpenAiMessages(req.messages, names),
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
                      name: names ? names.toWire(t.name) : t.name,
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
        )
        .asResponse();
      if (!response.body) throw new LlmError('LLM provider error: the streamed response has no body', { retryable: true });
      await readSseData(response.body, (data, event) => {
        // An abort errors the body, but events of a read already taken would still be handled.
        if (stopped) throw controller.signal.reason;
        timer.refresh();
        const chunk = JSON.parse(data) as OpenAI.Chat.Completions.ChatCompletionChunk & { error?: unknown };
        // The SDK's rule: a data object with `error` is the server failing mid-stream. An
        // `event: error` without one (which the SDK would pass on as a chunk) is one too.
        if (chunk.error || event === 'error') throw new loaded!.APIError(undefined, chunk.error ?? chunk, undefined, response.headers);
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
      });
      // A body that had fully arrived when the abort came ends normally: still not an answer.
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
    const toolCalls = tools.result().map((c) => (names ? { ...c, name: names.fromWire(c.name) } : c));
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

/** Every tool name a request uses: the tools it offers and the calls in its history. */
function toolNamesOf(req: LlmRequest): string[] {
  return [...(req.tools ?? []).map((t) => t.name), ...req.messages.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []) : []).map((c) => c.name))];
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
  if (loaded && err instanceof loaded.APIError) {
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
