/**
 * Real MCP servers for tests, built with the official SDK's low-level `Server` (tools given
 * as plain JSON Schema, which the client must see exactly as given; a handler that throws
 * answers a JSON-RPC error, which `McpServer` would turn into an `isError` result).
 *
 * - `startMcpHttpServer`: streamable HTTP on node:http, stateful (one SDK `Server` per session)
 *   so that `notifications/tools/list_changed` reaches clients over their standalone SSE stream;
 *   `stop()`/`restart()` take it away and bring it back on the same port (sessions are lost, as
 *   with a real restart). It records what it receives and can misbehave on purpose: hold
 *   requests unanswered, cut its notification streams, answer tools/list pages of its own.
 * - `MCP_STDIO_SERVER`: the path of a fixed stdio server script (test/helpers/mcp-stdio-server.mjs).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** What a test tool's handler answers: text, a tool-level error (`isError`), or raw content blocks. */
export type McpTestAnswer =
  | { text: string; structuredContent?: Record<string, unknown> }
  | { error: string }
  | { content: CallToolResult['content']; structuredContent?: Record<string, unknown> };

export interface McpTestTool {
  name: string;
  description?: string;
  /** JSON Schema of the arguments, listed exactly as given. */
  inputSchema: Record<string, unknown>;
  /** Listed as `annotations.readOnlyHint`. */
  readOnly?: boolean;
  /** Throwing answers a JSON-RPC error (an `McpError` keeps its code). */
  handler(args: Record<string, unknown>, extra: { signal: AbortSignal; headers: Record<string, string> }): McpTestAnswer | Promise<McpTestAnswer>;
}

export interface McpRecordedCall {
  name: string;
  args: Record<string, unknown>;
  /** The HTTP request's headers, lower-case names. */
  headers: Record<string, string>;
}

export interface McpHttpServerOptions {
  tools: McpTestTool[];
  /** serverInfo, default `test-mcp` / `1.2.3`. */
  name?: string;
  version?: string;
  /** tools/list answers pages of this many tools (with a cursor); default all in one page. */
  pageSize?: number;
  /** Answers tools/list itself (pages, cursors, duplicates as a misbehaving server would); `tools` still serve calls. */
  listPage?: (cursor: string | undefined) => { tools: McpTestTool[]; nextCursor?: string } | Promise<{ tools: McpTestTool[]; nextCursor?: string }>;
}

export interface McpHttpServer {
  /** http://127.0.0.1:<port>/mcp */
  url: string;
  port: number;
  /** Every tools/call received, in order. */
  calls: McpRecordedCall[];
  /** Replaces the tool list and notifies every connected session (tools/list_changed). */
  setTools(tools: McpTestTool[]): Promise<void>;
  /** Sessions currently open. */
  sessions(): number;
  /** Every HTTP request received, in order: `GET`, `DELETE`, or `POST <JSON-RPC method>`. */
  received: string[];
  /** TCP connections open to it now. */
  openConnections(): number;
  /** Requests (named as in `received`) it leaves unanswered from now on, until called again. */
  hold(what: (request: string) => boolean): void;
  /** Cuts every open notification (GET) stream, as a proxy closing idle streams does. */
  cutStreams(): void;
  /** Forgets every session (as a server whose sessions expired): their next request is answered 404. */
  expireSessions(): Promise<void>;
  /** Takes the server away: connections cut, sessions closed, port released. */
  stop(): Promise<void>;
  /** Brings it back on the same port (no sessions: clients must initialize again). */
  restart(): Promise<void>;
  close(): Promise<void>;
}

interface Session {
  server: Server;
  transport: StreamableHTTPServerTransport;
  /** The client's standalone GET SSE stream is open: notifications reach it. */
  streamOpen: boolean;
  /** That stream's response. */
  stream?: ServerResponse;
}

const flatHeaders = (h: Record<string, string | string[] | undefined> | undefined): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h ?? {})) if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  return out;
};

