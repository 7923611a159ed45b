/**
 * The MCP client side (src/toolsources/mcp-connection.ts, mcp-tool.ts) against real servers
 * built with the official SDK: streamable HTTP (test/helpers/mcp-servers.ts) and stdio
 * (test/helpers/mcp-stdio-server.mjs).
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { McpServerDef } from '../src/config/index.js';
import type { Logger } from '../src/kernel/index.js';
import { createGuardedFetch, ToolError } from '../src/tools/index.js';
// Straight from the files: the folder's entry also hands on sources still being written.
import { McpConnection, type McpConnectionOptions, type McpToolInfo } from '../src/toolsources/mcp-connection.js';
import { mcpTools } from '../src/toolsources/mcp-tool.js';
import { MCP_STDIO_SERVER, startMcpHttpServer, type McpHttpServer, type McpTestTool } from './helpers/mcp-servers.js';

const conns: McpConnection[] = [];
const servers: McpHttpServer[] = [];
const workDir = realpathSync(mkdtempSync(join(tmpdir(), 'mcp-client-')));
afterAll(async () => {
  await Promise.all(conns.map((c) => c.close()));
  await Promise.all(servers.map((s) => s.close()));
  rmSync(workDir, { recursive: true, force: true });
});

const connect = (def: McpServerDef, opts: McpConnectionOptions = {}): McpConnection => {
  const c = new McpConnection(def, opts);
  conns.push(c);
  return c;
};
const httpDef = (url: string, over: Partial<McpServerDef> = {}): McpServerDef => ({
  name: 'web',
  transport: { kind: 'http', url, headers: { Authorization: 'Bearer tok-123' } },
  timeoutMs: 5000,
  rateLimitPerMinute: 60,
  ...over,
});
const stdioDef = (over: Partial<McpServerDef> = {}): McpServerDef => ({
  name: 'local',
  transport: { kind: 'stdio', command: process.execPath, args: [MCP_STDIO_SERVER], env: { MCP_TEST_VALUE: 'from-config' }, cwd: workDir },
  timeoutMs: 5000,
  rateLimitPerMinute: 0,
  ...over,
});
const never = () => new AbortController().signal;
const LOCAL = ['127.0.0.1/32'];
const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A Logger collecting its lines as `<level> <message>`. */
function logger(): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  const log = Object.fromEntries(['debug', 'info', 'warn', 'error'].map((l) => [l, (_o: object, m: string) => lines.push(`${l} ${m}`)]));
  return { log: log as unknown as Logger, lines };
}

/** A tool whose calls wait until released (or forever), and never stop on cancellation. */
function gateTool(name = 'gate'): { tool: McpTestTool; started: Promise<void>; release: () => void } {
  let started!: () => void;
  let release!: () => void;
  const s = new Promise<void>((r) => (started = r));
  const released = new Promise<{ text: string }>((r) => (release = () => r({ text: 'released' })));
  return { started: s, release, tool: { name, inputSchema: { type: 'object' }, handler: () => (started(), released) } };
}

const count = (list: string[], item: string) => list.filter((x) => x === item).length;

/** The ToolError a promise rejects with (fails the test if it resolves or rejects otherwise). */
async function toolError(p: Promise<unknown>): Promise<ToolError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ToolError);
  return err as ToolError;
}

/** Resolves when a `slow` call has reached the server's handler, and the handler's abort signal. */
function slowTool(): { tool: McpTestTool; started: Promise<AbortSignal> } {
  let started!: (s: AbortSignal) => void;
  const p = new Promise<AbortSignal>((r) => (started = r));
  return {
    started: p,
    tool: {
      name: 'slow',
      inputSchema: { type: 'object' },
      handler: (_a, { signal }) =>
        new Promise((resolve) => {
          started(signal);
          signal.addEventListener('abort', () => resolve({ text: 'stopped' }));
        }),
    },
  };
}

