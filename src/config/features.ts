/**
 * The feature-flag file (CONFIG_PATH, default ./config/features.yaml): its `approvals`
 * section (which tools a person must approve before they run, for every role and per role)
 * and its `swarm` section (the swarm workflow's limits; SWARM_ENABLED, when set, overrides
 * `enabled`). A missing file at the default path means no tool policies and the spec's swarm
 * defaults; a missing or malformed file at a path the operator named fails start-up naming
 * CONFIG_PATH, as does a swarm key that is unknown or out of range.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { ROLE_NAMES } from '../kernel/index.js';
import { bool, type Env } from './env.js';
import { ConfigError } from './errors.js';

export const DEFAULT_FEATURES_PATH = './config/features.yaml';

/** Tools a person approves before they run (tool policies). */
export interface ApprovalPolicies {
  /** For every role. */
  tools: readonly string[];
  /** Per role (kernel role names such as `developer`). */
  roles: Readonly<Record<string, readonly string[]>>;
}

/** The swarm workflow's limits (the spec's "Swarm limits"; enforced by the lead, workflows/swarm*.ts). */
export interface SwarmLimits {
  /** Off: a task with context.force_swarm is refused (400 `swarm is disabled ...`). */
  enabled: boolean;
  /** Agents a swarm may recruit in all, dynamically recruited ones included. */
  max_agents: number;
  /** Tool rounds of one agent. */
  max_iterations_per_agent: number;
  /** One agent's execution; the smaller of this and AGENT_TIMEOUT_SECONDS applies. */
  agent_timeout_seconds: number;
  /** send_message calls of one agent. */
  max_messages_per_agent: number;
  /** An agent's result is cut to this many characters in the shared workspace. */
  workspace_snippet_chars: number;
  /** Agents are shown the last this many workspace entries. */
  workspace_max_entries: number;
  /** Model calls of the whole swarm (lead and agents). */
  max_total_llm_calls: number;
  /** Tokens of the whole swarm. */
  max_total_tokens: number;
  /** The swarm's time from its plan to its synthesis (may be fractional: 0.5 is 30 s). */
  max_wall_clock_minutes: number;
}

/** The spec's defaults. */
export const SWARM_DEFAULTS: Readonly<SwarmLimits> = Object.freeze({
  enabled: true,
  max_agents: 10,
  max_iterations_per_agent: 25,
  agent_timeout_seconds: 1800,
  max_messages_per_agent: 20,
  workspace_snippet_chars: 800,
  workspace_max_entries: 5,
  max_total_llm_calls: 200,
  max_total_tokens: 1_000_000,
  max_wall_clock_minutes: 30,
});

/** Bounds of each numeric swarm limit (inclusive). */
const SWARM_BOUNDS: Readonly<Record<Exclude<keyof SwarmLimits, 'enabled'>, [number, number]>> = {
  max_agents: [1, 100],
  max_iterations_per_agent: [1, 100],
  agent_timeout_seconds: [1, 86_400],
  max_messages_per_agent: [0, 1000],
  workspace_snippet_chars: [1, 100_000],
  workspace_max_entries: [0, 100],
  max_total_llm_calls: [1, 100_000],
  max_total_tokens: [1, 1_000_000_000],
  max_wall_clock_minutes: [0.01, 1440],
};

/** Limits that may be fractional (a wall clock of 0.5 minutes); the others are integers. */
const FRACTIONAL = new Set(['max_wall_clock_minutes']);

export interface Features {
  approvals: ApprovalPolicies;
  swarm: SwarmLimits;
  /** Sections the file has that nothing reads yet (none today). */
  unread: readonly string[];
}

const KNOWN_SECTIONS = new Set(['approvals', 'swarm']);
const UNREAD_SECTIONS = new Set<string>();

