/**
 * The LlmProvider every caller uses: each call goes to the provider and model model choice
 * (routing.ts) names, and what happens when they fail is decided here.
 *
 * A retryable failure (429, 5xx, timeouts, connection errors) is retried with exponential
 * backoff and full jitter, at least as long as the provider's Retry-After asks; a model that
 * keeps failing hands the call to the next candidate (the next model of the tier's list, or
 * the next provider serving the same model). Once a delta has reached the caller nothing is
 * retried or handed over: a partial answer is never repeated, the error surfaces and the
 * caller (a journaled step) decides.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { SpanKind, trace, type Tracer } from '@opentelemetry/api';
import { backoffDelay, badRequest, isTier, TIERS, type Logger, type Tier } from '../kernel/index.js';
import { globalTracer, inSpan } from '../tracing/index.js';
import { providerPrices, type Catalogue } from './catalogue.js';
import { openAiEmbedder, type Embedder } from './embeddings.js';
import { OfflineProvider } from './offline.js';
import { OpenAiProvider } from './openai.js';
import { abortedError, LlmError, type LlmProvider, type LlmRequest, type LlmResult } from './provider.js';
import { buildRouting, resolveModelChoice, type LlmSettings, type ModelChoice, type ResolvedChoice, type Routing } from './routing.js';

export interface RetryPolicy {
  /** First backoff ceiling (ms); doubled per attempt. */
  baseMs: number;
  /** Largest backoff ceiling (ms). */
  capMs: number;
  /** Calls of one model before handing over to the next (1 = no retry). */
  maxAttempts: number;
  /** A Retry-After longer than this is not waited for: the next model is tried at once. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { baseMs: 250, capMs: 8000, maxAttempts: 3, maxRetryAfterMs: 30_000 };

export interface RouterOptions {
  retry?: Partial<RetryPolicy>;
  log?: Logger;
  /** Source of jitter in [0, 1) (tests pin it). */
  random?: () => number;
  /** Providers by catalogue name, used instead of the ones built from the catalogue (tests, custom clients). */
  providers?: Record<string, LlmProvider>;
  /** Told before each backoff wait begins (tests wait for it instead of guessing a delay). */
  onBackoff?: (retry: { provider: string; model: string; attempt: number; delayMs: number }) => void;
  /** Each call is a span (gen_ai.* attributes); default: the API's tracer. */
  tracer?: Tracer;
}

export interface TierShare {
  calls: number;
  /** calls / all calls (0 before the first call). */
  share: number;
}

/** Statuses of a non-retryable error that concern one provider or model only: the next candidate may work. */
const HAND_OVER_STATUSES = new Set([401, 403, 404]);

/**
 * The LlmProvider every caller uses: picks the provider and model of each call, retries,
 * fails over, and counts calls per tier (tierShares, for metrics).
 */
export class LlmRouter implements LlmProvider {
  readonly name = 'router';
  readonly routing: Routing;
  readonly retry: RetryPolicy;
  private readonly clients = new Map<string, LlmProvider>();
  private readonly embedders = new Map<string, Embedder>();
  private readonly calls: Record<Tier, number> = { small: 0, medium: 0, large: 0 };
  private readonly random: () => number;
  private readonly log?: Logger;

  constructor(
    catalogue: Catalogue,
    private readonly settings: LlmSettings,
    private readonly opts: RouterOptions = {},
  ) {
    this.routing = buildRouting(catalogue, settings);
    this.retry = { ...DEFAULT_RETRY, ...opts.retry };
    this.random = opts.random ?? Math.random;
    this.log = opts.log;
  }

  /** See resolveModelChoice; usable unbound (`const check = router.resolveModelChoice`). */
  readonly resolveModelChoice = (choice: ModelChoice): ResolvedChoice => resolveModelChoice(this.routing, choice);

  /** The client of one provider of the catalogue. */
  providerFor(name: string): LlmProvider {
    let p = this.clients.get(name);
    if (p) return p;
    const injected = this.opts.providers && Object.hasOwn(this.opts.providers, name) ? this.opts.providers[name] : undefined;
    const r = this.routing.providers[name];
    if (injected) p = injected;
    else if (!r) throw badRequest(`unknown provider: ${name}`);
    else if (r.offline) p = new OfflineProvider({ chunkDelayMs: this.settings.offlineChunkDelayMs ?? 0 });
    else {
      const first = (t: Tier) => (r.models.find((m) => m.tier === t) ?? r.models[0])?.id ?? '';
      p = new OpenAiProvider({
        baseUrl: r.baseUrl,
        apiKey: r.apiKey,
        models: { small: first('small'), medium: first('medium'), large: first('large') },
        prices: providerPrices({ name: r.name, models: r.models }),
        timeoutMs: this.settings.requestTimeoutMs ?? 120_000,
        providerName: r.name,
      });
    }
    this.clients.set(name, p);
    return p;
  }

