/**
 * The request bodies of POST /v1/chat/completions and POST /v1/completions: one TypeBox schema
 * each, which validates a body (Ajv) and describes it in /openapi.json, and the few rules a
 * schema cannot state (a field given only with another, a user message, OpenAI-defined fields
 * this service cannot honour).
 *
 * Errors are worded as OpenAI words them, the request field at fault in `param`, and the first
 * one reported is the one OpenAI's order finds first: the model (404 before anything else), an
 * unknown or unsupported field (in the body's order), then the messages (each message in turn)
 * or the prompt, then the sampling fields in the schema's order. A null field counts as absent.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { ErrorObject } from 'ajv';
import { StringEnum, errorsOf } from '../schemas.js';
import { invalid, type OpenAiError } from './errors.js';
import { MAX_TOKENS_CAP, modelOf, type OpenAiModel, type OpenAiModelTable } from './models.js';

/** A field that may also be null (OpenAI's clients send null for "not given"). */
const Nullable = <T extends TSchema>(s: T) => Type.Optional(Type.Unsafe<Static<T> | null>({ ...s, nullable: true }));
const Range = (min: number, max: number, o: Record<string, unknown> = {}) => Nullable(Type.Number({ minimum: min, maximum: max, ...o }));

const MODEL = { model: Nullable(Type.String({ description: 'A model of GET /v1/models; default svc-chat' })) };

const STREAMING = {
  stream: Nullable(Type.Boolean({ default: false })),
  stream_options: Nullable(
    Type.Object(
      { include_usage: Nullable(Type.Boolean({ description: 'The final chunk carries usage' })) },
      { additionalProperties: false, description: 'Only with stream: true' },
    ),
  ),
  n: Nullable(Type.Integer({ minimum: 1, maximum: 1, description: 'Only 1' })),
  max_tokens: Nullable(Type.Integer({ minimum: 1, description: `Capped at ${MAX_TOKENS_CAP}` })),
};

const SAMPLING = {
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

const MESSAGE_FIELDS = ['role', 'content', 'name'];

export const ChatCompletionRequestSchema = Type.Object(
  {
    ...MODEL,
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
      { minItems: 1, description: 'At least one user message; the last one is the query' },
    ),
    ...STREAMING,
    max_completion_tokens: Nullable(Type.Integer({ minimum: 1, description: 'Alias of max_tokens' })),
    ...SAMPLING,
  },
  { additionalProperties: false },
);
export type ChatBody = Static<typeof ChatCompletionRequestSchema>;

export const CompletionRequestSchema = Type.Object(
  {
    ...MODEL,
    prompt: Type.Union([Type.String(), Type.Array(Type.String(), { minItems: 1, maxItems: 1 })], {
      description: 'The query (an array of exactly one string is accepted too)',
    }),
    ...STREAMING,
    ...SAMPLING,
  },
  { additionalProperties: false },
);
export type LegacyBody = Static<typeof CompletionRequestSchema>;

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

export const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** "Given": anything but null, false, an empty array or object, and best_of 1 (OpenAI's defaults). */
const given = (k: string, v: unknown) =>
  v !== undefined &&
  v !== null &&
  v !== false &&
  !(Array.isArray(v) && v.length === 0) &&
  !(isObj(v) && Object.keys(v).length === 0) &&
  !(k === 'best_of' && v === 1);

/** A message's text parts, joined; undefined when the content is not text. */
export function textOf(content: unknown): string | undefined {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content) && content.every((p) => isObj(p) && p.type === 'text' && typeof p.text === 'string')) {
    return content.map((p) => (p as { text: string }).text).join('\n');
  }
  return undefined;
}

/** One thing wrong with a body, and where OpenAI's order puts it (compared element by element). */
interface Problem {
  rank: number[];
  error: () => OpenAiError;
}

const before = (a: number[], b: number[]) => {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i] ?? -1;
    const y = b[i] ?? -1;
    if (x !== y) return x < y;
  }
  return false;
};

/** An Ajv error as the path of the field it is about, `required` naming the missing one. */
function segmentsOf(e: ErrorObject): string[] {
  const segs = e.instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (e.keyword === 'required') segs.push((e.params as { missingProperty: string }).missingProperty);
  return segs;
}

