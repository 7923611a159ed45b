/**
 * The feature-flag file (CONFIG_PATH, default ./config/features.yaml). Only its `approvals`
 * section is read today: which tools a person must approve before they run, for every role
 * and per role. Its `swarm` section configures the swarm workflow of a later issue and is
 * not read yet (start-up says so when the file has one). A missing file at the default path
 * means no tool policies; a missing or malformed file at a path the operator named fails
 * start-up naming CONFIG_PATH.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { ROLE_NAMES } from '../kernel/index.js';
import { ConfigError } from './errors.js';

export const DEFAULT_FEATURES_PATH = './config/features.yaml';

/** Tools a person approves before they run (tool policies). */
export interface ApprovalPolicies {
  /** For every role. */
  tools: readonly string[];
  /** Per role (kernel role names such as `developer`). */
  roles: Readonly<Record<string, readonly string[]>>;
}

export interface Features {
  approvals: ApprovalPolicies;
  /** Sections the file has that nothing reads yet (today: `swarm`). */
  unread: readonly string[];
}

const KNOWN_SECTIONS = new Set(['approvals', 'swarm']);
const UNREAD_SECTIONS = new Set(['swarm']);

const fail = (reason: string): never => {
  throw new ConfigError('CONFIG_PATH', reason);
};

function toolList(v: unknown, where: string): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string' && /^[\w-]+$/.test(x))) {
    return fail(`${where} must be a list of tool names`);
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
export function loadFeatures(path: string, named: boolean): Features {
  if (!existsSync(path)) {
    if (named) fail(`${path} does not exist`);
    return { approvals: { tools: [], roles: {} }, unread: [] };
  }
  let doc: unknown;
  try {
    doc = parse(readFileSync(path, 'utf8'));
  } catch (err) {
    return fail(`${path} is not valid YAML: ${(err as Error).message}`);
  }
  if (doc === null || doc === undefined) return { approvals: { tools: [], roles: {} }, unread: [] };
  if (typeof doc !== 'object' || Array.isArray(doc)) return fail(`${path} must be a mapping of sections`);
  const sections = doc as Record<string, unknown>;
  const unknown = Object.keys(sections).find((k) => !KNOWN_SECTIONS.has(k));
  if (unknown) fail(`${path}: unknown section ${JSON.stringify(unknown)} (known: ${[...KNOWN_SECTIONS].join(', ')})`);
  return { approvals: approvalPolicies(sections.approvals), unread: Object.keys(sections).filter((k) => UNREAD_SECTIONS.has(k)) };
}

/** One start-up warning per section of the file that nothing reads yet. */
export function featureWarnings(cfg: { features: Pick<Features, 'unread'> }): string[] {
  return cfg.features.unread.map((s) => `config/features.yaml: the ${s} section is not read yet (a later issue); its values change nothing`);
}
