/**
 * The response cache (ENABLE_CACHE, CACHE_SIMILARITY_THRESHOLD): model answers kept in a NATS
 * KV bucket (LLM_CACHE, 24 h) shared by every worker.
 *
 * Keys. A request is normalised (whitespace of every message collapsed; tool calls and tool
 * results kept) and split in two: its *settings* — tier, model and provider overrides,
 * temperature, max tokens, top_p, stop and penalties (when set), and every message except the
 * last — and its last message. The
 * settings hash names a group; the request hash (settings hash + last message) names one entry.
 *
 * Lookup. An exact request hash hit first (score 1). Otherwise, when the last message is the
 * user's, a similarity search over the group's index (the last `indexSize` entries of the same
 * settings hash): cosine similarity of embeddings when the provider that serves the request has
 * an `embedding_model` in the catalogue (Embedder), else cosine similarity of character
 * trigram counts of the lower-cased text. A score at or above the threshold is a hit. Only the
 * last user message is compared: the system prompt and earlier turns must match exactly, so a
 * long shared prompt cannot make two different questions look alike.
 *
 * Not cached (neither read nor written):
 * - requests that offer tools (an agent's tool loop acts on the world; its turns are journaled instead);
 * - requests with temperature above `maxTemperature` (default 1.0: the caller asks for variety);
 * - answers that did not finish with `stop`, empty answers, and the offline provider's answers
 *   (they cost nothing and restate their own question).
 * Last user messages longer than 4,000 characters are matched exactly only.
 *
 * A hit costs nothing: its usage is zero, and it is flagged `cacheHit` with its `cacheScore`.
 * A cache failure (NATS down, slow) is a miss, never a failed call.
 */
import { createHash } from 'node:crypto';
import type { KV, KvEntry } from '@nats-io/kv';
import { kvKeys } from '../bus/index.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { backoffDelay, type Logger } from '../kernel/index.js';
import type { Embedder } from './embeddings.js';
import type { ChatMessage, LlmProvider, LlmRequest, LlmResult, LlmToolCall } from './provider.js';

export interface CacheSettings {
  /** ENABLE_CACHE. */
  enabled: boolean;
  /** CACHE_SIMILARITY_THRESHOLD, 0..1. */
  similarityThreshold: number;
}

export interface LlmCacheOptions extends Partial<CacheSettings> {
  /** Recent entries per settings hash searched for a similar request (default 50). */
  indexSize?: number;
  /** Requests with a higher temperature are not cached (default 1.0). */
  maxTemperature?: number;
  /** The embeddings endpoint for a request (LlmRouter.embedderFor); none: local text similarity. */
  embedderFor?: (req: LlmRequest) => Embedder | undefined;
  /** A cache operation slower than this counts as a miss (default 2000 ms). */
  timeoutMs?: number;
  log?: Logger;
}

export interface CacheHit {
  result: LlmResult;
  /** 1 for an exact match, else the similarity that passed the threshold. */
  score: number;
}

/** Last user messages longer than this are matched exactly only. */
const MAX_SIMILARITY_CHARS = 4000;
/** An entry larger than this is not stored (NATS's default max payload is 1 MB). */
const MAX_ENTRY_BYTES = 512 * 1024;
/** The per-settings index is trimmed (oldest first) to stay under this. */
const MAX_INDEX_BYTES = 512 * 1024;

interface IndexItem {
  /** Request hash. */
  h: string;
  /** The last user message, normalised and lower-cased (local similarity). */
  t: string;
  /** Embedding of the last user message, int8-quantised, base64 (with `ei`). */
  e?: string;
  /** Embedder id of `e`. */
  ei?: string;
  at: number;
}

interface StoredEntry {
  v: 1;
  text: string;
  model: string;
  provider: string;
  finishReason: string;
  toolCalls?: LlmToolCall[];
  at: number;
}

interface Keys {
  settingsHash: string;
  requestHash: string;
  /** The last message's text, normalised, when it is the user's and short enough to compare. */
  text?: string;
}

const collapse = (s: string) => s.replace(/\s+/g, ' ').trim();