  /** One span per call, over its retries and fallbacks: named after the model that answered. */
  complete(req: LlmRequest, onDelta?: (delta: string) => void): Promise<LlmResult> {
    const attributes = {
      'gen_ai.operation.name': 'chat',
      'taskorch.llm.tier': req.tier,
      'gen_ai.request.max_tokens': req.maxTokens,
      'gen_ai.request.temperature': req.temperature,
      ...(req.model ? { 'gen_ai.request.model': req.model } : {}),
      ...(req.provider ? { 'taskorch.llm.requested_provider': req.provider } : {}),
    };
    return inSpan(this.opts.tracer ?? globalTracer(), req.model ? `chat ${req.model}` : 'chat', { kind: SpanKind.CLIENT, attributes }, async (span) => {
      const r = await this.route(req, onDelta);
      span.updateName(`chat ${r.model}`);
      span.setAttributes({
        'gen_ai.provider.name': r.provider,
        'gen_ai.response.model': r.model,
        'gen_ai.response.finish_reasons': [r.finishReason],
        'gen_ai.usage.input_tokens': r.usage.inputTokens,
        'gen_ai.usage.output_tokens': r.usage.outputTokens,
        'taskorch.llm.cost_usd': r.usage.costUsd,
      });
      return r;
    });
  }

  private async route(req: LlmRequest, onDelta?: (delta: string) => void): Promise<LlmResult> {
    if (isTier(req.tier)) this.calls[req.tier]++;
    const choice = this.resolveModelChoice({ tier: req.tier, model: req.model, provider: req.provider });
    let candidates = choice.candidates;
    if (req.tools?.length) {
      // Prefer models that can call tools; if none can, the first choice answers without them.
      const withTools = candidates.filter((c) => this.routing.providers[c.provider].models.find((m) => m.id === c.model)?.supports_tools !== false);
      if (withTools.length > 0) candidates = withTools;
    }
    let streamed = false;
    const relay = onDelta
      ? (d: string) => {
          streamed = true;
          onDelta(d);
        }
      : undefined;
    let lastErr: unknown;
    for (let i = 0; i < candidates.length; i++) {
      const c = candidates[i];
      const provider = this.providerFor(c.provider);
      for (let attempt = 1; ; attempt++) {
        if (req.signal?.aborted) throw abortedError(req.signal.reason);
        try {
          return await provider.complete({ ...req, model: c.model, provider: c.provider }, relay);
        } catch (err) {
          lastErr = err;
          if (req.signal?.aborted) throw err instanceof LlmError ? err : abortedError(err);
          // Part of the answer reached the caller: repeating it (here or elsewhere) would duplicate it.
          if (streamed || !(err instanceof LlmError)) throw err;
          if (!err.retryable) {
            if (err.status !== undefined && HAND_OVER_STATUSES.has(err.status)) break;
            throw err;
          }
          if (attempt >= this.retry.maxAttempts) break;
          const delay = this.backoff(attempt, err.retryAfterMs);
          if (delay === undefined) break;
          this.log?.warn({ provider: c.provider, model: c.model, attempt, delayMs: delay, err: err.message }, 'LLM call failed; retrying');
          this.opts.onBackoff?.({ provider: c.provider, model: c.model, attempt, delayMs: delay });
          trace
            .getActiveSpan()
            ?.addEvent('retry', { 'gen_ai.provider.name': c.provider, 'gen_ai.request.model': c.model, attempt, 'taskorch.delay_ms': delay });
          await sleep(delay, undefined, { signal: req.signal }).catch((e: unknown) => {
            throw abortedError(req.signal?.reason ?? e);
          });
        }
      }
      const next = candidates[i + 1];
      if (next) {
        this.log?.warn(
          { provider: c.provider, model: c.model, next: `${next.provider}/${next.model}`, err: (lastErr as Error)?.message },
          'LLM model keeps failing; falling back',
        );
      }
    }
    throw lastErr;
  }

  /**
   * Milliseconds before retry number `attempt` (1-based): full jitter over min(cap, base * 2^(attempt-1)),
   * and at least the provider's Retry-After. Undefined when Retry-After exceeds maxRetryAfterMs.
   */
  backoff(attempt: number, retryAfterMs?: number): number | undefined {
    if (retryAfterMs !== undefined && retryAfterMs > this.retry.maxRetryAfterMs) return undefined;
    return backoffDelay({ baseMs: this.retry.baseMs, capMs: this.retry.capMs, jitter: 'full' }, attempt, retryAfterMs, this.random);
  }

  /** Calls per tier and each tier's share of all calls since start (target 50/40/10). */
  tierShares(): Record<Tier, TierShare> {
    const total = this.calls.small + this.calls.medium + this.calls.large;
    const out = {} as Record<Tier, TierShare>;
    for (const t of TIERS) out[t] = { calls: this.calls[t], share: total ? this.calls[t] / total : 0 };
    return out;
  }

  /**
   * The embeddings endpoint of the provider that would serve this request, when the catalogue
   * names an embedding model for it and it is configured; else undefined (the response cache
   * then uses its local text similarity).
   */
  embedderFor(req: Pick<LlmRequest, 'tier' | 'model' | 'provider'>): Embedder | undefined {
    let choice: ResolvedChoice;
    try {
      choice = this.resolveModelChoice({ tier: req.tier, model: req.model, provider: req.provider });
    } catch {
      return undefined;
    }
    const p = this.routing.providers[choice.provider];
    if (!p || p.offline || !p.configured || !p.embeddingModel || !p.baseUrl) return undefined;
    let e = this.embedders.get(p.name);
    if (!e) {
      e = openAiEmbedder({
        provider: p.name,
        baseUrl: p.baseUrl,
        apiKey: p.apiKey,
        model: p.embeddingModel,
        timeoutMs: this.settings.requestTimeoutMs ?? 120_000,
      });
      this.embedders.set(p.name, e);
    }
    return e;
  }
}

export function createRouter(catalogue: Catalogue, settings: LlmSettings, opts: RouterOptions = {}): LlmRouter {
  return new LlmRouter(catalogue, settings, opts);
}
