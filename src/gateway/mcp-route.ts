/**
 * /mcp: this service as an MCP server over streamable HTTP (mcpserver/), authenticated like the
 * REST API (admission: X-API-Key or Authorization: Bearer; 401 `{error}` without), rate limited
 * per key like every request, a list_tasks call also by the task-list burst limit as GET
 * /api/v1/tasks is.
 * - POST: one JSON-RPC message. A request is answered on an SSE stream (progress notifications
 *   of a waited task, then the response); a notification or response gets 202. A batch (a JSON
 *   array) is refused with Invalid Request (-32600, 400): MCP dropped batching in 2025-06-18,
 *   and one POST of many calls would pass admission once.
 * - GET: 405. The server is stateless (a new MCP server and transport per request, no
 *   Mcp-Session-Id), so there is no session whose server-to-client stream could be opened;
 *   every notification travels on the stream of the POST it belongs to.
 * - DELETE: 200; there is no session to end.
 * A caller may have MAX_WAITS_PER_CALLER calls waiting for their tasks at once on this process
 * (one WaitLimit per route registration).
 * Stateless means no MCP state is lost when a gateway goes away and any gateway answers any
 * request. The SDK's transport speaks web Request/Response: the uWS request becomes a Request
 * (its JSON body read by the gateway's one JSON reader), the Response is streamed back chunk by
 * chunk, waiting for the socket to drain when it pushes back; a client that goes away closes
 * the server, which aborts its calls (a waited task runs on). The SDK's server side is loaded
 * by the first request to /mcp, not at start-up.
 *
 * `mcpPaths` holds the OpenAPI entry, for openapi.ts to spread.
 */
import type { TemplatedApp } from 'uWebSockets.js';
import type { AgentCatalogue } from '../agents/index.js';
import { badRequest, lazyImport, toAppError, type Logger } from '../kernel/index.js';
import { WaitLimit, createMcpServer } from '../mcpserver/index.js';
import type { ToolRegistry } from '../tools/index.js';
import { STATUS_TEXT, parseJsonBody, route, type Handler, type Reply, type Req, type RouteIo } from './http.js';
import { mcpFacadeFor } from './mcp-facade.js';
import type { RouteDeps } from './route-deps.js';
import type { StreamHub } from './streams.js';

export interface McpRouteDeps extends RouteDeps {
  hub: StreamHub;
  agents?: AgentCatalogue;
  tools?: ToolRegistry;
  /** The service's version, as the MCP server announces it. */
  version: string;
}

const loadTransport = lazyImport(
  async () => (await import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js')).WebStandardStreamableHTTPServerTransport,
);

const rpcError = (status: number, code: number, message: string, headers: Record<string, string> = {}): Reply => ({
  status,
  headers,
  body: { jsonrpc: '2.0', error: { code, message }, id: null },
});

/** Response headers not passed on: uWS writes its own framing. */
const FRAMING = new Set(['content-length', 'transfer-encoding']);

/** The uWS request as a web Request (a Host that makes no URL is replaced; headers a Request refuses are a 400). */
function webRequest(req: Req, body: Buffer | undefined): Request {
  const query = req.query.toString();
  let url: URL;
  try {
    url = new URL(`${req.url}${query ? `?${query}` : ''}`, `http://${req.headers.host ?? 'localhost'}`);
  } catch {
    url = new URL(req.url, 'http://localhost');
  }
  try {
    return new Request(url, { method: req.method, headers: req.headers, body: body && body.length ? new Uint8Array(body) : undefined });
  } catch (err) {
    throw badRequest(`invalid request: ${(err as Error).message}`);
  }
}

/** A tools/call of list_tasks: admitted under the task-list burst limit too. */
function listsTasks(body: unknown): boolean {
  const m = body as { method?: unknown; params?: { name?: unknown } } | undefined;
  return m?.method === 'tools/call' && m.params?.name === 'list_tasks';
}

/**
 * Writes `response` to the uWS response: whole when it is not a stream, else chunk by chunk
 * with backpressure. An empty answer (202, 200 to DELETE) carries Content-Length: 0: without
 * it the client reads the body until the connection closes.
 */
async function pipe(io: RouteIo, response: Response, extra: Record<string, string>, log: Logger): Promise<void> {
  const { res, state } = io;
  const headers: Record<string, string> = { ...extra };
  response.headers.forEach((v, k) => {
    if (!FRAMING.has(k)) headers[k] = v;
  });
  const head = () => {
    res.writeStatus(STATUS_TEXT[response.status] ?? `${response.status} Status`);
    for (const [k, v] of Object.entries(headers)) res.writeHeader(k, v);
  };
  if (!response.body || !(headers['content-type'] ?? '').startsWith('text/event-stream')) {
    const buf = response.body ? Buffer.from(await response.arrayBuffer()) : undefined;
    if (state.aborted) return;
    res.cork(() => {
      head();
      if (buf?.length) res.end(buf);
      else if (response.status === 204 || response.status === 304) res.endWithoutBody();
      else res.end();
    });
    return;
  }
  if (state.aborted) {
    await response.body.cancel().catch(() => {});
    return;
  }
  const reader = response.body.getReader();
  let wake: (() => void) | undefined;
  const before = state.onAbort;
  state.onAbort = () => {
    before?.();
    wake?.();
    void reader.cancel().catch(() => {});
  };
  res.cork(head);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || state.aborted) break;
      let ok = true;
      res.cork(() => {
        ok = res.write(value);
      });
      if (!ok) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          res.onWritable(() => {
            resolve();
            return true;
          });
        });
        wake = undefined;
      }
    }
  } catch (err) {
    // The head is out: the stream can only be ended (the client sees it end without a response).
    log.warn({ err }, 'mcp: response stream failed');
  }
  if (!state.aborted) res.cork(() => res.end());
}

