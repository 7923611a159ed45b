/**
 * Tool policies (config/features.yaml, `approvals`): which tool calls a person approves
 * before they run, for every role and per role.
 */

/** The `approvals` section of the feature-flag file (the config module's ApprovalPolicies). */
export interface ToolPolicies {
  tools: readonly string[];
  roles: Readonly<Record<string, readonly string[]>>;
}

/**
 * Whether a policy entry names `tool`: the tool's own name, or `<prefix>.*` for every tool
 * under a prefix (`mcp.github.*`: every tool of the MCP server github; `openapi.*`: every tool
 * of every OpenAPI source).
 */
const names = (entry: string, tool: string) => entry === tool || (entry.endsWith('.*') && tool.startsWith(entry.slice(0, -1)));

/** A call of `tool` by an agent of `role` waits for a person. */
export function needsApproval(p: ToolPolicies | undefined, role: string, tool: string): boolean {
  if (!p) return false;
  return p.tools.some((e) => names(e, tool)) || (Object.hasOwn(p.roles, role) && p.roles[role].some((e) => names(e, tool)));
}

/** Whether any policy exists at all (a task without one never looks). */
export const hasPolicies = (p: ToolPolicies | undefined): boolean => !!p && (p.tools.length > 0 || Object.values(p.roles).some((l) => l.length > 0));
