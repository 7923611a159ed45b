/**
 * The deterministic offline provider (the embedded default and tests). Every offline response
 * says so in its text, and its model and provider names ("offline-deterministic" / "offline")
 * are reported in task status.
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { abortedError, estimateTokens, type ChatMessage, type LlmProvider, type LlmRequest, type LlmResult } from './provider.js';

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
        if (this.opts.chunkDelayMs > 0) await pause(this.opts.chunkDelayMs, req.signal);
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

/** A pause between pieces that an abort ends at once, as the provider's own error. */
async function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  try {
    await sleep(ms, undefined, { signal });
  } catch (err) {
    throw abortedError(err);
  }
}
