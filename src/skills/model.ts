/** What a skill is, the catalogue's interface, and the error of a file that cannot be used. */
import { ConfigError } from '../config/index.js';
import type { Tier } from '../kernel/index.js';

export interface SkillSummary {
  name: string;
  /** The latest version. */
  version: string;
  /** The latest version's description. */
  description: string;
  /** Every version, oldest first. */
  versions: string[];
}

export interface Skill {
  name: string;
  version: string;
  /** `name@version` */
  key: string;
  description: string;
  /** A role preset (kernel ROLE_NAMES) the skill's agent runs as. */
  role?: string;
  /** Tool names the skill asks for (checked against the registry by whoever runs it). */
  tools: readonly string[];
  modelTier?: Tier;
  /** The markdown body: the system prompt. */
  instructions: string;
  /** sha256 (hex) of the file's bytes. */
  contentHash: string;
  file: string;
}

export interface SkillCatalog {
  readonly dir: string;
  /** False when the folder does not exist (the catalogue is then empty). */
  readonly found: boolean;
  /** One entry per skill name, by name. */
  list(): SkillSummary[];
  /**
   * A skill by name; `version` absent or empty: the latest (highest release, else highest
   * pre-release). 400 `unknown skill: <name>` / `skill <name> has no version <v>`.
   */
  get(name: string, version?: string | null): Skill;
  has(name: string, version?: string | null): boolean;
  /** Every version of `name`, oldest first; 400 `unknown skill: <name>`. */
  versions(name: string): Skill[];
}

/** A skill file that cannot be used: names the file and the field. Fails start-up. */
export class SkillFileError extends ConfigError {
  override name = 'SkillFileError';
  constructor(
    readonly file: string,
    readonly field: string,
    readonly reason: string,
  ) {
    super('SKILLS_DIR', `${file}: ${field}: ${reason}`);
  }
}