function normMessage(m: ChatMessage): Record<string, unknown> {
  if (m.role === 'tool') return { r: 'tool', c: collapse(m.content), id: m.toolCallId };
  if (m.role === 'assistant' && m.toolCalls?.length) return { r: 'assistant', c: collapse(m.content), tc: m.toolCalls.map((c) => [c.id, c.name, c.arguments]) };
  return { r: m.role, c: collapse(m.content) };
}

/** JSON with object keys sorted, so equal values always hash alike. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

const sha = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 40);

/** The settings hash and request hash of a request (exported for tests and diagnostics). */
export function cacheKeysOf(req: LlmRequest): Keys {
  const msgs = req.messages.map(normMessage);
  const last = msgs.at(-1);
  const settings = {
    v: 1,
    tier: req.tier,
    model: req.model?.trim() || '',
    provider: req.provider?.trim() || '',
    temperature: req.temperature,
    maxTokens: req.maxTokens,
    tools: req.tools ?? [],
    toolChoice: req.toolChoice ?? '',
    context: msgs.slice(0, -1),
    // Only when set, so the keys of requests without them stay as they were.
    ...(req.topP !== undefined || req.stop?.length || req.presencePenalty !== undefined || req.frequencyPenalty !== undefined
      ? { sampling: { topP: req.topP ?? null, stop: req.stop ?? [], presence: req.presencePenalty ?? null, frequency: req.frequencyPenalty ?? null } }
      : {}),
  };
  const settingsHash = sha(canonical(settings));
  const requestHash = sha(canonical({ s: settingsHash, last }));
  const text = last?.r === 'user' ? (last.c as string) : undefined;
  return { settingsHash, requestHash, ...(text && text.length <= MAX_SIMILARITY_CHARS ? { text } : {}) };
}

/** Character trigram counts of a text (lower-cased, padded at the ends). */
function trigrams(text: string): Map<string, number> {
  const s = ` ${text.toLowerCase()} `;
  const m = new Map<string, number>();
  for (let i = 0; i + 3 <= s.length; i++) {
    const g = s.slice(i, i + 3);
    m.set(g, (m.get(g) ?? 0) + 1);
  }
  return m;
}

/**
 * Whether two texts say the same numbers and the same negations. Character trigrams cannot
 * tell "at 6.5%" from "at 7.5%" or "was signed" from "was not signed"; a cache hit by local
 * similarity requires these to match exactly.
 */
export function sameFacts(a: string, b: string): boolean {
  const facts = (s: string) =>
    [...(s.match(/\d+(?:[.,]\d+)*/g) ?? []), ...(s.toLowerCase().match(/\b(?:not|no|never|none|without|n't|cannot|neither|nor)\b|n't\b/g) ?? [])]
      .sort()
      .join('|');
  return facts(a) === facts(b);
}

/** Cosine similarity of two texts by character trigram counts (1 for equal texts, 0 for nothing shared). */
export function textSimilarity(a: string, b: string): number {
  const x = trigrams(a);
  const y = trigrams(b);
  let dot = 0;
  let nx = 0;
  let ny = 0;
  for (const [g, c] of x) {
    nx += c * c;
    const d = y.get(g);
    if (d) dot += c * d;
  }
  for (const c of y.values()) ny += c * c;
  return nx && ny ? clamp(dot / Math.sqrt(nx * ny)) : 0;
}

export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length || a.length === 0) return 0;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na && nb ? clamp(dot / Math.sqrt(na * nb)) : 0;
}

/** Rounding may put a perfect match a hair below 1. */
const clamp = (s: number) => (s > 1 - 1e-9 ? 1 : s);

/** int8 quantisation scaled by the largest component (cosine does not depend on the scale). */
function quantise(v: number[]): string {
  let max = 0;
  for (const x of v) max = Math.max(max, Math.abs(x));
  const q = new Int8Array(v.length);
  if (max > 0) for (let i = 0; i < v.length; i++) q[i] = Math.round((v[i] / max) * 127);
  return Buffer.from(q.buffer).toString('base64');
}

function dequantise(s: string): Int8Array {
  const b = Buffer.from(s, 'base64');
  return new Int8Array(b.buffer, b.byteOffset, b.length);
}

const live = (e: KvEntry | null): e is KvEntry => e !== null && e.operation === 'PUT';

