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
import { AppError, Code } from '../errors/index.js';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface LlmRequest {
  messages: ChatMessage[];
  tier: 'small' | 'medium' | 'large';
  model?: string;
  maxTokens: number;
  temperature: number;
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
}

export interface LlmProvider {
  readonly name: string;
  complete(req: LlmRequest, onDelta?: (delta: string) => void): Promise<LlmResult>;
}

export class LlmError extends AppError {
  override name = 'LlmError';
  constructor(message: string, opts: { retryable: boolean; status?: number; cause?: unknown }) {
    super(opts.retryable ? Code.Unavailable : Code.FailedPrecondition, message, { retryable: opts.retryable, cause: opts.cause });
  }
}

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
  constructor(private readonly opts: { chunkDelayMs: number; chunkChars?: number } = { chunkDelayMs: 0 }) {}

  async complete(req: LlmRequest, onDelta?: (delta: string) => void): Promise<LlmResult> {
    const text = offlineAnswer(req.messages);
    const chunkChars = this.opts.chunkChars ?? 48;
    if (onDelta) {
      for (let i = 0; i < text.length; i += chunkChars) {
        if (req.signal?.aborted) throw new LlmError('request aborted', { retryable: true });
        if (this.opts.chunkDelayMs > 0) await sleep(this.opts.chunkDelayMs, req.signal);
        onDelta(text.slice(i, i + chunkChars));
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

function offlineAnswer(messages: ChatMessage[]): string {
  const user = [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';
  const system = messages.find((m) => m.role === 'system')?.content ?? '';
  const digest = createHash('sha256').update(JSON.stringify(messages)).digest('hex').slice(0, 12);
  // Instructions a workflow gives in its system prompt select the answer's shape.
  if (/respond with a json array of subtasks/i.test(system)) {
    const parts = splitIntoSubtasks(user);
    return JSON.stringify(parts.map((p, i) => ({ id: `subtask-${i + 1}`, description: p })));
  }
  const q = user.length > 400 ? `${user.slice(0, 400)}...` : user;
  return `${OFFLINE_LABEL} Request ${digest}: "${q}". ` +
    'This deterministic answer restates the request so the workflow can run end to end; ' +
    'configure LLM_BASE_URL and LLM_API_KEY to get answers from a real model.';
}

/** Splits a request into 2-4 deterministic subtasks (by sentence / conjunction). */
function splitIntoSubtasks(q: string): string[] {
  const pieces = q.split(/(?<=[.;?!])\s+|\s+(?:and then|then|and)\s+/i).map((s) => s.trim()).filter((s) => s.length > 2);
  const out = pieces.slice(0, 4);
  while (out.length < 2) out.push(out.length === 0 ? `Understand: ${q}` : `Answer: ${q}`);
  return out;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      reject(new LlmError('request aborted', { retryable: true }));
    }, { once: true });
  });
}

export interface OpenAiProviderOptions {
  baseUrl?: string;
  apiKey?: string;
  /** Model used per tier when the request names none. */
  models: Record<'small' | 'medium' | 'large', string>;
  /** USD per 1k prompt / completion tokens by model, for cost accounting. */
  prices?: Record<string, { prompt: number; completion: number }>;
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
    const model = req.model ?? this.opts.models[req.tier];
    let text = '';
    let finishReason = 'stop';
    let usage: OpenAI.CompletionUsage | undefined;
    let reportedModel = model;
    try {
      const stream = await this.client.chat.completions.create(
        {
          model,
          messages: req.messages,
          max_tokens: req.maxTokens,
          temperature: req.temperature,
          stream: true,
          stream_options: { include_usage: true },
        },
        { signal: req.signal },
      );
      for await (const chunk of stream) {
        if (chunk.model) reportedModel = chunk.model;
        if (chunk.usage) usage = chunk.usage;
        const choice = chunk.choices?.[0];
        const delta = choice?.delta?.content;
        if (delta) {
          text += delta;
          onDelta?.(delta);
        }
        if (choice?.finish_reason) finishReason = choice.finish_reason;
      }
    } catch (err) {
      throw toLlmError(err);
    }
    const inputTokens = usage?.prompt_tokens ?? req.messages.reduce((n, m) => n + estimateTokens(m.content), 0);
    const outputTokens = usage?.completion_tokens ?? estimateTokens(text);
    const price = this.opts.prices?.[reportedModel] ?? this.opts.prices?.[model];
    const costUsd = price ? (inputTokens / 1000) * price.prompt + (outputTokens / 1000) * price.completion : 0;
    return {
      text,
      model: reportedModel,
      provider: this.name,
      finishReason,
      usage: { inputTokens, outputTokens, totalTokens: usage?.total_tokens ?? inputTokens + outputTokens, costUsd },
    };
  }
}

function toLlmError(err: unknown): LlmError {
  if (err instanceof LlmError) return err;
  if (err instanceof OpenAI.APIError) {
    const status = err.status ?? 0;
    // 408/409/429/5xx and connection failures may succeed later; 4xx otherwise will not.
    const retryable = status === 0 || status === 408 || status === 409 || status === 429 || status >= 500;
    return new LlmError(`LLM provider error${status ? ` (${status})` : ''}: ${err.message}`, { retryable, status, cause: err });
  }
  const e = err as Error;
  if (e?.name === 'AbortError') return new LlmError('request aborted', { retryable: true, cause: err });
  return new LlmError(`LLM provider error: ${e?.message ?? String(err)}`, { retryable: true, cause: err });
}
