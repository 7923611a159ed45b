/**
 * /api/v1/tools: the tool registry over HTTP.
 * - GET /api/v1/tools (optional `category`): the tools a client may call (the built-in ones, the
 *   operator's MCP servers' and the caller's own tool sources': `mcp.<server>.<tool>`,
 *   `openapi.<name>.<operationId>`); dangerous tools are never listed.
 * - GET /api/v1/tools/{name}: one tool; unknown → 404, dangerous → 403 `Tool not available via
 *   direct execution`.
 * - POST /api/v1/tools/{name}/execute {arguments (object, required), session_id}: runs it
 *   within 120 s. Only `session_id` (the caller's session, resolved to its workspace) and the
 *   caller's `user_id` reach the tool. Arguments are validated against the tool's schema (400
 *   naming the field); over the tool's rate limit → 429. The result is the spec's execution
 *   result, `success: false` with the error for what the tool reports (a page that answered
 *   404, a Python exception, its time limit); 502 `tool backend unavailable` only when the
 *   service the tool depends on is down or not configured (a search API; web_search without
 *   WEB_SEARCH_PROVIDER). Unknown body fields are refused (400). Usage is recorded
 *   asynchronously by the registry.
 */
import type { TemplatedApp } from 'uWebSockets.js';
import { badRequest, notFound, type Principal } from '../kernel/index.js';
import type { ToolExecution, ToolInfo, ToolRegistry } from '../tools/index.js';
import { parseJsonBody, route, type Req } from './http.js';
import { admitted, admittedReply, requireSession, type RouteDeps } from './route-deps.js';

/** The longest a direct execution may take (the spec's tool execution HTTP timeout). */
export const TOOL_EXECUTE_TIMEOUT_MS = 120_000;

export function toolJson(t: ToolInfo) {
  return {
    name: t.name,
    description: t.description,
    category: t.category,
    version: t.version,
    parameters: t.parameters,
    timeout_seconds: Math.min(t.timeoutSeconds, TOOL_EXECUTE_TIMEOUT_MS / 1000),
    cost_per_use: t.costPerUse,
  };
}

export function executionJson(e: ToolExecution) {
  return {
    success: e.success,
    output: e.output,
    text: e.text,
    error: e.error,
    metadata: e.metadata,
    execution_time_ms: e.executionTimeMs,
    usage: { tokens: e.tokens, cost_usd: e.costUsd },
  };
}

function parseExecute(req: Req): { args: unknown; sessionId?: string } {
  const body = parseJsonBody(req);
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw badRequest('request body must be a JSON object');
  const b = body as Record<string, unknown>;
  if (!Object.hasOwn(b, 'arguments')) throw badRequest('arguments is required');
  const args = b.arguments;
  if (!args || typeof args !== 'object' || Array.isArray(args)) throw badRequest('arguments must be a JSON object');
  const unknown = Object.keys(b).find((k) => k !== 'arguments' && k !== 'session_id');
  if (unknown) throw badRequest(`unknown field: ${unknown}`);
  if (b.session_id !== undefined && b.session_id !== null && (typeof b.session_id !== 'string' || b.session_id.length > 255)) {
    throw badRequest('session_id must be a string of at most 255 characters');
  }
  return { args, sessionId: (b.session_id as string | null | undefined) || undefined };
}

/** The tool name of a path (percent-decoded; a malformed escape names no tool). */
function toolName(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw notFound(`Tool not found: ${raw}`);
  }
}

export function registerToolRoutes(app: TemplatedApp, d: RouteDeps & { toolsFor: (p: Principal) => Promise<ToolRegistry> }): void {
  const { toolsFor } = d;
  route(
    app,
    'get',
    '/api/v1/tools',
    admitted(d.admit, async (req, p) => {
      const category = req.query.get('category') || undefined;
      return (await toolsFor(p)).list(category).map(toolJson);
    }),
    d.ctx,
  );
  route(
    app,
    'get',
    '/api/v1/tools/:name',
    admitted(d.admit, async (req, p) => toolJson((await toolsFor(p)).describe(toolName(req.params[0])))),
    d.ctx,
  );
  route(
    app,
    'post',
    '/api/v1/tools/:name/execute',
    admittedReply(d.admit, async (req, p: Principal) => {
      const name = toolName(req.params[0]);
      const tools = await toolsFor(p);
      tools.describe(name); // 404 / 403 before the body is looked at
      const { args, sessionId } = parseExecute(req);
      const session = sessionId ? await requireSession(d.domains.sessionLookup, sessionId, p) : undefined;
      const e = await tools.execute(name, args, {
        sessionId: session?.id,
        userId: p.userId ?? undefined,
        tenantId: p.tenantId ?? undefined,
        maxTimeoutMs: TOOL_EXECUTE_TIMEOUT_MS,
      });
      if (!e.success && (e.errorKind === 'backend' || e.errorKind === 'not_configured'))
        return { status: 502, body: { error: `tool backend unavailable: ${e.error}` } };
      return { status: 200, body: executionJson(e) };
    }),
    d.ctx,
    { body: true },
  );
}
