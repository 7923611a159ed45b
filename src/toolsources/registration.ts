/**
 * Users registering their own tool sources: an MCP server reached over streamable HTTP, or an
 * OpenAPI 3 document. Before a source is stored, its URLs pass the SSRF guard, the server is
 * asked for its tools (an MCP server that cannot be reached is refused, saying why) or the
 * document is read and must describe at least one operation with an operationId. Names are
 * unique per owner and kind (409) and may not take an operator server's name; an owner holds
 * at most TOOL_SOURCES_MAX_PER_USER sources. Header values are encrypted at rest and never
 * leave: a `SourceInfo` carries their names.
 */
import { badRequest, conflict, forbidden, notFound, type Logger } from '../kernel/index.js';
import { vetUrl } from '../tools/index.js';
import { loadOpenApiDocument, openApiOperations } from './openapi-doc.js';
import type { ToolSources } from './sources.js';
import type { SourceKind, SourceOwner, StoredSource, ToolSourceStore } from './store.js';
import type { ToolSourcesConfig } from '../config/index.js';

/** Source names as they appear in tool names. */
const NAME = /^[A-Za-z0-9_-]{1,40}$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
const MAX_HEADERS = 20;
const MAX_HEADER_VALUE = 8192;
/** Longest wait for a new MCP server's first tools/list. */
const PROBE_TIMEOUT_MS = 15_000;

export interface McpServerRegistration {
  name: string;
  url: string;
  headers: Record<string, string>;
}

export interface OpenApiRegistration {
  name: string;
  specUrl?: string;
  spec?: unknown;
  baseUrl?: string;
  headers: Record<string, string>;
}

/** What a listing shows of a source: never a header value. */
export interface SourceInfo {
  kind: SourceKind;
  name: string;
  /** `user`: the caller's; `operator`: from config/mcp.yaml (no URL shown). */
  owner: 'user' | 'operator';
  url?: string;
  specUrl?: string;
  baseUrl?: string;
  title?: string;
  version?: string;
  headerNames: string[];
  tools: string[];
  createdAt?: Date;
}

export interface RegistrationDeps {
  store: ToolSourceStore;
  log?: Logger;
  sources: ToolSources;
  settings: ToolSourcesConfig;
  allowHosts: string[];
}

function checkName(name: string): string {
  if (!NAME.test(name)) throw badRequest('name must be 1-40 letters, digits, _ or - (it becomes part of the tool names)');
  return name;
}

function checkHeaders(h: Record<string, string>): Record<string, string> {
  const names = Object.keys(h);
  if (names.length > MAX_HEADERS) throw badRequest(`headers: at most ${MAX_HEADERS}`);
  for (const n of names) {
    if (!HEADER_NAME.test(n)) throw badRequest(`headers: ${JSON.stringify(n)} is not a valid header name`);
    const v = h[n];
    // Never the value in a message.
    if (typeof v !== 'string' || /[\r\n\0]/.test(v) || v.length > MAX_HEADER_VALUE)
      throw badRequest(`headers.${n} must be a string of at most ${MAX_HEADER_VALUE} characters without line breaks`);
  }
  return h;
}