class CacheTimeout extends Error {}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      t = setTimeout(() => reject(new CacheTimeout(`cache operation took over ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(t));
}

export class LlmCache {
  readonly enabled: boolean;
  readonly threshold: number;
  private readonly indexSize: number;
  private readonly maxTemperature: number;
  private readonly timeoutMs: number;
  /** Embeddings computed by a lookup, reused when the same request's answer is stored. */
  private readonly lookedUp = new WeakMap<LlmRequest, { id: string; vec: number[] }>();

  constructor(
    private readonly kv: KV,
    private readonly opts: LlmCacheOptions = {},
  ) {
    this.enabled = opts.enabled ?? true;
    this.threshold = opts.similarityThreshold ?? 0.95;
    this.indexSize = Math.max(1, opts.indexSize ?? 50);
    this.maxTemperature = opts.maxTemperature ?? 1;
    this.timeoutMs = opts.timeoutMs ?? 2000;
  }

  /** Whether a request may be answered from, and stored in, the cache (see the module comment). */
  cacheable(req: LlmRequest): boolean {
    return this.enabled && req.messages.length > 0 && !req.tools?.length && req.temperature <= this.maxTemperature;
  }

  async get(req: LlmRequest): Promise<CacheHit | undefined> {
    if (!this.cacheable(req)) return undefined;
    try {
      return await withTimeout(this.lookup(req), this.timeoutMs);
    } catch (err) {
      this.opts.log?.warn({ err: (err as Error).message }, 'LLM cache lookup failed; treated as a miss');
      return undefined;
    }
  }

  async put(req: LlmRequest, result: LlmResult): Promise<void> {
    if (!this.cacheable(req) || result.cacheHit || result.provider === 'offline' || result.finishReason !== 'stop') return;
    if (!result.text && !result.toolCalls?.length) return;
    try {
      await withTimeout(this.store(req, result), this.timeoutMs);
    } catch (err) {
      this.opts.log?.warn({ err: (err as Error).message }, 'LLM cache store failed');
    }
  }

  private async lookup(req: LlmRequest): Promise<CacheHit | undefined> {
    const k = cacheKeysOf(req);
    const exact = await this.kv.get(kvKeys.llmCacheEntry(k.settingsHash, k.requestHash));
    if (live(exact)) return this.hit(exact, 1);
    if (!k.text) return undefined;
    const idx = await this.kv.get(kvKeys.llmCacheIndex(k.settingsHash));
    if (!live(idx)) return undefined;
    const items = parseIndex(idx);
    if (items.length === 0) return undefined;

    let best: { h: string; score: number } | undefined;
    const consider = (h: string, score: number) => {
      if (!best || score > best.score) best = { h, score };
    };
    const embedder = this.opts.embedderFor?.(req);
    let vec: number[] | undefined;
    if (embedder && items.some((i) => i.ei === embedder.id && i.e)) {
      try {
        vec = (await embedder.embed([k.text], req.signal))[0];
        this.lookedUp.set(req, { id: embedder.id, vec });
      } catch (err) {
        this.opts.log?.warn({ err: (err as Error).message, embedder: embedder.id }, 'embeddings failed; cache falls back to text similarity');
      }
    }
    if (embedder && vec) {
      for (const i of items) if (i.ei === embedder.id && i.e) consider(i.h, cosine(vec, dequantise(i.e)));
    } else {
      for (const i of items) if (sameFacts(k.text, i.t)) consider(i.h, textSimilarity(k.text, i.t));
    }
    const found = best as { h: string; score: number } | undefined;
    if (!found || found.score < this.threshold) return undefined;
    const entry = await this.kv.get(kvKeys.llmCacheEntry(k.settingsHash, found.h));
    return live(entry) ? this.hit(entry, found.score) : undefined;
  }

  private hit(entry: KvEntry, score: number): CacheHit | undefined {
    let e: StoredEntry;
    try {
      e = entry.json<StoredEntry>();
    } catch {
      return undefined;
    }
    if (e?.v !== 1 || typeof e.text !== 'string') return undefined;
    return {
      score,
      result: {
        text: e.text,
        model: e.model,
        provider: e.provider,
        finishReason: e.finishReason,
        usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0, costUsd: 0 },
        ...(e.toolCalls?.length ? { toolCalls: e.toolCalls } : {}),
        cacheHit: true,
        cacheScore: score,
      },
    };
  }

  private async store(req: LlmRequest, result: LlmResult): Promise<void> {
    const k = cacheKeysOf(req);
    const entry: StoredEntry = {
      v: 1,
      text: result.text,
      model: result.model,
      provider: result.provider,
      finishReason: result.finishReason,
      ...(result.toolCalls?.length ? { toolCalls: result.toolCalls } : {}),
      at: Date.now(),
    };
    const data = JSON.stringify(entry);
    if (Buffer.byteLength(data) > MAX_ENTRY_BYTES) return;
    await this.kv.put(kvKeys.llmCacheEntry(k.settingsHash, k.requestHash), data);
    if (!k.text) return;

    const item: IndexItem = { h: k.requestHash, t: k.text.toLowerCase(), at: entry.at };
    const embedder = this.opts.embedderFor?.(req);
    if (embedder) {
      let known = this.lookedUp.get(req);
      if (!known || known.id !== embedder.id) {
        try {
          known = { id: embedder.id, vec: (await embedder.embed([k.text], req.signal))[0] };
        } catch (err) {
          known = undefined;
          this.opts.log?.warn({ err: (err as Error).message, embedder: embedder.id }, 'embeddings failed; entry indexed for text similarity only');
        }
      }
      if (known) Object.assign(item, { e: quantise(known.vec), ei: known.id });
    }
    await this.addToIndex(kvKeys.llmCacheIndex(k.settingsHash), item);
  }

  /** Compare-and-set on the index key: several workers may add entries at once. */
  private async addToIndex(key: string, item: IndexItem): Promise<void> {
    for (let attempt = 0; attempt < 8; attempt++) {
      const cur = await this.kv.get(key);
      const items = live(cur) ? parseIndex(cur).filter((i) => i.h !== item.h) : [];
      items.unshift(item);
      items.length = Math.min(items.length, this.indexSize);
      let data = JSON.stringify({ v: 1, items });
      while (items.length > 1 && Buffer.byteLength(data) > MAX_INDEX_BYTES) {
        items.pop();
        data = JSON.stringify({ v: 1, items });
      }
      try {
        if (cur) await this.kv.update(key, data, cur.revision);
        else await this.kv.create(key, data);
        return;
      } catch {
        // Another worker wrote first: read again and retry.
        await sleep(5 + backoffDelay(INDEX_RETRY, attempt + 1));
      }
    }
    this.opts.log?.warn({ key }, 'LLM cache index busy; entry not indexed for similarity');
  }
}

/** Spreads workers that lost the same compare-and-set apart. */
const INDEX_RETRY = { baseMs: 20, capMs: 320 } as const;

function parseIndex(e: KvEntry): IndexItem[] {
  try {
    const v = e.json<{ v: number; items: IndexItem[] }>();
    return v?.v === 1 && Array.isArray(v.items) ? v.items.filter((i) => typeof i?.h === 'string' && typeof i.t === 'string') : [];
  } catch {
    return [];
  }
}

/**
 * An LlmProvider answered from the cache when it can: a hit is delivered as one delta and
 * costs nothing; a miss calls the inner provider (usually the LlmRouter) and stores its answer.
 */
export class CachedProvider implements LlmProvider {
  readonly name: string;
  /**
   * `bypass`: requests the cache cannot serve (those the offline provider answers: its answers
   * are never stored, so a lookup could only cost a round trip).
   */
  constructor(
    private readonly inner: LlmProvider,
    readonly cache: LlmCache,
    private readonly bypass: (req: LlmRequest) => boolean = () => false,
  ) {
    this.name = inner.name;
  }

  async complete(req: LlmRequest, onDelta?: (delta: string) => void): Promise<LlmResult> {
    if (this.bypass(req)) return this.inner.complete(req, onDelta);
    const hit = await this.cache.get(req);
    if (hit && !req.signal?.aborted) {
      if (onDelta && hit.result.text) onDelta(hit.result.text);
      return hit.result;
    }
    const result = await this.inner.complete(req, onDelta);
    // Stored in the background: the answer does not wait for the cache (put never throws).
    void this.cache.put(req, result);
    return result;
  }
}
