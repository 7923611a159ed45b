/**
 * The tools one owner may use, in one process: the operator's MCP servers (config/mcp.yaml,
 * trusted, shared by everyone) and the owner's own sources (MCP servers and OpenAPI documents
 * in tool_sources). Each becomes ordinary `Tool`s, added to the built-in registry as a view
 * (`ToolRegistry.withExtraTools`), so validation, limits, usage records and events are the
 * registry's and the agent loop's as for any tool.
 *
 * What is kept per process:
 * - one connection per MCP server (the operator's at start, a user's at first use), made
 *   lazily; a user's server through the SSRF-guarded fetch; a user's connection unused for
 *   CONNECTION_IDLE_MS, or whose source is gone, is closed;
 * - an owner's tool list for a short while (OWNER_TTL_MS), dropped at once when any process
 *   says the owner's sources changed (`svc.toolsources.changed`, core NATS);
 * - an MCP server's tool list: the connection's live one, else the last one known (stored
 *   with a user's source; the operator's in memory), so a server that is down still has its
 *   tools offered and a call says it is down.
 * A source that fails never fails the others, nor the owner's tool list: it is logged and left
 * out. Tool names are unique: a later duplicate (a server listing a tool twice, a user's
 * server named like one the operator added since) is left out and logged.
 */
import { LRUCache } from 'lru-cache';
import stableStringify from 'safe-stable-stringify';
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
/** Longest wait for an operator's server to list its tools the first time a process needs them. */
const FIRST_LIST_TIMEOUT_MS = 10_000;
/** A user's server connection unused this long is closed (made again at its next call). */
const CONNECTION_IDLE_MS = 15 * 60_000;

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
  /** Characters of an OpenAPI answer or an MCP result a model reads at most. */
  maxResponseChars: number;
  log: Logger;
  changes?: SourceChanges;
}

export const ownerKey = (userId: string | null | undefined) => userId ?? 'anonymous';

interface Operator {
  def: McpServerDef;
  conn: McpConnection;
  /** Its tools as last listed (kept while it is down). */
  last?: Tool[];
  /** A first listing was awaited; later ones run in the background. */
  tried?: boolean;
}

export class ToolSources {
  /** Users' sources reach the network through the SSRF guard. */
  readonly fetch: typeof fetch;
  private readonly operator: Operator[];
  private operatorTools?: Promise<Tool[]>;
  private readonly perOwner = new LRUCache<string, Promise<Tool[]>>({ max: 2000, ttl: OWNER_TTL_MS });
  private readonly conns = new LRUCache<string, { conn: McpConnection; owner: string }>({
    max: 500,
    ttl: CONNECTION_IDLE_MS,
    updateAgeOnGet: true,
    dispose: (c) => void c.conn.close(),
  });
  private readonly openapi = new LRUCache<string, Promise<Tool[]>>({ max: 500 });
  private readonly views = new WeakMap<ToolRegistry, WeakMap<readonly Tool[], ToolRegistry>>();
  private readonly off?: () => void;

