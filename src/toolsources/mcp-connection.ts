/**
 * One live connection to one MCP server through the official SDK `Client`: streamable HTTP or
 * a stdio child process. It connects on first use, keeps the server's tool list (refreshed when
 * the server notifies `tools/list_changed`), and calls tools.
 *
 * A server that is down or misbehaves is a `ToolError` naming it, never a crash: failed
 * connection attempts back off (kernel `backoffDelay`: 0.5 s doubling to 30 s, equal jitter),
 * and during the backoff calls fail at once saying when the next attempt is. A connection that
 * drops (the HTTP server goes away mid-call, the child exits) is reconnected by the next call;
 * one that keeps dropping right after connecting backs off the same way. A request refused for
 * an unknown session (HTTP 404: the server restarted) was never processed, so it is sent once
 * more on a fresh session. A URL the SSRF guard refuses (a user's server whose host now resolves
 * to a private address) is the guard's refusal ('bad_arguments'), not an outage.
 *
 * Nothing a server does can hold resources without end: a cancelled or timed-out call ends its
 * own HTTP request (./mcp-fetch.ts), answers are cut at a byte limit, a tool list is read in at
 * most MAX_PAGES pages and MAX_TOOLS tools (each name once), within the connection's time
 * limit, and `tools/list_changed` notices are coalesced (one re-read pending at most, one per
 * `refreshIntervalMs`). `close()` ends a connection attempt at once, and nothing (timer,
 * socket, child) outlives it. Every message it produces (errors, logs) has the configured header
 * and environment values redacted.
 *
 * The SDK (with zod, ~35 MB once imported) is loaded by the first connection attempt, not at
 * start-up: a process without MCP servers never holds it.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { McpError, Tool as SdkTool } from '@modelcontextprotocol/sdk/types.js';
import type { McpServerDef } from '../config/index.js';
import { backoffDelay, lazyImport, type Backoff, type Logger } from '../kernel/index.js';
import { ToolError, WEB_FETCH_DEFAULT_CHARS, type ToolOutput, type ToolParameters } from '../tools/index.js';
import { mcpFetch } from './mcp-fetch.js';
import { callResult, clip, resultText, toolOutput } from './mcp-result.js';
import { redactor } from './redact.js';

/** A tool as the server lists it, its argument schema normalised to an object schema. */
export interface McpToolInfo {
  name: string;
  description: string;
  inputSchema: ToolParameters;
  /** The server's `annotations.readOnlyHint`: a call has no side effects. */
  readOnly: boolean;
}

export interface McpConnectionOptions {
  /** For HTTP servers: users' servers get the SSRF-guarded fetch. Default: global fetch. */
  fetch?: typeof fetch;
  log?: Logger;
  /** The server changed its tool list (after the refreshed list is read). */
  onToolsChanged?: (tools: McpToolInfo[]) => void;
  clientName?: string;
  clientVersion?: string;
  /** Characters of a tool result's text (what the model reads) at most (default web_fetch's, WEB_FETCH_DEFAULT_CHARS). */
  maxResultChars?: number;
  /** Bytes of one HTTP answer at most (default 8 MiB); a larger one drops the connection. */
  maxResponseBytes?: number;
  /** The tool list is read again at most once per this many ms however often the server notifies (default 5 s). */
  refreshIntervalMs?: number;
}

export const MCP_RECONNECT_BACKOFF: Backoff = { baseMs: 500, capMs: 30_000, jitter: 'equal' };
/** Tool names we can put after `mcp.<server>.`; others are skipped. */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,100}$/;
/** Bytes of a stdio server's stderr kept to explain its exit. */
const STDERR_TAIL = 1000;
/** A tool list is read in this many pages at most, and keeps this many tools at most. */
const MCP_MAX_PAGES = 50;
const MCP_MAX_TOOLS = 1000;
const DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024;
const DEFAULT_REFRESH_INTERVAL_MS = 5000;
/** Names quoted in a log line about skipped tools. */
const NAMES_LOGGED = 5;

