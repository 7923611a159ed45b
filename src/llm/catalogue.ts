/**
 * The model catalogue (config/models.yaml): the providers (OpenAI-compatible endpoints), the
 * models each one serves with their tier, context window, prices and capabilities, and the
 * preference order of models for each tier. Parsed and validated once at start-up; errors
 * name the file and field. A change needs a restart.
 *
 * Format (v2):
 *
 *   providers:
 *     openai:
 *       base_url: https://api.openai.com/v1
 *       api_key_env: OPENAI_API_KEY        # absent: the endpoint needs no key (Ollama, vLLM)
 *       embedding_model: text-embedding-3-small   # optional: used by the response cache
 *       models:
 *         - { id: gpt-4o-mini, tier: small, context_window: 128000, cost_per_1k_prompt_tokens: 0.00015,
 *             cost_per_1k_completion_tokens: 0.0006, supports_tools: true, supports_streaming: true }
 *   tiers:
 *     small: [openai/gpt-4o-mini, ollama/llama3.2]   # "provider/model", or a bare model id
 *
 * A tier entry "p/m" whose `p` is a provider of the catalogue names model `m` of provider `p`;
 * any other entry is a bare model id (ids may contain '/') served by every provider listing it.
 * `api_key_env` must end in `_API_KEY` (configuration collects exactly those variables).
 *
 * The v1 format (a tier mapped to one model id, a provider mapped to a bare list of models)
 * is still read: its `openai` provider gets the OpenAI endpoint and OPENAI_API_KEY, and its
 * `offline` provider the built-in deterministic one.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { ConfigError } from '../config/index.js';
import { TIERS, type Tier } from '../kernel/index.js';

export interface ModelEntry {
  id: string;
  tier: Tier;
  context_window: number;
  cost_per_1k_prompt_tokens: number;
  cost_per_1k_completion_tokens: number;
  supports_tools: boolean;
  supports_streaming: boolean;
}

/** The name of the built-in deterministic provider (no endpoint, no key). */
export const OFFLINE_PROVIDER = 'offline';

/** One provider of the catalogue. */
export interface ProviderSpec {
  name: string;
  /** OpenAI-compatible base URL (ends in /v1 for most servers); absent only for `offline`. */
  baseUrl?: string;
  /** Name of the environment variable holding the key; absent: no key needed. */
  apiKeyEnv?: string;
  /** Model of the provider's embeddings endpoint, used by the response cache's similarity search. */
  embeddingModel?: string;
  models: ModelEntry[];
}

/** A tier preference: a model, optionally pinned to one provider. */
export interface ModelRef {
  provider?: string;
  model: string;
}

export interface Catalogue {
  /** The first preference of each tier (model id): the v1 view, kept for existing callers. */
  tiers: Record<Tier, string>;
  /** Models by provider name: the v1 view, kept for existing callers (prices, listings). */
  providers: Record<string, ModelEntry[]>;
  /** Every provider with its endpoint, key variable and models, in file order. */
  providerSpecs: Record<string, ProviderSpec>;
  /** Each tier's models in preference order (the fallback order). */
  tierPreferences: Record<Tier, ModelRef[]>;
}

const PROVIDER_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const KEY_ENV = /^[A-Z][A-Z0-9_]*_API_KEY$/;

/** Defaults for the providers of a v1 file (which had no endpoints). */
const V1_DEFAULTS: Record<string, { baseUrl?: string; apiKeyEnv?: string }> = {
  openai: { baseUrl: 'https://api.openai.com/v1', apiKeyEnv: 'OPENAI_API_KEY' },
  [OFFLINE_PROVIDER]: {},
};

