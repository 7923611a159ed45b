/**
 * The service as an MCP server at /mcp, driven by the official SDK client over streamable HTTP
 * with authentication on: discovery (the four task tools, one per catalogue agent with its input
 * schema as GET /api/v1/agents lists it, the caller's tools as GET /api/v1/tools lists them),
 * submit_task with and without wait (progress notifications while waiting), get_task /
 * list_tasks / cancel_task, an agent run, a tool execution, argument errors naming the field,
 * ownership across two users, and the HTTP answers without a key and to GET.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startTestApp, waitFor, type TestApp } from './helpers/app.js';
import { registerUser, type TestUser } from './helpers/users.js';

const CALC_AGENT = `id: calc
name: Calculator
description: Exact arithmetic.
category: math
tool: calculator
cost_per_call: 0
input_schema:
  required: [expression]
  properties:
    expression: { type: string, description: The expression }
`;

let t: TestApp;
let dir: string;
let a: TestUser;
let b: TestUser;
const clients: Client[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mcp-server-'));
  writeFileSync(join(dir, 'calc.yaml'), CALC_AGENT);
  t = await startTestApp({
    GATEWAY_SKIP_AUTH: '0',
    PASSWORD_SCRYPT_N: '1024',
    JWT_SECRET: 'mcp-server-test-secret-0123456789abcdefgh',
    AGENT_CATALOG_DIR: dir,
    CALCULATOR_RATE_LIMIT: '0',
    RATE_LIMIT_REQUESTS: '100000',
    RATE_LIMIT_TASK_LIST_BURST: '100000',
  });
  [a, b] = await Promise.all([registerUser(t.base, 'mcp'), registerUser(t.base, 'mcp')]);
}, 60_000);
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await t?.stop();
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
    expect(agent.inputSchema).toEqual({ type: 'object', ...agents[0].input_schema });

    const restTools: { name: string; parameters: Record<string, unknown> }[] = await rest('/api/v1/tools', a);
    expect(restTools.length).toBeGreaterThan(0);
    for (const x of restTools) expect(byName.get(`tool_${x.name}`)?.inputSchema, x.name).toEqual({ ...x.parameters, type: 'object' });
    expect(tools.length).toBe(4 + 1 + restTools.length);
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
    expect(text(agent)).toContain('5');

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
    ] as const) {
      const r = await call(c, name, args);
      expect(r.isError, `${name} ${JSON.stringify(args)}`).toBe(true);
      expect(text(r)).toBe(message);
    }
    await expect(call(c, 'no_such_tool', {})).rejects.toThrow(/Unknown tool: no_such_tool/);
  });

  it('cancel_task cancels a waiting task; another user sees none of it', async () => {
    const [ca, cb] = await Promise.all([connect(a), connect(b)]);
    const query = 'mcp: private question of user a';
    const sub = (await call(ca, 'submit_task', { query, mode: 'simple', context: { require_approval: true } })).structuredContent as { task_id: string };
    await waitFor(async () => ['TASK_STATUS_RUNNING', 'TASK_STATUS_PAUSED'].includes((await rest(`/api/v1/tasks/${sub.task_id}`, a)).status), 30_000);

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
});
