/**
 * What a template is: its steps, its summary, the catalogue's interface, and the error of a
 * file that cannot be used.
 */
import { ConfigError } from '../config/index.js';
import type { Tier } from '../kernel/index.js';

export interface TemplateDefaults {
  modelTier?: Tier;
  /** Default values of `${name}` placeholders (the task's prompt_params override them). */
  promptParams: Readonly<Record<string, string | number | boolean>>;
}

interface StepBase {
  id: string;
  description?: string;
}
export interface LlmStep extends StepBase {
  type: 'llm';
  prompt: string;
  system?: string;
  modelTier?: Tier;
}
export interface TextStep extends StepBase {
  type: 'text';
  text: string;
}
export interface ToolStep extends StepBase {
  type: 'tool';
  tool: string;
  arguments: Readonly<Record<string, unknown>>;
}
export type TemplateStep = LlmStep | TextStep | ToolStep;
export const STEP_TYPES = ['llm', 'text', 'tool'] as const;

export interface TemplateSummary {
  name: string;
  version: string;
  /** `name@version` */
  key: string;
  /** sha256 (hex) of the template file's bytes. */
  contentHash: string;
  description: string;
}

export interface Template extends TemplateSummary {
  defaults: TemplateDefaults;
  steps: readonly TemplateStep[];
  /** The step whose output is the result. */
  output: string;
  /** The file it was read from. */
  file: string;
}

export interface TemplateCatalog {
  /** The folder the templates were read from. */
  readonly dir: string;
  /** False when the folder does not exist (the catalogue is then empty). */
  readonly found: boolean;
  /** Number of template versions. */
  readonly size: number;
  /**
   * A template by name; `version` absent or empty: the latest (the highest release, else the
   * highest pre-release). 400 `unknown template: <name>` / `template <name> has no version <v>`.
   */
  get(name: string, version?: string | null): Template;
  has(name: string, version?: string | null): boolean;
  /** The versions of `name`, oldest first (empty for an unknown name). */
  versions(name: string): string[];
  /** Every template version, by name, oldest version first. */
  list(): TemplateSummary[];
}

/** A template file that cannot be used: names the file and the field. Fails start-up. */
export class TemplateFileError extends ConfigError {
  override name = 'TemplateFileError';
  constructor(
    readonly file: string,
    readonly field: string,
    readonly reason: string,
  ) {
    super('TEMPLATES_DIR', `${file}: ${field}: ${reason}`);
  }
}
