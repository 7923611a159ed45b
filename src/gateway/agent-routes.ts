/**
 * /api/v1/agents: the agent catalogue (config/agents, AGENT_CATALOG_DIR) over HTTP.
 * - GET /api/v1/agents: {agents: [definition], count}, by id.
 * - GET /api/v1/agents/{id}: one definition; unknown → 404 `Agent not found: <id>`.
 * - POST /api/v1/agents/{id} {input (object, required), session_id, stream}: runs the agent
 *   as a task (always asynchronous) → 202 {task_id, agent_id, status, created_at} with
 *   X-Workflow-ID and X-Session-ID; the result is read with GET /api/v1/tasks/{task_id}.
 *   The input is checked against the agent's input_schema and then its tool's own schema
 *   (400 `input validation failed: ...`, agents/agent-input.ts checkAgentInput) here and again
 *   by the orchestrator, which submits it as `context.agent` + `context.agent_input`: the same
 *   task POST /api/v1/tasks runs.
 *   `stream: true` adds `stream_url` (the task's SSE stream) to the reply; the run is the same.
 *   Unknown body fields are refused (400 `unknown field: <name>`).
 * Behind admission (authentication and rate limit); the task belongs to the caller, as every
 * task does (another user's task is not visible).
 *
 * `agentPaths` and `agentSchemas` hold the OpenAPI entries, for openapi.ts to spread;
 * `submitAgentRun` is the run itself, for the MCP server (/mcp) too.
 */
import { create, type JsonObject } from '@bufbuild/protobuf';
import { timestampDate } from '@bufbuild/protobuf/wkt';
import { Type } from '@sinclair/typebox';
import type { TemplatedApp } from 'uWebSockets.js';
import { checkAgentInput, type AgentCatalogue, type AgentDefinition } from '../agents/index.js';
import { SubmitTaskRequestSchema, type SubmitTaskResponse } from '../gen/svc/v1/orchestrator_pb.js';
import { badRequest, callAs, callerOfPrincipal, notFound, parseTraceparent, type Principal } from '../kernel/index.js';
import { queueUnavailable } from '../tasks/index.js';
import type { ToolRegistry } from '../tools/index.js';
import { parseJsonBody, route, type Req } from './http.js';
import { admitted, admittedReply, type RouteDeps } from './route-deps.js';

/** The definition as the API shows it (the spec's fields, exactly). */
export function agentJson(a: AgentDefinition) {
  return {
    id: a.id,
    name: a.name,
    description: a.description,
    category: a.category,
    tool: a.tool,
    input_schema: { required: [...a.inputSchema.required], properties: a.inputSchema.properties },
    cost_per_call: a.costPerCall,
  };
}

const BODY_FIELDS = ['input', 'session_id', 'stream'];

function parseExecute(req: Req): { input: unknown; sessionId?: string; stream: boolean } {
  const body = parseJsonBody(req);
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw badRequest('request body must be a JSON object');
  const b = body as Record<string, unknown>;
  const unknown = Object.keys(b).find((k) => !BODY_FIELDS.includes(k));
  if (unknown) throw badRequest(`unknown field: ${unknown}`);
  if (!Object.hasOwn(b, 'input') || b.input === null) throw badRequest('input is required');
  if (b.session_id !== undefined && b.session_id !== null && (typeof b.session_id !== 'string' || b.session_id.length > 255)) {
    throw badRequest('session_id must be a string of at most 255 characters');
  }
  if (b.stream !== undefined && b.stream !== null && typeof b.stream !== 'boolean') throw badRequest('stream must be a boolean');
  return { input: b.input, sessionId: (b.session_id as string | null | undefined) || undefined, stream: b.stream === true };
}

/** The agent id of a path (percent-decoded; a malformed escape names no agent). */
function agentId(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw notFound(`Agent not found: ${raw}`);
  }
}

/**
 * Runs `agent` with `input` as the principal's task, as POST /api/v1/agents/{id} does: the input
 * checked against the agent's input_schema, then its tool's own schema (400 `input validation
 * failed: ...`; without `tools` the tool's schema is left to the orchestrator, which runs both
 * checks again), 503 while the bus is down.
 */
