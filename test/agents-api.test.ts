/**
 * The agent catalogue over the whole service: GET /api/v1/agents (and one, 404), POST
 * /api/v1/agents/{id} (202, headers, the run to COMPLETED with the tool output as result),
 * the same run through POST /api/v1/tasks with context.agent, every validation message over
 * HTTP, a tool failure, AGENT_TIMEOUT_SECONDS against a slow search server, and ownership.
 * The agents of a test catalogue run tools that exist (web_search against a local SearXNG
 * stand-in, calculator).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Code, type ConnectError, createClient, type Interceptor } from '@connectrpc/connect';
import { Http2SessionManager, createGrpcTransport } from '@connectrpc/connect-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskStatus } from '../src/gen/svc/v1/common_pb.js';
import { OrchestratorService } from '../src/gen/svc/v1/orchestrator_pb.js';
import { TEST_RPC_TOKEN, archivedEvents, json, startTestApp, waitFor, type TestApp } from './helpers/app.js';
import { startServer, type TestServer } from './helpers/tools-web.js';
import { registerUser, type TestUser } from './helpers/users.js';
import { startTestNats } from './harness/nats.js';

const CATALOGUE: Record<string, string> = {
  'search.yaml': `id: search
name: Web Search
description: Web results for a query, from the configured search backend.
category: web
tool: web_search
cost_per_call: 0.001
input_schema:
  required: [query]
  properties:
    query: { type: string, description: What to search for }
    max_results: { type: integer, default: 3, minimum: 1, maximum: 20 }
`,
  'calc.yaml': `id: calc
name: Calculator
description: Exact arithmetic.
category: math
tool: calculator
cost_per_call: 0
input_schema:
  required: [expression]
  properties:
    expression: { type: string }
`,
  'kinds.yaml': `id: kinds
name: Kinds
description: Every kind of field (validation only).
category: test
tool: calculator
cost_per_call: 0
input_schema:
  required: [expression]
  properties:
    expression: { type: string }
    device: { type: string, enum: [desktop, mobile] }
    n: { type: integer, minimum: 1, maximum: 10 }
    flag: { type: boolean }
    list: { type: array, items: { type: string }, maxItems: 2 }
`,
};

let t: TestApp;
let search: TestServer;
let dir: string;
let a: TestUser;
let b: TestUser;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'agents-api-'));
  for (const [name, text] of Object.entries(CATALOGUE)) writeFileSync(join(dir, name), text);
  search = await startServer(async (req, res) => {
    const q = new URL(req.url ?? '/', 'http://x').searchParams.get('q') ?? '';
    if (q === 'broken') {
      res.writeHead(500).end('down');
      return;
    }
    if (q === 'slow') await sleep(8000);
    const results = Array.from({ length: 5 }, (_, i) => ({
      title: `${q} ${i + 1}`,
      url: `https://example.com/${encodeURIComponent(q)}/${i + 1}`,
      content: `About ${q}`,
    }));
    if (!res.destroyed) res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ results }));
  });
  t = await startTestApp({
    GATEWAY_SKIP_AUTH: '0',
    AGENT_CATALOG_DIR: dir,
    WEB_SEARCH_PROVIDER: 'searxng',
    SEARXNG_URL: search.origin,
    AGENT_TIMEOUT_SECONDS: '2',
    CALCULATOR_RATE_LIMIT: '0',
    WEB_SEARCH_RATE_LIMIT: '0',
    RATE_LIMIT_REQUESTS: '100000',
  });
  [a, b] = await Promise.all([registerUser(t.base, 'ag'), registerUser(t.base, 'ag')]);
  // The calculator's worker threads start on first use: not within a 2 s agent limit on a busy machine.
  await post('/api/v1/tools/calculator/execute', { arguments: { expression: '1+1' } });
}, 60_000);
afterAll(async () => {
  await t?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const get = (path: string, u: TestUser = a) => fetch(t.base + path, { headers: u.h });
const post = (path: string, body: unknown, u: TestUser = a) =>
  fetch(t.base + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...u.h },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

/** The task's status once it has ended. */
const ended = (id: string, u: TestUser = a) =>
  waitFor(
    async () => {
      const s = await json(await get(`/api/v1/tasks/${id}`, u));
      return ['TASK_STATUS_COMPLETED', 'TASK_STATUS_FAILED', 'TASK_STATUS_TIMEOUT', 'TASK_STATUS_CANCELLED'].includes(s.status) ? s : undefined;
    },
    30_000,
    50,
  );

