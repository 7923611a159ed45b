/**
 * The service as an MCP server at /mcp, driven by the official SDK client over streamable HTTP
 * with authentication on: discovery (the four task tools, one per catalogue agent with its input
 * schema as GET /api/v1/agents lists it, the caller's tools as GET /api/v1/tools lists them, a
 * user's own MCP server's tools under names hosts accept), submit_task with and without wait
 * (progress notifications while waiting, a wait that ends first), get_task / list_tasks /
 * cancel_task, agent runs, a tool execution, argument errors naming the field, ownership across
 * users and within a tenant, the burst limit on list_tasks, batches refused, and the HTTP
 * answers without a key, to GET and to DELETE. Then the server alone (an in-memory client and a
 * stand-in facade): a catalogue that cannot be listed, a task unreadable after its submission,
 * the default wait, heartbeats and the cap on concurrent waits.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/kernel/index.js';
import { WaitLimit, createMcpServer, type McpFacade, type SubmittedTask, type WaitOptions } from '../src/mcpserver/index.js';
import { json, startTestApp, waitFor, type TestApp } from './helpers/app.js';
import { CALC_AGENT } from './helpers/agents.js';
import { startMcpHttpServer, type McpHttpServer } from './helpers/mcp-servers.js';
import { colleagueOf, registerUser, type TestUser } from './helpers/users.js';

const SECRET = 'Bearer mcp-s3cret-never-shown';
/** A tool name that makes `tool_mcp.calc.<name>` longer than the 64 characters hosts accept. */
const LONG = `a_tool_whose_name_is_long_${'x'.repeat(44)}`;
const VALID_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

let t: TestApp;
let dir: string;
let upstream: McpHttpServer;
let a: TestUser;
let b: TestUser;
const clients: Client[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mcp-server-'));
  writeFileSync(join(dir, 'calc.yaml'), CALC_AGENT);
  upstream = await startMcpHttpServer({
    tools: [
      {
        name: 'add',
        inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
        handler: (x) => ({ text: String(Number(x.a) + Number(x.b)) }),
      },
      { name: LONG, inputSchema: { type: 'object', properties: {} }, handler: () => ({ text: 'long ok' }) },
    ],
  });
  t = await startTestApp({
    GATEWAY_SKIP_AUTH: '0',
    PASSWORD_SCRYPT_N: '1024',
    JWT_SECRET: 'mcp-server-test-secret-0123456789abcdefgh',
    AGENT_CATALOG_DIR: dir,
    CALCULATOR_RATE_LIMIT: '0',
    RATE_LIMIT_REQUESTS: '100000',
    RATE_LIMIT_TASK_LIST_BURST: '3',
    CHANNEL_SECRET_KEY: Buffer.alloc(32, 9).toString('hex'),
    TOOLS_HTTP_ALLOW_HOSTS: '127.0.0.1/32',
  });
  [a, b] = await Promise.all([registerUser(t.base, 'mcp'), registerUser(t.base, 'mcp')]);
}, 60_000);
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await t?.stop();
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function connect(u: TestUser): Promise<Client> {
  const c = new Client({ name: 'mcp-server-test', version: '1.0.0' });
  await c.connect(new StreamableHTTPClientTransport(new URL(`${t.base}/mcp`), { requestInit: { headers: u.h } }));
  clients.push(c);
  return c;
}

const call = (c: Client, name: string, args: Record<string, unknown>, o: { onprogress?: (p: Progress) => void } = {}) =>
  c.callTool({ name, arguments: args }, undefined, { ...o, timeout: 60_000 }) as Promise<CallToolResult>;
const text = (r: CallToolResult) => r.content.map((x) => (x.type === 'text' ? x.text : '')).join('');
const rest = async (path: string, u: TestUser) => json(await fetch(t.base + path, { headers: u.h }));