export async function startMcpHttpServer(opts: McpHttpServerOptions): Promise<McpHttpServer> {
  let tools = opts.tools;
  const calls: McpRecordedCall[] = [];
  const sessions = new Map<string, Session>();
  const streamWaiters = new Set<() => void>();
  const received: string[] = [];
  let held: (request: string) => boolean = () => false;

  const newSession = (): Session => {
    const server = new Server({ name: opts.name ?? 'test-mcp', version: opts.version ?? '1.2.3' }, { capabilities: { tools: { listChanged: true } } });
    const listed = (t: McpTestTool) => ({
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema as { type: 'object' },
      annotations: t.readOnly === undefined ? undefined : { readOnlyHint: t.readOnly },
    });
    server.setRequestHandler(ListToolsRequestSchema, async (req) => {
      if (opts.listPage) {
        const page = await opts.listPage(req.params?.cursor);
        return { tools: page.tools.map(listed), nextCursor: page.nextCursor };
      }
      const start = req.params?.cursor ? Number(req.params.cursor) : 0;
      const size = opts.pageSize ?? tools.length;
      const page = tools.slice(start, start + size).map(listed);
      return { tools: page, nextCursor: start + size < tools.length ? String(start + size) : undefined };
    });
    server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
      const headers = flatHeaders(extra.requestInfo?.headers);
      const args = req.params.arguments ?? {};
      calls.push({ name: req.params.name, args, headers });
      const tool = tools.find((t) => t.name === req.params.name);
      if (!tool) throw new Error(`no tool ${req.params.name}`);
      const a = await tool.handler(args, { signal: extra.signal, headers });
      if ('error' in a) return { content: [{ type: 'text', text: a.error }], isError: true };
      if ('content' in a) return { content: a.content, structuredContent: a.structuredContent };
      return { content: [{ type: 'text', text: a.text }], structuredContent: a.structuredContent };
    });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => void sessions.set(id, session),
      onsessionclosed: (id) => void sessions.delete(id),
    });
    const session: Session = { server, transport, streamOpen: false };
    return session;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    let body: unknown;
    if (req.method === 'POST') {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(400).end('not JSON');
        return;
      }
    }
    const what = req.method === 'POST' ? `POST ${String((body as { method?: string }).method)}` : (req.method ?? '');
    received.push(what);
    if (held(what)) return;
    const id = req.headers['mcp-session-id'];
    const known = typeof id === 'string' ? sessions.get(id) : undefined;
    if (typeof id === 'string' && !known) {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
      return;
    }
    if (known) {
      if (req.method === 'GET') {
        // The stream is registered before its headers go out, so from writeHead on a notification reaches it.
        const writeHead = res.writeHead.bind(res) as (...a: unknown[]) => ServerResponse;
        res.writeHead = ((...a: unknown[]) => {
          if (a[0] === 200) {
            known.streamOpen = true;
            for (const w of streamWaiters) w();
          }
          return writeHead(...a);
        }) as ServerResponse['writeHead'];
        res.on('close', () => (known.streamOpen = false));
        known.stream = res;
      }
      await known.transport.handleRequest(req, res, body);
      return;
    }
    const s = newSession();
    await s.server.connect(s.transport);
    await s.transport.handleRequest(req, res, body);
  };

  const http = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    });
  });
  const sockets = new Set<Socket>();
  http.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  const listen = (port: number) => new Promise<void>((resolve) => http.listen(port, '127.0.0.1', resolve));
  await listen(0);
  const port = (http.address() as AddressInfo).port;

  const allStreamsOpen = () => [...sessions.values()].every((s) => s.streamOpen);
  const forget = async () => {
    const open = [...sessions.values()];
    sessions.clear();
    await Promise.all(open.map((s) => s.server.close()));
  };
  const stop = async () => {
    // Connections cut first, as when a process dies: clients see their streams broken, not ended.
    http.closeAllConnections();
    await forget();
    await new Promise<void>((resolve) => http.close(() => resolve()));
  };

  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    calls,
    sessions: () => sessions.size,
    received,
    openConnections: () => sockets.size,
    hold(what) {
      held = what;
    },
    cutStreams() {
      for (const s of sessions.values()) s.stream?.socket?.destroy();
    },
    async setTools(list) {
      tools = list;
      // A client opens its notification stream just after initializing: wait (briefly) for it.
      if (!allStreamsOpen()) {
        await new Promise<void>((resolve) => {
          const finish = () => {
            clearTimeout(timer);
            streamWaiters.delete(check);
            resolve();
          };
          const check = () => allStreamsOpen() && finish();
          const timer = setTimeout(finish, 2000);
          streamWaiters.add(check);
        });
      }
      await Promise.all([...sessions.values()].map((s) => s.server.sendToolListChanged()));
    },
    expireSessions: forget,
    stop,
    restart: () => listen(port),
    close: async () => {
      if (http.listening) await stop();
    },
  };
}

/** A stdio MCP server (plain JS, run with `node`): tools echo, add, fail, broken, slow, pid, env, crash, add_tool. */
export const MCP_STDIO_SERVER = fileURLToPath(new URL('./mcp-stdio-server.mjs', import.meta.url));
