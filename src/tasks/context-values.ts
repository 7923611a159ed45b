/**
 * Context values as existing clients send them. The reference platform's SDKs send context
 * flags as strings (`{"force_research": "true"}`), schedules keep their context as a map of
 * strings, and a gRPC Struct may carry either; the reference platform reads them all. So a
 * context boolean is `true`/`false` or one of the strings "true", "false", "1", "0"
 * (case-insensitive, trimmed); a context integer is an integer or a string of digits; a
 * context number is a number or a numeric string. Anything else is a 400 naming the key
 * (`context.<key> must be ...`), and ranges are checked after the conversion.
 *
 * The submission normalises the recognised keys once (normaliseContext), so the stored task
 * and its start message carry real booleans and numbers and no workflow has to convert.
 */
import { badRequest } from '../kernel/index.js';

/** How one context key's value is read. */
export type ContextValueRule =
  | { type: 'boolean' }
  | { type: 'integer'; min: number; max: number }
  /** `minExclusive`: the value must be greater than `min` (a ratio of 0 means nothing). */
  | { type: 'number'; min: number; max: number; minExclusive?: boolean };

const BOOLEAN: ContextValueRule = { type: 'boolean' };

/** The recognised keys of the interface's "Recognised context keys" that are not strings or objects. */
export const CONTEXT_VALUE_RULES: Readonly<Record<string, ContextValueRule>> = Object.freeze({
  disable_ai: BOOLEAN,
  force_research: BOOLEAN,
  iterative_research_enabled: BOOLEAN,
  enable_fact_extraction: BOOLEAN,
  // A person approves the task before its first action (approvals).
  require_approval: BOOLEAN,
  // Still refused as not available when true (not-available.ts), but read like every flag.
  force_swarm: BOOLEAN,
  require_review: BOOLEAN,
  review_timeout: { type: 'integer', min: 1, max: 86_400 },
  iterative_max_iterations: { type: 'integer', min: 1, max: 5 },
  history_window_size: { type: 'integer', min: 1, max: 1000 },
  primers_count: { type: 'integer', min: 0, max: 1000 },
  recents_count: { type: 'integer', min: 0, max: 1000 },
  compression_trigger_ratio: { type: 'number', min: 0, max: 1, minExclusive: true },
  compression_target_ratio: { type: 'number', min: 0, max: 1, minExclusive: true },
});

const BOOLEAN_STRINGS: ReadonlyMap<string, boolean> = new Map([
  ['true', true],
  ['false', false],
  ['1', true],
  ['0', false],
]);
const INTEGER_STRING = /^[+-]?\d+$/;
// Decimal notation only: "0x10", "Infinity" or "" are not numbers a client meant.
const NUMBER_STRING = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** `v` as a boolean (true/false, or "true"/"false"/"1"/"0" in any case, trimmed); undefined when it is none. */
export function parseBoolean(v: unknown): boolean | undefined {
  if (typeof v === 'boolean') return v;
  return typeof v === 'string' ? BOOLEAN_STRINGS.get(v.trim().toLowerCase()) : undefined;
}

/** `v` as a finite number (a number, or a numeric string, trimmed); undefined when it is none. */
export function parseNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v !== 'string') return undefined;
  const s = v.trim();
  return NUMBER_STRING.test(s) ? Number(s) : undefined;
}

/** `v` as an integer (an integral number, or a string of digits with an optional sign); undefined when it is none. */
export function parseInteger(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isSafeInteger(v) ? v : undefined;
  if (typeof v !== 'string') return undefined;
  const s = v.trim();
  const n = INTEGER_STRING.test(s) ? Number(s) : NaN;
  return Number.isSafeInteger(n) ? n : undefined;
}

/** What the key must be, as the 400 says it. */
function expectation(r: ContextValueRule): string {
  if (r.type === 'boolean') return 'a boolean';
  if (r.type === 'integer') return `an integer from ${r.min} to ${r.max}`;
  return r.minExclusive ? `a number greater than ${r.min} and at most ${r.max}` : `a number from ${r.min} to ${r.max}`;
}

/** The value under `rule`, or undefined when it breaks it. */
function convert(v: unknown, r: ContextValueRule): boolean | number | undefined {
  if (r.type === 'boolean') return parseBoolean(v);
  const n = r.type === 'integer' ? parseInteger(v) : parseNumber(v);
  if (n === undefined || n > r.max || n < r.min) return undefined;
  if (r.type === 'number' && r.minExclusive && n === r.min) return undefined;
  return n;
}

/** Absent and null both mean "not set" (as they do for every context key). */
const valueOf = (context: Readonly<Record<string, unknown>>, key: string) => (Object.hasOwn(context, key) ? context[key] : undefined);

/** `context[key]` read by `rule`: undefined when unset; 400 `context.<key> must be ...` when it breaks the rule. */
export function contextValue(context: Readonly<Record<string, unknown>>, key: string, rule: ContextValueRule): boolean | number | undefined {
  const v = valueOf(context, key);
  if (v === undefined || v === null) return undefined;
  const out = convert(v, rule);
  if (out === undefined) throw badRequest(`context.${key} must be ${expectation(rule)}`);
  return out;
}

/** `context[key]` as a boolean (see parseBoolean): undefined when unset, 400 naming the key otherwise. */
export const contextBoolean = (context: Readonly<Record<string, unknown>>, key: string): boolean | undefined =>
  contextValue(context, key, BOOLEAN) as boolean | undefined;

/** `context[key]` as an integer from `min` to `max`: undefined when unset, 400 naming the key and the range otherwise. */
export const contextInteger = (context: Readonly<Record<string, unknown>>, key: string, min: number, max: number): number | undefined =>
  contextValue(context, key, { type: 'integer', min, max }) as number | undefined;

/**
 * A recognised numeric key read without refusing (undefined when unset or invalid), for
 * readers of contexts stored before the submission normalised them.
 */
export function recognisedNumber(context: Readonly<Record<string, unknown>>, key: string): number | undefined {
  const rule = CONTEXT_VALUE_RULES[key];
  if (!rule || rule.type === 'boolean') return undefined;
  const out = convert(valueOf(context, key), rule);
  return typeof out === 'number' ? out : undefined;
}

/**
 * A copy of `context` whose recognised keys (CONTEXT_VALUE_RULES) hold real booleans and
 * numbers; 400 naming the first key whose value is neither its type nor one of its spellings.
 * Unset keys (absent or null) and every other key are kept as they are.
 */
export function normaliseContext(context: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...context };
  for (const [key, rule] of Object.entries(CONTEXT_VALUE_RULES)) {
    const v = contextValue(context, key, rule);
    if (v !== undefined) out[key] = v;
  }
  return out;
}
