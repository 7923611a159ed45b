/**
 * The JSON shapes of the OpenAI-compatible layer (/v1): the model table (data, replaceable by
 * a YAML file: OPENAI_MODELS_CONFIG_PATH), the checks and translation of a chat completion
 * (and legacy completion) request into a task, the response, chunk and error bodies, and the
 * OpenAPI path items of the routes (openai-routes.ts serves them).
 *
 * Translation (spec, "OpenAI-compatible layer"): the last user message is the task's query;
 * the first system message is its system prompt (`context.system_prompt`); every other message
 * except the system ones is the conversation history (`context.conversation_history`, which
 * the workflow then uses instead of the session's earlier turns); the model id picks the
 * workflow mode and research strategy; max_tokens (capped at 16384, default the model's),
 * temperature, top_p, stop and the penalties go to every model call of the task
 * (`context.model_settings`); `user` is recorded with the task (`context.end_user`) and
 * names the session when no X-Session-ID is given.
 *
 * Where the spec is silent the layer does what OpenAI's API does: unknown fields are refused
 * ("Unrecognized request argument supplied: <field>"), fields this service cannot honour
 * (tools, response_format, logprobs, seed, ...) are refused by name rather than ignored, `stop`
 * may be a string or up to 4 strings, `max_completion_tokens` is an alias of `max_tokens`, a
 * message's `name` is shown to the model as "<name>: " before its content, and content may be a
 * string or an array of text parts (other parts are refused: text only).
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

// ---- The model table.

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

// ---- Errors.

/** The spec's OpenAI error type and code per HTTP status; other statuses as OpenAI sends them. */
const ERROR_KIND: Record<number, { type: string; code: string }> = {
  400: { type: 'invalid_request_error', code: 'invalid_request' },
  401: { type: 'authentication_error', code: 'invalid_api_key' },
  403: { type: 'permission_error', code: 'invalid_request' },
  404: { type: 'invalid_request_error', code: 'model_not_found' },
  409: { type: 'invalid_request_error', code: 'conflict' },
  413: { type: 'invalid_request_error', code: 'request_too_large' },
  429: { type: 'rate_limit_error', code: 'rate_limit_exceeded' },
  500: { type: 'server_error', code: 'internal_error' },
  502: { type: 'server_error', code: 'bad_gateway' },
  503: { type: 'server_error', code: 'service_unavailable' },
  504: { type: 'server_error', code: 'timeout' },
};

export function errorKind(status: number): { type: string; code: string } {
  return ERROR_KIND[status] ?? (status >= 500 ? ERROR_KIND[500]! : ERROR_KIND[400]!);
}

/** An error the layer answers as it is: status, message, the request field at fault. */
export class OpenAiError extends Error {
  override name = 'OpenAiError';
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
    readonly code?: string,
  ) {
    super(message);
  }
}

export function errorBody(status: number, message: string, param: string | null = null, code?: string) {
  const k = errorKind(status);
  return { error: { message, type: k.type, param, code: code ?? k.code } };
}

const invalid = (message: string, param: string | null = null) => new OpenAiError(400, message, param);

// ---- Requests.

/** A chat or legacy completion request, checked and translated. */
export interface CompletionRequest {
  model: OpenAiModel;
  query: string;
  systemPrompt?: string;
  history: { role: 'user' | 'assistant'; content: string }[];
  stream: boolean;
  includeUsage: boolean;
  /** The request's max_tokens capped at 16384, else the model's default. */
  maxTokens: number;
  temperature?: number;
  topP?: number;
  stop?: string[];
  presencePenalty?: number;
  frequencyPenalty?: number;
  user?: string;
  /** The first user message (session derivation). */
  firstUser: string;
  /** Characters of every message (the token estimate of the rate limit). */
  chars: number;
}

