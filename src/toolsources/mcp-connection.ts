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
 * more on a fresh session.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError, ToolListChangedNotificationSchema, type Tool as SdkTool } from '@modelcontextprotocol/sdk/types.js';
import type { McpServerDef } from '../config/index.js';
import { backoffDelay, type Backoff, type Logger } from '../kernel/index.js';
import { ToolError, type ToolOutput, type ToolParameters } from '../tools/index.js';
import { callResult, resultText, toolOutput } from './mcp-result.js';

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
}

export const MCP_RECONNECT_BACKOFF: Backoff = { baseMs: 500, capMs: 30_000, jitter: 'equal' };
/** Tool names we can put after `mcp.<server>.`; others are skipped. */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,100}$/;
/** Bytes of a stdio server's stderr kept to explain its exit. */
const STDERR_TAIL = 1000;

interface Live {
  client: Client;
  stderr: string;
  /** Requests in flight on it (an HTTP stream lost with requests pending means the server went away). */
  inFlight: number;
  /** Why it was dropped: what its pending requests report (rather than the SDK's "Connection closed"). */
  lost?: string;
}

type State =
  | { kind: 'idle' }
  | { kind: 'connecting'; promise: Promise<Live> }
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
  private refreshing: Promise<void> = Promise.resolve();

  constructor(
    readonly def: McpServerDef,
    private readonly opts: McpConnectionOptions = {},
  ) {}

  /** The server's tools (connecting on first use), read page by page and cached. */
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
        live.client.callTool({ name, arguments: args }, undefined, { signal, timeout: this.def.timeoutMs }),
      ),
    );
    if (result.isError) {
      throw new ToolError(`MCP server "${this.def.name}" tool "${name}" reported an error: ${resultText(result) || '(no message)'}`, 'failed');
    }
    return toolOutput(result);
  }

  /** Ends the connection (a stdio server's process is stopped); later calls fail. */
  async close(): Promise<void> {
    const s = this.state;
    this.state = { kind: 'closed' };
    const live = s.kind === 'ready' ? s.live : s.kind === 'connecting' ? await s.promise.catch(() => undefined) : undefined;
    await live?.client.close().catch(() => undefined);
  }

  /** Runs one request on a live connection, turning every failure into a ToolError naming the server. */
  private async request<T>(signal: AbortSignal | undefined, what: string, fn: (live: Live) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const live = await this.ensure(signal);
      live.inFlight++;
      try {
        const out = await fn(live);
        this.drops = 0;
        return out;
      } catch (err) {
        if (signal?.aborted) throw this.aborted(what, signal);
        if (err instanceof McpError && err.code === ErrorCode.RequestTimeout) {
          throw new ToolError(`MCP server "${this.def.name}" did not answer ${what} within ${this.def.timeoutMs / 1000} s`, 'backend');
        }
        if (err instanceof McpError && err.code !== ErrorCode.ConnectionClosed) {
          this.drops = 0;
          throw new ToolError(`MCP server "${this.def.name}" answered an error: ${mcpMessage(err)}`, 'backend');
        }
        if ((err as Error)?.name === 'ZodError') {
          throw new ToolError(`MCP server "${this.def.name}" answered ${what} with something that is not an MCP result`, 'backend');
        }
        if (err instanceof StreamableHTTPError && err.code === 404 && attempt === 1) {
          this.log('info', 'session unknown to the server (restarted?): starting a new one');
          this.discard(live);
          continue;
        }
        if (err instanceof StreamableHTTPError && err.code !== 404) {
          throw new ToolError(
            `MCP server "${this.def.name}" answered HTTP ${err.code ?? '?'}: ${cut(err.message.replace(/^Streamable HTTP error: /, ''))}`,
            'backend',
          );
        }
        this.dropped(live, err);
        throw this.unavailable(live.lost ?? describe(err, live));
      } finally {
        live.inFlight--;
      }
    }
  }

  /** The live connection, connecting if needed; fails at once while backing off. */
  private async ensure(signal?: AbortSignal): Promise<Live> {
    const s = this.state;
    if (s.kind === 'closed') throw new ToolError(`MCP server "${this.def.name}" is closed`, 'backend');
    if (s.kind === 'ready') return s.live;
    if (s.kind === 'backoff' && Date.now() < s.until) throw this.unavailable(s.error);
    const connecting = s.kind === 'connecting' ? s.promise : this.connect();
    if (s.kind !== 'connecting') this.state = { kind: 'connecting', promise: connecting };
    if (!signal) return connecting;
    // Connecting is shared by concurrent callers: one caller giving up does not abort it.
    return new Promise<Live>((resolve, reject) => {
      const onAbort = () => reject(this.aborted('connecting', signal));
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      connecting.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  private async connect(): Promise<Live> {
    const client = new Client({ name: this.opts.clientName ?? 'taskorch', version: this.opts.clientVersion ?? '0.0.0' });
    const live: Live = { client, stderr: '', inFlight: 0 };
    const transport = this.transport(live);
    client.onerror = (err) => {
      // The SDK reports a lost HTTP stream only here; with requests waiting on it, they would
      // wait for their time limit, so the connection counts as dropped (and they fail now).
      if (live.inFlight > 0 && /^SSE stream disconnected/.test(err.message)) this.dropped(live, err);
      else this.log('debug', `transport: ${err.message}`);
    };
    client.onclose = () => this.dropped(live, new Error(this.def.transport.kind === 'stdio' ? 'its process exited' : 'connection closed'));
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      // One read at a time, in order: the last list read is the server's latest.
      this.refreshing = this.refreshing.then(() => this.refresh(live));
    });
    try {
      await client.connect(transport, { timeout: this.def.timeoutMs });
    } catch (err) {
      void client.close().catch(() => undefined);
      if (this.state.kind === 'closed') throw new ToolError(`MCP server "${this.def.name}" is closed`, 'backend');
      const error = describe(err, live);
      this.connectFailures++;
      this.backOff(error, backoffDelay(MCP_RECONNECT_BACKOFF, this.connectFailures));
      this.log('warn', `cannot connect: ${error}`);
      throw this.unavailable(error);
    }
    if (this.state.kind === 'closed') {
      await client.close().catch(() => undefined);
      throw new ToolError(`MCP server "${this.def.name}" is closed`, 'backend');
    }
    this.connectFailures = 0;
    this.version = client.getServerVersion()?.version;
    this.state = { kind: 'ready', live };
    // Notices sent while we were away are lost: a list known from before is read again.
    if (this.tools) this.refreshing = this.refreshing.then(() => this.refresh(live));
    return live;
  }

  private transport(live: Live): StdioClientTransport | StreamableHTTPClientTransport {
    const t = this.def.transport;
    if (t.kind === 'http') {
      return new StreamableHTTPClientTransport(new URL(t.url), { requestInit: { headers: t.headers }, fetch: this.opts.fetch });
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

  private async readTools(live: Live, signal?: AbortSignal): Promise<McpToolInfo[]> {
    const out: McpToolInfo[] = [];
    let cursor: string | undefined;
    do {
      const page = await live.client.listTools(cursor ? { cursor } : undefined, { signal, timeout: this.def.timeoutMs });
      for (const t of page.tools) {
        if (TOOL_NAME.test(t.name)) out.push(toolInfo(t));
        else this.log('warn', `tool ${JSON.stringify(t.name.slice(0, 120))} skipped: a tool name is 1 to 100 letters, digits, _, . or -`);
      }
      cursor = page.nextCursor;
    } while (cursor);
    return out;
  }

  /** Reads the list again; `onToolsChanged` only when it differs from the one known. */
  private async refresh(live: Live): Promise<void> {
    if (this.state.kind !== 'ready' || this.state.live !== live) return;
    try {
      const tools = await this.readTools(live);
      if (JSON.stringify(tools) === JSON.stringify(this.tools)) return;
      this.tools = tools;
      this.opts.onToolsChanged?.(tools);
    } catch (err) {
      this.log('warn', `reading the tool list again failed: ${describe(err, live)}`);
    }
  }

  private unavailable(error: string): ToolError {
    const s = this.state;
    const next = s.kind === 'backoff' ? ` (next attempt in ${Math.max(1, Math.ceil((s.until - Date.now()) / 1000))} s)` : '';
    return new ToolError(`MCP server "${this.def.name}" is unavailable: ${error}${next}`, 'backend');
  }

  private aborted(what: string, signal: AbortSignal): ToolError {
    const reason = signal.reason instanceof Error && signal.reason.name !== 'AbortError' ? `: ${signal.reason.message}` : '';
    return new ToolError(`MCP server "${this.def.name}": ${what} was aborted${reason}`, 'backend');
  }

  private log(level: 'debug' | 'info' | 'warn', msg: string): void {
    this.opts.log?.[level]({ mcpServer: this.def.name }, `MCP server "${this.def.name}": ${msg}`);
  }
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
  let msg = e instanceof McpError ? mcpMessage(e) : e instanceof Error ? e.message || e.name : String(e);
  const stderr = live.stderr.trim();
  if (stderr) msg += `; its stderr ends: ${stderr.slice(-300)}`;
  return cut(msg, 600);
}
