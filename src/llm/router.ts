/**
 * Routing: which provider and model serve a call, and what happens when they fail.
 *
 * Choice (resolveModelChoice): a request's `provider` and `model` override the tier's
 * preference list (config/models.yaml `tiers`); providers whose key is not configured are
 * skipped. An unknown provider or model, or one that only unconfigured providers serve, is
 * refused with a kernel `badRequest` (a 400 at submission). When no provider of the tier's
 * list is configured, the built-in offline provider serves the call (the embedded default),
 * and LLM_PROVIDER=offline sends every call there.
 *
 * Resilience (LlmRouter.complete): a retryable failure (429, 5xx, timeouts, connection errors)
 * is retried with exponential backoff and full jitter, at least as long as the provider's
 * Retry-After asks; a model that keeps failing hands the call to the next candidate (the next
 * model of the tier's list, or the next provider serving the same model). Once a delta has
 * reached the caller nothing is retried or handed over: a partial answer is never repeated,
 * the error surfaces and the caller (a journaled step) decides.
 */
import OpenAI from 'openai';
import { badRequest, isTier, TIERS, type Logger, type Tier } from '../kernel/index.js';
import { OFFLINE_PROVIDER, providerPrices, type Catalogue, type ModelEntry, type ModelRef } from './catalogue.js';
import { LlmError, OFFLINE_MODEL, OfflineProvider, OpenAiProvider, type LlmProvider, type LlmRequest, type LlmResult } from './index.js';

/** What routing needs from the configuration (the `llm` slice of loadConfig satisfies it). */
export interface LlmSettings {
  /** LLM_BASE_URL: the `openai` provider's endpoint (the one-provider shortcut). */
  baseUrl?: string;
  /** LLM_API_KEY (or OPENAI_API_KEY): the `openai` provider's key. */
  apiKey?: string;
  /** LLM_MODEL: pins every tier to this model. */
  defaultModel?: string;
  /** DEFAULT_MODEL_TIER. */
  defaultTier?: Tier;
  /** Values of the `*_API_KEY` variables, by name (the catalogue's `api_key_env`). */
  providerKeys?: Readonly<Record<string, string>>;
  /** LLM_PROVIDER=offline given explicitly: every call goes to the offline provider. */
  offlineOnly?: boolean;
  /** LLM_TIMEOUT_MS. */
  requestTimeoutMs?: number;
  /** OFFLINE_LLM_CHUNK_DELAY_MS. */
  offlineChunkDelayMs?: number;
}

/** A provider as routing sees it: the catalogue's entry with its key resolved. */
export interface RoutedProvider {
  name: string;
  /** The built-in deterministic provider. */
  offline: boolean;
  baseUrl?: string;
  apiKey?: string;
  apiKeyEnv?: string;
  /** Its key is set, or it needs none. */
  configured: boolean;
  embeddingModel?: string;
  models: ModelEntry[];
}

export interface Routing {
  /** Every provider, in catalogue order (no prototype: look names up freely). */
  providers: Record<string, RoutedProvider>;
  /** Each tier's preference list, with LLM_MODEL's pin applied. */
  tiers: Record<Tier, ModelRef[]>;
  defaultTier: Tier;
  offlineOnly: boolean;
}

export interface ModelChoice {
  tier?: string;
  model?: string;
  provider?: string;
}

export interface ModelCandidate {
  provider: string;
  model: string;
}

export interface ResolvedChoice {
  tier: Tier;
  /** The first candidate's provider and model. */
  provider: string;
  model: string;
  /** Every provider/model to try, in order. */
  candidates: ModelCandidate[];
}

// A function, not a constant: index.ts re-exports this module, so its bindings are not ready
// while this module is first evaluated.
const offlineEntry = (): ModelEntry => ({
  id: OFFLINE_MODEL,
  tier: 'small',
  context_window: 1_000_000,
  cost_per_1k_prompt_tokens: 0,
  cost_per_1k_completion_tokens: 0,
  supports_tools: false,
  supports_streaming: true,
});

const OPENAI = 'openai';