/** Fields OpenAI defines that this service cannot honour: refused by name when given. */
const UNSUPPORTED_CHAT = [
  'tools',
  'tool_choice',
  'functions',
  'function_call',
  'parallel_tool_calls',
  'response_format',
  'logprobs',
  'top_logprobs',
  'logit_bias',
  'seed',
  'modalities',
  'audio',
  'prediction',
  'reasoning_effort',
  'service_tier',
  'store',
  'metadata',
  'web_search_options',
];
const CHAT_FIELDS = [
  'model',
  'messages',
  'stream',
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'top_p',
  'n',
  'stop',
  'presence_penalty',
  'frequency_penalty',
  'user',
  'stream_options',
];
const UNSUPPORTED_LEGACY = ['suffix', 'echo', 'logprobs', 'best_of', 'logit_bias', 'seed'];
const LEGACY_FIELDS = [
  'model',
  'prompt',
  'stream',
  'max_tokens',
  'temperature',
  'top_p',
  'n',
  'stop',
  'presence_penalty',
  'frequency_penalty',
  'user',
  'stream_options',
];

/** "Given": anything but null, false, an empty array or object, and best_of 1 (OpenAI's defaults). */
const given = (k: string, v: unknown) =>
  v !== undefined &&
  v !== null &&
  v !== false &&
  !(Array.isArray(v) && v.length === 0) &&
  !(isObj(v) && Object.keys(v).length === 0) &&
  !(k === 'best_of' && v === 1);

function checkFields(body: Record<string, unknown>, allowed: string[], unsupported: string[]): void {
  for (const [k, v] of Object.entries(body)) {
    if (allowed.includes(k)) continue;
    if (unsupported.includes(k)) {
      if (given(k, v)) throw invalid(`${k} is not supported by this service`, k);
      continue;
    }
    throw invalid(`Unrecognized request argument supplied: ${k}`, k);
  }
}

const opt = (body: Record<string, unknown>, k: string) => (body[k] === null ? undefined : body[k]);

function numberIn(body: Record<string, unknown>, k: string, min: number, max: number): number | undefined {
  const v = opt(body, k);
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max) throw invalid(`${k} must be a number from ${min} to ${max}`, k);
  return v;
}

/** The sampling fields both request forms share. */
function common(body: Record<string, unknown>, m: OpenAiModel) {
  const stream = opt(body, 'stream') ?? false;
  if (typeof stream !== 'boolean') throw invalid('stream must be a boolean', 'stream');
  const so = opt(body, 'stream_options');
  let includeUsage = false;
  if (so !== undefined) {
    if (!stream) throw invalid("The 'stream_options' parameter is only allowed when 'stream' is enabled.", 'stream_options');
    if (!isObj(so)) throw invalid('stream_options must be an object', 'stream_options');
    const stray = Object.keys(so).find((k) => k !== 'include_usage');
    if (stray) throw invalid(`stream_options.${stray} is not supported; only include_usage`, `stream_options.${stray}`);
    if (so.include_usage !== undefined && so.include_usage !== null && typeof so.include_usage !== 'boolean') {
      throw invalid('stream_options.include_usage must be a boolean', 'stream_options.include_usage');
    }
    includeUsage = so.include_usage === true;
  }
  const n = opt(body, 'n');
  if (n !== undefined && n !== 1) throw invalid('n must be 1: only one choice per request is supported', 'n');
  let maxTokens: number | undefined;
  for (const k of ['max_tokens', 'max_completion_tokens']) {
    const v = opt(body, k);
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) throw invalid(`${k} must be a positive integer`, k);
    if (maxTokens !== undefined && maxTokens !== v) throw invalid('max_tokens and max_completion_tokens differ; give one', k);
    maxTokens = v;
  }
  const stopRaw = opt(body, 'stop');
  let stop: string[] | undefined;
  if (stopRaw !== undefined) {
    const list = typeof stopRaw === 'string' ? [stopRaw] : stopRaw;
    if (!Array.isArray(list) || list.length > 4 || !list.every((s) => typeof s === 'string' && s.length > 0 && s.length <= 256)) {
      throw invalid('stop must be a string or an array of at most 4 non-empty strings', 'stop');
    }
    if (list.length) stop = list as string[];
  }
  const user = opt(body, 'user');
  if (user !== undefined && (typeof user !== 'string' || user.length > 256)) throw invalid('user must be a string of at most 256 characters', 'user');
  return {
    stream,
    includeUsage,
    maxTokens: Math.min(maxTokens ?? m.maxTokens, MAX_TOKENS_CAP),
    temperature: numberIn(body, 'temperature', 0, 2),
    topP: numberIn(body, 'top_p', 0, 1),
    presencePenalty: numberIn(body, 'presence_penalty', -2, 2),
    frequencyPenalty: numberIn(body, 'frequency_penalty', -2, 2),
    ...(stop ? { stop } : {}),
    ...(user ? { user: user as string } : {}),
  };
}