/** Within one message: its shape, role, stray fields, content present, name, content text. */
const MESSAGE_STEP = { object: 0, role: 1, stray: 2, present: 3, name: 4, content: 5 };

/** A schema error in OpenAI's words, and its place in the order. */
function problemOf(e: ErrorObject, body: Record<string, unknown>, fields: string[], keys: string[], schema: { properties: Record<string, unknown> }): Problem {
  const [top = '', ...rest] = segmentsOf(e);
  const at = (...sub: number[]) => [fields.indexOf(top), ...sub];
  if (e.keyword === 'additionalProperties') {
    const k = (e.params as { additionalProperty: string }).additionalProperty;
    if (e.instancePath === '') return { rank: [-1, keys.indexOf(k)], error: () => invalid(`Unrecognized request argument supplied: ${k}`, k) };
    return { rank: at(1), error: () => invalid(`stream_options.${k} is not supported; only include_usage`, `stream_options.${k}`) };
  }
  const plain = (message: string, param = top, rank = at(1)): Problem => ({ rank, error: () => invalid(message, param) });
  switch (top) {
    case 'messages': {
      if (rest.length === 0) return plain('messages must be a non-empty array', 'messages', at(0));
      const i = Number(rest[0]);
      const m = `messages[${i}]`;
      const field = rest[1];
      if (field === undefined) return plain(`${m} must be an object`, m, at(1, i, MESSAGE_STEP.object));
      if (field === 'role') return plain(`${m}.role must be system, user or assistant`, `${m}.role`, at(1, i, MESSAGE_STEP.role));
      if (field === 'name') return plain(`${m}.name must be 1-64 letters, digits, _ or -`, `${m}.name`, at(1, i, MESSAGE_STEP.name));
      if (e.keyword === 'required' && rest.length === 2) return plain(`${m}.content is required`, `${m}.content`, at(1, i, MESSAGE_STEP.present));
      const content = (body.messages as Record<string, unknown>[])[i]!.content;
      if (!Array.isArray(content)) return plain(`${m}.content must be a string`, `${m}.content`, at(1, i, MESSAGE_STEP.content));
      const j = content.findIndex((p) => !isObj(p) || p.type !== 'text' || typeof p.text !== 'string');
      return plain(`${m}.content[${j}]: only text content is supported ({type: "text", text})`, `${m}.content`, at(1, i, MESSAGE_STEP.content));
    }
    case 'prompt':
      if (Array.isArray(body.prompt) && body.prompt.length !== 1)
        return plain('prompt must be a string (an array must hold exactly one string: one completion per request)', 'prompt', at(0));
      return plain('prompt must be a non-empty string', 'prompt', at(0));
    case 'model':
      return plain('model must be a string');
    case 'stream':
      return plain('stream must be a boolean');
    case 'stream_options':
      if (rest[0] === 'include_usage') return plain('stream_options.include_usage must be a boolean', 'stream_options.include_usage');
      return plain('stream_options must be an object');
    case 'n':
      return plain('n must be 1: only one choice per request is supported');
    case 'max_tokens':
    case 'max_completion_tokens':
      return plain(`${top} must be a positive integer`, top, at(0));
    case 'stop':
      return plain('stop must be a string or an array of at most 4 non-empty strings');
    case 'user':
      return plain('user must be a string of at most 256 characters');
    default: {
      const s = schema.properties[top] as { minimum?: number; maximum?: number } | undefined;
      if (s?.minimum !== undefined && s.maximum !== undefined) return plain(`${top} must be a number from ${s.minimum} to ${s.maximum}`);
      return plain(`${top || 'request body'} is invalid`, top || '', at(1));
    }
  }
}

