/**
 * The request bodies of POST /v1/chat/completions and POST /v1/completions: one TypeBox schema
 * each, which validates the body (Ajv) and describes it in /openapi.json, and the translation
 * of a valid body into a task.
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
 * string or an array of text parts (other parts are refused: text only). A null field counts
 * as absent. Errors are worded as OpenAI words them, the request field at fault in `param`.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { ErrorObject } from 'ajv';
import { StringEnum, errorsOf } from '../schemas.js';
import { invalid, type OpenAiError } from './errors.js';
import { MAX_TOKENS_CAP, modelOf, type OpenAiModel, type OpenAiModelTable } from './models.js';

/** A field that may also be null (OpenAI's clients send null for "not given"). */
const Nullable = <T extends TSchema>(s: T) => Type.Optional(Type.Unsafe<Static<T> | null>({ ...s, nullable: true }));
const Range = (min: number, max: number, o: Record<string, unknown> = {}) => Nullable(Type.Number({ minimum: min, maximum: max, ...o }));

/** The sampling fields both request forms share, in the order their errors are reported. */
const COMMON = {
  model: Nullable(Type.String({ description: 'A model of GET /v1/models; default svc-chat' })),
  stream: Nullable(Type.Boolean({ default: false })),
  stream_options: Nullable(
    Type.Object(
      { include_usage: Nullable(Type.Boolean({ description: 'The final chunk carries usage' })) },
      { additionalProperties: false, description: 'Only with stream: true' },
    ),
  ),
  n: Nullable(Type.Integer({ minimum: 1, maximum: 1, description: 'Only 1' })),
  max_tokens: Nullable(Type.Integer({ minimum: 1, description: `Capped at ${MAX_TOKENS_CAP}` })),
  stop: Type.Optional(
    Type.Union([Type.String({ minLength: 1, maxLength: 256, nullable: true }), Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { maxItems: 4 })], {
      description: 'Stop sequences: a string or up to 4',
    }),
  ),
  user: Nullable(Type.String({ maxLength: 256, description: 'End-user id: recorded with the task; names the session when X-Session-ID is absent' })),
  temperature: Range(0, 2, { default: 0.7 }),
  top_p: Range(0, 1),
  presence_penalty: Range(-2, 2),
  frequency_penalty: Range(-2, 2),
};

const TextPart = Type.Object({ type: StringEnum(['text'] as const), text: Type.String() }, { additionalProperties: true });

export const ChatCompletionRequestSchema = Type.Object(
  {
    ...COMMON,
    max_completion_tokens: Nullable(Type.Integer({ minimum: 1, description: 'Alias of max_tokens' })),
    messages: Type.Array(
      Type.Object(
        {
          role: StringEnum(['system', 'user', 'assistant'] as const),
          content: Type.Union([Type.String({ nullable: true }), Type.Array(TextPart)], {
            description: 'Text, or an array of {type: "text", text} parts; null only for an assistant message',
          }),
          name: Nullable(Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'Author name, shown to the model before the content' })),
        },
        { additionalProperties: true, description: 'Other fields are refused when given' },
      ),
      { minItems: 1 },
    ),
  },
  { additionalProperties: false },
);

export const CompletionRequestSchema = Type.Object(
  {
    ...COMMON,
    prompt: Type.Union([Type.String(), Type.Array(Type.String(), { minItems: 1, maxItems: 1 })], {
      description: 'The query (an array of exactly one string is accepted too)',
    }),
  },
  { additionalProperties: false },
);

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
const UNSUPPORTED_LEGACY = ['suffix', 'echo', 'logprobs', 'best_of', 'logit_bias', 'seed'];

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

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** "Given": anything but null, false, an empty array or object, and best_of 1 (OpenAI's defaults). */
const given = (k: string, v: unknown) =>
  v !== undefined &&
  v !== null &&
  v !== false &&
  !(Array.isArray(v) && v.length === 0) &&
  !(isObj(v) && Object.keys(v).length === 0) &&
  !(k === 'best_of' && v === 1);

/** The body without the unsupported fields left at their defaults; 400 for one that is given. */
function withoutUnsupported(body: Record<string, unknown>, unsupported: string[]): Record<string, unknown> {
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) {
    if (!unsupported.includes(k)) rest[k] = v;
    else if (given(k, v)) throw invalid(`${k} is not supported by this service`, k);
  }
  return rest;
}