/** The model a request names (the table's default when it names none); 404 model_not_found otherwise. */
export function modelOf(table: OpenAiModelTable, id: unknown): OpenAiModel {
  if (id !== undefined && id !== null && typeof id !== 'string') throw invalid('model must be a string', 'model');
  const name = (id as string | undefined) || table.defaultModel;
  const m = table.models.find((x) => x.id === name);
  if (!m) throw new OpenAiError(404, `The model '${name}' does not exist. Use GET /v1/models to list the available models.`, 'model');
  if (m.hostedOnly) throw new OpenAiError(404, `The model '${name}' is available in the hosted edition only.`, 'model');
  return m;
}

/** A message's text: a string, or an array of text parts (other parts are refused); null counts as empty. */
function textOf(content: unknown, i: number): string {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((p, j) => {
        if (!isObj(p) || p.type !== 'text' || typeof p.text !== 'string') {
          throw invalid(`messages[${i}].content[${j}]: only text content is supported ({type: "text", text})`, `messages[${i}].content`);
        }
        return p.text;
      })
      .join('\n');
  }
  throw invalid(`messages[${i}].content must be a string`, `messages[${i}].content`);
}

export function parseChatRequest(body: unknown, table: OpenAiModelTable): CompletionRequest {
  if (!isObj(body)) throw invalid('request body must be a JSON object');
  const m = modelOf(table, body.model);
  checkFields(body, CHAT_FIELDS, UNSUPPORTED_CHAT);
  const raw = body.messages;
  if (!Array.isArray(raw) || raw.length === 0) throw invalid('messages must be a non-empty array', 'messages');
  const msgs = raw.map((x, i) => {
    if (!isObj(x)) throw invalid(`messages[${i}] must be an object`, `messages[${i}]`);
    const role = x.role;
    if (role !== 'system' && role !== 'user' && role !== 'assistant') {
      throw invalid(`messages[${i}].role must be system, user or assistant`, `messages[${i}].role`);
    }
    const stray = Object.keys(x).find((k) => !['role', 'content', 'name'].includes(k) && given(k, x[k]));
    if (stray) throw invalid(`messages[${i}].${stray} is not supported`, `messages[${i}].${stray}`);
    if (x.content === undefined || (x.content === null && role !== 'assistant')) throw invalid(`messages[${i}].content is required`, `messages[${i}].content`);
    const name = x.name === null ? undefined : x.name;
    if (name !== undefined && (typeof name !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(name))) {
      throw invalid(`messages[${i}].name must be 1-64 letters, digits, _ or -`, `messages[${i}].name`);
    }
    const text = textOf(x.content, i);
    // The author's name, as the model sees it.
    return { role, text: name && role !== 'system' ? `${name}: ${text}` : text, raw: text };
  });
  let last = -1;
  for (let i = msgs.length - 1; i >= 0; i--) {
    if (msgs[i]!.role === 'user') {
      last = i;
      break;
    }
  }
  if (last < 0) throw invalid('messages must contain a user message', 'messages');
  const query = msgs[last]!.text;
  if (!msgs[last]!.raw.trim()) throw invalid(`messages[${last}].content: the last user message is empty`, `messages[${last}].content`);
  const system = msgs.find((x) => x.role === 'system');
  const history = msgs.filter((x, i) => x.role !== 'system' && i !== last).map((x) => ({ role: x.role as 'user' | 'assistant', content: x.text }));
  return {
    model: m,
    query,
    ...(system?.text ? { systemPrompt: system.text } : {}),
    history,
    firstUser: msgs.find((x) => x.role === 'user')!.raw,
    chars: msgs.reduce((n, x) => n + x.text.length, 0),
    ...common(body, m),
  };
}

/** POST /v1/completions: `prompt` (a string, or an array of one string) is the query; no history. */
export function parseLegacyRequest(body: unknown, table: OpenAiModelTable): CompletionRequest {
  if (!isObj(body)) throw invalid('request body must be a JSON object');
  const m = modelOf(table, body.model);
  checkFields(body, LEGACY_FIELDS, UNSUPPORTED_LEGACY);
  let prompt = body.prompt;
  if (Array.isArray(prompt)) {
    if (prompt.length !== 1) throw invalid('prompt must be a string (an array must hold exactly one string: one completion per request)', 'prompt');
    prompt = prompt[0];
  }
  if (typeof prompt !== 'string' || !prompt.trim()) throw invalid('prompt must be a non-empty string', 'prompt');
  return { model: m, query: prompt, history: [], firstUser: prompt, chars: prompt.length, ...common(body, m) };
}