describe('GET /api/v1/agents', () => {
  it('lists the catalogue with exactly the spec fields, and count', async () => {
    const r = await get('/api/v1/agents');
    expect(r.status).toBe(200);
    const body = await json(r);
    expect(Object.keys(body).sort()).toEqual(['agents', 'count']);
    expect(body.count).toBe(3);
    expect(body.agents.map((x: { id: string }) => x.id)).toEqual(['calc', 'kinds', 'search']);
    const s = body.agents[2];
    expect(Object.keys(s)).toEqual(['id', 'name', 'description', 'category', 'tool', 'input_schema', 'cost_per_call']);
    expect(s).toEqual({
      id: 'search',
      name: 'Web Search',
      description: 'Web results for a query, from the configured search backend.',
      category: 'web',
      tool: 'web_search',
      input_schema: {
        required: ['query'],
        properties: { query: { type: 'string', description: 'What to search for' }, max_results: { type: 'integer', default: 3, minimum: 1, maximum: 20 } },
      },
      cost_per_call: 0.001,
    });
  });

  it('one agent by id; an unknown one is 404 "Agent not found: <id>" on get and execute; authentication is required', async () => {
    expect(await json(await get('/api/v1/agents/calc'))).toMatchObject({ id: 'calc', tool: 'calculator', input_schema: { required: ['expression'] } });
    for (const r of [await get('/api/v1/agents/ghost'), await post('/api/v1/agents/ghost', { input: {} })]) {
      expect(r.status).toBe(404);
      expect(await json(r)).toEqual({ error: 'Agent not found: ghost' });
    }
    expect((await fetch(`${t.base}/api/v1/agents`)).status).toBe(401);
    expect(
      (await fetch(`${t.base}/api/v1/agents/calc`, { method: 'POST', body: '{"input":{}}', headers: { 'content-type': 'application/json' } })).status,
    ).toBe(401);
  });
});