/** An Ajv error as the field it is about: path segments, `required` naming the missing one. */
function segmentsOf(e: ErrorObject): string[] {
  const segs = e.instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (e.keyword === 'required') segs.push((e.params as { missingProperty: string }).missingProperty);
  return segs;
}

/** The first error worth reporting: an unknown field first, then in the schema's field order. */
function firstError(errors: ErrorObject[], order: string[]): ErrorObject {
  const rank = (e: ErrorObject) => (e.keyword === 'additionalProperties' && e.instancePath === '' ? -1 : order.indexOf(segmentsOf(e)[0] ?? ''));
  return errors.reduce((best, e) => (rank(e) < rank(best) ? e : best));
}

/** A schema error in OpenAI's words. */
function explain(e: ErrorObject, body: Record<string, unknown>, schema: { properties: Record<string, unknown> }): OpenAiError {
  if (e.keyword === 'additionalProperties') {
    const k = (e.params as { additionalProperty: string }).additionalProperty;
    if (e.instancePath === '') return invalid(`Unrecognized request argument supplied: ${k}`, k);
    return invalid(`stream_options.${k} is not supported; only include_usage`, `stream_options.${k}`);
  }
  const [top = '', ...rest] = segmentsOf(e);
  switch (top) {
    case 'messages': {
      if (rest.length === 0) return invalid('messages must be a non-empty array', 'messages');
      const at = `messages[${rest[0]}]`;
      const field = rest[1];
      if (field === undefined) return invalid(`${at} must be an object`, at);
      if (field === 'role') return invalid(`${at}.role must be system, user or assistant`, `${at}.role`);
      if (field === 'name') return invalid(`${at}.name must be 1-64 letters, digits, _ or -`, `${at}.name`);
      if (e.keyword === 'required') return invalid(`${at}.content is required`, `${at}.content`);
      const content = (body.messages as Record<string, unknown>[])[Number(rest[0])]!.content;
      if (!Array.isArray(content)) return invalid(`${at}.content must be a string`, `${at}.content`);
      const j = content.findIndex((p) => !isObj(p) || p.type !== 'text' || typeof p.text !== 'string');
      return invalid(`${at}.content[${j}]: only text content is supported ({type: "text", text})`, `${at}.content`);
    }
    case 'prompt':
      if (Array.isArray(body.prompt) && body.prompt.length !== 1)
        return invalid('prompt must be a string (an array must hold exactly one string: one completion per request)', 'prompt');
      return invalid('prompt must be a non-empty string', 'prompt');
    case 'model':
      return invalid('model must be a string', 'model');
    case 'stream':
      return invalid('stream must be a boolean', 'stream');
    case 'stream_options':
      if (rest[0] === 'include_usage') return invalid('stream_options.include_usage must be a boolean', 'stream_options.include_usage');
      return invalid('stream_options must be an object', 'stream_options');
    case 'n':
      return invalid('n must be 1: only one choice per request is supported', 'n');
    case 'max_tokens':
    case 'max_completion_tokens':
      return invalid(`${top} must be a positive integer`, top);
    case 'stop':
      return invalid('stop must be a string or an array of at most 4 non-empty strings', 'stop');
    case 'user':
      return invalid('user must be a string of at most 256 characters', 'user');
    default: {
      const s = schema.properties[top] as { minimum?: number; maximum?: number } | undefined;
      if (s?.minimum !== undefined && s.maximum !== undefined) return invalid(`${top} must be a number from ${s.minimum} to ${s.maximum}`, top);
      return invalid(`${top || 'request body'} is invalid`, top || null);
    }
  }
}