/** An http(s) URL the SSRF guard lets through, else 400 naming the field and why. */
async function checkUrl(field: string, url: string, allowHosts: string[]): Promise<string> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw badRequest(`${field} must be an absolute http or https URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw badRequest(`${field} must be an absolute http or https URL`);
  // Never stored, listed or quoted in errors: credentials go in `headers`.
  if (u.username || u.password) throw badRequest(`${field} must not carry credentials (user:password@); send them in headers`);
  try {
    await vetUrl(u.href, { allowHosts });
  } catch (err) {
    throw badRequest(`${field}: ${(err as Error).message}`);
  }
  return u.href;
}

const toolNames = (kind: SourceKind, name: string, tools: Array<{ name: string }>) => tools.map((t) => `${kind}.${name}.${t.name}`);

export class SourceRegistration {
  constructor(private readonly d: RegistrationDeps) {}

  async addMcpServer(owner: SourceOwner, r: McpServerRegistration): Promise<SourceInfo> {
    const name = checkName(r.name);
    if (this.d.sources.operatorNames().includes(name)) throw conflict(`An MCP server named ${JSON.stringify(name)} already exists (the operator's)`);
    const headers = checkHeaders(r.headers);
    await this.checkRoom(owner, 'mcp', name);
    const url = await checkUrl('url', r.url, this.d.allowHosts);
    const conn = this.d.sources.probe(this.d.sources.defOf({ name, url, headers }));
    let row: StoredSource;
    try {
      let tools;
      try {
        tools = await conn.listTools(AbortSignal.timeout(PROBE_TIMEOUT_MS));
      } catch (err) {
        throw badRequest(`MCP server ${JSON.stringify(name)} could not be used: ${(err as Error).message}`);
      }
      row = await this.d.store.insert(owner, { kind: 'mcp', name, url, headers, tools });
    } finally {
      await conn.close();
    }
    this.d.sources.changed(owner);
    return this.infoOf(row);
  }

  async addOpenApi(owner: SourceOwner, r: OpenApiRegistration): Promise<SourceInfo> {
    const name = checkName(r.name);
    const headers = checkHeaders(r.headers);
    if ((r.specUrl === undefined) === (r.spec === undefined)) throw badRequest('exactly one of spec_url and spec is required');
    await this.checkRoom(owner, 'openapi', name);
    const specUrl = r.specUrl === undefined ? undefined : await checkUrl('spec_url', r.specUrl, this.d.allowHosts);
    const loaded = await loadOpenApiDocument(specUrl ? { specUrl } : { spec: r.spec }, {
      fetch: this.d.sources.fetch,
      maxBytes: this.d.settings.openapi.maxSpecBytes,
    });
    const ops = await openApiOperations(loaded.doc, { log: this.d.log });
    if (!ops.length) throw badRequest('the document describes no operation with an operationId: there is nothing to offer as a tool');
    const declared = serverUrlOf(loaded.doc, specUrl);
    if (r.baseUrl === undefined && !declared) throw badRequest('base_url is required: the document names no server URL');
    const baseUrl = await checkUrl('base_url', r.baseUrl ?? declared!, this.d.allowHosts);
    const row = await this.d.store.insert(owner, {
      kind: 'openapi',
      name,
      specUrl,
      baseUrl,
      spec: loaded.doc,
      headers,
      tools: ops.map((o) => ({ name: o.operationId })),
    });
    this.d.sources.changed(owner);
    return this.infoOf(row);
  }

  /** The owner's sources of a kind; for MCP, the operator's servers too. */
  async list(owner: SourceOwner, kind: SourceKind): Promise<SourceInfo[]> {
    const own = (await this.d.store.list(owner, kind)).map((r) => this.infoOf(r));
    if (kind !== 'mcp') return own;
    const op = (await this.d.sources.operatorServers()).map((s): SourceInfo => ({
      kind: 'mcp',
      name: s.name,
      owner: 'operator',
      headerNames: [],
      tools: s.tools,
    }));
    return [...op, ...own];
  }

  /** Removes the owner's source: 404 when the owner has none by that name (another user's is not theirs to see). */
  async remove(owner: SourceOwner, kind: SourceKind, name: string): Promise<void> {
    const id = await this.d.store.remove(owner, kind, name);
    if (!id) throw notFound(kind === 'mcp' ? 'MCP server not found' : 'OpenAPI tool source not found');
    this.d.sources.dropConnection(id);
    this.d.sources.changed(owner);
  }

  private async checkRoom(owner: SourceOwner, kind: SourceKind, name: string): Promise<void> {
    const { maxPerUser } = this.d.settings;
    const mine = await this.d.store.list(owner);
    if (mine.some((s) => s.kind === kind && s.name === name))
      throw conflict(`${kind === 'mcp' ? 'An MCP server' : 'An OpenAPI tool source'} named ${JSON.stringify(name)} already exists`);
    if (mine.length >= maxPerUser)
      throw forbidden(`tool source limit reached: at most ${maxPerUser} tool sources (MCP servers and OpenAPI documents) per user`);
  }

  private infoOf(r: StoredSource): SourceInfo {
    const info = r.info;
    return {
      kind: r.kind,
      name: r.name,
      owner: 'user',
      ...(r.url ? { url: r.url } : {}),
      ...(r.specUrl ? { specUrl: r.specUrl } : {}),
      ...(r.baseUrl ? { baseUrl: r.baseUrl } : {}),
      ...(info?.title !== undefined ? { title: String(info.title) } : {}),
      ...(info?.version !== undefined ? { version: String(info.version) } : {}),
      headerNames: r.headerNames,
      tools: toolNames(r.kind, r.name, r.tools as Array<{ name: string }>),
      createdAt: r.createdAt,
    };
  }
}

/** The document's first server URL, resolved against where the document came from. */
function serverUrlOf(doc: unknown, specUrl: string | undefined): string | undefined {
  const raw = (doc as { servers?: Array<{ url?: unknown }> })?.servers?.[0]?.url;
  if (typeof raw !== 'string' || !raw || raw.includes('{')) return undefined;
  try {
    return new URL(raw, specUrl).href;
  } catch {
    return undefined;
  }
}
