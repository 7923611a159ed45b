/**
 * The execution plan of a template: its steps for one task, each rendering its strings from
 * the query, the parameters and earlier steps' outputs (placeholders.ts) when it runs.
 */
import type { Tier } from '../kernel/index.js';
import type { Template, TemplateSummary } from './model.js';
import { renderDeep, renderTemplateString, stepRefs, stepStrings } from './placeholders.js';

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
