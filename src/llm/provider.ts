/**
 * The LLM interface every model call of the system goes through: LlmProvider.complete()
 * streams text deltas to a callback and resolves with the full text and usage. The request,
 * result and error shapes live here so that every provider and wrapper shares them.
 */
import { AppError, Code } from '../kernel/index.js';

/**
 * A message of a conversation. An assistant turn may carry the tool calls the model asked
 * for; each call's result comes back as a `tool` message naming the call.
 */
export type ChatMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: LlmToolCall[] }
  | { role: 'tool'; content: string; toolCallId: string };

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

/** The error of a call given up because its caller aborted it (retryable: nothing failed). */
export const abortedError = (cause?: unknown) => new LlmError('request aborted', { retryable: true, cause });

/** Rough token estimate used where a provider reports no usage: ~4 characters per token. */
export const estimateTokens = (s: string) => Math.max(1, Math.ceil(s.length / 4));