export function registerMcpRoute(app: TemplatedApp, d: McpRouteDeps): void {
  const waits = new WaitLimit();
  const serve: Handler = async (req, io) => {
    let parsedBody: unknown;
    let parseFailure: unknown;
    const ct = (req.headers['content-type'] ?? '').toLowerCase();
    if (req.method === 'POST' && req.body?.length && ct.includes('json')) {
      try {
        parsedBody = parseJsonBody(req);
      } catch (err) {
        parseFailure = err;
      }
    }
    // Authentication comes first; the body only tells whether the burst limit applies too.
    const { p, headers } = await d.admit(req, { burst: listsTasks(parsedBody) });
    if (parseFailure !== undefined) return rpcError(400, -32700, `Parse error: ${toAppError(parseFailure).message}`, headers);
    if (Array.isArray(parsedBody)) {
      return rpcError(
        400,
        -32600,
        'Invalid Request: batches are not supported (removed from MCP in protocol version 2025-06-18); send one message per request',
        headers,
      );
    }
    if (req.method === 'GET') {
      return rpcError(405, -32000, 'Method not allowed: this MCP server is stateless; it opens no standalone stream (POST requests stream their own answers)', {
        ...headers,
        Allow: 'POST, DELETE',
      });
    }
    const [server, Transport] = await Promise.all([
      createMcpServer(mcpFacadeFor(d, p, { traceparent: req.headers.traceparent }), { name: 'taskorch', version: d.version }, d.log, {
        claimWait: () => waits.claim(p.key),
      }),
      loadTransport(),
    ]);
    const close = () => void server.close().catch((err: unknown) => d.log.debug({ err }, 'mcp: server close failed'));
    io.state.onAbort = close;
    try {
      const transport = new Transport({ sessionIdGenerator: undefined });
      await server.connect(transport);
      if (io.state.aborted) return undefined;
      const response = await transport.handleRequest(
        webRequest(req, parsedBody === undefined ? req.body : undefined),
        parsedBody === undefined ? {} : { parsedBody },
      );
      await pipe(io, response, { ...io.cors, ...headers }, d.log);
    } finally {
      close();
    }
    return undefined;
  };
  route(app, 'post', '/mcp', serve, d.ctx, { body: true });
  route(app, 'get', '/mcp', serve, d.ctx);
  route(app, 'del', '/mcp', serve, d.ctx);
}

const security = [{ ApiKeyAuth: [] }, { BearerAuth: [] }];
const TOOLS =
  'Tools: submit_task {query, mode?, session_id?, context?, wait?, timeout_seconds?}, get_task {task_id}, list_tasks {limit?, offset?, status?}, ' +
  'cancel_task {task_id, reason?}; agent_<id> for every catalogue agent (GET /api/v1/agents; input schema as listed there plus wait?, ' +
  'timeout_seconds?, session_id?; runs the agent and by default waits up to 45 s for its result); tool_<name> for every tool the caller ' +
  'may run (GET /api/v1/tools; executes it at once). Names are published as ^[a-zA-Z0-9_-]{1,64}$ allows (tool_mcp_github_create_issue).';
const rpcBody = { 'application/json': { schema: { type: 'object', description: 'One JSON-RPC 2.0 message (a batch is refused)' } } };

export const mcpPaths = {
  '/mcp': {
    post: {
      summary: 'The MCP server (Model Context Protocol, streamable HTTP transport): this service as a tool belt for MCP clients',
      description:
        'Stateless (no Mcp-Session-Id). Send Accept: application/json, text/event-stream. A request is answered as an SSE stream of JSON-RPC ' +
        'messages: progress notifications of a waited task (when the call carries _meta.progressToken), then the response; notifications ' +
        `and responses alone get 202. ${TOOLS} A tool's failure is a result with isError: true and the message (bad arguments name the ` +
        "field; another user's task is Task not found).",
      operationId: 'mcpPost',
      security,
      requestBody: { required: true, content: rpcBody },
      responses: {
        200: { description: 'SSE stream (text/event-stream) of JSON-RPC messages', content: { 'text/event-stream': { schema: { type: 'string' } } } },
        202: { description: 'Accepted (notifications or responses only)' },
        400: { description: 'Not JSON-RPC, or a batch (JSON-RPC error body: -32700 parse error, -32600 invalid request)' },
        401: { description: 'Authentication required', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
        406: { description: 'Accept must list application/json and text/event-stream' },
        415: { description: 'Content-Type must be application/json' },
        429: { description: 'Rate limit exceeded (a list_tasks call also counts against the task-list burst limit)' },
      },
    },
    get: {
      summary: 'Not offered: the MCP server is stateless and opens no standalone server-to-client stream (405)',
      operationId: 'mcpGet',
      security,
      responses: { 405: { description: 'Method not allowed (Allow: POST, DELETE)' }, 401: { description: 'Authentication required' } },
    },
    delete: {
      summary: 'Ends an MCP session: there is none (stateless), so this only answers 200',
      operationId: 'mcpDelete',
      security,
      responses: { 200: { description: 'OK' }, 401: { description: 'Authentication required' } },
    },
  },
};