describe('POST /api/v1/agents/{id}', () => {
  let first: { taskId: string; status: any };

  it('202 {task_id, agent_id, status, created_at} with X-Workflow-ID and X-Session-ID; the task completes with the tool output as result', async () => {
    const r = await post('/api/v1/agents/search', { input: { query: 'shoes' } });
    expect(r.status).toBe(202);
    const body = await json(r);
    expect(Object.keys(body)).toEqual(['task_id', 'agent_id', 'status', 'created_at']);
    expect(body).toMatchObject({ agent_id: 'search', status: 'STATUS_CODE_OK' });
    expect(Number.isNaN(Date.parse(body.created_at))).toBe(false);
    expect(r.headers.get('x-workflow-id')).toBe(body.task_id);
    const sessionId = r.headers.get('x-session-id');
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const s = await ended(body.task_id);
    expect(s.status).toBe('TASK_STATUS_COMPLETED');
    expect(s.session_id).toBe(sessionId);
    const out = JSON.parse(s.result);
    // The agent's default (3), not the tool's (5), reached the tool.
    expect(out.results).toHaveLength(3);
    expect(out.results[0]).toEqual({ title: 'shoes 1', url: 'https://example.com/shoes/1', snippet: 'About shoes' });
    expect(s.response).toEqual(out);
    expect(s.metadata).toMatchObject({ agent_id: 'search', execution_mode: 'agent', tool: 'web_search', agents_used: 1, tool_calls: 1 });
    expect(s.usage.estimated_cost).toBeCloseTo(0.001, 9);
    expect(search.requests.some((q) => q.url.includes('q=shoes'))).toBe(true);
    first = { taskId: body.task_id, status: s };

    const events = await archivedEvents(t.base, body.task_id, 30_000, a.h);
    const types = events.map((e) => e.type);
    const order = ['WORKFLOW_STARTED', 'AGENT_STARTED', 'TOOL_INVOKED', 'TOOL_OBSERVATION', 'AGENT_COMPLETED', 'WORKFLOW_COMPLETED'];
    const at = order.map((x) => types.indexOf(x));
    expect(at.every((i) => i >= 0)).toBe(true);
    expect([...at].sort((x, y) => x - y)).toEqual(at);
    const all = events as unknown as { type: string; agent_id: string; payload?: Record<string, unknown> }[];
    expect(all.find((e) => e.type === 'AGENT_STARTED')!.agent_id).toBe('search');
    expect(all.find((e) => e.type === 'TOOL_INVOKED')!.payload).toMatchObject({ tool: 'web_search', arguments: { query: 'shoes', max_results: 3 } });
    expect(all.find((e) => e.type === 'TOOL_OBSERVATION')!.payload).toMatchObject({ tool: 'web_search', success: true });
    const tl = await get(`/api/v1/tasks/${body.task_id}/timeline`);
    expect(tl.status).toBe(200);
    const steps = (await json(tl)).steps as { name: string; agent: string | null; status: string }[];
    expect(steps.find((x) => x.name === 'agent-run')).toMatchObject({ agent: 'search', status: 'completed' });
  });

  it('context.agent + context.agent_input through POST /api/v1/tasks runs the same thing with the same result', async () => {
    const r = await post('/api/v1/tasks', { query: 'find shoes', context: { agent: 'search', agent_input: { query: 'shoes' } } });
    expect(r.status).toBe(200);
    const s = await ended((await json(r)).task_id);
    expect(s.status).toBe('TASK_STATUS_COMPLETED');
    expect(s.result).toBe(first.status.result);
    expect(s.metadata).toMatchObject({ agent_id: 'search', execution_mode: 'agent' });
    expect(s.usage.estimated_cost).toBeCloseTo(0.001, 9);
  });

  it('runs in the session the caller names; stream: true adds the stream URL', async () => {
    const r = await post('/api/v1/agents/calc', { input: { expression: '2^10' }, session_id: 'agents-session-1', stream: true });
    expect(r.status).toBe(202);
    const body = await json(r);
    expect(body.stream_url).toBe(`/api/v1/stream/sse?workflow_id=${body.task_id}`);
    const s = await ended(body.task_id);
    expect(s.status, s.error).toBe('TASK_STATUS_COMPLETED');
    expect(JSON.parse(s.result)).toMatchObject({ result: '1024' });
    expect(r.headers.get('x-session-id')).toBe(s.session_id);
    const again = await post('/api/v1/agents/calc', { input: { expression: '1+1' }, session_id: 'agents-session-1', stream: false });
    expect(again.headers.get('x-session-id')).toBe(s.session_id);
    expect(await json(again)).not.toHaveProperty('stream_url');
  });

  it('another user cannot see the task', async () => {
    const r = await get(`/api/v1/tasks/${first.taskId}`, b);
    expect(r.status).toBe(404);
    expect(await json(r)).toEqual({ error: 'Task not found' });
  });

  it('a tool failure fails the task with an error naming the agent and the tool', async () => {
    const r = await post('/api/v1/agents/search', { input: { query: 'broken' } });
    expect(r.status).toBe(202);
    const s = await ended((await json(r)).task_id);
    expect(s.status).toBe('TASK_STATUS_FAILED');
    expect(s.error).toBe('agent search failed: web_search: searxng search failed: HTTP 500 Internal Server Error');
  });

  it('a cancel while the tool runs stops it: CANCELLED, no AGENT_COMPLETED', async () => {
    const id = (await json(await post('/api/v1/agents/search', { input: { query: 'slow' } }))).task_id;
    await waitFor(async () => (await json(await get(`/api/v1/tasks/${id}`))).status === 'TASK_STATUS_RUNNING', 10_000, 20);
    expect((await post(`/api/v1/tasks/${id}/cancel`, { reason: 'enough' })).status).toBe(200);
    const s = await ended(id);
    expect(s.status).toBe('TASK_STATUS_CANCELLED');
    const types = (await archivedEvents(t.base, id, 30_000, a.h)).map((e) => e.type);
    expect(types).not.toContain('AGENT_COMPLETED');
  });

  it('an agent running past AGENT_TIMEOUT_SECONDS fails with a timeout error naming the setting', async () => {
    const t0 = Date.now();
    const r = await post('/api/v1/agents/search', { input: { query: 'slow' } });
    const id = (await json(r)).task_id;
    const s = await ended(id);
    expect(s.status).toBe('TASK_STATUS_FAILED');
    expect(s.error).toBe('agent search timed out: its execution took longer than AGENT_TIMEOUT_SECONDS (2 s)');
    // Ended at the agent's limit, not at the slow server's 8 s.
    expect(Date.now() - t0).toBeLessThan(7000);
    const types = (await archivedEvents(t.base, id, 30_000, a.h)).map((e) => e.type);
    expect(types).not.toContain('AGENT_COMPLETED');
  });
});