/**
 * The task context a request becomes (the model's own context first). The messages are the
 * conversation: their history, even an empty one, replaces the session's turns, except when
 * the client names a session (X-Session-ID) and sends no earlier messages: then the session
 * keeps the context (its earlier turns are the history).
 */
export function taskContext(r: CompletionRequest, o: { sessionNamed: boolean }): Record<string, unknown> {
  const settings: Record<string, unknown> = { max_tokens: r.maxTokens };
  if (r.temperature !== undefined) settings.temperature = r.temperature;
  if (r.topP !== undefined) settings.top_p = r.topP;
  if (r.stop) settings.stop = r.stop;
  if (r.presencePenalty !== undefined) settings.presence_penalty = r.presencePenalty;
  if (r.frequencyPenalty !== undefined) settings.frequency_penalty = r.frequencyPenalty;
  return {
    ...r.model.context,
    ...(r.model.mode === 'research' && !r.model.researchStrategy ? { force_research: true } : {}),
    ...(r.systemPrompt ? { system_prompt: r.systemPrompt } : {}),
    ...(r.history.length || !o.sessionNamed ? { conversation_history: r.history } : {}),
    model_settings: settings,
    ...(r.user ? { end_user: r.user } : {}),
  };
}

// ---- Responses.

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** A forwarded workflow event, as the `service_events` extension carries it. */
export interface ServiceEvent {
  type: string;
  agent_id: string;
  message: string;
  /** Unix seconds. */
  timestamp: number;
  payload: Record<string, unknown>;
}

/** The event types the OpenAI-compatible stream forwards (spec, "Events", 5). */
export const FORWARDED_EVENTS: ReadonlySet<string> = new Set([
  'WORKFLOW_STARTED',
  'WORKFLOW_PAUSING',
  'WORKFLOW_PAUSED',
  'WORKFLOW_RESUMED',
  'WORKFLOW_CANCELLING',
  'WORKFLOW_CANCELLED',
  'AGENT_STARTED',
  'AGENT_COMPLETED',
  'AGENT_THINKING',
  'TOOL_INVOKED',
  'TOOL_OBSERVATION',
  'PROGRESS',
  'DATA_PROCESSING',
  'WAITING',
  'ERROR_RECOVERY',
  'TEAM_RECRUITED',
  'TEAM_RETIRED',
  'TEAM_STATUS',
  'ROLE_ASSIGNED',
  'DELEGATION',
  'DEPENDENCY_SATISFIED',
  'BUDGET_THRESHOLD',
  'APPROVAL_REQUESTED',
  'APPROVAL_DECISION',
]);

/** What identifies one completion in every body and chunk. */
export interface CompletionHead {
  id: string;
  created: number;
  model: string;
}

export function chatCompletionJson(h: CompletionHead, content: string, usage: Usage) {
  return {
    id: h.id,
    object: 'chat.completion' as const,
    created: h.created,
    model: h.model,
    choices: [{ index: 0, message: { role: 'assistant' as const, content }, finish_reason: 'stop' as const }],
    usage,
  };
}

export function textCompletionJson(h: CompletionHead, text: string, usage: Usage) {
  return {
    id: h.id,
    object: 'text_completion' as const,
    created: h.created,
    model: h.model,
    choices: [{ text, index: 0, logprobs: null, finish_reason: 'stop' as const }],
    usage,
  };
}

/** One chunk: a delta (chat) or text (legacy), optionally the finish reason, usage and service events. */
export function chunkJson(
  kind: 'chat' | 'text',
  h: CompletionHead,
  part: { delta?: { role?: 'assistant'; content?: string }; finish?: 'stop'; usage?: Usage; events?: ServiceEvent[] },
) {
  const finish = part.finish ?? null;
  const choice =
    kind === 'chat'
      ? { index: 0, delta: part.delta ?? {}, finish_reason: finish }
      : { text: part.delta?.content ?? '', index: 0, logprobs: null, finish_reason: finish };
  return {
    id: h.id,
    object: kind === 'chat' ? ('chat.completion.chunk' as const) : ('text_completion' as const),
    created: h.created,
    model: h.model,
    choices: [choice],
    ...(part.usage ? { usage: part.usage } : {}),
    ...(part.events?.length ? { service_events: part.events } : {}),
  };
}

