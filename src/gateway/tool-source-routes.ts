/**
 * The caller's own tool sources (owner only; another user's are invisible: 404):
 * - POST /api/v1/tools/mcp-servers {name, url, headers?}: an MCP server over streamable HTTP.
 *   The URL passes the SSRF guard; the server is asked for its tools before it is stored (one
 *   that cannot be reached → 400 saying why); its tools appear as `mcp.<name>.<tool>`.
 * - POST /api/v1/tools/openapi {name, spec_url | spec, base_url?, headers?}: an OpenAPI 3
 *   document; each operation with an operationId becomes `openapi.<name>.<operationId>`.
 *   base_url defaults to the document's first server URL.
 * - GET  /api/v1/tools/mcp-servers (the operator's servers too, `owner: "operator"`, no URL),
 *   GET  /api/v1/tools/openapi, DELETE /api/v1/tools/mcp-servers/{name},
 *   DELETE /api/v1/tools/openapi/{name}.
 * Header values are write-only: replies carry `header_names`. A name the owner already uses
 * for that kind → 409; over TOOL_SOURCES_MAX_PER_USER → 403. Unknown body fields → 400.
 */
import type { TemplatedApp } from 'uWebSockets.js';
import { badRequest, notFound, type Principal } from '../kernel/index.js';
import type { SourceInfo, SourceKind, SourceRegistration } from '../toolsources/index.js';
import { parseJsonBody, route, type Req } from './http.js';
import { admitted, type RouteDeps } from './route-deps.js';

const MAX_URL = 2048;

function sourceJson(s: SourceInfo) {
  return {
    name: s.name,
    owner: s.owner,
    ...(s.url ? { url: s.url } : {}),
    ...(s.specUrl ? { spec_url: s.specUrl } : {}),
    ...(s.baseUrl ? { base_url: s.baseUrl } : {}),
    ...(s.title !== undefined ? { title: s.title } : {}),
    ...(s.version !== undefined ? { version: s.version } : {}),
    header_names: s.headerNames,
    tools: s.tools,
    ...(s.createdAt ? { created_at: s.createdAt.toISOString() } : {}),
  };
}

const ownerOf = (p: Principal) => ({ userId: p.userId ?? null, tenantId: p.tenantId ?? null });

function objectBody(req: Req, allowed: readonly string[]): Record<string, unknown> {
  const b = parseJsonBody(req);
  if (!b || typeof b !== 'object' || Array.isArray(b)) throw badRequest('request body must be a JSON object');
  const unknown = Object.keys(b).find((k) => !allowed.includes(k));
  if (unknown) throw badRequest(`unknown field: ${unknown}`);
  return b as Record<string, unknown>;
}

function str(b: Record<string, unknown>, field: string, required: boolean, max = MAX_URL): string | undefined {
  const v = b[field];
  if (v === undefined || v === null) {
    if (required) throw badRequest(`${field} is required`);
    return undefined;
  }
  if (typeof v !== 'string' || !v) throw badRequest(`${field} must be a non-empty string`);
  if (v.length > max) throw badRequest(`${field} must be at most ${max} characters`);
  return v;
}

function headersOf(b: Record<string, unknown>): Record<string, string> {
  const h = b.headers;
  if (h === undefined || h === null) return {};
  if (typeof h !== 'object' || Array.isArray(h)) throw badRequest('headers must be an object of header names to string values');
  for (const [k, v] of Object.entries(h)) if (typeof v !== 'string') throw badRequest(`headers.${k} must be a string`);
  return h as Record<string, string>;
}

/** A source name from a path (percent-decoded; a malformed escape names none). */
function nameOf(raw: string, kind: SourceKind): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw notFound(kind === 'mcp' ? 'MCP server not found' : 'OpenAPI tool source not found');
  }
}

export function registerToolSourceRoutes(app: TemplatedApp, d: RouteDeps & { sources: SourceRegistration }): void {
  const { sources } = d;
  route(
    app,
    'post',
    '/api/v1/tools/mcp-servers',
    admitted(
      d.admit,
      async (req, p) => {
        const b = objectBody(req, ['name', 'url', 'headers']);
        const s = await sources.addMcpServer(ownerOf(p), { name: str(b, 'name', true, 40)!, url: str(b, 'url', true)!, headers: headersOf(b) });
        return sourceJson(s);
      },
      201,
    ),
    d.ctx,
    { body: true },
  );
  route(
    app,
    'post',
    '/api/v1/tools/openapi',
    admitted(
      d.admit,
      async (req, p) => {
        const b = objectBody(req, ['name', 'spec_url', 'spec', 'base_url', 'headers']);
        const spec = b.spec === null ? undefined : b.spec;
        if (spec !== undefined && typeof spec !== 'string' && (typeof spec !== 'object' || Array.isArray(spec)))
          throw badRequest('spec must be the document: a JSON object, or its JSON or YAML text');
        const s = await sources.addOpenApi(ownerOf(p), {
          name: str(b, 'name', true, 40)!,
          specUrl: str(b, 'spec_url', false),
          spec,
          baseUrl: str(b, 'base_url', false),
          headers: headersOf(b),
        });
        return sourceJson(s);
      },
      201,
    ),
    d.ctx,
    { body: true },
  );
  for (const [kind, path, key] of [
    ['mcp', '/api/v1/tools/mcp-servers', 'servers'],
    ['openapi', '/api/v1/tools/openapi', 'sources'],
  ] as const) {
    route(
      app,
      'get',
      path,
      admitted(d.admit, async (_req, p) => {
        const list = (await sources.list(ownerOf(p), kind)).map(sourceJson);
        return { [key]: list, count: list.length };
      }),
      d.ctx,
    );
    route(
      app,
      'del',
      `${path}/:name`,
      admitted(d.admit, async (req, p) => {
        const name = nameOf(req.params[0]!, kind);
        await sources.remove(ownerOf(p), kind, name);
        return { success: true, message: kind === 'mcp' ? `MCP server ${name} removed` : `OpenAPI tool source ${name} removed` };
      }),
      d.ctx,
    );
  }
}

