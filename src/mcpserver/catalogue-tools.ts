/**
 * The catalogue as MCP tools: one `agent_<id>` per catalogue agent (its input schema exactly
 * as GET /api/v1/agents lists it; a call runs the agent as a task and waits for its result) and
 * one `tool_<name>` per tool the caller may run (a call executes it at once). The prefixes keep
 * both apart from each other and from the task tools; a name MCP does not allow
 * (/^[A-Za-z0-9_.-]{1,128}$/, e.g. a long `mcp.<server>.<tool>`) is left out of the listing.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { McpAgent, McpFacade, McpToolInfo } from './facade.js';
import { DEFAULT_WAIT_SECONDS, errorResult, jsonResult, waitedResult, type ToolEntry } from './results.js';

const MCP_TOOL_NAME_RE = /^[A-Za-z0-9_.-]{1,128}$/;

function agentEntry(f: McpFacade, a: McpAgent): ToolEntry {
  return {
    tool: {
      name: `agent_${a.id}`,
      title: a.name,
      description:
        `${a.description} (Catalogue agent "${a.id}": runs the tool ${a.tool}, about $${a.cost_per_call} a call, as one of your tasks and ` +
        `waits up to ${DEFAULT_WAIT_SECONDS} s for its result; a task still running then is returned by id for get_task.)`,
      inputSchema: { type: 'object', properties: a.input_schema.properties, required: a.input_schema.required },
    },
    async call(args, ctx) {
      return waitedResult(f, await f.runAgent(a.id, args), ctx, DEFAULT_WAIT_SECONDS);
    },
  };
}

function toolEntry(f: McpFacade, t: McpToolInfo): ToolEntry {
  return {
    tool: { name: `tool_${t.name}`, description: t.description, inputSchema: { ...t.parameters, type: 'object' as const } },
    async call(args, ctx): Promise<CallToolResult> {
      const run = await f.executeTool(t.name, args, ctx.signal);
      if (!run.success) return errorResult(run.error ?? `tool ${t.name} failed`, run.result);
      return jsonResult(run.result, run.text || JSON.stringify(run.result.output ?? {}));
    },
  };
}

/** The agents' and the caller's tools' entries, in listing order (agents, then tools); `onSkip` hears of each name left out. */
export async function catalogueTools(f: McpFacade, onSkip: (name: string) => void): Promise<ToolEntry[]> {
  const agents = f.agents().map((a) => agentEntry(f, a));
  const tools = (await f.tools()).map((t) => toolEntry(f, t));
  const out: ToolEntry[] = [];
  for (const e of [...agents, ...tools]) {
    if (MCP_TOOL_NAME_RE.test(e.tool.name)) out.push(e);
    else onSkip(e.tool.name);
  }
  return out;
}