describe('input validation over HTTP (400 with the spec error body), on both entry points', () => {
  const cases: [string, unknown, string][] = [
    ['kinds', {}, 'input validation failed: missing required field: expression'],
    ['kinds', { expression: null }, 'input validation failed: missing required field: expression'],
    ['kinds', { expression: '1', colour: 'red' }, 'input validation failed: unknown field: colour (not defined in agent schema)'],
    ['kinds', { expression: 1 }, 'input validation failed: field expression: expected type string, got integer'],
    ['kinds', { expression: '1', n: 1.5 }, 'input validation failed: field n: expected type integer, got number'],
    ['kinds', { expression: '1', flag: 'true' }, 'input validation failed: field flag: expected type boolean, got string'],
    ['kinds', { expression: '1', list: 'a' }, 'input validation failed: field list: expected type array, got string'],
    ['kinds', { expression: '1', device: 'tv' }, 'input validation failed: field device: value "tv" is not one of the allowed values: "desktop", "mobile"'],
    ['kinds', { expression: '1', n: 11 }, 'input validation failed: field n: 11 is above the maximum 10'],
    ['kinds', { expression: '1', n: 0 }, 'input validation failed: field n: 0 is below the minimum 1'],
    ['kinds', { expression: '1', list: ['a', 'b', 'c'] }, 'input validation failed: field list: 3 items, at most 2 allowed'],
    ['kinds', { expression: '1', list: [1] }, 'input validation failed: field list[0]: expected type string, got integer'],
    ['kinds', [1], 'input validation failed: input must be an object, got array'],
    // The agent's rules accept it; its tool's own schema (web_search: query minLength 1) does not.
    ['search', { query: '' }, 'input validation failed: field query: must NOT have fewer than 1 characters'],
  ];

  it.each(cases)('POST /api/v1/agents/%s %j: %s', async (id, input, message) => {
    const r = await post(`/api/v1/agents/${id}`, { input });
    expect(r.status).toBe(400);
    expect(await json(r)).toEqual({ error: message });
  });

  it.each(cases)('POST /api/v1/tasks with context.agent %s and agent_input %j', async (id, input, message) => {
    const r = await post('/api/v1/tasks', { query: 'x', context: { agent: id, agent_input: input } });
    expect(r.status).toBe(400);
    // An array is not an agent input object on the task route either.
    expect(await json(r)).toEqual({ error: Array.isArray(input) ? "context.agent_input must be an object (the agent's input)" : message });
  });

  it('the body of POST /api/v1/agents/{id}: input required, unknown fields refused, session_id and stream typed', async () => {
    const cases: [unknown, string][] = [
      [{}, 'input is required'],
      [{ input: null }, 'input is required'],
      [{ input: { expression: '1' }, inputs: {} }, 'unknown field: inputs'],
      [{ input: { expression: '1' }, stream: 'yes' }, 'stream must be a boolean'],
      [{ input: { expression: '1' }, session_id: 5 }, 'session_id must be a string of at most 255 characters'],
      [[1], 'request body must be a JSON object'],
    ];
    for (const [body, message] of cases) {
      const r = await post('/api/v1/agents/calc', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(await json(r)).toEqual({ error: message });
    }
    const bad = await post('/api/v1/agents/calc', '{"input":');
    expect(bad.status).toBe(400);
  });

  it('context.agent_input without context.agent is a 400; an unknown agent a 404; an agent with a template or skill a 400', async () => {
    const cases: [Record<string, unknown>, number, string][] = [
      [{ agent_input: { expression: '1' } }, 400, 'context.agent_input needs context.agent (the id of a catalogue agent: GET /api/v1/agents)'],
      [{ agent: 'ghost', agent_input: {} }, 404, 'Agent not found: ghost'],
      [{ agent: 'calc', agent_input: 'x' }, 400, "context.agent_input must be an object (the agent's input)"],
      [{ agent: 5 }, 400, 'context.agent must be a string'],
      [
        { agent: 'calc', agent_input: { expression: '1' }, template: 'x' },
        400,
        'a task runs either a catalogue agent (context.agent), a template or a skill, not more than one',
      ],
    ];
    for (const [context, status, message] of cases) {
      const r = await post('/api/v1/tasks', { query: 'x', context });
      expect(r.status, JSON.stringify(context)).toBe(status);
      expect(await json(r)).toEqual({ error: message });
    }
  });

  it('task fields a catalogue agent would ignore (mode, iterations, prompt and history keys, model controls without verification) are refused, not recorded', async () => {
    const agent = { agent: 'calc', agent_input: { expression: '1+1' } };
    const why = 'a catalogue agent runs its tool once, without a model, and would ignore it';
    const cases: [Record<string, unknown>, string][] = [
      [{ mode: 'complex' }, 'mode'],
      [{ max_iterations: 3 }, 'max_iterations'],
      [{ max_concurrent_agents: 2 }, 'max_concurrent_agents'],
      [{ model_tier: 'large' }, 'model_tier'],
      [{ model_override: 'gpt-4o-mini' }, 'model_override'],
      [{ provider_override: 'openai' }, 'provider_override'],
      [{ context: { ...agent, model_tier: 'large' } }, 'context.model_tier'],
      [{ context: { ...agent, model_settings: { temperature: 0.2 } } }, 'context.model_settings'],
      [{ context: { ...agent, system_prompt: 'Be brief.' } }, 'context.system_prompt'],
      [{ context: { ...agent, prompt_params: { a: 1 } } }, 'context.prompt_params'],
      [{ context: { ...agent, history_window_size: 10 } }, 'context.history_window_size'],
      [{ context: { ...agent, conversation_history: [{ role: 'user', content: 'hi' }] } }, 'context.conversation_history'],
    ];
    const before = (await json(await get('/api/v1/tasks?limit=100'))).total_count;
    for (const [extra, field] of cases) {
      const r = await post('/api/v1/tasks', { query: 'x', context: agent, ...extra });
      expect(r.status, field).toBe(400);
      expect(await json(r)).toEqual({ error: `context.agent cannot be combined with ${field}: ${why}` });
    }
    // Nothing was submitted; without them the same task runs, recorded as what ran.
    expect((await json(await get('/api/v1/tasks?limit=100'))).total_count).toBe(before);
    const s = await ended((await json(await post('/api/v1/tasks', { query: 'x', context: agent }))).task_id);
    expect(s.status, s.error).toBe('TASK_STATUS_COMPLETED');
    expect(s.metadata).toMatchObject({ agent_id: 'calc', execution_mode: 'agent' });
  });
});

describe('gRPC SubmitTask with context.agent', () => {
  it('runs the same agent with the same result, and refuses bad input and unknown agents as the gateway does', async () => {
    const baseUrl = `http://127.0.0.1:${t.app.grpcPort}`;
    const session = new Http2SessionManager(baseUrl);
    const asUser: Interceptor = (next) => (req) => {
      req.header.set('authorization', `Bearer ${TEST_RPC_TOKEN}`);
      req.header.set('x-caller-kind', 'user');
      req.header.set('x-caller-user-id', a.userId);
      req.header.set('x-caller-tenant-id', a.tenantId);
      return next(req);
    };
    const orch = createClient(OrchestratorService, createGrpcTransport({ baseUrl, sessionManager: session, interceptors: [asUser] }));
    try {
      const r = await orch.submitTask({ query: 'find shoes', context: { agent: 'search', agent_input: { query: 'shoes' } } });
      const s = await waitFor(
        async () => {
          const st = await orch.getTaskStatus({ taskId: r.taskId });
          return st.status === TaskStatus.COMPLETED || st.status === TaskStatus.FAILED ? st : undefined;
        },
        30_000,
        50,
      );
      expect(s.status, s.errorMessage).toBe(TaskStatus.COMPLETED);
      const viaHttp = await ended((await json(await post('/api/v1/agents/search', { input: { query: 'shoes' } }))).task_id);
      expect(s.result).toBe(viaHttp.result);
      expect(s.metadata).toMatchObject({ agent_id: 'search', execution_mode: 'agent' });
      expect(s.usage?.costUsd).toBeCloseTo(0.001, 9);
      const refusal = async (context: Record<string, unknown>) => {
        try {
          await orch.submitTask({ query: 'x', context: context as never });
        } catch (err) {
          return err as ConnectError;
        }
        throw new Error('expected a refusal');
      };
      const missing = await refusal({ agent: 'search', agent_input: {} });
      expect([missing.code, missing.rawMessage]).toEqual([Code.InvalidArgument, 'input validation failed: missing required field: query']);
      const unknown = await refusal({ agent: 'search', agent_input: { query: 'x', page: 2 } });
      expect([unknown.code, unknown.rawMessage]).toEqual([Code.InvalidArgument, 'input validation failed: unknown field: page (not defined in agent schema)']);
      const tooShort = await refusal({ agent: 'search', agent_input: { query: '' } });
      expect([tooShort.code, tooShort.rawMessage]).toEqual([
        Code.InvalidArgument,
        'input validation failed: field query: must NOT have fewer than 1 characters',
      ]);
      const mode = (await orch.submitTask({ query: 'x', context: { agent: 'calc', agent_input: { expression: '1' } }, options: { modeName: 'complex' } }).then(
        () => undefined,
        (e: unknown) => e as ConnectError,
      ))!;
      expect([mode.code, mode.rawMessage]).toEqual([
        Code.InvalidArgument,
        'context.agent cannot be combined with mode: a catalogue agent runs its tool once, without a model, and would ignore it',
      ]);
      const ghost = await refusal({ agent: 'ghost' });
      expect([ghost.code, ghost.rawMessage]).toEqual([Code.NotFound, 'Agent not found: ghost']);
    } finally {
      session.abort();
    }
  });
});

describe('start-up', () => {
  it('fails naming the agent and the tool when an agent runs a tool that is not registered, and naming the file when a file is bad', async () => {
    const nats = await startTestNats();
    const bad = mkdtempSync(join(tmpdir(), 'agents-bad-'));
    try {
      // A folder the operator named that does not exist fails start-up naming the setting.
      const missing = join(bad, 'no-such-folder');
      await expect(startTestApp({ AGENT_CATALOG_DIR: missing }, { natsUrl: nats.url })).rejects.toThrow(
        `invalid configuration: AGENT_CATALOG_DIR: ${missing} does not exist`,
      );
      writeFileSync(join(bad, 'ghost.yaml'), CATALOGUE['calc.yaml'].replace('id: calc', 'id: ghost').replace('tool: calculator', 'tool: no_such_tool'));
      await expect(startTestApp({ AGENT_CATALOG_DIR: bad }, { natsUrl: nats.url })).rejects.toThrow(
        `invalid configuration: AGENT_CATALOG_DIR: agent ghost (${join(bad, 'ghost.yaml')}) runs tool no_such_tool, which is not a registered tool`,
      );
      writeFileSync(join(bad, 'ghost.yaml'), 'id: ghost\nname: [');
      await expect(startTestApp({ AGENT_CATALOG_DIR: bad }, { natsUrl: nats.url })).rejects.toThrow(
        `AGENT_CATALOG_DIR: ${join(bad, 'ghost.yaml')}: (file): not valid YAML`,
      );
    } finally {
      rmSync(bad, { recursive: true, force: true });
      await nats.stop();
    }
  });
});