describe('/mcp', () => {
  it('lists the task tools, one tool per catalogue agent (input schema as the API lists it) and the caller tools', async () => {
    const c = await connect(a);
    expect(c.getServerVersion()?.name).toBe('taskorch');
    const { tools } = await c.listTools();
    const byName = new Map(tools.map((x) => [x.name, x]));
    for (const name of ['submit_task', 'get_task', 'list_tasks', 'cancel_task']) expect(byName.has(name), name).toBe(true);
    expect(byName.get('submit_task')!.inputSchema.required).toEqual(['query']);

    const { agents } = await rest('/api/v1/agents', a);
    expect(agents.map((x: { id: string }) => x.id)).toEqual(['calc']);
    const agent = byName.get('agent_calc')!;
    const { properties, required } = agents[0].input_schema;
    expect(agent.inputSchema).toEqual({
      type: 'object',
      properties: { ...properties, wait: expect.any(Object), timeout_seconds: expect.any(Object), session_id: expect.any(Object) },
      required,
    });

    const restTools: { name: string; parameters: Record<string, unknown> }[] = await rest('/api/v1/tools', a);
    expect(restTools.length).toBeGreaterThan(0);
    for (const x of restTools) expect(byName.get(`tool_${x.name}`)?.inputSchema, x.name).toEqual({ ...x.parameters, type: 'object' });
    expect(tools.length).toBe(4 + 1 + restTools.length);
    for (const x of tools) expect(x.name).toMatch(VALID_NAME);
  });

  it("a user's own MCP server: its tools listed under names hosts accept and run through /mcp; nobody else sees them, nothing shows the header", async () => {
    const reg = await fetch(`${t.base}/api/v1/tools/mcp-servers`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...a.h },
      body: JSON.stringify({ name: 'calc', url: upstream.url, headers: { Authorization: SECRET } }),
    });
    expect(reg.status, JSON.stringify(await json(reg))).toBe(201);
    const [ca, cb] = await Promise.all([connect(a), connect(b)]);
    const mine = (await ca.listTools()).tools;
    for (const x of mine) expect(x.name).toMatch(VALID_NAME);
    const byTitle = new Map(mine.map((x) => [x.title, x.name]));
    expect(byTitle.get('mcp.calc.add')).toBe('tool_mcp_calc_add');
    const long = byTitle.get(`mcp.calc.${LONG}`)!;
    expect(long).toMatch(VALID_NAME);

    const add = await call(ca, 'tool_mcp_calc_add', { a: 2, b: 40 });
    expect(add.isError).toBeFalsy();
    expect(text(add)).toBe('42');
    expect(upstream.calls.at(-1)).toMatchObject({ name: 'add', args: { a: 2, b: 40 }, headers: { authorization: SECRET } });
    const ran = await call(ca, long, {});
    expect(text(ran)).toBe('long ok');
    expect(upstream.calls.at(-1)!.name).toBe(LONG);

    const theirs = (await cb.listTools()).tools;
    expect(theirs.filter((x) => x.title?.startsWith('mcp.calc.'))).toEqual([]);
    await expect(call(cb, 'tool_mcp_calc_add', { a: 1, b: 1 })).rejects.toThrow(/Unknown tool: tool_mcp_calc_add/);
    expect(JSON.stringify([mine, add, ran, theirs])).not.toContain('s3cret');
  });

  it('submit_task answers with the task at once; get_task and list_tasks show it as the API does', async () => {
    const c = await connect(a);
    const r = await call(c, 'submit_task', { query: 'mcp: what is a stream?', mode: 'simple', session_id: 'mcp-session-1' });
    expect(r.isError).toBeFalsy();
    const sub = r.structuredContent as { task_id: string; workflow_id: string; status: string; session_id: string };
    expect(sub.task_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(sub.workflow_id).toBe(sub.task_id);
    expect(sub.session_id).toBe('mcp-session-1');
    expect(JSON.parse(text(r))).toEqual(sub);

    const done = await waitFor(async () => {
      const g = (await call(c, 'get_task', { task_id: sub.task_id })).structuredContent as { status: string };
      return g.status === 'TASK_STATUS_COMPLETED' ? g : undefined;
    }, 30_000);
    expect(done).toEqual(await rest(`/api/v1/tasks/${sub.task_id}`, a));

    const list = (await call(c, 'list_tasks', { limit: 100, status: 'completed' })).structuredContent as { tasks: { task_id: string }[]; total_count: number };
    expect(list).toEqual(await rest('/api/v1/tasks?limit=100&status=completed', a));
    expect(list.tasks.map((x) => x.task_id)).toContain(sub.task_id);
  });

  it('submit_task with wait: progress notifications while it runs, then the result', async () => {
    const c = await connect(a);
    const seen: Progress[] = [];
    const r = await call(c, 'submit_task', { query: 'mcp: say hello', mode: 'simple', wait: true, timeout_seconds: 60 }, { onprogress: (p) => seen.push(p) });
    expect(r.isError).toBeFalsy();
    const task = r.structuredContent as { task_id: string; status: string; result: string };
    expect(task.status).toBe('TASK_STATUS_COMPLETED');
    expect(task.result.length).toBeGreaterThan(0);
    expect(text(r)).toBe(task.result);
    expect(seen[0]).toMatchObject({ progress: 0, message: `task ${task.task_id} submitted` });
    const messages = seen.map((p) => p.message ?? '');
    expect(messages.some((m) => m.startsWith('WORKFLOW_STARTED'))).toBe(true);
    expect(messages.some((m) => m.startsWith('WORKFLOW_COMPLETED'))).toBe(true);
    expect(seen.map((p) => p.progress)).toEqual([...seen.map((p) => p.progress)].sort((x, y) => x - y));
    expect(new Set(seen.map((p) => p.progress)).size).toBe(seen.length);
  });

  it('runs a catalogue agent and a tool; bad arguments are errors naming the field', async () => {
    const c = await connect(a);
    const agent = await call(c, 'agent_calc', { expression: '2+3' });
    expect(agent.isError).toBeFalsy();
    expect((agent.structuredContent as { status: string }).status).toBe('TASK_STATUS_COMPLETED');
    expect(JSON.parse(text(agent))).toEqual({ expression: '2+3', result: '5', decimal: '5', exact: true, value: 5 });

    // wait: false answers with the task at once; session_id puts it in that session.
    const quick = await call(c, 'agent_calc', { expression: '6*7', wait: false, session_id: 'mcp-agent-session' });
    expect(quick.isError).toBeFalsy();
    const queued = quick.structuredContent as { task_id: string; session_id: string };
    expect(queued.session_id).toBe('mcp-agent-session');
    const ran = await waitFor(async () => {
      const g = await rest(`/api/v1/tasks/${queued.task_id}`, a);
      return g.status === 'TASK_STATUS_COMPLETED' ? g : undefined;
    }, 30_000);
    expect(ran.session_id).toBe('mcp-agent-session');

    const tool = await call(c, 'tool_calculator', { expression: '6*7' });
    expect(tool.isError).toBeFalsy();
    expect(tool.structuredContent).toMatchObject({ success: true, output: { result: '42' } });

    for (const [name, args, message] of [
      ['tool_calculator', {}, 'arguments.expression is required'],
      ['submit_task', {}, 'arguments.query is required'],
      ['submit_task', { query: 'x', mode: 'turbo' }, 'arguments.mode must be one of: simple, standard, complex, supervisor'],
      ['submit_task', { query: 'x', colour: 'red' }, 'arguments.colour is not a parameter of this tool'],
      ['get_task', {}, 'arguments.task_id is required'],
      ['list_tasks', { limit: 500 }, 'arguments.limit must be <= 100'],
      ['agent_calc', {}, 'input validation failed: missing required field: expression'],
      ['agent_calc', { expression: '1', wait: false, timeout_seconds: 5 }, 'arguments.timeout_seconds applies only with wait: true'],
      ['agent_calc', { expression: '1', timeout_seconds: 0 }, 'arguments.timeout_seconds must be >= 1'],
      ['submit_task', { query: 'x', timeout_seconds: 5 }, 'arguments.timeout_seconds applies only with wait: true'],
    ] as const) {
      const r = await call(c, name, args);
      expect(r.isError, `${name} ${JSON.stringify(args)}`).toBe(true);
      expect(text(r)).toBe(message);
    }
    await expect(call(c, 'no_such_tool', {})).rejects.toThrow(/Unknown tool: no_such_tool/);
  });

  it('a wait that ends first answers with the task; cancel_task cancels it; another user or a colleague sees none of it', async () => {
    const colleague = await colleagueOf(t.app.store.sql, a);
    const [ca, cb, cc] = await Promise.all([connect(a), connect(b), connect(colleague)]);
    const query = 'mcp: private question of user a';
    const waited = await call(ca, 'submit_task', { query, mode: 'simple', context: { require_approval: true }, wait: true, timeout_seconds: 1 });
    expect(waited.isError).toBeFalsy();
    const sub = waited.structuredContent as { task_id: string; status: string };
    expect(text(waited)).toMatch(new RegExp(`^Task ${sub.task_id} is ${sub.status} after 1 s of waiting; it runs on: read it with get_task`));
    await waitFor(async () => ['TASK_STATUS_RUNNING', 'TASK_STATUS_PAUSED'].includes((await rest(`/api/v1/tasks/${sub.task_id}`, a)).status), 30_000);

    // A colleague of the same tenant is refused as the REST API refuses them.
    const restColleague = await fetch(`${t.base}/api/v1/tasks/${sub.task_id}`, { headers: colleague.h });
    expect(restColleague.status).toBe(403);
    const refusal = (await json(restColleague)).error;
    for (const name of ['get_task', 'cancel_task'] as const) {
      const r = await call(cc, name, { task_id: sub.task_id });
      expect(r.isError, name).toBe(true);
      expect(text(r)).toBe(refusal);
      expect(JSON.stringify(r)).not.toContain(query);
    }

    for (const [name, args] of [
      ['get_task', { task_id: sub.task_id }],
      ['cancel_task', { task_id: sub.task_id, reason: 'not mine' }],
    ] as const) {
      const r = await call(cb, name, args);
      expect(r.isError, name).toBe(true);
      expect(text(r)).toBe('Task not found');
      expect(JSON.stringify(r)).not.toContain(query);
    }
    const listB = (await call(cb, 'list_tasks', {})).structuredContent as { tasks: { task_id: string }[] };
    expect(listB.tasks.map((x) => x.task_id)).not.toContain(sub.task_id);

    const cancelled = await call(ca, 'cancel_task', { task_id: sub.task_id, reason: 'changed my mind' });
    expect(cancelled.isError).toBeFalsy();
    expect(cancelled.structuredContent).toMatchObject({ success: true, task_id: sub.task_id });
    const end = await waitFor(async () => {
      const s = await rest(`/api/v1/tasks/${sub.task_id}`, a);
      return s.status === 'TASK_STATUS_CANCELLED' ? s : undefined;
    }, 30_000);
    expect(end.status).toBe('TASK_STATUS_CANCELLED');
  });

  it('a client that goes away ends the wait on the server; the task runs on', async () => {
    const c = new Client({ name: 'mcp-server-test', version: '1.0.0' });
    await c.connect(new StreamableHTTPClientTransport(new URL(`${t.base}/mcp`), { requestInit: { headers: a.h } }));
    let taskId = '';
    const waiting = call(
      c,
      'submit_task',
      { query: 'mcp: wait for me', mode: 'simple', wait: true, context: { require_approval: true } },
      {
        onprogress: (p) => (taskId ||= /^task (\S+) submitted$/.exec(p.message ?? '')?.[1] ?? ''),
      },
    );
    const hub = t.app.gateway!.hub;
    const watchers = () => hub.feeds.get(taskId)?.subscribers.size ?? 0;
    await waitFor(async () => taskId !== '' && watchers() === 1, 30_000);
    await c.close();
    await expect(waiting).rejects.toThrow(/closed/i);
    await waitFor(async () => watchers() === 0, 10_000);
    // Waiting for its approval, as before: the client's going away did not end it.
    expect(['TASK_STATUS_RUNNING', 'TASK_STATUS_PAUSED']).toContain((await rest(`/api/v1/tasks/${taskId}`, a)).status);
    const cancel = await fetch(`${t.base}/api/v1/tasks/${taskId}/cancel`, { method: 'POST', headers: a.h });
    expect(cancel.status).toBe(200);
  });

  it('answers 401 without a key, 405 to GET and 200 to DELETE', async () => {
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    };
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const anon = await fetch(`${t.base}/mcp`, { method: 'POST', headers, body: JSON.stringify(init) });
    expect(anon.status).toBe(401);
    expect(await json(anon)).toEqual({ error: expect.stringMatching(/auth/i) });
    await expect(connect({ h: {}, userId: '', tenantId: '' })).rejects.toThrow(/Authentication required/);

    const get = await fetch(`${t.base}/mcp`, { headers: { ...a.h, accept: 'text/event-stream' } });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST, DELETE');
    expect((await fetch(`${t.base}/mcp`, { headers: { accept: 'text/event-stream' } })).status).toBe(401);
    expect((await fetch(`${t.base}/mcp`, { method: 'DELETE', headers: a.h })).status).toBe(200);

    // The body is read by the gateway's one JSON reader: what the database cannot hold is refused there.
    const nul = await fetch(`${t.base}/mcp`, {
      method: 'POST',
      headers: { ...headers, ...a.h },
      body: '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\\u0000"}}',
    });
    expect(nul.status).toBe(400);
    expect(await json(nul)).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: JSON strings must not contain NUL (\\u0000)' } });
  });

  it('empty answers end at once (Content-Length: 0); a batch is refused whole and submits nothing', async () => {
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...a.h };
    const post = (body: unknown) => fetch(`${t.base}/mcp`, { method: 'POST', headers, body: JSON.stringify(body) });
    /** The body, or 'still open' when it has not ended within 2 s (a client would wait for the socket to close). */
    const body = (r: Response) => Promise.race([r.text(), new Promise<string>((resolve) => setTimeout(() => resolve('still open'), 2000).unref())]);

    const note = await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(note.status).toBe(202);
    expect(note.headers.get('content-length')).toBe('0');
    expect(await body(note)).toBe('');
    const del = await fetch(`${t.base}/mcp`, { method: 'DELETE', headers: a.h });
    expect(del.status).toBe(200);
    expect(del.headers.get('content-length')).toBe('0');
    expect(await body(del)).toBe('');

    const before = (await rest('/api/v1/tasks?limit=1', a)).total_count;
    const submit = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'submit_task', arguments: { query: `mcp: batch ${id}` } } });
    for (const batch of [[submit(1), submit(2)], []]) {
      const r = await post(batch);
      expect(r.status).toBe(400);
      expect(await json(r)).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: expect.stringMatching(/^Invalid Request: batches are not supported/) },
      });
    }
    expect((await rest('/api/v1/tasks?limit=1', a)).total_count).toBe(before);
  });

  it('list_tasks counts against the task-list burst limit, as GET /api/v1/tasks does', async () => {
    const c = await connect(await registerUser(t.base, 'mcp-burst'));
    const outcomes: unknown[] = [];
    for (let i = 0; i < 10 && !outcomes.some((o) => o instanceof Error); i++) outcomes.push(await call(c, 'list_tasks', {}).catch((err: unknown) => err));
    expect(outcomes.at(-1)).toMatchObject({ code: 429 });
    // get_task is not a listing: no burst limit.
    for (let i = 0; i < 5; i++) expect(text(await call(c, 'get_task', { task_id: '00000000-0000-4000-8000-000000000000' }))).toBe('Task not found');
  });
});

