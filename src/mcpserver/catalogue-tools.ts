/**
 * The catalogue as MCP tools: one `agent_<id>` per catalogue agent (its input schema as GET
 * /api/v1/agents lists it, plus `wait`, `timeout_seconds` and `session_id` where the agent has
 * no field of that name; a call runs the agent as a task and by default waits for its result)
 * and one `tool_<name>` per tool the caller may run (a call executes it at once). The prefixes
 * keep both apart from each other and from the task tools.
 *
 * Names are published as /^[a-zA-Z0-9_-]{1,64}$/ allows: hosts that hand the tools to an
 * OpenAI-compatible model (Claude Desktop, Codex, ...) refuse the whole list over one name
 * outside it, and `tool_mcp.<server>.<tool>` or a long name would be one. The mapping is
 * llm's wireNames over the listing (one to one, so the same listing maps a called name back).
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { wireNames } from '../llm/index.js';
import { checkArguments } from './arguments.js';
import type { McpAgent, McpFacade, McpToolInfo } from './facade.js';
import { errorResult, jsonResult, submittedResult, type ToolEntry } from './results.js';
import { DEFAULT_WAIT_SECONDS, waitChoice, waitedResult, waitProperties } from './waiting.js';

const CONTROLS: Record<string, object> = {
  ...waitProperties(true),
  session_id: { type: 'string', maxLength: 255, description: 'Session the task runs in (UUID or your own id); generated when omitted' },
};
const CONTROL_SCHEMA = { type: 'object', properties: CONTROLS };

interface AgentControls {
  wait?: boolean;
  timeout_seconds?: number;
  session_id?: string;
}

function agentEntry(f: McpFacade, a: McpAgent): ToolEntry {
  const own = a.input_schema.properties;
  // The agent's own field of the same name wins: its input must reach it.
  const controls = Object.keys(CONTROLS).filter((k) => !Object.hasOwn(own, k));
  return {
    tool: {
      name: `agent_${a.id}`,
      title: a.name,
      description:
        `${a.description} (Catalogue agent "${a.id}": runs the tool ${a.tool}, about $${a.cost_per_call} a call, as one of your tasks and ` +
        `waits up to timeout_seconds (default ${DEFAULT_WAIT_SECONDS}) for its result; a task still running then is returned by id for get_task.)`,
      inputSchema: {
        type: 'object',
        properties: { ...own, ...Object.fromEntries(controls.map((k) => [k, CONTROLS[k]])) },
        required: a.input_schema.required,
      },
    },
    async call(args, ctx) {
      const input = { ...args };
      const given: Record<string, unknown> = {};
      for (const k of controls) {
        if (!Object.hasOwn(input, k)) continue;
        given[k] = input[k];
        delete input[k];
      }
      const c = checkArguments<AgentControls>(CONTROL_SCHEMA, given);
      const choice = waitChoice(c, true);
      const submit = () => f.runAgent(a.id, input, { sessionId: c.session_id });
      if (choice.wait) return waitedResult(f, submit, ctx, choice.seconds);
      return submittedResult(f, await submit(), ctx.log);
    },
  };
}

function toolEntry(f: McpFacade, t: McpToolInfo): ToolEntry {
  return {
    tool: { name: `tool_${t.name}`, title: t.name, description: t.description, inputSchema: { ...t.parameters, type: 'object' as const } },
    async call(args, ctx): Promise<CallToolResult> {
      const run = await f.executeTool(t.name, args, ctx.signal);
      if (!run.success) return errorResult(run.error ?? `tool ${t.name} failed`, run.result);
      return jsonResult(run.result, run.text || JSON.stringify(run.result.output ?? {}));
    },
  };
}

/** The agents' and the caller's tools' entries, in listing order (agents, then tools), under their published names. */
export async function catalogueTools(f: McpFacade): Promise<ToolEntry[]> {
  const entries = [...f.agents().map((a) => agentEntry(f, a)), ...(await f.tools()).map((t) => toolEntry(f, t))];
  const names = wireNames(entries.map((e) => e.tool.name));
  return entries.map((e) => ({ ...e, tool: { ...e.tool, name: names.toWire(e.tool.name) } }));
}