export function parseCatalogue(text: string, source = 'models.yaml'): Catalogue {
  const fail = (field: string, why: string): never => {
    throw new ConfigError('MODELS_CONFIG_PATH', `${source}: ${field}: ${why}`);
  };
  let doc: unknown;
  try {
    doc = parse(text) as unknown;
  } catch (err) {
    return fail('(root)', `not valid YAML: ${(err as Error).message}`);
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) fail('(root)', 'expected a mapping');
  const d = doc as Record<string, unknown>;

  const providerSpecs: Record<string, ProviderSpec> = {};
  const providersRaw = d.providers ?? {};
  if (typeof providersRaw !== 'object' || Array.isArray(providersRaw)) fail('providers', 'expected a mapping of provider names');
  for (const [name, raw] of Object.entries(providersRaw as Record<string, unknown>)) {
    const at = `providers.${name}`;
    if (!PROVIDER_NAME.test(name)) fail(at, 'a provider name is letters, digits, "-" and "_" (at most 64)');
    let spec: ProviderSpec;
    if (Array.isArray(raw)) {
      // v1: a bare list of models.
      spec = { name, ...(V1_DEFAULTS[name] ?? {}), models: parseModels(raw, `${at}`, fail) };
      if (name !== OFFLINE_PROVIDER && !spec.baseUrl) fail(at, 'a provider other than openai and offline needs base_url (use the mapping form)');
    } else if (raw && typeof raw === 'object') {
      const p = raw as Record<string, unknown>;
      for (const k of Object.keys(p)) {
        if (!['base_url', 'api_key_env', 'embedding_model', 'models'].includes(k))
          fail(`${at}.${k}`, 'unknown field (base_url, api_key_env, embedding_model, models)');
      }
      const baseUrl = optString(p.base_url, `${at}.base_url`, fail);
      if (baseUrl !== undefined && !/^https?:\/\/[^\s]+$/.test(baseUrl)) fail(`${at}.base_url`, 'expected an http(s) URL');
      if (name !== OFFLINE_PROVIDER && baseUrl === undefined) fail(`${at}.base_url`, 'expected the endpoint URL');
      if (name === OFFLINE_PROVIDER && baseUrl !== undefined) fail(`${at}.base_url`, 'the offline provider is built in and has no endpoint');
      const apiKeyEnv = optString(p.api_key_env, `${at}.api_key_env`, fail);
      if (apiKeyEnv !== undefined && !KEY_ENV.test(apiKeyEnv)) fail(`${at}.api_key_env`, 'expected an environment variable name ending in _API_KEY');
      const embeddingModel = optString(p.embedding_model, `${at}.embedding_model`, fail);
      if (!Array.isArray(p.models)) fail(`${at}.models`, 'expected a list');
      spec = {
        name,
        ...(baseUrl !== undefined ? { baseUrl: baseUrl.replace(/\/+$/, '') } : {}),
        ...(apiKeyEnv !== undefined ? { apiKeyEnv } : {}),
        ...(embeddingModel !== undefined ? { embeddingModel } : {}),
        models: parseModels(p.models as unknown[], `${at}.models`, fail),
      };
    } else {
      return fail(at, 'expected a mapping (base_url, api_key_env, models) or a list of models');
    }
    const seen = new Set<string>();
    for (const m of spec.models) {
      if (seen.has(m.id)) fail(at, `model ${m.id} is listed twice`);
      seen.add(m.id);
    }
    providerSpecs[name] = spec;
  }

  const tiersRaw = (d.tiers ?? {}) as Record<string, unknown>;
  if (typeof tiersRaw !== 'object' || Array.isArray(tiersRaw)) fail('tiers', 'expected a mapping of small, medium and large');
  for (const k of Object.keys(tiersRaw)) if (!(TIERS as readonly string[]).includes(k)) fail(`tiers.${k}`, 'unknown tier (small, medium, large)');
  const tierPreferences = {} as Record<Tier, ModelRef[]>;
  const tiers = {} as Record<Tier, string>;
  for (const t of TIERS) {
    const v = tiersRaw[t];
    const list = typeof v === 'string' ? [v] : v;
    if (!Array.isArray(list) || list.length === 0) return fail(`tiers.${t}`, 'expected a model id or a non-empty list of "provider/model" or model ids');
    tierPreferences[t] = list.map((e, i) => {
      const at = `tiers.${t}[${i}]`;
      if (typeof e !== 'string' || !e.trim()) return fail(at, 'expected "provider/model" or a model id');
      const ref = parseModelRef(e.trim(), providerSpecs);
      if (ref.provider) {
        if (!providerSpecs[ref.provider].models.some((m) => m.id === ref.model)) fail(at, `provider ${ref.provider} lists no model ${ref.model}`);
      } else if (Object.keys(providerSpecs).length > 0 && !Object.values(providerSpecs).some((p) => p.models.some((m) => m.id === ref.model))) {
        // A v1 file without providers may name any model; otherwise the model must be listed.
        fail(at, `no provider lists model ${ref.model}`);
      }
      return ref;
    });
    tiers[t] = tierPreferences[t][0].model;
  }

  const providers: Record<string, ModelEntry[]> = {};
  for (const [name, spec] of Object.entries(providerSpecs)) providers[name] = spec.models;
  return { tiers, providers, providerSpecs, tierPreferences };
}