describe('the MCP server alone', () => {
  const log = createLogger({ level: 'silent' });
  const sub: SubmittedTask = { taskId: 't-1', workflowId: 't-1', sessionId: 's-1' };
  const queued = { task_id: 't-1', workflow_id: 't-1', status: 'TASK_STATUS_QUEUED', session_id: 's-1' };

  /** A facade whose parts a test replaces; `waits` records every wait asked for. */
  function facade(over: Partial<McpFacade> = {}) {
    const waits: WaitOptions[] = [];
    let submitted = 0;
    const f: McpFacade = {
      submitTask: async () => (submitted++, sub),
      waitForTask: async (_id, o) => void waits.push(o),
      getTask: async (id) => ({ task_id: id, status: 'TASK_STATUS_COMPLETED', result: 'done' }),
      listTasks: async () => ({ tasks: [], total_count: 0 }),
      cancelTask: async (id) => ({ success: true, message: '', task_id: id }),
      agents: () => [{ id: 'echo', name: 'Echo', description: 'Echoes', tool: 'echo', cost_per_call: 0, input_schema: { required: [], properties: {} } }],
      runAgent: async () => (submitted++, sub),
      tools: async () => [],
      executeTool: async () => ({ success: true, error: null, text: 'ok', result: {} }),
      ...over,
    };
    return { f, waits, submitted: () => submitted };
  }

  async function serve(f: McpFacade, o: { limit?: WaitLimit; heartbeatMs?: number } = {}): Promise<Client> {
    const limit = o.limit ?? new WaitLimit();
    const server = await createMcpServer(f, { name: 'test', version: '0' }, log, { claimWait: () => limit.claim('k'), heartbeatMs: o.heartbeatMs });
    const [ct, st] = InMemoryTransport.createLinkedPair();
    await server.connect(st);
    const c = new Client({ name: 'mcp-server-test', version: '1.0.0' });
    await c.connect(ct);
    clients.push(c);
    return c;
  }

  it('lists the task tools alone when the catalogue cannot be listed; they still run', async () => {
    const c = await serve(facade({ tools: () => Promise.reject(new Error('secret database detail')) }).f);
    const { tools } = await c.listTools();
    expect(tools.map((x) => x.name)).toEqual(['submit_task', 'get_task', 'list_tasks', 'cancel_task']);
    expect((await call(c, 'get_task', { task_id: 't-9' })).structuredContent).toEqual({ task_id: 't-9', status: 'TASK_STATUS_COMPLETED', result: 'done' });
    const agent = await call(c, 'agent_echo', {});
    expect(agent.isError).toBe(true);
    expect(text(agent)).toBe('The tools cannot be listed right now, so agent_echo cannot run; try again later');
  });

  it('a submitted task that cannot be read back is answered from its submission, never as an error', async () => {
    const { f, submitted } = facade({ getTask: () => Promise.reject(new Error('orchestrator away')) });
    const c = await serve(f);
    for (const args of [{ query: 'q' }, { query: 'q', wait: true }]) {
      const r = await call(c, 'submit_task', args);
      expect(r.isError, JSON.stringify(args)).toBeFalsy();
      expect(r.structuredContent).toEqual(queued);
      expect(text(r)).toMatch(/^Task t-1 was submitted; its status cannot be read right now: read it with get_task/);
    }
    expect((await call(c, 'agent_echo', { wait: false })).structuredContent).toEqual(queued);
    expect(submitted()).toBe(3);
  });

  it('waits 45 s by default (submit_task with wait, agent tools), timeout_seconds when given', async () => {
    const { f, waits } = facade();
    const c = await serve(f);
    await call(c, 'submit_task', { query: 'q', wait: true });
    await call(c, 'agent_echo', {});
    await call(c, 'agent_echo', { timeout_seconds: 7 });
    expect(waits.map((w) => w.timeoutMs)).toEqual([45_000, 45_000, 7_000]);
  });

  it('sends a heartbeat while a waited task is silent', async () => {
    const c = await serve(facade({ waitForTask: () => new Promise((resolve) => setTimeout(resolve, 250)) }).f, { heartbeatMs: 40 });
    const seen: Progress[] = [];
    const r = await call(c, 'agent_echo', {}, { onprogress: (p) => seen.push(p) });
    expect(text(r)).toBe('done');
    expect(seen[0]).toMatchObject({ progress: 0, message: 'task t-1 submitted' });
    const beats = seen.slice(1);
    expect(beats.length).toBeGreaterThanOrEqual(3);
    for (const p of beats) expect(p.message).toMatch(/^task t-1: still waiting \(\d+ s\)$/);
    expect(seen.map((p) => p.progress)).toEqual(seen.map((_, i) => i));
  });

  it('caps the waits one caller may hold at once; a refused wait submits nothing', async () => {
    let finish!: () => void;
    const held = new Promise<void>((resolve) => (finish = resolve));
    const { f, submitted } = facade({ waitForTask: () => held });
    const c = await serve(f, { limit: new WaitLimit(1) });
    const first = call(c, 'submit_task', { query: 'q', wait: true });
    await waitFor(async () => submitted() === 1);
    const refused = await call(c, 'agent_echo', {});
    expect(refused.isError).toBe(true);
    expect(text(refused)).toBe('too many waiting calls: at most 1 of yours may wait at once; submit with wait: false and read the task with get_task');
    expect(submitted()).toBe(1);
    expect((await call(c, 'submit_task', { query: 'q' })).isError).toBeFalsy();
    finish();
    expect(text(await first)).toBe('done');
    expect(text(await call(c, 'agent_echo', {}))).toBe('done');
  });
});
