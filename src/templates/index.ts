/**
 * Workflow templates (config/templates, TEMPLATES_DIR): versioned step pipelines a task
 * selects with `template` / `template_version`. The file format is described in parse.ts;
 * versions follow the kernel's version rules (shared with skills).
 *
 * - loadTemplates(dir): the catalogue, every file validated strictly at start-up;
 * - catalog.get(name, version?) (latest when absent), .list() (the ListTemplates summaries);
 * - planTemplate(template, { query, params }): the steps with their strings rendered lazily
 *   from earlier steps' outputs, for the workflow to run each as a journaled step;
 * - requiresModel(template): whether any step calls a model (disable_ai refuses those).
 */
export { loadTemplates } from './load.js';
export {
  STEP_TYPES,
  TemplateFileError,
  type LlmStep,
  type Template,
  type TemplateCatalog,
  type TemplateDefaults,
  type TemplateStep,
  type TemplateSummary,
  type TextStep,
  type ToolStep,
} from './model.js';
export { MAX_STEPS, MAX_TEMPLATE_BYTES, parseTemplateFile } from './parse.js';
export { createTemplateCatalog } from './catalog.js';
export { placeholderText, renderTemplateString } from './placeholders.js';
export {
  modelSteps,
  planTemplate,
  requiresModel,
  type PlannedLlmStep,
  type PlannedStep,
  type PlannedTextStep,
  type PlannedToolStep,
  type StepOutputs,
  type TemplateInput,
  type TemplatePlan,
} from './plan.js';
