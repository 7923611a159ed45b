/**
 * Role presets (`context.role`): the tools each role's agents may call. Data, not code; the
 * spec's table. Roles whose tools this edition does not have are refused at submission with
 * the reason, never run with a different tool set.
 */
import { badRequest } from './errors.js';

export interface RolePreset {
  name: string;
  /** Tool names; `*` = every tool that is not dangerous. */
  tools: readonly string[];
  /** The role may use dangerous tools it lists (developer: bash). */
  allowDangerous: boolean;
}

const PRESETS: ReadonlyMap<string, RolePreset> = new Map(
  (
    [
      ['generalist', ['*'], false],
      ['analysis', ['web_search', 'file_read'], false],
      ['research', ['web_search', 'web_fetch', 'web_subpage_fetch', 'web_crawl'], false],
      ['writer', ['file_read'], false],
      ['critic', ['file_read'], false],
      ['developer', ['file_read', 'file_write', 'file_list', 'bash', 'python_executor'], true],
    ] as const
  ).map(([name, tools, allowDangerous]) => [name, { name, tools, allowDangerous }]),
);

/** Roles of the spec this edition cannot run, with why. */
const UNAVAILABLE: ReadonlyMap<string, string> = new Map([
  ['browser_use', 'role browser_use needs browser tools, which this edition does not have'],
  ['ads_research', 'role ads_research is available in the hosted edition only'],
  ['financial_news', 'role financial_news is available in the hosted edition only'],
  ['data_analytics', 'role data_analytics needs vendor adapters, none is configured'],
]);

export const DEFAULT_ROLE = 'generalist';
export const ROLE_NAMES = [...PRESETS.keys()];

/** The preset of `role` (default generalist); 400 for an unknown or unavailable role. */
export function rolePreset(role: unknown): RolePreset {
  if (role === undefined || role === null || role === '') return PRESETS.get(DEFAULT_ROLE)!;
  if (typeof role !== 'string') throw badRequest('context.role must be a string');
  const p = PRESETS.get(role);
  if (p) return p;
  const why = UNAVAILABLE.get(role);
  if (why) throw badRequest(why);
  throw badRequest(`unknown role: ${role}; known: ${ROLE_NAMES.join(', ')}`);
}

/** The tools a role may call among `available` (the registry's names, with their danger flag). */
export function roleTools(p: RolePreset, available: readonly { name: string; dangerous: boolean }[]): string[] {
  if (p.tools.includes('*')) return available.filter((t) => !t.dangerous).map((t) => t.name);
  const known = new Set(available.map((t) => t.name));
  return p.tools.filter((n) => known.has(n));
}