const echo: McpTestTool = {
  name: 'echo',
  description: 'Echoes text',
  inputSchema: { type: 'object', properties: { text: { type: 'string', maxLength: 50 } }, required: ['text'], additionalProperties: false },
  handler: (a) => ({ text: `echo: ${String(a.text)}`, structuredContent: { echoed: a.text } }),
};
const lookup: McpTestTool = {
  name: 'lookup.v2',
  inputSchema: { type: 'object' },
  readOnly: true,
  handler: () => ({
    content: [
      { type: 'text', text: 'found' },
      { type: 'image', mimeType: 'image/png', data: Buffer.alloc(1234).toString('base64') },
      { type: 'resource_link', uri: 'file:///a.txt', name: 'a' },
    ],
  }),
};
const failing: McpTestTool = { name: 'fail', inputSchema: { type: 'object' }, handler: () => ({ error: 'quota exceeded' }) };
const broken: McpTestTool = {
  name: 'broken',
  inputSchema: { type: 'object' },
  handler: () => {
    throw new McpError(-32050, 'backend database is down');
  },
};
const badName: McpTestTool = { name: 'has space', inputSchema: { type: 'object' }, handler: () => ({ text: '' }) };

describe('MCP over streamable HTTP', () => {
  it('lists tools page by page with their schemas as given, and calls them with arguments and the configured headers', async () => {
    const server = await startMcpHttpServer({ tools: [echo, lookup, failing, badName], pageSize: 2 });
    servers.push(server);
    const conn = connect(httpDef(server.url));
    expect(conn.knownTools()).toBeUndefined();

    const tools = await conn.listTools();
    expect(tools).toEqual([
      { name: 'echo', description: 'Echoes text', inputSchema: echo.inputSchema, readOnly: false },
      { name: 'lookup.v2', description: '', inputSchema: { type: 'object', properties: {} }, readOnly: true },
      { name: 'fail', description: '', inputSchema: { type: 'object', properties: {} }, readOnly: false },
    ]);
    expect(conn.knownTools()).toEqual(tools);
    expect(conn.serverVersion()).toBe('1.2.3');

    const out = await conn.callTool('echo', { text: 'hi' }, never());
    expect(out).toEqual({ text: 'echo: hi', output: { content: [{ type: 'text', text: 'echo: hi' }], structuredContent: { echoed: 'hi' } } });
    expect(server.calls.at(-1)).toMatchObject({ name: 'echo', args: { text: 'hi' }, headers: { authorization: 'Bearer tok-123' } });

    const mixed = await conn.callTool('lookup.v2', {}, never());
    expect(mixed.text).toBe('found\n[image image/png, 1234 bytes]\n[resource link file:///a.txt]');
  });

  it('an isError result is a "failed" ToolError; a JSON-RPC error a "backend" one; both name the server', async () => {
    const server = await startMcpHttpServer({ tools: [failing, broken] });
    servers.push(server);
    const conn = connect(httpDef(server.url));
    const failed = await toolError(conn.callTool('fail', {}, never()));
    expect(failed).toMatchObject({ kind: 'failed', message: 'MCP server "web" tool "fail" reported an error: quota exceeded' });
    const rpc = await toolError(conn.callTool('broken', {}, never()));
    expect(rpc).toMatchObject({ kind: 'backend', message: 'MCP server "web" answered an error: backend database is down (-32050)' });
    // Answers, not outages: the next call goes straight through.
    expect(server.sessions()).toBe(1);
    await expect(conn.callTool('fail', {}, never())).rejects.toThrow(/reported an error/);
  });

  it('follows tools/list_changed: the list is read again and onToolsChanged fires', async () => {
    const server = await startMcpHttpServer({ tools: [echo] });
    servers.push(server);
    let changed!: (t: McpToolInfo[]) => void;
    const seen = new Promise<McpToolInfo[]>((r) => (changed = r));
    const conn = connect(httpDef(server.url), { onToolsChanged: (t) => changed(t) });
    expect((await conn.listTools()).map((t) => t.name)).toEqual(['echo']);
    await server.setTools([echo, lookup]);
    expect((await seen).map((t) => t.name)).toEqual(['echo', 'lookup.v2']);
    expect(conn.knownTools()?.map((t) => t.name)).toEqual(['echo', 'lookup.v2']);
  });

  it('honours abort (the server sees the cancellation) and its own time limit', async () => {
    const { tool, started } = slowTool();
    const server = await startMcpHttpServer({ tools: [tool] });
    servers.push(server);
    const conn = connect(httpDef(server.url, { timeoutMs: 300 }));
    const ac = new AbortController();
    const call = toolError(conn.callTool('slow', {}, ac.signal));
    const serverSignal = await started;
    ac.abort(new Error('task cancelled'));
    expect((await call).message).toBe('MCP server "web": tool "slow" was aborted: task cancelled');
    await vi.waitFor(() => expect(serverSignal.aborted).toBe(true));

    const t0 = Date.now();
    expect((await toolError(conn.callTool('slow', {}, never()))).message).toBe('MCP server "web" did not answer tool "slow" within 0.3 s');
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('a server that goes away: a clear error naming it, fail-fast during backoff, recovery on the same port', async () => {
    const { tool, started } = slowTool();
    const server = await startMcpHttpServer({ tools: [echo, tool] });
    servers.push(server);
    let requests = 0;
    const counting: typeof fetch = (input, init) => {
      requests++;
      return fetch(input, init);
    };
    const logged: string[] = [];
    const log = Object.fromEntries(['debug', 'info', 'warn'].map((l) => [l, (o: object, m: string) => logged.push(`${l} ${JSON.stringify(o)} ${m}`)]));
    let changed!: (t: McpToolInfo[]) => void;
    const seen = new Promise<McpToolInfo[]>((r) => (changed = r));
    const conn = connect(httpDef(server.url), { fetch: counting, log: log as unknown as Logger, onToolsChanged: (t) => changed(t) });
    await conn.listTools();
    await conn.callTool('echo', { text: 'a' }, never());

    // A call in flight when the server goes away fails now, not at its time limit.
    const inFlight = toolError(conn.callTool('slow', {}, never()));
    await started;
    await server.stop();
    expect((await inFlight).message).toMatch(/^MCP server "web" is unavailable: /);

    const refused = await toolError(conn.callTool('echo', { text: 'b' }, never()));
    expect(refused.kind).toBe('backend');
    expect(refused.message).toMatch(new RegExp(`^MCP server "web" is unavailable: connect ECONNREFUSED 127.0.0.1:${server.port} \\(next attempt in 1 s\\)$`));
    const before = requests;
    const t0 = Date.now();
    const fast = await toolError(conn.callTool('echo', { text: 'c' }, never()));
    expect(Date.now() - t0).toBeLessThan(50);
    expect(fast.message).toBe(refused.message);
    expect(requests).toBe(before);

    // While it is away its tools change: no notice can reach us, so reconnecting reads the list again.
    await server.setTools([echo, tool, lookup]);
    await server.restart();
    await vi.waitFor(async () => expect((await conn.callTool('echo', { text: 'd' }, never())).text).toBe('echo: d'), { timeout: 3000, interval: 100 });
    expect((await seen).map((t) => t.name)).toEqual(['echo', 'slow', 'lookup.v2']);
    expect(logged.some((l) => l.startsWith('warn {"mcpServer":"web"} MCP server "web": connection lost: '))).toBe(true);
    expect(logged.join('\n')).not.toContain('tok-123');
  });

  it('a session the server no longer knows (404): the call goes through on a new session', async () => {
    const server = await startMcpHttpServer({ tools: [echo] });
    servers.push(server);
    const conn = connect(httpDef(server.url));
    await conn.callTool('echo', { text: 'a' }, never());
    await server.expireSessions();
    expect((await conn.callTool('echo', { text: 'b' }, never())).text).toBe('echo: b');
    expect(server.calls.map((c) => c.args.text)).toEqual(['a', 'b']);
  });

  it('a server never reached: unavailable with the reason, and the next attempt backs off', async () => {
    const server = await startMcpHttpServer({ tools: [] });
    await server.close();
    const conn = connect(httpDef(server.url));
    const err = await toolError(conn.listTools());
    expect(err.message).toMatch(/^MCP server "web" is unavailable: connect ECONNREFUSED .* \(next attempt in 1 s\)$/);
    expect(conn.knownTools()).toBeUndefined();
  });
});

describe('MCP over streamable HTTP: a misbehaving server cannot hold or flood us', () => {
  it('a cancelled or timed-out call ends its own request: no socket or abort listener is left behind', async () => {
    const hang = gateTool('hang');
    const server = await startMcpHttpServer({ tools: [hang.tool] });
    servers.push(server);
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    const conn = connect(httpDef(server.url, { timeoutMs: 200 }), { fetch: createGuardedFetch({ allowHosts: LOCAL }) });
    await conn.listTools();
    await vi.waitFor(() => expect(server.openConnections()).toBe(1)); // the notification stream

    for (let i = 1; i <= 12; i++) {
      const ac = new AbortController();
      const call = toolError(conn.callTool('hang', {}, ac.signal));
      await vi.waitFor(() => expect(count(server.received, 'POST tools/call')).toBe(i));
      ac.abort();
      expect((await call).message).toBe('MCP server "web": tool "hang" was aborted');
    }
    for (let i = 0; i < 3; i++) expect((await toolError(conn.callTool('hang', {}, never()))).message).toMatch(/did not answer tool "hang" within 0.2 s/);
    await vi.waitFor(() => expect(server.openConnections()).toBe(1));
    process.off('warning', onWarning);
    expect(warnings.map((w) => w.name)).not.toContain('MaxListenersExceededWarning');
  });

  it('reads a tool list in 50 pages and 1,000 tools at most, each name once, stops on a repeated cursor, within the time limit', async () => {
    let mode = 'repeat';
    const tool = (name: string): McpTestTool => ({ name, inputSchema: { type: 'object' }, handler: () => ({ text: name }) });
    const server = await startMcpHttpServer({
      tools: [],
      listPage: async (cursor) => {
        const n = Number(cursor ?? 0);
        if (mode === 'repeat') return { tools: [tool('a'), tool('b'), tool('a')], nextCursor: 'again' };
        if (mode === 'endless') return { tools: [tool(`t${n}`)], nextCursor: String(n + 1) };
        if (mode === 'many') return { tools: Array.from({ length: 400 }, (_, i) => tool(`t${n * 400 + i}`)), nextCursor: String(n + 1) };
        if (mode === 'slow') await delay(100);
        if (mode === 'huge') return { tools: [{ ...tool('big'), description: 'x'.repeat(30_000) }] };
        return { tools: [tool(`t${n}`)], nextCursor: String(n + 1) };
      },
    });
    servers.push(server);
    const { log, lines } = logger();
    const conn = connect(httpDef(server.url), { log });
    const lists = () => count(server.received, 'POST tools/list');

    expect((await conn.listTools()).map((t) => t.name)).toEqual(['a', 'b']);
    expect(lists()).toBe(2);
    expect(lines).toContain('warn MCP server "web": 2 tools ("a", "b") listed more than once: the first of each is used');
    expect(lines.some((l) => l.includes('tools/list stopped: its pages repeat'))).toBe(true);

    mode = 'endless';
    expect(await conn.listTools()).toHaveLength(50);
    expect(lists()).toBe(2 + 50);
    mode = 'many';
    const many = await conn.listTools();
    expect(many).toHaveLength(1000);
    expect(many.at(-1)?.name).toBe('t999');
    expect(lists()).toBe(2 + 50 + 3);
    expect(lines).toContain('warn MCP server "web": 200 tools ("t1000", "t1001", "t1002", "t1003", "t1004", ...) dropped: more than 1000 tools');

    // No signal: the whole list still comes within the connection's time limit.
    mode = 'slow';
    const slow = connect(httpDef(server.url, { timeoutMs: 400 }));
    const t0 = Date.now();
    expect((await toolError(slow.listTools())).message).toBe('MCP server "web" did not answer tools/list within 0.4 s');
    expect(Date.now() - t0).toBeLessThan(1500);

    mode = 'huge';
    const small = connect(httpDef(server.url), { maxResponseBytes: 20_000 });
    expect((await toolError(small.listTools())).message).toBe('MCP server "web" is unavailable: an answer was larger than 20000 bytes');
  });

  it('coalesces a flood of tools/list_changed: one read pending at most, one per interval, the last list wins', async () => {
    const server = await startMcpHttpServer({ tools: [echo] });
    servers.push(server);
    const seen: string[][] = [];
    const conn = connect(httpDef(server.url), { refreshIntervalMs: 300, onToolsChanged: (t) => seen.push(t.map((x) => x.name)) });
    await conn.listTools();
    for (let i = 0; i < 30; i++) await server.setTools(i % 2 ? [echo] : [echo, lookup]);
    await server.setTools([echo, lookup, failing]);
    await vi.waitFor(() => expect(seen.at(-1)).toEqual(['echo', 'lookup.v2', 'fail']));
    expect(count(server.received, 'POST tools/list')).toBeLessThanOrEqual(4);
  });

  it('close() ends a connection attempt at once, and leaves no timer or socket behind', async () => {
    const server = await startMcpHttpServer({ tools: [echo] });
    servers.push(server);
    server.hold((r) => r === 'POST initialize');
    const attempt = connect(httpDef(server.url, { timeoutMs: 4000 }), { fetch: createGuardedFetch({ allowHosts: LOCAL }) });
    const failed = toolError(attempt.listTools());
    await vi.waitFor(() => expect(server.received).toContain('POST initialize'));
    const t0 = Date.now();
    await attempt.close();
    expect(Date.now() - t0).toBeLessThan(500);
    expect((await failed).message).toBe('MCP server "web" is closed');
    await vi.waitFor(() => expect(server.openConnections()).toBe(0));

    // A notification stream cut, its reopening under way when the connection closes: the SDK
    // would try again on a timer of its own after the close (and log that it failed).
    server.hold(() => false);
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const { log, lines } = logger();
    const conn = connect(httpDef(server.url), { log, fetch: createGuardedFetch({ allowHosts: LOCAL }) });
    await conn.callTool('echo', { text: 'a' }, never());
    await vi.waitFor(() => expect(count(server.received, 'GET')).toBe(1));
    server.hold((r) => r === 'GET');
    server.cutStreams();
    await vi.waitFor(() => expect(count(server.received, 'GET')).toBe(2), { timeout: 3000 });
    const before = timers();
    const logged = lines.length;
    await conn.close();
    await vi.waitFor(() => expect(server.openConnections()).toBe(0));
    await delay(1600); // past the SDK's next attempt
    expect(timers()).toBeLessThanOrEqual(before);
    expect(lines.slice(logged)).toEqual([]);
  });

  it('a cut notification stream is not an outage: a call in flight still gets its answer', async () => {
    const gate = gateTool();
    const server = await startMcpHttpServer({ tools: [gate.tool] });
    servers.push(server);
    const { log, lines } = logger();
    const conn = connect(httpDef(server.url), { log });
    await conn.listTools();
    await vi.waitFor(() => expect(server.received).toContain('GET'));
    const call = conn.callTool('gate', {}, never());
    await gate.started;
    server.cutStreams();
    await vi.waitFor(() => expect(lines.some((l) => l.includes('SSE stream disconnected'))).toBe(true));
    gate.release();
    expect((await call).text).toBe('released');
  });

  it('a call whose signal is already aborted does not connect', async () => {
    const server = await startMcpHttpServer({ tools: [echo] });
    servers.push(server);
    const conn = connect(httpDef(server.url));
    expect((await toolError(conn.listTools(AbortSignal.abort()))).message).toBe('MCP server "web": tools/list was aborted');
    await delay(50);
    expect(server.received).toEqual([]);
  });

  it('cuts the text of a result at maxResultChars; redacts configured header values in every message', async () => {
    const leaky: McpTestTool = {
      name: 'leaky',
      inputSchema: { type: 'object' },
      handler: (a) => {
        if (a.how === 'rpc') throw new McpError(-32050, 'key Bearer tok-123456 refused (k-secret-9)');
        return { error: 'tok-123456 has expired' };
      },
    };
    const server = await startMcpHttpServer({ tools: [echo, leaky] });
    servers.push(server);
    const { log, lines } = logger();
    const def = httpDef(server.url, { transport: { kind: 'http', url: server.url, headers: { Authorization: 'Bearer tok-123456', 'X-Key': 'k-secret-9' } } });
    const conn = connect(def, { log, maxResultChars: 12 });
    expect((await conn.callTool('echo', { text: 'hello world' }, never())).text).toBe('echo: hello \n\n[truncated: 17 characters in all]');
    expect((await toolError(conn.callTool('leaky', { how: 'rpc' }, never()))).message).toBe(
      'MCP server "web" answered an error: key [redacted] refused ([redacted]) (-32050)',
    );
    // Redacted before it is cut: no part of a secret is left at the cut.
    expect((await toolError(conn.callTool('leaky', {}, never()))).message).toBe(
      'MCP server "web" tool "leaky" reported an error: [redacted] h\n\n[truncated: 22 characters in all]',
    );
    expect(lines.join('\n')).not.toMatch(/tok-123456|k-secret-9/);
  });

  it("the guard's refusal of a server whose host now resolves to a private address is passed on, not an outage", async () => {
    const server = await startMcpHttpServer({ tools: [echo] });
    servers.push(server);
    let address = '127.0.0.1';
    const fetch = createGuardedFetch({ allowHosts: LOCAL, lookup: async () => [{ address, family: 4 }] });
    const conn = connect(httpDef(`http://mcp.test:${server.port}/mcp`), { fetch });
    expect((await conn.callTool('echo', { text: 'a' }, never())).text).toBe('echo: a');
    address = '10.0.0.5';
    for (let i = 0; i < 2; i++) {
      expect(await toolError(conn.callTool('echo', { text: 'b' }, never()))).toMatchObject({
        kind: 'bad_arguments',
        message: 'MCP server "web": refused: mcp.test resolves to a private address (10.0.0.5)',
      });
    }
    const fresh = connect(httpDef(`http://mcp.test:${server.port}/mcp`), { fetch });
    expect(await toolError(fresh.listTools())).toMatchObject({
      kind: 'bad_arguments',
      message: 'MCP server "web": refused: mcp.test resolves to a private address (10.0.0.5)',
    });
    address = '127.0.0.1';
    expect((await conn.callTool('echo', { text: 'c' }, never())).text).toBe('echo: c');
    expect((await fresh.listTools()).map((t) => t.name)).toEqual(['echo']);
  });
});

describe('MCP over stdio', () => {
  it('lists and calls tools of a child process (env and cwd as configured); errors as over HTTP', async () => {
    const conn = connect(stdioDef());
    const tools = await conn.listTools();
    expect(tools.map((t) => t.name)).toEqual(['echo', 'add', 'fail', 'broken', 'slow', 'pid', 'env', 'crash', 'add_tool']);
    expect(tools[1]).toEqual({
      name: 'add',
      description: 'Adds two numbers',
      inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
      readOnly: true,
    });
    expect(conn.serverVersion()).toBe('0.9.0');
    expect(await conn.callTool('add', { a: 2, b: 3 }, never())).toEqual({
      text: '5',
      output: { content: [{ type: 'text', text: '5' }], structuredContent: { sum: 5 } },
    });
    expect((await conn.callTool('env', { name: 'MCP_TEST_VALUE' }, never())).text).toBe(`from-config ${workDir}`);
    // Only a minimal environment is inherited, not this process's.
    process.env.MCP_TEST_LEAK = 'x';
    expect((await conn.callTool('env', { name: 'MCP_TEST_LEAK' }, never())).text).toBe(` ${workDir}`);
    delete process.env.MCP_TEST_LEAK;
    expect(await toolError(conn.callTool('fail', {}, never()))).toMatchObject({
      kind: 'failed',
      message: 'MCP server "local" tool "fail" reported an error: it went wrong',
    });
    expect(await toolError(conn.callTool('broken', {}, never()))).toMatchObject({
      kind: 'backend',
      message: 'MCP server "local" answered an error: broken on purpose (-32603)',
    });
  });

  it('follows tools/list_changed and honours abort', async () => {
    let changed!: (t: McpToolInfo[]) => void;
    const seen = new Promise<McpToolInfo[]>((r) => (changed = r));
    const conn = connect(stdioDef(), { onToolsChanged: (t) => changed(t) });
    await conn.listTools();
    await conn.callTool('add_tool', {}, never());
    expect((await seen).map((t) => t.name)).toContain('late');

    const ac = new AbortController();
    const call = toolError(conn.callTool('slow', { ms: 30_000 }, ac.signal));
    setTimeout(() => ac.abort(), 50);
    expect((await call).message).toBe('MCP server "local": tool "slow" was aborted');
    expect((await conn.callTool('echo', { text: 'still there' }, never())).text).toBe('still there');
  });

  it('a child that exits: the call fails naming the server, the next one starts a new child', async () => {
    // A configured environment value is redacted wherever it shows (here the server's stderr).
    const conn = connect(
      stdioDef({ transport: { ...stdioDef().transport, env: { MCP_TEST_VALUE: 'from-config', FOOD: 'cheese' } } as McpServerDef['transport'] }),
    );
    const pid1 = Number((await conn.callTool('pid', {}, never())).text);
    const crashed = await toolError(conn.callTool('crash', {}, never()));
    expect(crashed).toMatchObject({
      kind: 'backend',
      message: 'MCP server "local" is unavailable: its process exited; its stderr ends: fatal: out of [redacted]',
    });
    const pid2 = Number((await conn.callTool('pid', {}, never())).text);
    expect(pid2).not.toBe(pid1);
    expect(alive(pid1)).toBe(false);
  });

  it('close() ends the child process (no orphan); later calls fail', async () => {
    const conn = connect(stdioDef());
    const pid = Number((await conn.callTool('pid', {}, never())).text);
    expect(alive(pid)).toBe(true);
    await conn.close();
    expect(alive(pid)).toBe(false);
    expect((await toolError(conn.callTool('pid', {}, never()))).message).toBe('MCP server "local" is closed');
  });

  it('a command that cannot start: unavailable with the reason, backing off', async () => {
    const conn = connect(stdioDef({ transport: { kind: 'stdio', command: join(workDir, 'no-such-server'), args: [], env: {} } }));
    const err = await toolError(conn.listTools());
    expect(err.message).toMatch(/^MCP server "local" is unavailable: spawn .*no-such-server ENOENT \(next attempt in 1 s\)$/);
  });
});

describe('mcpTools', () => {
  it('makes each server tool a Tool named mcp.<server>.<tool> that calls through the connection', async () => {
    const server = await startMcpHttpServer({ tools: [echo, lookup] });
    servers.push(server);
    const def = httpDef(server.url, { name: 'gh', timeoutMs: 7000, rateLimitPerMinute: 12 });
    const conn = connect(def);
    const infos = await conn.listTools();
    const long = { name: 'long', description: 'x'.repeat(1500), inputSchema: { type: 'object' as const, properties: {} }, readOnly: false };
    const tools = mcpTools(conn, def, [...infos, long], { rateLimitKey: 'src.gh' });
    expect(tools.map(({ run: _run, ...t }) => t)).toEqual([
      {
        name: 'mcp.gh.echo',
        description: 'Echoes text',
        category: 'mcp',
        version: '1.2.3',
        parameters: echo.inputSchema,
        timeoutMs: 7000,
        costPerUse: 0,
        dangerous: false,
        retryable: false,
        rateLimit: { perMinute: 12, key: 'src.gh' },
      },
      expect.objectContaining({ name: 'mcp.gh.lookup.v2', description: 'lookup.v2 on MCP server gh', retryable: true }),
      expect.objectContaining({ name: 'mcp.gh.long', description: 'x'.repeat(1000) }),
    ]);
    expect((await tools[0].run({ text: 'yo' }, { signal: never() })).text).toBe('echo: yo');
    expect(mcpTools(conn, { ...def, rateLimitPerMinute: 0 }, infos, { rateLimitKey: 'k' })[0].rateLimit).toBeUndefined();
  });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
