/**
 * The MCP server side: this service offered to MCP clients (desktop assistants, IDEs) as a
 * tool belt — its tasks, its agent catalogue and the tools a caller may run — over a facade
 * the gateway binds to one caller (gateway/mcp-facade.ts) and serves at /mcp (mcp-route.ts).
 */
export { createMcpServer } from './server.js';
export type { McpServerInfo } from './server.js';
export type { McpAgent, McpFacade, McpToolInfo, SubmittedTask, TaskJson, TaskProgress, TaskSubmission, ToolRun, WaitOptions } from './facade.js';
