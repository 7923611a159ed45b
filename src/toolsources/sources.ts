/**
 * The tools one owner may use, in one process: the operator's MCP servers (config/mcp.yaml,
 * trusted, shared by everyone) and the owner's own sources (MCP servers and OpenAPI documents
 * in tool_sources). Each becomes ordinary `Tool`s, added to the built-in registry as a view
 * (`ToolRegistry.withExtraTools`), so validation, limits, usage records and events are the
 * registry's and the agent loop's as for any tool.
 *
 * What is kept per process:
 * - one connection per MCP server (the operator's at start, a user's at first use), made
 *   lazily; a user's server through the SSRF-guarded fetch;
 * - an owner's tool list for a short while (OWNER_TTL_MS), dropped at once when any process
 *   says the owner's sources changed (`svc.toolsources.changed`, core NATS);
 * - an MCP server's tool list: the connection's live one, else the last one stored with the
 *   source (so a server that is down still has its tools offered, and a call says it is down).
 * A source that fails never fails the others: it is logged and left out.
 */
import { LRUCache } from 'lru-cache';
import type { McpServerDef, ToolSourcesConfig } from '../config/index.js';
import type { Logger } from '../kernel/index.js';
import { createGuardedFetch, type Tool, type ToolRegistry } from '../tools/index.js';
import { McpConnection, type McpToolInfo } from './mcp-connection.js';
import { mcpTools } from './mcp-tool.js';
import { openApiOperations } from './openapi-doc.js';
import { openApiTools } from './openapi-tool.js';
import type { SourceOwner, StoredSource, ToolSourceStore } from './store.js';

/** How long an owner's tool list is reused without a change notice (a missed notice costs at most this). */
const OWNER_TTL_MS = 30_000;
/** Longest wait for an operator's server to list its tools when a list is first needed. */
const FIRST_LIST_TIMEOUT_MS = 10_000;

/** Change notices between processes (core NATS in the app; absent: this process only). */
export interface SourceChanges {
  publish(owner: string): void;
  subscribe(on: (owner: string) => void): () => void;
}

export interface ToolSourcesDeps {
  store: ToolSourceStore;
  settings: ToolSourcesConfig;
  /** TOOLS_HTTP_ALLOW_HOSTS: what users' sources may reach besides public addresses. */
  allowHosts: string[];
  /** Characters of an OpenAPI answer a model reads at most. */
  maxResponseChars: number;
  log: Logger;
  changes?: SourceChanges;
}

export const ownerKey = (userId: string | null | undefined) => userId ?? 'anonymous';

export class ToolSources {
  /** Users' sources reach the network through the SSRF guard. */
  readonly fetch: typeof fetch;
  private readonly operator: Array<{ def: McpServerDef; conn: McpConnection }>;
  private operatorTools?: Promise<Tool[]>;
  private readonly perOwner = new LRUCache<string, Promise<Tool[]>>({ max: 2000, ttl: OWNER_TTL_MS });
  private readonly conns = new LRUCache<string, McpConnection>({ max: 500, dispose: (c) => void c.close() });
  private readonly openapi = new LRUCache<string, Promise<Tool[]>>({ max: 500 });
  private readonly views = new WeakMap<ToolRegistry, WeakMap<readonly Tool[], ToolRegistry>>();
  private readonly off?: () => void;

  constructor(private readonly d: ToolSourcesDeps) {
    this.fetch = createGuardedFetch({ allowHosts: d.allowHosts });
    this.operator = d.settings.mcp.servers.map((def) => ({
      def,
      conn: new McpConnection(def, { log: d.log, onToolsChanged: () => this.forgetAll() }),
    }));
    this.off = d.changes?.subscribe((owner) => this.perOwner.delete(owner));
  }

  /** Names the operator's servers use (a user's server may not take one). */
  operatorNames(): string[] {
    return this.operator.map((o) => o.def.name);
  }

  /** The operator's servers as a listing shows them (never their URLs, commands or headers). */
  async operatorServers(): Promise<Array<{ name: string; tools: string[] }>> {
    const tools = await this.operatorToolList();
    return this.operator.map(({ def }) => ({ name: def.name, tools: tools.filter((t) => t.name.startsWith(`mcp.${def.name}.`)).map((t) => t.name) }));
  }

  /** `base` with the tools the owner may use added (the same view while nothing changed). */
  async registryFor(base: ToolRegistry, userId?: string | null): Promise<ToolRegistry> {
    const tools = await this.toolsFor(userId);
    if (!tools.length) return base;
    let byList = this.views.get(base);
    if (!byList) this.views.set(base, (byList = new WeakMap()));
    let view = byList.get(tools);
    if (!view) byList.set(tools, (view = base.withExtraTools(tools)));
    return view;
  }

  /** The operator's tools and the owner's own. */
  toolsFor(userId?: string | null): Promise<Tool[]> {
    const key = ownerKey(userId);
    let p = this.perOwner.get(key);
    if (!p) {
      p = this.load(userId ?? null);
      this.perOwner.set(key, p);
      p.catch(() => this.perOwner.delete(key));
    }
    return p;
  }

  /** Tells every process that the owner's sources changed (this one at once). */
  changed(owner: SourceOwner): void {
    const key = ownerKey(owner.userId);
    this.perOwner.delete(key);
    this.d.changes?.publish(key);
  }

  /** Ends a removed source's connection. */
  dropConnection(id: string): void {
    this.conns.delete(id);
  }