const security = [{ ApiKeyAuth: [] }, { BearerAuth: [] }];
const json = (schema: unknown, description = 'OK') => ({ description, content: { 'application/json': { schema } } });
const errorResponse = (description: string) => json({ $ref: '#/components/schemas/Error' }, description);
const body = (schema: unknown) => ({ required: true, content: { 'application/json': { schema } } });
const headers = {
  type: 'object',
  additionalProperties: { type: 'string' },
  description: 'Request headers sent to the source (e.g. Authorization). Write-only: encrypted at rest, never returned (replies list header_names).',
};
const nameParam = (what: string) => ({ name: 'name', in: 'path', required: true, schema: { type: 'string' }, description: what });
const errors = {
  '400': errorResponse('Invalid request, URL refused by the SSRF guard, server unreachable or document unusable'),
  '401': errorResponse('Authentication required'),
  '403': errorResponse('Tool source limit reached (TOOL_SOURCES_MAX_PER_USER)'),
  '409': errorResponse('The caller already has a source of this kind and name'),
};

export const toolSourceSchemas = {
  ToolSource: {
    type: 'object',
    description: 'A tool source: an MCP server or an OpenAPI document. Never its header values.',
    required: ['name', 'owner', 'header_names', 'tools'],
    properties: {
      name: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,40}$' },
      owner: { type: 'string', enum: ['user', 'operator'], description: 'operator: listed in config/mcp.yaml (its URL is not shown)' },
      url: { type: 'string', description: 'MCP: the server URL' },
      spec_url: { type: 'string', description: 'OpenAPI: where the document was read' },
      base_url: { type: 'string', description: 'OpenAPI: where calls go' },
      title: { type: 'string' },
      version: { type: 'string' },
      header_names: { type: 'array', items: { type: 'string' } },
      tools: { type: 'array', items: { type: 'string' }, description: 'The tool names it gives: mcp.<name>.<tool> or openapi.<name>.<operationId>' },
      created_at: { type: 'string', format: 'date-time' },
    },
  },
};

export const toolSourcePaths = {
  '/api/v1/tools/mcp-servers': {
    post: {
      summary: "Register an MCP server (streamable HTTP) whose tools the caller's tasks and tool calls may use",
      operationId: 'addMcpServer',
      security,
      requestBody: body({
        type: 'object',
        required: ['name', 'url'],
        additionalProperties: false,
        properties: { name: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,40}$' }, url: { type: 'string', format: 'uri' }, headers },
      }),
      responses: { '201': json({ $ref: '#/components/schemas/ToolSource' }, 'Registered'), ...errors },
    },
    get: {
      summary: "The caller's MCP servers and the operator's",
      operationId: 'listMcpServers',
      security,
      responses: {
        '200': json({
          type: 'object',
          properties: { servers: { type: 'array', items: { $ref: '#/components/schemas/ToolSource' } }, count: { type: 'integer' } },
        }),
        '401': errors['401'],
      },
    },
  },
  '/api/v1/tools/mcp-servers/{name}': {
    delete: {
      summary: "Remove one of the caller's MCP servers",
      operationId: 'removeMcpServer',
      security,
      parameters: [nameParam('The server name')],
      responses: {
        '200': json({ type: 'object', properties: { success: { type: 'boolean' }, message: { type: 'string' } } }),
        '401': errors['401'],
        '404': errorResponse('The caller has no MCP server by that name'),
      },
    },
  },
  '/api/v1/tools/openapi': {
    post: {
      summary: 'Register an OpenAPI 3 document: each operation with an operationId becomes a tool',
      operationId: 'addOpenApiSource',
      security,
      requestBody: body({
        type: 'object',
        required: ['name'],
        additionalProperties: false,
        description: 'Exactly one of spec_url and spec',
        properties: {
          name: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,40}$' },
          spec_url: { type: 'string', format: 'uri' },
          spec: { description: 'The document: a JSON object, or its JSON or YAML text' },
          base_url: { type: 'string', format: 'uri', description: "Where calls go; default: the document's first server URL" },
          headers,
        },
      }),
      responses: { '201': json({ $ref: '#/components/schemas/ToolSource' }, 'Registered'), ...errors },
    },
    get: {
      summary: "The caller's OpenAPI tool sources",
      operationId: 'listOpenApiSources',
      security,
      responses: {
        '200': json({
          type: 'object',
          properties: { sources: { type: 'array', items: { $ref: '#/components/schemas/ToolSource' } }, count: { type: 'integer' } },
        }),
        '401': errors['401'],
      },
    },
  },
  '/api/v1/tools/openapi/{name}': {
    delete: {
      summary: "Remove one of the caller's OpenAPI tool sources",
      operationId: 'removeOpenApiSource',
      security,
      parameters: [nameParam('The source name')],
      responses: {
        '200': json({ type: 'object', properties: { success: { type: 'boolean' }, message: { type: 'string' } } }),
        '401': errors['401'],
        '404': errorResponse('The caller has no OpenAPI tool source by that name'),
      },
    },
  },
};