/** The `swarm` section, validated (absent keys take the spec's defaults); `env.SWARM_ENABLED` overrides `enabled`. */
export function swarmLimits(v: unknown, env: Env = {}): SwarmLimits {
  const out: SwarmLimits = { ...SWARM_DEFAULTS };
  if (v !== undefined && v !== null) {
    if (typeof v !== 'object' || Array.isArray(v)) fail('swarm must be a mapping of limits');
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      if (k === 'enabled') {
        if (typeof x !== 'boolean') fail('swarm.enabled must be true or false');
        out.enabled = x as boolean;
        continue;
      }
      const bounds = Object.hasOwn(SWARM_BOUNDS, k) ? SWARM_BOUNDS[k as keyof typeof SWARM_BOUNDS] : undefined;
      if (!bounds) fail(`swarm.${k} is not a setting (known: enabled, ${Object.keys(SWARM_BOUNDS).join(', ')})`);
      const [min, max] = bounds!;
      const whole = !FRACTIONAL.has(k);
      if (typeof x !== 'number' || !Number.isFinite(x) || (whole && !Number.isInteger(x)) || x < min || x > max) {
        fail(`swarm.${k} must be ${whole ? 'an integer' : 'a number'} from ${min} to ${max}`);
      }
      out[k as keyof typeof SWARM_BOUNDS] = x as number;
    }
  }
  out.enabled = bool(env, 'SWARM_ENABLED', out.enabled);
  return out;
}

const fail = (reason: string): never => {
  throw new ConfigError('CONFIG_PATH', reason);
};

function toolList(v: unknown, where: string): string[] {
  if (v === undefined || v === null) return [];
  // A tool's name (`bash`, `mcp.github.create_issue`) or every tool under a prefix (`mcp.github.*`).
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string' && /^[\w-]+(\.[\w-]+)*(\.\*)?$/.test(x))) {
    return fail(`${where} must be a list of tool names (or prefixes such as mcp.github.*)`);
  }
  return [...new Set(v as string[])];
}

/** The `approvals` section, validated. */
export function approvalPolicies(v: unknown): ApprovalPolicies {
  if (v === undefined || v === null) return { tools: [], roles: {} };
  if (typeof v !== 'object' || Array.isArray(v)) return fail('approvals must be a mapping with `tools` and `roles`');
  const o = v as Record<string, unknown>;
  const unknown = Object.keys(o).find((k) => k !== 'tools' && k !== 'roles');
  if (unknown) fail(`approvals.${unknown} is not a setting (known: tools, roles)`);
  const roles: Record<string, string[]> = {};
  if (o.roles !== undefined && o.roles !== null) {
    if (typeof o.roles !== 'object' || Array.isArray(o.roles)) fail('approvals.roles must map role names to lists of tool names');
    for (const [role, list] of Object.entries(o.roles as Record<string, unknown>)) {
      // A misspelt role would hold nothing, silently.
      if (!ROLE_NAMES.includes(role)) fail(`approvals.roles.${role}: unknown role; known: ${ROLE_NAMES.join(', ')}`);
      roles[role] = toolList(list, `approvals.roles.${role}`);
    }
  }
  return { tools: toolList(o.tools, 'approvals.tools'), roles };
}

/** Reads the file; `named`: the operator set CONFIG_PATH (then the file must exist). */
export function loadFeatures(path: string, named: boolean, env: Env = {}): Features {
  if (!existsSync(path)) {
    if (named) fail(`${path} does not exist`);
    return { approvals: { tools: [], roles: {} }, swarm: swarmLimits(undefined, env), unread: [] };
  }
  let doc: unknown;
  try {
    doc = parse(readFileSync(path, 'utf8'));
  } catch (err) {
    return fail(`${path} is not valid YAML: ${(err as Error).message}`);
  }
  if (doc === null || doc === undefined) return { approvals: { tools: [], roles: {} }, swarm: swarmLimits(undefined, env), unread: [] };
  if (typeof doc !== 'object' || Array.isArray(doc)) return fail(`${path} must be a mapping of sections`);
  const sections = doc as Record<string, unknown>;
  const unknown = Object.keys(sections).find((k) => !KNOWN_SECTIONS.has(k));
  if (unknown) fail(`${path}: unknown section ${JSON.stringify(unknown)} (known: ${[...KNOWN_SECTIONS].join(', ')})`);
  return {
    approvals: approvalPolicies(sections.approvals),
    swarm: swarmLimits(sections.swarm, env),
    unread: Object.keys(sections).filter((k) => UNREAD_SECTIONS.has(k)),
  };
}

/** One start-up warning per section of the file that nothing reads yet. */
export function featureWarnings(cfg: { features: Pick<Features, 'unread'> }): string[] {
  return cfg.features.unread.map((s) => `config/features.yaml: the ${s} section is not read yet (a later issue); its values change nothing`);
}