// ---- OpenAPI path items (openapi.ts spreads them into `paths`).

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const security = [{ ApiKeyAuth: [] }, { BearerAuth: [] }];
const oaiError = (description: string) => ({ description, content: { 'application/json': { schema: ref('OpenAiError') } } });
const header = (description: string, type: 'string' | 'integer' = 'string') => ({ description, schema: { type } });

const RATE_HEADERS = {
  'X-RateLimit-Limit-Requests': header('Requests per minute for this key and model', 'integer'),
  'X-RateLimit-Remaining-Requests': header('Requests left in the current minute', 'integer'),
  'X-RateLimit-Limit-Tokens': header('Tokens per minute for this key and model', 'integer'),
  'X-RateLimit-Remaining-Tokens': header('Tokens left in the current minute (usage is counted when a completion ends)', 'integer'),
  'X-RateLimit-Reset-Requests': header('Time until the window resets, as OpenAI writes it (e.g. "12s")'),
  'X-RateLimit-Reset-Tokens': header('Time until the token window resets (e.g. "12s")'),
};
const SESSION_HEADERS = {
  'X-Session-ID': header('The session id to send next time; only when a session was created or the given one collided'),
  'X-Service-Session-ID': header("The service's session UUID (GET /api/v1/sessions/{sessionId}); with X-Session-ID"),
  'X-Workflow-ID': header('The task that produced the completion (GET /api/v1/tasks/{id})'),
};

const ERRORS = {
  400: oaiError(
    'invalid_request_error / invalid_request: bad JSON, a field out of range (temperature 0-2, penalties -2..2, n other than 1), an unsupported or unknown field',
  ),
  401: oaiError('authentication_error / invalid_api_key'),
  404: oaiError('invalid_request_error / model_not_found'),
  429: { ...oaiError('rate_limit_error / rate_limit_exceeded (per key and model)'), headers: { 'Retry-After': header('Seconds', 'integer') } },
  500: oaiError('server_error / internal_error: the task failed or was cancelled'),
  503: oaiError('server_error / service_unavailable: the task queue (NATS) is unreachable'),
};

const SAMPLING_DOC =
  "max_tokens (max_completion_tokens) is capped at 16384 (default: the model's); temperature 0-2 (default TEMPERATURE, 0.7), top_p 0-1, presence_penalty and frequency_penalty -2..2, stop (a string or up to 4): every model call of the task uses them. " +
  'n must be 1. user: recorded with the task and, without X-Session-ID, names the session. ' +
  'Fields OpenAI defines that this service cannot honour (tools, response_format, logprobs, seed, ...) are refused with 400, as are unknown fields.';

const COMMON_PROPS: Record<string, unknown> = {
  model: { type: 'string', description: 'A model of GET /v1/models; default svc-chat' },
  stream: { type: 'boolean', default: false },
  max_tokens: { type: 'integer', minimum: 1, description: 'Capped at 16384' },
  temperature: { type: 'number', minimum: 0, maximum: 2, default: 0.7 },
  top_p: { type: 'number', minimum: 0, maximum: 1 },
  n: { type: 'integer', minimum: 1, maximum: 1, description: 'Only 1' },
  stop: { type: 'array', items: { type: 'string' }, maxItems: 4, description: 'Stop sequences (a single string is accepted too)' },
  presence_penalty: { type: 'number', minimum: -2, maximum: 2 },
  frequency_penalty: { type: 'number', minimum: -2, maximum: 2 },
  user: { type: 'string', maxLength: 256, description: 'End-user id: recorded with the task; names the session when X-Session-ID is absent' },
  stream_options: {
    type: 'object',
    properties: { include_usage: { type: 'boolean', description: 'The final chunk carries usage' } },
    description: 'Only with stream: true',
  },
};

