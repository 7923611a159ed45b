/**
 * The model catalogue (config/models.yaml): which model serves each tier and what each
 * model costs. Parsed and validated once at start-up; errors name the file and field.
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

export interface Catalogue {
  tiers: Record<Tier, string>;
  providers: Record<string, ModelEntry[]>;
}

export function parseCatalogue(text: string, source = 'models.yaml'): Catalogue {
  const fail = (field: string, why: string): never => {
    throw new ConfigError('MODELS_CONFIG_PATH', `${source}: ${field}: ${why}`);
  };
  const doc = parse(text) as unknown;
  if (!doc || typeof doc !== 'object') fail('(root)', 'expected a mapping');
  const d = doc as Record<string, unknown>;
  const tiersRaw = (d.tiers ?? {}) as Record<string, unknown>;
  const tiers = {} as Record<Tier, string>;
  for (const t of TIERS) {
    const v = tiersRaw[t];
    if (typeof v !== 'string' || !v) fail(`tiers.${t}`, 'expected a model id');
    tiers[t] = v as string;
  }
  const providers: Record<string, ModelEntry[]> = {};
  for (const [name, list] of Object.entries((d.providers ?? {}) as Record<string, unknown>)) {
    if (!Array.isArray(list)) fail(`providers.${name}`, 'expected a list');
    providers[name] = (list as Record<string, unknown>[]).map((m, i) => {
      const at = `providers.${name}[${i}]`;
      if (typeof m.id !== 'string' || !m.id) fail(`${at}.id`, 'expected a string');
      if (!TIERS.includes(m.tier as Tier)) fail(`${at}.tier`, 'expected small, medium or large');
      for (const k of ['context_window', 'cost_per_1k_prompt_tokens', 'cost_per_1k_completion_tokens']) {
        if (typeof m[k] !== 'number' || (m[k] as number) < 0) fail(`${at}.${k}`, 'expected a non-negative number');
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
  return { tiers, providers };
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

/** Prices by model id, for cost accounting. */
export function pricesOf(c: Catalogue): Record<string, { prompt: number; completion: number }> {
  const out: Record<string, { prompt: number; completion: number }> = {};
  for (const list of Object.values(c.providers)) {
    for (const m of list) out[m.id] = { prompt: m.cost_per_1k_prompt_tokens, completion: m.cost_per_1k_completion_tokens };
  }
  return out;
}
