/**
 * The MCP server side: this service offered to MCP clients (desktop assistants, IDEs) as a
 * tool belt — its tasks, its agent catalogue and the tools a caller may run — over a facade
 * the gateway binds to one caller (gateway/mcp-facade.ts) and serves at /mcp (mcp-route.ts).
 */
export { createMcpServer } from './server.js';
export type { McpServerInfo, McpServerOptions } from './server.js';
export type { McpAgent, McpFacade, McpToolInfo, SubmittedTask, TaskJson, TaskSubmission, ToolRun, WaitOptions } from './facade.js';
export { MAX_WAITS_PER_CALLER, WaitLimit } from './wait-limit.js';