const loadSdk = lazyImport(async () => {
  const [client, stdio, http, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/stdio.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  return {
    Client: client.Client,
    StdioClientTransport: stdio.StdioClientTransport,
    getDefaultEnvironment: stdio.getDefaultEnvironment,
    StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
    StreamableHTTPError: http.StreamableHTTPError,
    ErrorCode: types.ErrorCode,
    McpError: types.McpError,
    ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema,
  };
});
type Sdk = Awaited<ReturnType<typeof loadSdk>>;

interface Live {
  sdk: Sdk;
  client: Client;
  transport: StdioClientTransport | StreamableHTTPClientTransport;
  stderr: string;
  /** Why it was dropped: what its pending requests report (rather than the SDK's "Connection closed"). */
  lost?: string;
}

type State =
  | { kind: 'idle' }
  /** `live` is set once the SDK is loaded and the client made. */
  | { kind: 'connecting'; live?: Live; promise: Promise<Live> }
  | { kind: 'ready'; live: Live }
  | { kind: 'backoff'; until: number; error: string }
  | { kind: 'closed' };

export class McpConnection {
  private state: State = { kind: 'idle' };
  private tools: McpToolInfo[] | undefined;
  private version: string | undefined;
  /** Connection attempts failed in a row: the backoff's attempt number. */
  private connectFailures = 0;
  /** Connections lost since a request last succeeded: the first is reconnected at once. */
  private drops = 0;
  private refreshTimer: NodeJS.Timeout | undefined;
  private refreshRunning = false;
  private refreshAgain = false;
  private lastRefresh = 0;
  private readonly redact: (s: string) => string;
  private readonly maxResultChars: number;

  constructor(
    readonly def: McpServerDef,
    private readonly opts: McpConnectionOptions = {},
  ) {
    const t = def.transport;
    this.redact = redactor(Object.values(t.kind === 'http' ? t.headers : t.env));
    this.maxResultChars = opts.maxResultChars ?? WEB_FETCH_DEFAULT_CHARS;
  }

  /** The server's tools (connecting on first use), read page by page and cached; within the time limit even without a signal. */
  async listTools(signal?: AbortSignal): Promise<McpToolInfo[]> {
    const tools = await this.request(signal, 'tools/list', (live) => this.readTools(live, signal));
    this.tools = tools;
    return tools;
  }

  /** The last tool list read, if any; never connects. */
  knownTools(): McpToolInfo[] | undefined {
    return this.tools;
  }

  /** The version the server reported when it last connected. */
  serverVersion(): string | undefined {
    return this.version;
  }

  async callTool(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<ToolOutput> {
    const result = callResult(
      await this.request(signal, `tool "${name}"`, (live) =>
        ownSignal(signal, (s) => live.client.callTool({ name, arguments: args }, undefined, { signal: s, timeout: this.def.timeoutMs })),
      ),
    );
    if (result.isError) {
      throw this.error(
        `MCP server "${this.def.name}" tool "${name}" reported an error: ${clip(this.redact(resultText(result)), this.maxResultChars) || '(no message)'}`,
        'failed',
      );
    }
    return toolOutput(result, this.maxResultChars);
  }

  /** Ends the connection (a stdio server's process is stopped; an attempt to connect is ended at once); later calls fail. */
  async close(): Promise<void> {
    const s = this.state;
    this.state = { kind: 'closed' };
    clearTimeout(this.refreshTimer);
    this.refreshTimer = undefined;
    if (s.kind !== 'ready' && s.kind !== 'connecting') return;
    await s.live?.client.close().catch(() => undefined);
    if (s.kind === 'connecting') await s.promise.catch(() => undefined);
  }

  /** Runs one request on a live connection, turning every failure into a ToolError naming the server. */
  private async request<T>(signal: AbortSignal | undefined, what: string, fn: (live: Live) => Promise<T>): Promise<T> {
    if (signal?.aborted) throw this.aborted(what, signal);
    for (let attempt = 1; ; attempt++) {
      const live = await this.ensure(signal);
      try {
        const out = await fn(live);
        this.drops = 0;
        return out;
      } catch (err) {
        if (signal?.aborted) throw this.aborted(what, signal);
        const { ErrorCode, McpError, StreamableHTTPError } = live.sdk;
        const refusal = guardRefusal(err);
        if (refusal) throw this.error(`MCP server "${this.def.name}": ${refusal.message}`, refusal.kind);
        if (err instanceof McpError && err.code === ErrorCode.RequestTimeout) {
          throw this.error(`MCP server "${this.def.name}" did not answer ${what} within ${this.def.timeoutMs / 1000} s`, 'backend');
        }
        if (err instanceof McpError && err.code !== ErrorCode.ConnectionClosed) {
          this.drops = 0;
          throw this.error(`MCP server "${this.def.name}" answered an error: ${mcpMessage(err)}`, 'backend');
        }
        if ((err as Error)?.name === 'ZodError') {
          throw this.error(`MCP server "${this.def.name}" answered ${what} with something that is not an MCP result`, 'backend');
        }
        if (err instanceof StreamableHTTPError && err.code === 404 && attempt === 1) {
          this.log('info', 'session unknown to the server (restarted?): starting a new one');
          this.discard(live);
          continue;
        }
        if (err instanceof StreamableHTTPError && err.code !== 404) {
          throw this.error(
            `MCP server "${this.def.name}" answered HTTP ${err.code ?? '?'}: ${cut(err.message.replace(/^Streamable HTTP error: /, ''))}`,
            'backend',
          );
        }
        this.dropped(live, err);
        throw this.unavailable(live.lost ?? describe(err, live));
      }
    }
  }

  /** The live connection, connecting if needed; fails at once while backing off. */
  private async ensure(signal?: AbortSignal): Promise<Live> {
    const s = this.state;
    if (s.kind === 'closed') throw this.closedError();
    if (s.kind === 'ready') return s.live;
    if (s.kind === 'backoff' && Date.now() < s.until) throw this.unavailable(s.error);
    let connecting: Promise<Live>;
    if (s.kind === 'connecting') connecting = s.promise;
    else {
      connecting = this.connect();
      this.state = { kind: 'connecting', promise: connecting };
    }
    if (!signal) return connecting;
    // Connecting is shared by concurrent callers: one caller giving up does not abort it.
    return new Promise<Live>((resolve, reject) => {
      const onAbort = () => reject(this.aborted('connecting', signal));
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      connecting.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  /** A client and its transport, not connected yet. */
  private newLive(sdk: Sdk): Live {
    const client = new sdk.Client({ name: this.opts.clientName ?? 'taskorch', version: this.opts.clientVersion ?? '0.0.0' });
    const live = { sdk, client, stderr: '' } as Live;
    live.transport = this.transport(live);
    // A lost POST stream is reported by the fetch (./mcp-fetch.ts); what comes here (the GET
    // stream closed by a proxy, a reconnection that failed) concerns no call in flight.
    client.onerror = (err) => this.log('debug', `transport: ${err.message}`);
    client.onclose = () => this.dropped(live, new Error(this.def.transport.kind === 'stdio' ? 'its process exited' : 'connection closed'));
    client.setNotificationHandler(sdk.ToolListChangedNotificationSchema, () => this.scheduleRefresh());
    return live;
  }

  /** Loads the SDK (the process's first connection) and connects a new client; `close()` during either ends it. */
  private async connect(): Promise<Live> {
    let live: Live;
    try {
      live = this.newLive(await loadSdk());
    } catch (err) {
      // No attempt was made (the SDK did not load, the client refused its settings): the next call tries again.
      if (this.state.kind === 'connecting') this.state = { kind: 'idle' };
      throw err;
    }
    const s = this.state;
    if (s.kind !== 'connecting') throw this.closedError();
    s.live = live;
    const { client } = live;
    try {
      await client.connect(live.transport, { timeout: this.def.timeoutMs });
    } catch (err) {
      void client.close().catch(() => undefined);
      if (this.state.kind === 'closed') throw this.closedError();
      const refusal = guardRefusal(err);
      if (refusal) {
        // The guard's verdict on the URL, not an outage: asked again (and vetted again) next time.
        this.state = { kind: 'idle' };
        throw this.error(`MCP server "${this.def.name}": ${refusal.message}`, refusal.kind);
      }
      const error = describe(err, live);
      this.connectFailures++;
      this.backOff(error, backoffDelay(MCP_RECONNECT_BACKOFF, this.connectFailures));
      this.log('warn', `cannot connect: ${error}`);
      throw this.unavailable(error);
    }
    if (this.state.kind === 'closed') {
      await client.close().catch(() => undefined);
      throw this.closedError();
    }
    this.connectFailures = 0;
    this.version = client.getServerVersion()?.version;
    this.state = { kind: 'ready', live };
    // Notices sent while we were away are lost: a list known from before is read again.
    if (this.tools) this.scheduleRefresh();
    return live;
  }

  private transport(live: Live): StdioClientTransport | StreamableHTTPClientTransport {
    const { StdioClientTransport, StreamableHTTPClientTransport, getDefaultEnvironment } = live.sdk;
    const t = this.def.transport;
    if (t.kind === 'http') {
      const fetch = mcpFetch(this.opts.fetch ?? globalThis.fetch, {
        maxBytes: this.opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
        onRequestStreamLost: (err) => this.dropped(live, err),
      });
      return new StreamableHTTPClientTransport(new URL(t.url), { requestInit: { headers: t.headers }, fetch });
    }
    const stdio = new StdioClientTransport({ command: t.command, args: t.args, env: { ...getDefaultEnvironment(), ...t.env }, cwd: t.cwd, stderr: 'pipe' });
    // Read, so a chatty server never blocks on a full pipe; the tail explains an exit.
    stdio.stderr?.on('data', (chunk: Buffer) => {
      live.stderr = (live.stderr + chunk.toString('utf8')).slice(-STDERR_TAIL);
    });
    return stdio;
  }

  /** A connection that was working is lost: the next call reconnects (at once the first time). */
  private dropped(live: Live, err: unknown): void {
    if (this.state.kind !== 'ready' || this.state.live !== live) return;
    const error = describe(err, live);
    live.lost = error;
    this.drops++;
    this.log('warn', `connection lost: ${error}`);
    this.discard(live);
    if (this.drops > 1) this.backOff(error, backoffDelay(MCP_RECONNECT_BACKOFF, this.drops - 1));
  }

  /** Forgets a connection and closes it (ending a stdio child). */
  private discard(live: Live): void {
    if (this.state.kind === 'ready' && this.state.live === live) this.state = { kind: 'idle' };
    void live.client.close().catch(() => undefined);
  }

  private backOff(error: string, delayMs: number): void {
    this.state = { kind: 'backoff', until: Date.now() + delayMs, error };
  }

  /** Every page of the list within the time limit; at most MCP_MAX_PAGES pages and MCP_MAX_TOOLS tools, each name once. */
  private async readTools(live: Live, signal?: AbortSignal): Promise<McpToolInfo[]> {
    const out = new Map<string, McpToolInfo>();
    const badNames: string[] = [];
    const duplicates = new Set<string>();
    const cut: string[] = [];
    const cursors = new Set<string>();
    const deadline = Date.now() + this.def.timeoutMs;
    let stop: string | undefined;
    let cursor: string | undefined;
    for (let pages = 1; ; pages++) {
      const timeout = deadline - Date.now();
      if (timeout <= 0) throw new live.sdk.McpError(live.sdk.ErrorCode.RequestTimeout, 'Request timed out');
      const page = await ownSignal(signal, (s) => live.client.listTools(cursor === undefined ? undefined : { cursor }, { signal: s, timeout }));
      for (const t of page.tools) {
        if (!TOOL_NAME.test(t.name)) badNames.push(t.name);
        else if (out.has(t.name)) duplicates.add(t.name);
        else if (out.size >= MCP_MAX_TOOLS) cut.push(t.name);
        else out.set(t.name, toolInfo(t));
      }
      const next = page.nextCursor;
      if (next === undefined || next === '') break;
      if (cursors.has(next)) stop = `its pages repeat (cursor ${JSON.stringify(next.slice(0, 40))} came again): the list read so far is used`;
      else if (pages >= MCP_MAX_PAGES) stop = `it lists more than ${MCP_MAX_PAGES} pages: the first ${MCP_MAX_PAGES} are used`;
      else if (cut.length) stop = `it lists more than ${MCP_MAX_TOOLS} tools: the first ${MCP_MAX_TOOLS} are used, later pages are not read`;
      if (stop) break;
      cursors.add(next);
      cursor = next;
    }
    if (stop) this.log('warn', `tools/list stopped: ${stop}`);
    if (badNames.length) this.log('warn', `${names(badNames)} skipped: a tool name is 1 to 100 letters, digits, _, . or -`);
    if (duplicates.size) this.log('warn', `${names([...duplicates])} listed more than once: the first of each is used`);
    if (cut.length) this.log('warn', `${names(cut)} dropped: more than ${MCP_MAX_TOOLS} tools`);
    return [...out.values()];
  }

  /**
   * Reads the tool list again soon, coalescing notices: at most one read pending, at most one
   * started per `refreshIntervalMs`; a read asked for while one runs follows it (the last state wins).
   */
  private scheduleRefresh(): void {
    if (this.refreshTimer || this.state.kind === 'closed') return;
    if (this.refreshRunning) {
      this.refreshAgain = true;
      return;
    }
    const wait = Math.max(0, this.lastRefresh + (this.opts.refreshIntervalMs ?? DEFAULT_REFRESH_INTERVAL_MS) - Date.now());
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = undefined;
      void this.refresh();
    }, wait);
  }

  /** Reads the list on the live connection; `onToolsChanged` only when it differs from the one known. */
  private async refresh(): Promise<void> {
    const s = this.state;
    if (s.kind !== 'ready') return; // the reconnection reads it
    this.refreshRunning = true;
    this.lastRefresh = Date.now();
    try {
      const tools = await this.readTools(s.live);
      if (this.state.kind === 'closed' || JSON.stringify(tools) === JSON.stringify(this.tools)) return;
      this.tools = tools;
      this.opts.onToolsChanged?.(tools);
    } catch (err) {
      this.log('warn', `reading the tool list again failed: ${describe(err, s.live)}`);
    } finally {
      this.refreshRunning = false;
      if (this.refreshAgain) {
        this.refreshAgain = false;
        this.scheduleRefresh();
      }
    }
  }

  private unavailable(error: string): ToolError {
    const s = this.state;
    const next = s.kind === 'backoff' ? ` (next attempt in ${Math.max(1, Math.ceil((s.until - Date.now()) / 1000))} s)` : '';
    return this.error(`MCP server "${this.def.name}" is unavailable: ${error}${next}`, 'backend');
  }

  private aborted(what: string, signal: AbortSignal): ToolError {
    const reason = signal.reason instanceof Error && signal.reason.name !== 'AbortError' ? `: ${signal.reason.message}` : '';
    return this.error(`MCP server "${this.def.name}": ${what} was aborted${reason}`, 'backend');
  }

  private closedError(): ToolError {
    return this.error(`MCP server "${this.def.name}" is closed`, 'backend');
  }

  /** Every error the connection raises goes through here: what the server said may quote a secret. */
  private error(message: string, kind: ToolError['kind']): ToolError {
    return new ToolError(this.redact(message), kind);
  }

  private log(level: 'debug' | 'info' | 'warn', msg: string): void {
    this.opts.log?.[level]({ mcpServer: this.def.name }, this.redact(`MCP server "${this.def.name}": ${msg}`));
  }
}

/**
 * Runs one SDK request with a signal of its own following `signal`: the SDK never removes the
 * listener it adds to a request's signal, and a caller's signal may outlive many requests.
 */
async function ownSignal<T>(signal: AbortSignal | undefined, fn: (s: AbortSignal | undefined) => Promise<T>): Promise<T> {
  if (!signal) return fn(undefined);
  const own = new AbortController();
  const onAbort = () => own.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    return await fn(own.signal);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** Some names of a list, quoted, and how many there were. */
const names = (list: string[]): string =>
  `${list.length} tool${list.length === 1 ? '' : 's'} (${list
    .slice(0, NAMES_LOGGED)
    .map((n) => JSON.stringify(n.slice(0, 120)))
    .join(', ')}${list.length > NAMES_LOGGED ? ', ...' : ''})`;

/** The SSRF guard's refusal of the server's URL (a ToolError 'bad_arguments' from the guarded fetch), however the SDK wrapped it. */
function guardRefusal(err: unknown): ToolError | undefined {
  for (let e = err; e instanceof Error; e = e.cause) if (e instanceof ToolError && e.kind === 'bad_arguments') return e;
  return undefined;
}

function toolInfo(t: SdkTool): McpToolInfo {
  const schema = (t.inputSchema ?? {}) as Record<string, unknown>;
  const properties = schema.properties && typeof schema.properties === 'object' && !Array.isArray(schema.properties) ? schema.properties : {};
  return {
    name: t.name,
    description: t.description ?? '',
    inputSchema: { ...schema, type: 'object', properties } as ToolParameters,
    readOnly: t.annotations?.readOnlyHint === true,
  };
}

/** `MCP error -32603: boom` → `boom (-32603)` (the prefix comes twice when the server's error was an McpError too). */
const mcpMessage = (err: McpError): string => `${cut(err.message.replace(/^(MCP error -?\d+: )+/, ''))} (${err.code})`;

const cut = (s: string, n = 300): string => (s.length > n ? `${s.slice(0, n)}…` : s);

/** The most telling message of an error: the innermost cause (fetch's ECONNREFUSED under "fetch failed"). */
function describe(err: unknown, live: Live): string {
  let e: unknown = err;
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  if (e instanceof AggregateError && e.errors[0] instanceof Error) e = e.errors[0];
  let msg = e instanceof live.sdk.McpError ? mcpMessage(e) : e instanceof Error ? e.message || e.name : String(e);
  const stderr = live.stderr.trim();
  if (stderr) msg += `; its stderr ends: ${stderr.slice(-300)}`;
  return cut(msg, 600);
}
