/**
 * This service as an MCP server, for one caller: the SDK's low-level `Server` (so the tools'
 * input schemas are the plain JSON Schemas of the agent catalogue and the tool registry) with
 * tools/list and tools/call over an McpFacade bound to that caller. It keeps no state between
 * requests: the gateway makes one per HTTP request (stateless streamable HTTP), so any gateway
 * can answer any request.
 *
 * A call's failure is an `isError` result with the public message (bad arguments name the
 * field; another user's task is `Task not found`); an internal error's text is never shown. A
 * name that is no tool of this listing is a JSON-RPC error (InvalidParams), as the spec asks.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { toAppError, type Logger } from '../kernel/index.js';
import { catalogueTools } from './catalogue-tools.js';
import type { McpFacade, TaskProgress } from './facade.js';
import { errorResult, type ToolEntry } from './results.js';
import { taskTools } from './task-tools.js';

export interface McpServerInfo {
  name: string;
  version: string;
}

const INSTRUCTIONS =
  "Tasks run by this service's agents: submit_task (wait: true for the result), get_task, list_tasks, cancel_task. " +
  'agent_<id> tools run one catalogue agent and wait for its result; tool_<name> tools run one tool at once.';

function failure(err: unknown, log: Logger): CallToolResult {
  const e = toAppError(err);
  if (!e.isPublic) log.error({ err }, 'mcp: tool call failed');
  return errorResult(e.isPublic ? e.message : 'Internal server error');
}

export function createMcpServer(facade: McpFacade, info: McpServerInfo, log: Logger): Server {
  const server = new Server(info, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  let listing: Promise<Map<string, ToolEntry>> | undefined;
  const entries = () =>
    (listing ??= catalogueTools(facade, (name) => log.debug({ tool: name }, 'mcp: name not allowed by MCP; left out of tools/list')).then(
      (catalogue) => new Map([...taskTools(facade), ...catalogue].map((e) => [e.tool.name, e])),
    ));

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [...(await entries()).values()].map((e) => e.tool) }));

  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const entry = (await entries()).get(req.params.name);
    if (!entry) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${req.params.name}`);
    const token = extra._meta?.progressToken;
    const onProgress =
      token === undefined
        ? undefined
        : (p: TaskProgress) => {
            void extra
              .sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: p.progress, message: p.message } })
              .catch((err: unknown) => log.debug({ err }, 'mcp: progress notification not sent'));
          };
    try {
      return await entry.call(req.params.arguments ?? {}, { signal: extra.signal, onProgress });
    } catch (err) {
      return failure(err, log);
    }
  });
  return server;
}
