/**
 * An MCP server's tools as our `Tool`s (`mcp.<server>.<tool>`), so the registry validates,
 * limits, times and records them like the built-in ones. A call goes through the server's
 * `McpConnection`; it may run again after a crash only when the server marks the tool
 * read-only (`annotations.readOnlyHint`).
 */
import type { McpServerDef } from '../config/index.js';
import type { Tool } from '../tools/index.js';
import type { McpConnection, McpToolInfo } from './mcp-connection.js';

const MAX_DESCRIPTION = 1000;

/** What the tools need of a connection (a caller may look the connection up per call). */
export type McpToolCaller = Pick<McpConnection, 'callTool'> & { serverVersion?(): string | undefined };

export function mcpTools(conn: McpToolCaller, def: McpServerDef, tools: McpToolInfo[], o: { rateLimitKey: string }): Tool[] {
  return tools.map((t): Tool => ({
    name: `mcp.${def.name}.${t.name}`,
    description: t.description.trim() ? t.description.slice(0, MAX_DESCRIPTION) : `${t.name} on MCP server ${def.name}`,
    category: 'mcp',
    version: conn.serverVersion?.() ?? 'unknown',
    parameters: t.inputSchema,
    timeoutMs: def.timeoutMs,
    costPerUse: 0,
    dangerous: false,
    retryable: t.readOnly,
    ...(def.rateLimitPerMinute > 0 ? { rateLimit: { perMinute: def.rateLimitPerMinute, key: o.rateLimitKey } } : {}),
    run: (args, ctx) => conn.callTool(t.name, args, ctx.signal),
  }));
}