/** The catalogue with the environment applied: keys resolved, the one-provider shortcut and LLM_MODEL's pin. */
export function buildRouting(catalogue: Catalogue, settings: LlmSettings): Routing {
  const keys = settings.providerKeys ?? {};
  const providers: Record<string, RoutedProvider> = Object.create(null);
  for (const spec of Object.values(catalogue.providerSpecs)) {
    const offline = spec.name === OFFLINE_PROVIDER;
    const apiKey = spec.apiKeyEnv && Object.hasOwn(keys, spec.apiKeyEnv) ? keys[spec.apiKeyEnv] : undefined;
    providers[spec.name] = {
      name: spec.name,
      offline,
      ...(spec.baseUrl ? { baseUrl: spec.baseUrl } : {}),
      ...(apiKey ? { apiKey } : {}),
      ...(spec.apiKeyEnv ? { apiKeyEnv: spec.apiKeyEnv } : {}),
      configured: offline || !spec.apiKeyEnv || apiKey !== undefined,
      ...(spec.embeddingModel ? { embeddingModel: spec.embeddingModel } : {}),
      models: [...spec.models],
    };
  }
  providers[OFFLINE_PROVIDER] ??= { name: OFFLINE_PROVIDER, offline: true, configured: true, models: [offlineEntry()] };
  if (providers[OFFLINE_PROVIDER].models.length === 0) providers[OFFLINE_PROVIDER].models.push(offlineEntry());

  // The one-provider shortcut: LLM_BASE_URL / LLM_API_KEY define or override `openai`.
  const shortcut = Boolean(settings.baseUrl || settings.apiKey);
  if (shortcut) {
    const cur = providers[OPENAI];
    providers[OPENAI] = {
      name: OPENAI,
      offline: false,
      baseUrl: settings.baseUrl ?? cur?.baseUrl ?? 'https://api.openai.com/v1',
      ...(settings.apiKey ? { apiKey: settings.apiKey } : cur?.apiKey ? { apiKey: cur.apiKey } : {}),
      apiKeyEnv: cur?.apiKeyEnv ?? 'OPENAI_API_KEY',
      // A base URL alone is a compatible server that may need no key (vLLM, Ollama).
      configured: true,
      ...(cur?.embeddingModel ? { embeddingModel: cur.embeddingModel } : {}),
      models: cur ? cur.models : [],
    };
  }

  const defaultTier = settings.defaultTier ?? 'small';
  const tiers = {} as Record<Tier, ModelRef[]>;
  for (const t of TIERS) tiers[t] = catalogue.tierPreferences[t].map((r) => ({ ...r }));

  // LLM_MODEL pins every tier: to the shortcut's provider when the shortcut is used, else to
  // every provider listing the model, else to `openai` (which, unconfigured, leaves the call
  // to the offline provider, as before).
  const pinned = settings.defaultModel?.trim();
  if (pinned) {
    const listing = Object.values(providers).filter((p) => p.models.some((m) => m.id === pinned));
    let refs: ModelRef[];
    if (!shortcut && listing.length > 0) {
      refs = listing.map((p) => ({ provider: p.name, model: pinned }));
    } else {
      providers[OPENAI] ??= {
        name: OPENAI,
        offline: false,
        baseUrl: 'https://api.openai.com/v1',
        apiKeyEnv: 'OPENAI_API_KEY',
        configured: false,
        models: [],
      };
      const openai = providers[OPENAI];
      if (!openai.models.some((m) => m.id === pinned)) {
        // A model the catalogue does not list (e.g. served by a local vLLM): no known prices or window.
        openai.models = [
          ...openai.models,
          {
            id: pinned,
            tier: defaultTier,
            context_window: 0,
            cost_per_1k_prompt_tokens: 0,
            cost_per_1k_completion_tokens: 0,
            supports_tools: true,
            supports_streaming: true,
          },
        ];
      }
      refs = [{ provider: OPENAI, model: pinned }];
    }
    for (const t of TIERS) tiers[t] = refs.map((r) => ({ ...r }));
  }
  return { providers, tiers, defaultTier, offlineOnly: settings.offlineOnly === true };
}

const noKey = (p: RoutedProvider) => badRequest(`provider ${p.name} has no API key configured (set ${p.apiKeyEnv ?? 'its key'})`);

/**
 * The provider and model for a call (and the fallbacks), or a `badRequest` naming what is
 * wrong: `unknown provider: x`, `unknown model: x`, `provider x has no API key configured
 * (set ENV_NAME)`. Called at submission (to refuse with 400) and for every call.
 */
export function resolveModelChoice(routing: Routing, choice: ModelChoice): ResolvedChoice {
  const tierRaw = choice.tier?.trim();
  if (tierRaw && !isTier(tierRaw)) throw badRequest(`unknown model tier: ${tierRaw} (small, medium or large)`);
  const tier: Tier = (tierRaw as Tier | undefined) || routing.defaultTier;
  const providerName = choice.provider?.trim() || undefined;
  const model = choice.model?.trim() || undefined;
  const { providers } = routing;
  const usable = (p: RoutedProvider) => p.configured || routing.offlineOnly;
  let candidates: ModelCandidate[];

  if (providerName) {
    const p = providers[providerName];
    if (!p) throw badRequest(`unknown provider: ${providerName}`);
    if (!usable(p)) throw noKey(p);
    if (model) {
      if (!p.models.some((m) => m.id === model)) {
        const elsewhere = Object.values(providers).some((q) => q.models.some((m) => m.id === model));
        throw badRequest(elsewhere ? `unknown model: ${model} (provider ${p.name} does not serve it)` : `unknown model: ${model}`);
      }
      candidates = [{ provider: p.name, model }];
    } else {
      candidates = modelsOfProvider(routing, p, tier);
      if (candidates.length === 0) throw badRequest(`provider ${p.name} lists no models`);
    }
  } else if (model) {
    const serving = Object.values(providers).filter((p) => p.models.some((m) => m.id === model));
    if (serving.length === 0) throw badRequest(`unknown model: ${model}`);
    const ok = serving.filter(usable);
    if (ok.length === 0) throw noKey(serving[0]);
    candidates = ok.map((p) => ({ provider: p.name, model }));
  } else {
    candidates = dedupe(routing.tiers[tier].flatMap((r) => expandRef(routing, r).filter((c) => providers[c.provider].configured)));
    // No configured provider for the tier: the offline provider answers (labelled as such).
    if (candidates.length === 0) candidates = [offlineCandidate(routing)];
  }
  if (routing.offlineOnly) candidates = [offlineCandidate(routing)];
  return { tier, provider: candidates[0].provider, model: candidates[0].model, candidates };
}

