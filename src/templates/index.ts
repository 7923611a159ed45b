/**
 * Workflow templates (config/templates, TEMPLATES_DIR): versioned step pipelines a task
 * selects with `template` / `template_version`. The file format is described in model.ts.
 *
 * - loadTemplates(dir): the catalogue, every file validated strictly at start-up;
 * - catalog.get(name, version?) (latest when absent), .list() (the ListTemplates summaries);
 * - planTemplate(template, { query, params }): the steps with their strings rendered lazily
 *   from earlier steps' outputs, for the workflow to run each as a journaled step;
 * - requiresModel(template): whether any step calls a model (disable_ai refuses those).
 */
export { loadTemplates } from './load.js';
export {
  MAX_STEPS,
  MAX_TEMPLATE_BYTES,
  STEP_TYPES,
  TemplateFileError,
  createTemplateCatalog,
  parseTemplateFile,
  type LlmStep,
  type Template,
  type TemplateCatalog,
  type TemplateDefaults,
  type TemplateStep,
  type TemplateSummary,
  type TextStep,
  type ToolStep,
} from './model.js';
export {
  modelSteps,
  placeholderText,
  planTemplate,
  renderTemplateString,
  requiresModel,
  type PlannedLlmStep,
  type PlannedStep,
  type PlannedTextStep,
  type PlannedToolStep,
  type StepOutputs,
  type TemplateInput,
  type TemplatePlan,
} from './render.js';
export { MAX_VERSION_LENGTH, compareVersions, isPrerelease, isVersion, latestVersion } from './version.js';
