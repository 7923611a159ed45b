/**
 * Placeholders and the execution plan of a template.
 *
 * A placeholder is `${name}` or `${steps.<id>}`: `name` is a prompt parameter (`[A-Za-z_]\w*`)
 * or `query`; `steps.<id>` is the output of an earlier step. Rendering is one pass: text that
 * a value brings in is never scanned again (a step output containing `${query}` stays as it
 * is). Only own keys of the values count, so `${constructor}` or `${__proto__}` stay as
 * written unless a value of that name was really given.
 */
import type { Tier } from '../kernel/index.js';
import type { Template, TemplateStep, TemplateSummary } from './model.js';

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
function renderDeep(v: unknown, vars: Readonly<Record<string, unknown>>): unknown {
  if (typeof v === 'string') return renderTemplateString(v, vars);
  if (Array.isArray(v)) return v.map((x) => renderDeep(x, vars));
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) Object.defineProperty(out, k, { value: renderDeep(x, vars), enumerable: true, writable: true, configurable: true });
    return out;
  }
  return v;
}

/** The outputs of the steps run so far, by step id (a tool step's output as text). */
export type StepOutputs = Readonly<Record<string, string>>;

export interface TemplateInput {
  /** The task's query: `${query}`. */
  query: string;
  /** The task's prompt_params: `${name}`; over the template's `defaults.prompt_params`. */
  params?: Readonly<Record<string, unknown>> | null;
}

interface PlannedBase {
  id: string;
  /** Position in the template (0-based). */
  index: number;
  /** Step ids whose outputs `render` needs (all earlier steps). */
  needs: readonly string[];
}

export interface PlannedLlmStep extends PlannedBase {
  type: 'llm';
  /** The step's model_tier, else the template's defaults.model_tier; undefined: the task's choice. */
  modelTier?: Tier;
  render(outputs: StepOutputs): { prompt: string; system?: string };
}
export interface PlannedTextStep extends PlannedBase {
  type: 'text';
  render(outputs: StepOutputs): { text: string };
}
export interface PlannedToolStep extends PlannedBase {
  type: 'tool';
  tool: string;
  render(outputs: StepOutputs): { arguments: Record<string, unknown> };
}
export type PlannedStep = PlannedLlmStep | PlannedTextStep | PlannedToolStep;

export interface TemplatePlan {
  template: TemplateSummary;
  steps: readonly PlannedStep[];
  /** The id of the step whose output is the task's result. */
  output: string;
  /** True if any step calls a model (disable_ai cannot run the plan). */
  requiresModel: boolean;
  /** The template's defaults.model_tier. */
  modelTier?: Tier;
}

/** True if any step of the template is an `llm` step. */
export function requiresModel(t: Template): boolean {
  return t.steps.some((s) => s.type === 'llm');
}

/** The ids of the steps that call a model, in order (for disable_ai's error message). */
export function modelSteps(t: Template): string[] {
  return t.steps.filter((s) => s.type === 'llm').map((s) => s.id);
}

/**
 * The steps of `t` for one task, to be run in order, each as its own journaled step. Nothing
 * runs here: each step's `render(outputs)` fills its strings from the query, the parameters
 * and the outputs of earlier steps, and throws if one of the outputs it needs is missing.
 * Pure and deterministic: the same template, input and outputs give the same strings, so a
 * replayed workflow renders exactly what it rendered before.
 */
export function planTemplate(t: Template, input: TemplateInput): TemplatePlan {
  // Null prototype: a parameter named __proto__ is a plain entry, not the object's prototype.
  const base: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  const put = (src: Readonly<Record<string, unknown>> | null | undefined) => {
    if (src && typeof src === 'object') for (const [k, v] of Object.entries(src)) base[k] = v;
  };
  put(t.defaults.promptParams);
  put(input.params);
  // `query` and `steps.<id>` are the template's own names, set last: parameters cannot shadow them.
  base.query = input.query;

  const varsFor = (step: { id: string; index: number }, needs: readonly string[], outputs: StepOutputs) => {
    const vars: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    Object.assign(vars, base);
    for (const id of needs) {
      if (!outputs || !Object.hasOwn(outputs, id)) throw new Error(`template ${t.key}: step ${step.id} needs the output of step ${id}, which was not given`);
      vars[`steps.${id}`] = outputs[id];
    }
    return vars;
  };

  const steps = t.steps.map((s, index): PlannedStep => {
    const needs = [...new Set(stepStrings(s).flatMap((x) => stepRefs(x.value)))];
    const at = { id: s.id, index };
    switch (s.type) {
      case 'llm':
        return {
          ...at,
          type: 'llm',
          needs,
          modelTier: s.modelTier ?? t.defaults.modelTier,
          render: (o) => {
            const vars = varsFor(at, needs, o);
            return { prompt: renderTemplateString(s.prompt, vars), ...(s.system !== undefined ? { system: renderTemplateString(s.system, vars) } : {}) };
          },
        };
      case 'text':
        return { ...at, type: 'text', needs, render: (o) => ({ text: renderTemplateString(s.text, varsFor(at, needs, o)) }) };
      case 'tool':
        return {
          ...at,
          type: 'tool',
          needs,
          tool: s.tool,
          render: (o) => ({ arguments: renderDeep(s.arguments, varsFor(at, needs, o)) as Record<string, unknown> }),
        };
    }
  });
  return {
    template: { name: t.name, version: t.version, key: t.key, contentHash: t.contentHash, description: t.description },
    steps,
    output: t.output,
    requiresModel: requiresModel(t),
    modelTier: t.defaults.modelTier,
  };
}