/** What the schema cannot state, as problems in the same order. */
function rules(body: Record<string, unknown>, fields: string[], keys: string[], unsupported: string[]): Problem[] {
  const out: Problem[] = [];
  const field = (f: string, ...sub: number[]) => [fields.indexOf(f), ...sub];
  for (const k of keys)
    if (unsupported.includes(k) && given(k, body[k]))
      out.push({ rank: [-1, keys.indexOf(k)], error: () => invalid(`${k} is not supported by this service`, k) });
  const so = body.stream_options;
  if (so !== undefined && so !== null && body.stream !== true)
    out.push({
      rank: field('stream_options', 0),
      error: () => invalid("The 'stream_options' parameter is only allowed when 'stream' is enabled.", 'stream_options'),
    });
  const mt = body.max_tokens ?? undefined;
  const mct = body.max_completion_tokens ?? undefined;
  if (fields.includes('max_completion_tokens') && mt !== undefined && mct !== undefined && mt !== mct)
    out.push({
      rank: field('max_completion_tokens', 1),
      error: () => invalid('max_tokens and max_completion_tokens differ; give one', 'max_completion_tokens'),
    });
  if (fields.includes('prompt')) {
    const p = Array.isArray(body.prompt) ? body.prompt[0] : body.prompt;
    if (typeof p === 'string' && !p.trim()) out.push({ rank: field('prompt', 1), error: () => invalid('prompt must be a non-empty string', 'prompt') });
  }
  if (!fields.includes('messages') || !Array.isArray(body.messages)) return out;
  const msgs = body.messages as unknown[];
  msgs.forEach((x, i) => {
    if (!isObj(x)) return;
    const stray = Object.keys(x).find((k) => !MESSAGE_FIELDS.includes(k) && given(k, x[k]));
    if (stray)
      out.push({
        rank: field('messages', 1, i, MESSAGE_STEP.stray),
        error: () => invalid(`messages[${i}].${stray} is not supported`, `messages[${i}].${stray}`),
      });
    if (x.content === null && x.role !== 'assistant')
      out.push({ rank: field('messages', 1, i, MESSAGE_STEP.present), error: () => invalid(`messages[${i}].content is required`, `messages[${i}].content`) });
  });
  // After every message's own checks: the conversation needs a user message, the last one not empty.
  const last = msgs.map((x) => (isObj(x) ? x.role : undefined)).lastIndexOf('user');
  if (msgs.length && last < 0) out.push({ rank: field('messages', 2), error: () => invalid('messages must contain a user message', 'messages') });
  if (last >= 0 && textOf((msgs[last] as Record<string, unknown>).content)?.trim() === '')
    out.push({ rank: field('messages', 2), error: () => invalid(`messages[${last}].content: the last user message is empty`, `messages[${last}].content`) });
  return out;
}

/** Checks `raw` against `schema` and the rules, after the model (404 first); throws the first problem. */
function check<T extends TSchema & { properties: Record<string, unknown> }>(
  raw: unknown,
  table: OpenAiModelTable,
  schema: T,
  errors: (v: unknown) => ErrorObject[],
  unsupported: string[],
): { body: Static<T>; model: OpenAiModel } {
  if (!isObj(raw)) throw invalid('request body must be a JSON object');
  const model = modelOf(table, raw.model);
  const keys = Object.keys(raw);
  // Unsupported fields left at their defaults are accepted: the schema never sees them.
  const body = Object.fromEntries(Object.entries(raw).filter(([k]) => !unsupported.includes(k)));
  const fields = Object.keys(schema.properties);
  const problems = [...errors(body).map((e) => problemOf(e, body, fields, keys, schema)), ...rules(raw, fields, keys, unsupported)];
  const first = problems.reduce<Problem | undefined>((best, p) => (!best || before(p.rank, best.rank) ? p : best), undefined);
  if (first) throw first.error();
  return { body: body as Static<T>, model };
}

const chatErrors = errorsOf(ChatCompletionRequestSchema);
const legacyErrors = errorsOf(CompletionRequestSchema);

export const checkChatBody = (raw: unknown, table: OpenAiModelTable) => check(raw, table, ChatCompletionRequestSchema, chatErrors, UNSUPPORTED_CHAT);
export const checkLegacyBody = (raw: unknown, table: OpenAiModelTable) => check(raw, table, CompletionRequestSchema, legacyErrors, UNSUPPORTED_LEGACY);