function offlineCandidate(routing: Routing): ModelCandidate {
  return { provider: OFFLINE_PROVIDER, model: routing.providers[OFFLINE_PROVIDER].models[0].id };
}

/** A tier entry as provider/model pairs: a bare model id means every provider listing it. */
function expandRef(routing: Routing, r: ModelRef): ModelCandidate[] {
  if (r.provider) return routing.providers[r.provider] ? [{ provider: r.provider, model: r.model }] : [];
  return Object.values(routing.providers)
    .filter((p) => p.models.some((m) => m.id === r.model))
    .map((p) => ({ provider: p.name, model: r.model }));
}

/** A named provider's models for a tier: its entries in the tier's list, then its models of that tier, then the rest. */
function modelsOfProvider(routing: Routing, p: RoutedProvider, tier: Tier): ModelCandidate[] {
  const fromList = routing.tiers[tier].flatMap((r) => expandRef(routing, r)).filter((c) => c.provider === p.name);
  const ofTier = p.models.filter((m) => m.tier === tier).map((m) => ({ provider: p.name, model: m.id }));
  const rest = p.models.map((m) => ({ provider: p.name, model: m.id }));
  return dedupe([...fromList, ...ofTier, ...rest]);
}

function dedupe(list: ModelCandidate[]): ModelCandidate[] {
  const seen = new Set<string>();
  return list.filter((c) => {
    const k = `${c.provider}\u0000${c.model}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** An embeddings endpoint: one vector per text, in order. */
export interface Embedder {
  /** Provider and model ("openai/text-embedding-3-small"): vectors of different ids are not comparable. */
  readonly id: string;
  embed(texts: string[], signal?: AbortSignal): Promise<number[][]>;
}

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
}

export interface TierShare {
  calls: number;
  /** calls / all calls (0 before the first call). */
  share: number;
}

/** Statuses of a non-retryable error that concern one provider or model only: the next candidate may work. */
const HAND_OVER_STATUSES = new Set([401, 403, 404]);

const aborted = (cause?: unknown) => new LlmError('request aborted', { retryable: true, cause });

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

  async complete(req: LlmRequest, onDelta?: (delta: string) => void): Promise<LlmResult> {
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
        if (req.signal?.aborted) throw aborted(req.signal.reason);
        try {
          return await provider.complete({ ...req, model: c.model, provider: c.provider }, relay);
        } catch (err) {
          lastErr = err;
          if (req.signal?.aborted) throw err instanceof LlmError ? err : aborted(err);
          // Part of the answer reached the caller: repeating it (here or elsewhere) would duplicate it.
          if (streamed || !(err instanceof LlmError)) throw err;
          if (!err.retryable) {
            if (err.status !== undefined && HAND_OVER_STATUSES.has(err.status)) break;
            throw err;
          }
          if (attempt >= this.retry.maxAttempts) break;
          const delay = this.backoff(attempt, err.retryAfterMs);
          if (delay === undefined) break;
          this.log?.warn({ provider: c.provider, model: c.model, attempt, delayMs: Math.round(delay), err: err.message }, 'LLM call failed; retrying');
          await sleep(delay, req.signal);
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
    const ceiling = Math.min(this.retry.capMs, this.retry.baseMs * 2 ** (attempt - 1));
    const jitter = this.random() * ceiling;
    if (retryAfterMs === undefined) return jitter;
    if (retryAfterMs > this.retry.maxRetryAfterMs) return undefined;
    return Math.max(retryAfterMs, jitter);
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

/** An OpenAI-compatible /embeddings endpoint. */
export function openAiEmbedder(o: { provider: string; baseUrl: string; apiKey?: string; model: string; timeoutMs: number }): Embedder {
  const client = new OpenAI({ baseURL: o.baseUrl, apiKey: o.apiKey ?? 'not-set', timeout: o.timeoutMs, maxRetries: 1 });
  return {
    id: `${o.provider}/${o.model}`,
    async embed(texts, signal) {
      // float: servers such as Ollama do not implement the SDK's default base64 encoding.
      const r = await client.embeddings.create({ model: o.model, input: texts, encoding_format: 'float' }, { signal });
      const out: number[][] = new Array(texts.length);
      for (const d of r.data) out[d.index] = d.embedding;
      for (let i = 0; i < texts.length; i++) if (!Array.isArray(out[i])) throw new Error(`embeddings endpoint returned no vector for input ${i}`);
      return out;
    },
  };
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(aborted(signal.reason));
    const onAbort = () => {
      clearTimeout(t);
      reject(aborted(signal?.reason));
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
