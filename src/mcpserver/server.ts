/**
 * This service as an MCP server, for one caller: the SDK's low-level `Server` (so the tools'
 * input schemas are the plain JSON Schemas of the agent catalogue and the tool registry) with
 * tools/list and tools/call over an McpFacade bound to that caller. It keeps no state between
 * requests: the gateway makes one per HTTP request (stateless streamable HTTP), so any gateway
 * can answer any request.
 *
 * The four task tools are always listed and never wait for the catalogue: when the caller's
 * tools cannot be listed (a tool source down, the database away) the failure is logged and
 * the task tools are listed alone. A call's failure is an `isError` result with the public
 * message (bad arguments name the field; another user's task is `Task not found`); an internal
 * error's text is never shown. A name that is no tool of this listing is a JSON-RPC error
 * (InvalidParams), as the spec asks.
 *
 * The SDK's server side (with zod) is loaded by the first request to /mcp, not at start-up: a
 * service nobody uses as an MCP server never holds it.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { lazyImport, toAppError, type Logger } from '../kernel/index.js';
import { catalogueTools } from './catalogue-tools.js';
import type { McpFacade } from './facade.js';
import { errorResult, type TaskProgress, type ToolEntry } from './results.js';
import { taskTools } from './task-tools.js';
import { HEARTBEAT_MS } from './waiting.js';

export interface McpServerInfo {
  name: string;
  version: string;
}

export interface McpServerOptions {
  /** Takes one of the caller's concurrent waits (WaitLimit.claim); throws when none is left. */
  claimWait: () => () => void;
  /** Longest silence of a waiting call with a progressToken; default HEARTBEAT_MS. */
  heartbeatMs?: number;
}

const INSTRUCTIONS =
  "Tasks run by this service's agents: submit_task (wait: true for the result), get_task, list_tasks, cancel_task. " +
  'agent_<id> tools run one catalogue agent and by default wait for its result; tool_<name> tools run one tool at once. ' +
  'A wait ends after timeout_seconds (default 45) with the task id and status; the task runs on: poll get_task.';

const loadSdk = lazyImport(() => Promise.all([import('@modelcontextprotocol/sdk/server/index.js'), import('@modelcontextprotocol/sdk/types.js')]));

function failure(err: unknown, log: Logger): CallToolResult {
  const e = toAppError(err);
  if (!e.isPublic) log.error({ err }, 'mcp: tool call failed');
  return errorResult(e.isPublic ? e.message : 'Internal server error');
}

export async function createMcpServer(facade: McpFacade, info: McpServerInfo, log: Logger, o: McpServerOptions): Promise<Server> {
  const [{ Server }, { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError }] = await loadSdk();
  const server = new Server(info, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  const tasks = new Map(taskTools(facade).map((e) => [e.tool.name, e]));
  let listing: Promise<Map<string, ToolEntry> | undefined> | undefined;
  /** The catalogue's entries by published name; undefined when they cannot be listed now. */
  const catalogue = () =>
    (listing ??= catalogueTools(facade).then(
      (entries) => new Map(entries.map((e) => [e.tool.name, e])),
      (err: unknown) => {
        log.warn({ err }, 'mcp: the catalogue cannot be listed; listing the task tools alone');
        return undefined;
      },
    ));

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [...tasks.values(), ...((await catalogue())?.values() ?? [])].map((e) => e.tool),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const name = req.params.name;
    let entry = tasks.get(name);
    if (!entry) {
      const entries = await catalogue();
      if (!entries) return errorResult(`The tools cannot be listed right now, so ${name} cannot run; try again later`);
      entry = entries.get(name);
    }
    if (!entry) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
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
      return await entry.call(req.params.arguments ?? {}, {
        signal: extra.signal,
        onProgress,
        claimWait: o.claimWait,
        heartbeatMs: o.heartbeatMs ?? HEARTBEAT_MS,
        log,
      });
    } catch (err) {
      return failure(err, log);
    }
  });
  return server;
}