/** "provider/model" when the part before the first '/' names a provider of the catalogue, else a bare model id. */
export function parseModelRef(s: string, providers: Record<string, unknown>): ModelRef {
  const slash = s.indexOf('/');
  if (slash > 0) {
    const p = s.slice(0, slash);
    if (Object.hasOwn(providers, p) && slash < s.length - 1) return { provider: p, model: s.slice(slash + 1) };
  }
  return { model: s };
}

function optString(v: unknown, field: string, fail: (f: string, why: string) => never): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || !v.trim()) return fail(field, 'expected a non-empty string');
  return v.trim();
}

function parseModels(list: unknown[], at: string, fail: (f: string, why: string) => never): ModelEntry[] {
  return list.map((raw, i) => {
    const where = `${at}[${i}]`;
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return fail(where, 'expected a mapping');
    const m = raw as Record<string, unknown>;
    if (typeof m.id !== 'string' || !m.id) fail(`${where}.id`, 'expected a string');
    if (!TIERS.includes(m.tier as Tier)) fail(`${where}.tier`, 'expected small, medium or large');
    for (const k of ['context_window', 'cost_per_1k_prompt_tokens', 'cost_per_1k_completion_tokens']) {
      if (typeof m[k] !== 'number' || !Number.isFinite(m[k]) || (m[k] as number) < 0) fail(`${where}.${k}`, 'expected a non-negative number');
    }
    if (!Number.isInteger(m.context_window)) fail(`${where}.context_window`, 'expected an integer (tokens)');
    for (const k of ['supports_tools', 'supports_streaming']) {
      if (m[k] !== undefined && typeof m[k] !== 'boolean') fail(`${where}.${k}`, 'expected true or false');
    }
    return {
      id: m.id as string,
      tier: m.tier as Tier,
      context_window: m.context_window as number,
      cost_per_1k_prompt_tokens: m.cost_per_1k_prompt_tokens as number,
      cost_per_1k_completion_tokens: m.cost_per_1k_completion_tokens as number,
      supports_tools: m.supports_tools === true,
      supports_streaming: m.supports_streaming !== false,
    };
  });
}

export function loadCatalogue(path: string): Catalogue {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError('MODELS_CONFIG_PATH', `cannot read ${path}: ${(err as Error).message}`);
  }
  return parseCatalogue(text, path);
}

/** Prices by model id, for cost accounting (the first provider listing a model wins). */
export function pricesOf(c: Catalogue): Record<string, { prompt: number; completion: number }> {
  // No prototype: a model named "__proto__" or "constructor" is an ordinary key.
  const out: Record<string, { prompt: number; completion: number }> = Object.create(null);
  for (const list of Object.values(c.providers)) {
    for (const m of list) {
      if (!Object.hasOwn(out, m.id)) out[m.id] = { prompt: m.cost_per_1k_prompt_tokens, completion: m.cost_per_1k_completion_tokens };
    }
  }
  return out;
}

/** Prices of one provider's models, by model id. */
export function providerPrices(p: ProviderSpec): Record<string, { prompt: number; completion: number }> {
  const out: Record<string, { prompt: number; completion: number }> = Object.create(null);
  for (const m of p.models) out[m.id] = { prompt: m.cost_per_1k_prompt_tokens, completion: m.cost_per_1k_completion_tokens };
  return out;
}