/** Component schemas of the layer (openapi.ts adds them to components.schemas). */
export const openAiSchemas: Record<string, Record<string, unknown>> = {
  OpenAiError: {
    type: 'object',
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['message', 'type', 'code'],
        properties: {
          message: { type: 'string' },
          type: { type: 'string', enum: ['invalid_request_error', 'authentication_error', 'permission_error', 'rate_limit_error', 'server_error'] },
          param: { type: 'string', nullable: true, description: 'The request field at fault, if any' },
          code: { type: 'string', nullable: true },
        },
      },
    },
  },
  OpenAiModel: {
    type: 'object',
    required: ['id', 'object', 'created', 'owned_by'],
    properties: { id: { type: 'string' }, object: { type: 'string', enum: ['model'] }, created: { type: 'integer' }, owned_by: { type: 'string' } },
  },
  OpenAiModelList: {
    type: 'object',
    required: ['object', 'data'],
    properties: { object: { type: 'string', enum: ['list'] }, data: { type: 'array', items: ref('OpenAiModel') } },
  },
  OpenAiUsage: {
    type: 'object',
    required: ['prompt_tokens', 'completion_tokens', 'total_tokens'],
    properties: { prompt_tokens: { type: 'integer' }, completion_tokens: { type: 'integer' }, total_tokens: { type: 'integer' } },
  },
  ChatCompletionRequest: {
    type: 'object',
    required: ['messages'],
    properties: {
      ...COMMON_PROPS,
      max_completion_tokens: { type: 'integer', minimum: 1, description: 'Alias of max_tokens' },
      messages: {
        type: 'array',
        minItems: 1,
        items: {
          type: 'object',
          required: ['role', 'content'],
          properties: {
            role: { type: 'string', enum: ['system', 'user', 'assistant'] },
            content: { type: 'string', description: 'Text (an array of {type: "text", text} parts is accepted too)' },
            name: { type: 'string', description: 'Author name, shown to the model before the content' },
          },
        },
      },
    },
  },
  ChatCompletion: {
    type: 'object',
    required: ['id', 'object', 'created', 'model', 'choices', 'usage'],
    properties: {
      id: { type: 'string', description: 'chatcmpl-<task id>' },
      object: { type: 'string', enum: ['chat.completion'] },
      created: { type: 'integer' },
      model: { type: 'string' },
      choices: {
        type: 'array',
        items: {
          type: 'object',
          required: ['index', 'message', 'finish_reason'],
          properties: {
            index: { type: 'integer' },
            message: {
              type: 'object',
              required: ['role', 'content'],
              properties: { role: { type: 'string', enum: ['assistant'] }, content: { type: 'string' } },
            },
            finish_reason: { type: 'string', enum: ['stop'] },
          },
        },
      },
      usage: ref('OpenAiUsage'),
    },
  },
  CompletionRequest: {
    type: 'object',
    required: ['prompt'],
    properties: { ...COMMON_PROPS, prompt: { type: 'string', description: 'The query (an array of exactly one string is accepted too)' } },
  },
  TextCompletion: {
    type: 'object',
    required: ['id', 'object', 'created', 'model', 'choices', 'usage'],
    properties: {
      id: { type: 'string', description: 'cmpl-<task id>' },
      object: { type: 'string', enum: ['text_completion'] },
      created: { type: 'integer' },
      model: { type: 'string' },
      choices: {
        type: 'array',
        items: {
          type: 'object',
          required: ['text', 'index', 'finish_reason'],
          properties: {
            text: { type: 'string' },
            index: { type: 'integer' },
            logprobs: { type: 'object', nullable: true },
            finish_reason: { type: 'string', enum: ['stop'] },
          },
        },
      },
      usage: ref('OpenAiUsage'),
    },
  },
};

const STREAM_DOC =
  'With stream: true, Server-Sent Events: the first chunk carries delta.role "assistant"; content chunks carry delta.content as the answer\'s model streams it ' +
  '(the answering agent: simple-agent, or the synthesizer of supervisor and research workflows; a remainder the stream did not carry comes before the end); ' +
  'chunks with an empty delta carry service_events (forwarded types: WORKFLOW_STARTED/PAUSING/PAUSED/RESUMED/CANCELLING/CANCELLED, AGENT_STARTED/COMPLETED/THINKING, ' +
  'TOOL_INVOKED/OBSERVATION, PROGRESS, DATA_PROCESSING, WAITING, ERROR_RECOVERY, TEAM_*, ROLE_ASSIGNED, DELEGATION, DEPENDENCY_SATISFIED, BUDGET_THRESHOLD, APPROVAL_*); ' +
  'the final chunk has an empty delta, finish_reason "stop" and, with stream_options.include_usage, usage; then data: [DONE]. A failure after the head is a chunk {"error": {...}}. ' +
  'No event ids: the stream cannot be resumed. A client that disconnects (streaming or not) cancels its task. ' +
  'Non-streaming: the answer when the task ends, at most OPENAI_COMPLETION_TIMEOUT_SECONDS (35 minutes; then 504 and the task is cancelled).';

