/**
 * Placeholders of template strings.
 *
 * A placeholder is `${name}` or `${steps.<id>}`: `name` is a prompt parameter (`[A-Za-z_]\w*`)
 * or `query`; `steps.<id>` is the output of an earlier step. Rendering is one pass: text that
 * a value brings in is never scanned again (a step output containing `${query}` stays as it
 * is). Only own keys of the values count, so `${constructor}` or `${__proto__}` stay as
 * written unless a value of that name was really given.
 */
import type { TemplateStep } from './model.js';

/** `${name}` or `${name.part}`; anything else between `${` and `}` is left alone. */
const PLACEHOLDER = /\$\{([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_][A-Za-z0-9_-]*)?)\}/g;
/** Every `${steps.…}` form, well-formed or not (load-time validation looks at all of them). */
const STEP_REF = /\$\{steps\.([^}]*)\}/g;

/** How a value is written into text: strings as they are, other scalars as text, objects as JSON. */
export function placeholderText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === null) return '';
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  try {
    return JSON.stringify(v) ?? '';
  } catch {
    return String(v);
  }
}

/**
 * Replaces each `${key}` of `s` whose key is an own property of `vars` (with a value other than
 * undefined); every other placeholder stays as written.
 */
export function renderTemplateString(s: string, vars: Readonly<Record<string, unknown>>): string {
  return s.replace(PLACEHOLDER, (m, k: string) => (Object.hasOwn(vars, k) && vars[k] !== undefined ? placeholderText(vars[k]) : m));
}

/** The step ids a string refers to with `${steps.<id>}` (as written, possibly malformed), in order. */
export function stepRefs(s: string): string[] {
  return [...s.matchAll(STEP_REF)].map((m) => m[1]);
}

/** Every string of a step that is rendered: prompt, system, text, and tool argument strings. */
export function stepStrings(step: TemplateStep): { field: string; value: string }[] {
  switch (step.type) {
    case 'llm':
      return [{ field: 'prompt', value: step.prompt }, ...(step.system !== undefined ? [{ field: 'system', value: step.system }] : [])];
    case 'text':
      return [{ field: 'text', value: step.text }];
    case 'tool': {
      const out: { field: string; value: string }[] = [];
      const walk = (v: unknown, path: string) => {
        if (typeof v === 'string') out.push({ field: path, value: v });
        else if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${path}[${i}]`));
        else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, `${path}.${k}`);
      };
      walk(step.arguments, 'arguments');
      return out;
    }
  }
}

/** Renders every string inside a JSON-like value (keys are not rendered). */
export function renderDeep(v: unknown, vars: Readonly<Record<string, unknown>>): unknown {
  if (typeof v === 'string') return renderTemplateString(v, vars);
  if (Array.isArray(v)) return v.map((x) => renderDeep(x, vars));
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) Object.defineProperty(out, k, { value: renderDeep(x, vars), enumerable: true, writable: true, configurable: true });
    return out;
  }
  return v;
}
