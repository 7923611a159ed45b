/**
 * Model choice: which provider and model serve a call. A request's `provider` and `model`
 * override the tier's preference list (config/models.yaml `tiers`); providers whose key is not
 * configured are skipped. An unknown provider or model, or one that only unconfigured
 * providers serve, is refused with a kernel `badRequest` (a 400 at submission). When no
 * provider of the tier's list is configured, the built-in offline provider serves the call
 * (the embedded default), and LLM_PROVIDER=offline sends every call there.
 */
import { badRequest, isTier, TIERS, type Tier } from '../kernel/index.js';
import { OFFLINE_PROVIDER, type Catalogue, type ModelEntry, type ModelRef } from './catalogue.js';
import { OFFLINE_MODEL } from './offline.js';

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
