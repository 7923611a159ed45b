/**
 * The model table of the OpenAI-compatible layer: which workflow mode (and research strategy)
 * each model id runs, its default max_tokens and description. Data, replaceable by a YAML file
 * (OPENAI_MODELS_CONFIG_PATH).
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { OpenAiError } from './errors.js';

export const OPENAI_MODES = ['simple', 'standard', 'complex', 'supervisor', 'research'] as const;
export type OpenAiMode = (typeof OPENAI_MODES)[number];
const STRATEGIES = ['quick', 'standard', 'deep', 'academic'] as const;

export interface OpenAiModel {
  id: string;
  /** Workflow mode; `research` is the deep-research workflow (with `researchStrategy`). */
  mode: OpenAiMode;
  researchStrategy?: (typeof STRATEGIES)[number];
  /** max_tokens when the request gives none. */
  maxTokens: number;
  /** Sent as X-Model-Description by GET /v1/models/{model}. */
  description: string;
  /** Extra task context (e.g. a role). */
  context: Record<string, unknown>;
  /** Served by the hosted edition only: absent from /v1/models, 404 here. */
  hostedOnly: boolean;
  created: number;
  ownedBy: string;
}

export interface OpenAiModelTable {
  defaultModel: string;
  models: OpenAiModel[];
}

/** The spec's cap on max_tokens (a larger value is capped, not refused). */
export const MAX_TOKENS_CAP = 16384;
/** 2025-01-01T00:00:00Z: `created` of the built-in models. */
const TABLE_CREATED = 1735689600;

const model = (id: string, mode: OpenAiMode, maxTokens: number, description: string, more: Partial<OpenAiModel> = {}): OpenAiModel => ({
  id,
  mode,
  maxTokens,
  description,
  context: {},
  hostedOnly: false,
  created: TABLE_CREATED,
  ownedBy: 'svc',
  ...more,
});

/** The spec's model table ("OpenAI-compatible objects"). */
export const DEFAULT_MODEL_TABLE: OpenAiModelTable = {
  defaultModel: 'svc-chat',
  models: [
    model('svc-chat', 'simple', 4096, 'General chat completion: one model call (simple mode)'),
    model('svc-standard-research', 'research', 4096, 'Balanced research with moderate depth (research workflow, standard strategy)', {
      researchStrategy: 'standard',
    }),
    model('svc-deep-research', 'research', 8192, 'Deep research with iterative refinement (research workflow, deep strategy)', { researchStrategy: 'deep' }),
    model('svc-quick-research', 'research', 4096, 'Fast research for simple questions (research workflow, quick strategy)', { researchStrategy: 'quick' }),
    model('svc-complex', 'supervisor', 8192, 'Multi-agent orchestration for complex tasks (supervisor mode)'),
    model('svc-ads-research', 'research', 8192, 'Ads research (hosted edition only)', { hostedOnly: true }),
  ],
};

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The model table of a YAML file:
 *
 *   default_model: svc-chat
 *   models:
 *     svc-chat: {mode: simple, max_tokens: 4096, description: "..."}
 *     my-research: {mode: research, research_strategy: deep, max_tokens: 8192, context: {role: research}}
 *
 * Per model: mode (simple, standard, complex, supervisor, research), research_strategy (quick,
 * standard, deep, academic; research only), max_tokens (1-16384), description, context (an
 * object merged into the task's context), hosted_only, created (unix seconds), owned_by.
 * Throws naming the file and the entry at fault.
 */
export function loadModelTable(path: string): OpenAiModelTable {
  const doc = parse(readFileSync(path, 'utf8')) as unknown;
  const fail = (what: string): never => {
    throw new Error(`${path}: ${what}`);
  };
  if (!isObj(doc) || !isObj(doc.models)) fail('expected {default_model, models: {<id>: {...}}}');
  const models: OpenAiModel[] = [];
  for (const [id, raw] of Object.entries((doc as { models: Record<string, unknown> }).models)) {
    if (!/^[A-Za-z0-9._:-]{1,64}$/.test(id)) fail(`model id ${JSON.stringify(id)}: 1-64 letters, digits, . _ : -`);
    if (!isObj(raw)) fail(`models.${id}: expected an object`);
    const m = raw as Record<string, unknown>;
    const known = ['mode', 'research_strategy', 'max_tokens', 'description', 'context', 'hosted_only', 'created', 'owned_by'];
    const stray = Object.keys(m).find((k) => !known.includes(k));
    if (stray) fail(`models.${id}.${stray}: unknown key; known: ${known.join(', ')}`);
    if (!(OPENAI_MODES as readonly string[]).includes(m.mode as string)) fail(`models.${id}.mode: one of ${OPENAI_MODES.join(', ')}`);
    if (m.research_strategy !== undefined && (m.mode !== 'research' || !(STRATEGIES as readonly string[]).includes(m.research_strategy as string))) {
      fail(`models.${id}.research_strategy: one of ${STRATEGIES.join(', ')}, with mode research`);
    }
    const mt = m.max_tokens ?? 4096;
    if (typeof mt !== 'number' || !Number.isInteger(mt) || mt < 1 || mt > MAX_TOKENS_CAP)
      fail(`models.${id}.max_tokens: an integer from 1 to ${MAX_TOKENS_CAP}`);
    if (m.context !== undefined && !isObj(m.context)) fail(`models.${id}.context: an object`);
    if (m.created !== undefined && (typeof m.created !== 'number' || !Number.isInteger(m.created) || m.created < 0)) fail(`models.${id}.created: unix seconds`);
    for (const k of ['description', 'owned_by'] as const) if (m[k] !== undefined && typeof m[k] !== 'string') fail(`models.${id}.${k}: a string`);
    if (m.hosted_only !== undefined && typeof m.hosted_only !== 'boolean') fail(`models.${id}.hosted_only: a boolean`);
    models.push(
      model(id, m.mode as OpenAiMode, mt as number, (m.description as string | undefined) ?? '', {
        ...(m.research_strategy ? { researchStrategy: m.research_strategy as OpenAiModel['researchStrategy'] } : {}),
        context: (m.context as Record<string, unknown> | undefined) ?? {},
        hostedOnly: (m.hosted_only as boolean | undefined) ?? false,
        ...(m.created !== undefined ? { created: m.created as number } : {}),
        ...(m.owned_by !== undefined ? { ownedBy: m.owned_by as string } : {}),
      }),
    );
  }
  const def = (doc as { default_model?: unknown }).default_model ?? models[0]?.id;
  if (typeof def !== 'string' || !models.some((m) => m.id === def && !m.hostedOnly))
    fail('default_model must name a model of the table that this edition serves');
  return { defaultModel: def as string, models };
}

export function modelJson(m: OpenAiModel) {
  return { id: m.id, object: 'model' as const, created: m.created, owned_by: m.ownedBy };
}

/** The model a request names (the table's default when it names none); 404 model_not_found otherwise. */
export function modelOf(table: OpenAiModelTable, id: unknown): OpenAiModel {
  if (id !== undefined && id !== null && typeof id !== 'string') throw new OpenAiError(400, 'model must be a string', 'model');
  const name = (id as string | undefined) || table.defaultModel;
  const m = table.models.find((x) => x.id === name);
  if (!m) throw new OpenAiError(404, `The model '${name}' does not exist. Use GET /v1/models to list the available models.`, 'model');
  if (m.hostedOnly) throw new OpenAiError(404, `The model '${name}' is available in the hosted edition only.`, 'model');
  return m;
}