  /** A user's MCP server as a connection definition (its limits are the service's defaults). */
  defOf(s: Pick<StoredSource, 'name' | 'url' | 'headers'>): McpServerDef {
    const { mcp } = this.d.settings;
    return { name: s.name, transport: { kind: 'http', url: s.url!, headers: s.headers }, timeoutMs: mcp.timeoutMs, rateLimitPerMinute: mcp.rateLimitPerMinute };
  }

  /** A connection to a user's MCP server through the guard, not kept (registration's first look). */
  probe(def: McpServerDef): McpConnection {
    return new McpConnection(def, { fetch: this.fetchFor(def), log: this.d.log });
  }

  /**
   * The guarded fetch of one user's server: its registered headers count as secrets, dropped
   * on a redirect to another origin like Authorization.
   */
  private fetchFor(def: McpServerDef): typeof fetch {
    const secretHeaders = def.transport.kind === 'http' ? Object.keys(def.transport.headers) : [];
    return secretHeaders.length ? createGuardedFetch({ allowHosts: this.d.allowHosts, secretHeaders }) : this.fetch;
  }

  /** Keeps a connection registration already opened, for the source it became. */
  adopt(id: string, conn: McpConnection): void {
    this.conns.set(id, conn);
  }

  async close(): Promise<void> {
    this.off?.();
    const all = [...this.conns.values(), ...this.operator.map((o) => o.conn)];
    this.conns.clear();
    await Promise.allSettled(all.map((c) => c.close()));
  }

  private forgetAll(): void {
    this.operatorTools = undefined;
    this.perOwner.clear();
  }

  private async load(userId: string | null): Promise<Tool[]> {
    const [op, rows] = await Promise.all([this.operatorToolList(), this.d.store.list({ userId, tenantId: null })]);
    const own = await Promise.all(rows.map((r) => (r.kind === 'mcp' ? this.userMcpTools(r) : this.userOpenApiTools(r))));
    return [...op, ...own.flat()];
  }

  private operatorToolList(): Promise<Tool[]> {
    return (this.operatorTools ??= Promise.all(
      this.operator.map(async ({ def, conn }) => {
        try {
          const infos = conn.knownTools() ?? (await conn.listTools(AbortSignal.timeout(FIRST_LIST_TIMEOUT_MS)));
          return mcpTools(conn, def, infos, { rateLimitKey: `mcp.${def.name}` });
        } catch (err) {
          // Listed again at the next owner's load (the connection's backoff keeps that cheap).
          this.d.log.warn({ server: def.name, err: (err as Error).message }, 'MCP server of the operator: tools not listed');
          this.operatorTools = undefined;
          return [];
        }
      }),
    ).then((l) => l.flat()));
  }

  private connOf(s: StoredSource): McpConnection {
    let c = this.conns.get(s.id);
    if (!c) {
      const def = this.defOf(s);
      c = new McpConnection(def, {
        fetch: this.fetchFor(def),
        log: this.d.log,
        onToolsChanged: (tools) => void this.storeTools(s, tools),
      });
      this.conns.set(s.id, c);
    }
    return c;
  }

  private userMcpTools(s: StoredSource): Tool[] {
    const conn = this.connOf(s);
    const live = conn.knownTools();
    if (!live) {
      // Offer the stored list now; learn the live one in the background (stored if it differs).
      conn.listTools().then(
        (tools) => this.storeTools(s, tools),
        () => undefined,
      );
    }
    // Calls find the source's connection when they run: an evicted one is made again.
    const via = {
      callTool: (name: string, args: Record<string, unknown>, signal: AbortSignal) => this.connOf(s).callTool(name, args, signal),
      serverVersion: () => this.connOf(s).serverVersion(),
    };
    return mcpTools(via, this.defOf(s), live ?? (s.tools as McpToolInfo[]), { rateLimitKey: `src.${s.id}` });
  }

  private async storeTools(s: StoredSource, tools: McpToolInfo[]): Promise<void> {
    if (JSON.stringify(tools) === JSON.stringify(s.tools)) return;
    s.tools = tools;
    try {
      await this.d.store.setTools(s.id, tools);
    } catch (err) {
      this.d.log.warn({ source: s.name, err: (err as Error).message }, 'tool source: new tool list not stored');
    }
    this.changed(s.owner);
  }

  private userOpenApiTools(s: StoredSource): Promise<Tool[]> {
    const key = `${s.id}:${s.updatedAt.getTime()}`;
    const cached = this.openapi.get(key);
    if (cached) return cached;
    const { openapi, mcp } = this.d.settings;
    const p = openApiOperations(s.spec as object, { log: this.d.log })
      .then((ops) =>
        openApiTools(
          {
            name: s.name,
            baseUrl: s.baseUrl!,
            headers: s.headers,
            timeoutMs: openapi.timeoutMs,
            rateLimitPerMinute: mcp.rateLimitPerMinute,
            rateLimitKey: `src.${s.id}`,
            version: String((s.spec as { info?: { version?: unknown } })?.info?.version ?? ''),
          },
          ops,
          { fetch: this.fetch, maxResponseChars: this.d.maxResponseChars },
        ),
      )
      .catch((err: Error) => {
        this.openapi.delete(key);
        this.d.log.warn({ source: s.name, err: err.message }, 'OpenAPI tool source: document not usable');
        return [];
      });
    this.openapi.set(key, p);
    return p;
  }
}