  constructor(private readonly d: ToolSourcesDeps) {
    this.fetch = createGuardedFetch({ allowHosts: d.allowHosts });
    this.operator = d.settings.mcp.servers.map((def) => ({
      def,
      conn: new McpConnection(def, { log: d.log, maxResultChars: d.maxResponseChars, onToolsChanged: () => this.forgetAll() }),
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
    if (!view) {
      // Names are prefixed (mcp., openapi.) and made unique in `load`; a built-in of the same name still wins.
      const extra = tools.filter((t) => !base.get(t.name));
      byList.set(tools, (view = base.withExtraTools(extra)));
    }
    return view;
  }

  /** The operator's tools and the owner's own. */
  toolsFor(userId?: string | null): Promise<Tool[]> {
    const key = ownerKey(userId);
    const cached = this.perOwner.get(key);
    if (cached) return cached;
    const p = this.load(userId ?? null);
    this.perOwner.set(key, p);
    p.catch(() => {
      if (this.perOwner.get(key) === p) this.perOwner.delete(key);
    });
    return p;
  }

  /** Tells every process that the owner's sources changed (this one at once). */
  changed(owner: SourceOwner): void {
    const key = ownerKey(owner.userId);
    this.perOwner.delete(key);
    try {
      this.d.changes?.publish(key);
    } catch (err) {
      // The bus is closing or down: the other processes' lists expire within OWNER_TTL_MS.
      this.d.log.warn({ err: (err as Error).message }, 'tool sources: change notice not sent');
    }
  }

  /** Ends a removed source's connection. */
  dropConnection(id: string): void {
    this.conns.delete(id);
  }

  /** A user's MCP server as a connection definition (its limits are the service's defaults). */
  defOf(s: { name: string; url: string; headers: Record<string, string> }): McpServerDef {
    const { mcp } = this.d.settings;
    return { name: s.name, transport: { kind: 'http', url: s.url, headers: s.headers }, timeoutMs: mcp.timeoutMs, rateLimitPerMinute: mcp.rateLimitPerMinute };
  }

  /** A connection to a user's MCP server through the guard, not kept (registration's first look). */
  probe(def: McpServerDef): McpConnection {
    return new McpConnection(def, { fetch: this.fetchFor(def), log: this.d.log, maxResultChars: this.d.maxResponseChars });
  }

  async close(): Promise<void> {
    this.off?.();
    const all = [...[...this.conns.values()].map((c) => c.conn), ...this.operator.map((o) => o.conn)];
    this.conns.clear();
    await Promise.allSettled(all.map((c) => c.close()));
  }

  /**
   * The guarded fetch of one user's server: its registered headers count as secrets, dropped
   * on a redirect to another origin like Authorization.
   */
  private fetchFor(def: McpServerDef): typeof fetch {
    const secretHeaders = def.transport.kind === 'http' ? Object.keys(def.transport.headers) : [];
    return secretHeaders.length ? createGuardedFetch({ allowHosts: this.d.allowHosts, secretHeaders }) : this.fetch;
  }

  private forgetAll(): void {
    this.operatorTools = undefined;
    this.perOwner.clear();
  }

  private async load(userId: string | null): Promise<Tool[]> {
    const owner = ownerKey(userId);
    const [op, rows] = await Promise.all([this.operatorToolList(), this.d.store.list({ userId, tenantId: null })]);
    // Connections of this owner's sources that are gone (removed through another process).
    const ids = new Set(rows.map((r) => r.id));
    for (const [id, c] of this.conns.entries()) if (c.owner === owner && !ids.has(id)) this.conns.delete(id);
    const own = await Promise.all(
      rows.map(async (r) => {
        try {
          return r.kind === 'mcp' ? this.userMcpTools(r) : await this.userOpenApiTools(r);
        } catch (err) {
          this.d.log.warn({ source: r.name, kind: r.kind, err: (err as Error).message }, 'tool source left out');
          return [];
        }
      }),
    );
    return this.unique([...op, ...own.flat()]);
  }

  /** The first tool of each name; later ones are left out and logged. */
  private unique(tools: Tool[]): Tool[] {
    const seen = new Set<string>();
    return tools.filter((t) => {
      if (!seen.has(t.name)) return seen.add(t.name);
      this.d.log.warn({ tool: t.name }, 'tool sources: a second tool of this name left out');
      return false;
    });
  }

  private operatorToolList(): Promise<Tool[]> {
    return (this.operatorTools ??= Promise.all(this.operator.map((o) => this.operatorServerTools(o))).then((l) => l.flat()));
  }

  /**
   * One operator server's tools: the live list, else (not listed yet) a first listing awaited
   * once per process, else the last known list while a listing runs in the background.
   */
  private async operatorServerTools(o: Operator): Promise<Tool[]> {
    const { def, conn } = o;
    const live = conn.knownTools();
    if (live) return (o.last = mcpTools(conn, def, live, { rateLimitKey: `mcp.${def.name}` }));
    const listing = conn.listTools(AbortSignal.timeout(FIRST_LIST_TIMEOUT_MS)).then(
      (infos) => {
        o.last = mcpTools(conn, def, infos, { rateLimitKey: `mcp.${def.name}` });
        return o.last;
      },
      (err: Error) => {
        this.d.log.warn({ server: def.name, err: err.message }, 'MCP server of the operator: tools not listed');
        // Listed again at the next owner's load (the connection's backoff keeps that cheap).
        this.operatorTools = undefined;
        return undefined;
      },
    );
    if (!o.tried) {
      o.tried = true;
      return (await listing) ?? o.last ?? [];
    }
    void listing.then((tools) => tools && this.forgetAll());
    return o.last ?? [];
  }

  private connOf(s: StoredSource, headers: Record<string, string>): McpConnection {
    const held = this.conns.get(s.id);
    if (held) return held.conn;
    const def = this.defOf({ name: s.name, url: s.url!, headers });
    const conn = new McpConnection(def, {
      fetch: this.fetchFor(def),
      log: this.d.log,
      maxResultChars: this.d.maxResponseChars,
      onToolsChanged: (tools) => void this.storeTools(s, tools),
    });
    this.conns.set(s.id, { conn, owner: ownerKey(s.owner.userId) });
    return conn;
  }

  private userMcpTools(s: StoredSource): Tool[] {
    const headers = this.d.store.headersOf(s);
    const conn = this.connOf(s, headers);
    const live = conn.knownTools();
    if (!live) {
      // Offer the stored list now; learn the live one in the background (stored if it differs).
      conn.listTools(AbortSignal.timeout(FIRST_LIST_TIMEOUT_MS)).then(
        (tools) => this.storeTools(s, tools),
        () => undefined,
      );
    }
    // Calls find the source's connection when they run: an idle one closed since is made again.
    const via = {
      callTool: (name: string, args: Record<string, unknown>, signal: AbortSignal) => this.connOf(s, headers).callTool(name, args, signal),
      serverVersion: () => this.connOf(s, headers).serverVersion(),
    };
    return mcpTools(via, this.defOf({ name: s.name, url: s.url!, headers }), live ?? (s.tools as McpToolInfo[]), { rateLimitKey: `src.${s.id}` });
  }

  private async storeTools(s: StoredSource, tools: McpToolInfo[]): Promise<void> {
    // The stored list comes back from jsonb with its keys reordered: compared as canonical JSON.
    if (stableStringify(tools) === stableStringify(s.tools)) return;
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
    const headers = this.d.store.headersOf(s);
    const p = this.d.store
      .specOf(s.id)
      .then(async (spec) => {
        const ops = await openApiOperations(spec as object, { log: this.d.log });
        return openApiTools(
          {
            name: s.name,
            baseUrl: s.baseUrl!,
            headers,
            timeoutMs: openapi.timeoutMs,
            rateLimitPerMinute: mcp.rateLimitPerMinute,
            rateLimitKey: `src.${s.id}`,
            version: String(s.info?.version ?? ''),
          },
          ops,
          { fetch: this.fetch, maxResponseChars: this.d.maxResponseChars },
        );
      })
      .catch((err: Error) => {
        if (this.openapi.get(key) === p) this.openapi.delete(key);
        this.d.log.warn({ source: s.name, err: err.message }, 'OpenAPI tool source: document not usable');
        return [];
      });
    this.openapi.set(key, p);
    return p;
  }
}