export function submitAgentRun(
  d: { orchestrator: RouteDeps['orchestrator']; bus: RouteDeps['bus']; tools?: ToolRegistry },
  p: Principal,
  agent: AgentDefinition,
  input: unknown,
  o: { sessionId?: string; traceparent?: string } = {},
): Promise<SubmitTaskResponse> {
  checkAgentInput(agent, input, (tool, args) => d.tools?.argumentProblem(tool, args));
  if (!d.bus.connected) throw queueUnavailable();
  const tp = parseTraceparent(o.traceparent);
  return d.orchestrator.submitTask(
    create(SubmitTaskRequestSchema, {
      metadata: {
        userId: p.userId ?? '',
        tenantId: p.tenantId ?? '',
        sessionId: o.sessionId ?? '',
        labels: { agent: agent.id, ...(tp ? { trace_id: tp.traceId, traceparent: o.traceparent! } : {}) },
      },
      query: `Execute agent ${agent.id}`,
      context: { agent: agent.id, agent_input: input as JsonObject },
      options: { traceparent: o.traceparent ?? '' },
    }),
    callAs(callerOfPrincipal(p)),
  );
}

export function registerAgentRoutes(app: TemplatedApp, d: RouteDeps & { agents: AgentCatalogue; tools?: ToolRegistry }): void {
  const { agents, orchestrator } = d;
  route(
    app,
    'get',
    '/api/v1/agents',
    admitted(d.admit, async () => {
      const list = agents.list().map(agentJson);
      return { agents: list, count: list.length };
    }),
    d.ctx,
  );
  route(
    app,
    'get',
    '/api/v1/agents/:id',
    admitted(d.admit, async (req) => agentJson(agents.get(agentId(req.params[0])))),
    d.ctx,
  );
  route(
    app,
    'post',
    '/api/v1/agents/:id',
    admittedReply(d.admit, async (req, p: Principal) => {
      const agent = agents.get(agentId(req.params[0])); // 404 before the body is looked at
      const { input, sessionId, stream } = parseExecute(req);
      const r = await submitAgentRun({ orchestrator, bus: d.bus, tools: d.tools }, p, agent, input, { sessionId, traceparent: req.headers.traceparent });
      return {
        status: 202,
        headers: { 'X-Workflow-ID': r.workflowId, 'X-Session-ID': r.sessionId },
        body: {
          task_id: r.taskId,
          agent_id: agent.id,
          status: 'STATUS_CODE_OK',
          created_at: r.createdAt ? timestampDate(r.createdAt).toISOString() : new Date().toISOString(),
          ...(stream ? { stream_url: `/api/v1/stream/sse?workflow_id=${r.workflowId}` } : {}),
        },
      };
    }),
    d.ctx,
    { body: true },
  );
}

const Property = Type.Object(
  {
    type: Type.Unsafe<string>({ type: 'string', enum: ['string', 'integer', 'number', 'boolean', 'array', 'object'] }),
    description: Type.Optional(Type.String()),
    default: Type.Optional(Type.Unsafe<unknown>({ description: 'Filled in when the field is absent or null' })),
    enum: Type.Optional(Type.Array(Type.Unsafe<unknown>({}), { description: 'The allowed values' })),
    minimum: Type.Optional(Type.Number()),
    maximum: Type.Optional(Type.Number()),
    items: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'What every element must be: {type, description, enum}' })),
    maxItems: Type.Optional(Type.Integer()),
  },
  { additionalProperties: false },
);

const AgentDefinitionSchema = Type.Object({
  id: Type.String({ description: 'e.g. serp-ads' }),
  name: Type.String(),
  description: Type.String(),
  category: Type.String({ description: 'e.g. ads_research, financial, web' }),
  tool: Type.String({ description: 'The underlying tool (GET /api/v1/tools/{name}), run with the input as its arguments' }),
  input_schema: Type.Object({
    required: Type.Array(Type.String()),
    properties: Type.Object({}, { additionalProperties: Property }),
  }),
  cost_per_call: Type.Number({ description: 'Estimated USD per call' }),
});