const SESSION_DOC =
  'Sessions: X-Session-ID names the session (UUID or external id); without it the session id is derived from a hash of `user`, else of the first system and first user message. ' +
  "X-Session-ID and X-Service-Session-ID come back when a session is created, or when the given one is not usable (another owner's, or deleted: a new one is made).";

const RATE_DOC = 'Rate limits per API key and model: OPENAI_RATE_LIMIT_REQUESTS (60) requests and OPENAI_RATE_LIMIT_TOKENS (200,000) tokens per minute.';

export const openAiPaths = {
  '/v1/chat/completions': {
    post: {
      summary: "Chat completion (OpenAI-compatible), streaming and not: the messages become a task of the model's workflow mode",
      description: `Translation: the last user message is the query, the first system message the system prompt, the other non-system messages the conversation history. ${SAMPLING_DOC} ${STREAM_DOC} ${SESSION_DOC} ${RATE_DOC}`,
      operationId: 'openaiChatCompletions',
      security,
      parameters: [{ name: 'X-Session-ID', in: 'header', required: false, schema: { type: 'string' }, description: 'Session id' }],
      requestBody: { required: true, content: { 'application/json': { schema: ref('ChatCompletionRequest') } } },
      responses: {
        200: {
          description: 'The completion (application/json), or with stream: true text/event-stream chunks (chat.completion.chunk)',
          headers: { ...RATE_HEADERS, ...SESSION_HEADERS },
          content: { 'application/json': { schema: ref('ChatCompletion') }, 'text/event-stream': { schema: { type: 'string' } } },
        },
        ...ERRORS,
        504: oaiError('server_error / timeout: not finished within 35 minutes (non-streaming); the task is cancelled'),
      },
    },
  },
  '/v1/completions': {
    post: {
      summary: 'Legacy completion (OpenAI-compatible): `prompt` is the query, mapped like a chat completion without history',
      description: `${SAMPLING_DOC} suffix, echo, logprobs and best_of other than 1 are refused. Streaming as for chat completions, with text_completion chunks (choices[].text). ${SESSION_DOC} ${RATE_DOC}`,
      operationId: 'openaiCompletions',
      security,
      parameters: [{ name: 'X-Session-ID', in: 'header', required: false, schema: { type: 'string' }, description: 'Session id' }],
      requestBody: { required: true, content: { 'application/json': { schema: ref('CompletionRequest') } } },
      responses: {
        200: {
          description: 'The completion, or with stream: true text/event-stream chunks',
          headers: { ...RATE_HEADERS, ...SESSION_HEADERS },
          content: { 'application/json': { schema: ref('TextCompletion') }, 'text/event-stream': { schema: { type: 'string' } } },
        },
        ...ERRORS,
        504: oaiError('server_error / timeout'),
      },
    },
  },
  '/v1/models': {
    get: {
      summary: 'The models (OpenAI-compatible): the model table (OPENAI_MODELS_CONFIG_PATH); hosted-only models are absent',
      operationId: 'openaiListModels',
      security,
      responses: { 200: { description: 'OK', content: { 'application/json': { schema: ref('OpenAiModelList') } } }, 401: ERRORS[401] },
    },
  },
  '/v1/models/{model}': {
    get: {
      summary: 'One model; its description in the X-Model-Description header',
      operationId: 'openaiGetModel',
      security,
      parameters: [{ name: 'model', in: 'path', required: true, schema: { type: 'string' }, description: 'Model id' }],
      responses: {
        200: {
          description: 'OK',
          headers: { 'X-Model-Description': header('What the model runs (mode, strategy)') },
          content: { 'application/json': { schema: ref('OpenAiModel') } },
        },
        401: ERRORS[401],
        404: ERRORS[404],
      },
    },
  },
};