/** Validates `body` against `schema` (after the model, which answers 404 first), in OpenAI's words. */
function validate<T extends TSchema & { properties: Record<string, unknown> }>(
  body: unknown,
  table: OpenAiModelTable,
  schema: T,
  check: (v: unknown) => ErrorObject[],
  unsupported: string[],
): { body: Static<T>; model: OpenAiModel } {
  if (!isObj(body)) throw invalid('request body must be a JSON object');
  const model = modelOf(table, body.model);
  const rest = withoutUnsupported(body, unsupported);
  const errors = check(rest);
  if (errors.length) throw explain(firstError(errors, Object.keys(schema.properties)), rest, schema);
  return { body: rest as Static<T>, model };
}

const checkChat = errorsOf(ChatCompletionRequestSchema);
const checkLegacy = errorsOf(CompletionRequestSchema);

type Common = Static<typeof ChatCompletionRequestSchema> | Static<typeof CompletionRequestSchema>;

/** The sampling fields both request forms share: what the schema cannot say. */
function common(body: Common, m: OpenAiModel) {
  const stream = body.stream ?? false;
  const so = body.stream_options ?? undefined;
  if (so && !stream) throw invalid("The 'stream_options' parameter is only allowed when 'stream' is enabled.", 'stream_options');
  const mt = body.max_tokens ?? undefined;
  const mct = 'max_completion_tokens' in body ? (body.max_completion_tokens ?? undefined) : undefined;
  if (mt !== undefined && mct !== undefined && mt !== mct) throw invalid('max_tokens and max_completion_tokens differ; give one', 'max_completion_tokens');
  const stop = typeof body.stop === 'string' ? [body.stop] : (body.stop ?? undefined);
  const num = (v: number | null | undefined) => v ?? undefined;
  return {
    stream,
    includeUsage: so?.include_usage === true,
    maxTokens: Math.min(mt ?? mct ?? m.maxTokens, MAX_TOKENS_CAP),
    temperature: num(body.temperature),
    topP: num(body.top_p),
    presencePenalty: num(body.presence_penalty),
    frequencyPenalty: num(body.frequency_penalty),
    ...(stop?.length ? { stop } : {}),
    ...(body.user ? { user: body.user } : {}),
  };
}

/** A message's text: a string, or its text parts joined; null counts as empty. */
const textOf = (content: string | null | { text: string }[]) => (Array.isArray(content) ? content.map((p) => p.text).join('\n') : (content ?? ''));

export function parseChatRequest(raw: unknown, table: OpenAiModelTable): CompletionRequest {
  const { body, model: m } = validate(raw, table, ChatCompletionRequestSchema, checkChat, UNSUPPORTED_CHAT);
  const msgs = body.messages.map((x, i) => {
    const stray = Object.keys(x).find((k) => !['role', 'content', 'name'].includes(k) && given(k, (x as Record<string, unknown>)[k]));
    if (stray) throw invalid(`messages[${i}].${stray} is not supported`, `messages[${i}].${stray}`);
    if (x.content === null && x.role !== 'assistant') throw invalid(`messages[${i}].content is required`, `messages[${i}].content`);
    const name = x.name ?? undefined;
    const text = textOf(x.content);
    // The author's name, as the model sees it.
    return { role: x.role, text: name && x.role !== 'system' ? `${name}: ${text}` : text, raw: text };
  });
  const last = msgs.map((x) => x.role).lastIndexOf('user');
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
export function parseLegacyRequest(raw: unknown, table: OpenAiModelTable): CompletionRequest {
  const { body, model: m } = validate(raw, table, CompletionRequestSchema, checkLegacy, UNSUPPORTED_LEGACY);
  const prompt = Array.isArray(body.prompt) ? body.prompt[0]! : body.prompt;
  if (!prompt.trim()) throw invalid('prompt must be a non-empty string', 'prompt');
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