const AgentExecuteRequest = Type.Object(
  {
    input: Type.Object({}, { additionalProperties: true, description: "The agent's input, checked against its input_schema (defaults filled in)" }),
    session_id: Type.Optional(Type.String({ maxLength: 255, description: 'Session (UUID or external id); generated when omitted' })),
    stream: Type.Optional(Type.Boolean({ description: 'Reserved by the spec; true adds stream_url (the task SSE stream) to the reply. The run is the same.' })),
  },
  { additionalProperties: false },
);

const AgentExecuteResponse = Type.Object({
  task_id: Type.String({ format: 'uuid' }),
  agent_id: Type.String(),
  status: Type.String({ description: 'Submission status: STATUS_CODE_OK' }),
  created_at: Type.String({ format: 'date-time' }),
  stream_url: Type.Optional(Type.String({ description: 'With stream: true: /api/v1/stream/sse?workflow_id=<task_id>' })),
});

const plain = (s: unknown) => JSON.parse(JSON.stringify(s)) as Record<string, unknown>;

export const agentSchemas = {
  AgentDefinition: plain(AgentDefinitionSchema),
  AgentList: plain(Type.Object({ agents: Type.Array(Type.Unsafe({ $ref: '#/components/schemas/AgentDefinition' })), count: Type.Integer() })),
  AgentExecuteRequest: plain(AgentExecuteRequest),
  AgentExecuteResponse: plain(AgentExecuteResponse),
};

const security = [{ ApiKeyAuth: [] }, { BearerAuth: [] }];
const ok = (name: string, description = 'OK') => ({ description, content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } } });
const err = (description: string) => ok('Error', description);
const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'string' }, description: 'Agent id' };

export const agentPaths = {
  '/api/v1/agents': {
    get: {
      summary: 'The agent catalogue: single-purpose agents, each a tool run with a checked input (AGENT_CATALOG_DIR)',
      operationId: 'listAgents',
      security,
      responses: { 200: ok('AgentList') },
    },
  },
  '/api/v1/agents/{id}': {
    get: {
      summary: 'One agent of the catalogue',
      operationId: 'getAgent',
      security,
      parameters: [idParam],
      responses: { 200: ok('AgentDefinition'), 404: err('Agent not found: <id>') },
    },
    post: {
      summary: 'Run an agent (asynchronous): a task whose result is the tool output as JSON text',
      description:
        'The input is checked against input_schema: required fields present and non-null, no unknown field, types, enum values, minimum/maximum, ' +
        "maxItems; defaults are filled in, and the filled input must also fit the tool's own parameters schema (lengths, patterns, item counts). " +
        'The task runs the agent (events WORKFLOW_STARTED, AGENT_STARTED, TOOL_INVOKED, TOOL_OBSERVATION, ' +
        'AGENT_COMPLETED, WORKFLOW_COMPLETED); GET /api/v1/tasks/{task_id} gives result (the output as JSON text), response (parsed), ' +
        'metadata.agent_id, metadata.execution_mode "agent" and the tool cost as the task cost. A tool failure fails the task naming it; an ' +
        'agent running past AGENT_TIMEOUT_SECONDS fails with a timeout error. Same as POST /api/v1/tasks with context.agent and context.agent_input.',
      operationId: 'executeAgent',
      security,
      parameters: [idParam],
      requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/AgentExecuteRequest' } } } },
      responses: {
        202: {
          ...ok('AgentExecuteResponse', 'Accepted'),
          headers: {
            'X-Workflow-ID': { schema: { type: 'string' }, description: 'The task (workflow) id' },
            'X-Session-ID': { schema: { type: 'string' }, description: 'The session the task runs in' },
          },
        },
        400: err(
          'Invalid JSON, input missing, an unknown body field (unknown field: <name>), or invalid input: "input validation failed: missing required field: <field>", ' +
            '"input validation failed: unknown field: <field> (not defined in agent schema)", "input validation failed: field <field>: expected type <type>, got <type>", ..., ' +
            'then the tool\'s own schema: "input validation failed: field <field>: <reason>" (e.g. field keywords: must NOT have fewer than 1 characters)',
        ),
        404: err('Agent not found: <id>, or Session not found'),
      },
    },
  },
};
