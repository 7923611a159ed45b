/**
 * Tools from anywhere (issue 17 §1, §2) through the whole service, authentication on: an
 * operator's stdio MCP server (config/mcp.yaml) and users' own MCP servers (streamable HTTP,
 * real servers built with the official SDK) and OpenAPI documents (a local API). Registration
 * (SSRF guard, unreachable server, 409, limits), discovery per user, direct execution, an
 * agent calling them in a task (events, usage), a tool list that changes, a server that goes
 * away mid-task, ownership across two users and secrets that never come back.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { natsSourceChanges } from '../src/app/tool-sources.js';
import { subjects } from '../src/bus/index.js';
import { loadConfig } from '../src/config/index.js';
import { createLogger } from '../src/kernel/index.js';
import { ToolSourceStore, ToolSources } from '../src/toolsources/index.js';
import { json, readSse, startTestApp, waitFor, type TestApp } from './helpers/app.js';
import { MCP_STDIO_SERVER, startMcpHttpServer, type McpHttpServer, type McpTestTool } from './helpers/mcp-servers.js';
import { scriptedProvider, startOpenAiServer, type OpenAiTestServer } from './helpers/openai-server.js';
import { startServer, type TestServer } from './helpers/tools-web.js';
import { registerUser, type TestUser } from './helpers/users.js';

const SECRET = 'Bearer s3cret-token-never-shown';
const KEY = Buffer.alloc(32, 7);
let t: TestApp;
let llm: OpenAiTestServer;
let mcp: McpHttpServer;
let api: TestServer;
let a: TestUser;
let b: TestUser;

const add: McpTestTool = {
  name: 'add',
  description: 'Adds two numbers',
  inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  readOnly: true,
  handler: (x) => ({ text: String(Number(x.a) + Number(x.b)) }),
};
const slow: McpTestTool = {
  name: 'slow',
  inputSchema: { type: 'object', properties: {} },
  handler: (_x, { signal }) => new Promise((resolve) => signal.addEventListener('abort', () => resolve({ text: 'stopped' }))),
};

const PETSTORE = {
  openapi: '3.0.3',
  info: { title: 'Pets', version: '2.1.0' },
  paths: {
    '/pets/{id}': {
      get: {
        operationId: 'get_pet',
        summary: 'One pet',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }],
        responses: { '200': { description: 'ok' } },
      },
    },
  },
};

const post = (u: TestUser, path: string, body: unknown) =>
  fetch(t.base + path, { method: 'POST', headers: { 'content-type': 'application/json', ...u.h }, body: JSON.stringify(body) });
const get = async (u: TestUser, path: string) => json(await fetch(t.base + path, { headers: u.h }));
const toolNames = async (u: TestUser) => ((await get(u, '/api/v1/tools')) as Array<{ name: string }>).map((x) => x.name);
const execute = (u: TestUser, name: string, args: unknown) => post(u, `/api/v1/tools/${encodeURIComponent(name)}/execute`, { arguments: args });

beforeAll(async () => {
  llm = await startOpenAiServer();
  mcp = await startMcpHttpServer({ tools: [add, slow] });
  api = await startServer((req, res) => {
    if (req.url === '/openapi.json')
      return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ...PETSTORE, servers: [{ url: '/v1' }] }));
    const m = /^\/v1\/pets\/(\d+)$/.exec(req.url ?? '');
    if (m && req.headers['x-api-key'] === 'pet-key')
      return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: Number(m[1]), name: 'Rex' }));
    return res.writeHead(m ? 401 : 404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'no' }));
  });
  const dir = mkdtempSync(join(tmpdir(), 'tool-sources-'));
  const mcpYaml = join(dir, 'mcp.yaml');
  const features = join(dir, 'features.yaml');
  // A person approves every tool of the operator's server before it runs.
  writeFileSync(features, 'approvals:\n  tools: [mcp.local.*]\n');
  writeFileSync(mcpYaml, `servers:\n  local:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(MCP_STDIO_SERVER)}]\n`);
  t = await startTestApp(
    {
      CHANNEL_SECRET_KEY: KEY.toString('hex'),
      MCP_CONFIG_PATH: mcpYaml,
      CONFIG_PATH: features,
      MCP_TOOL_TIMEOUT_SECONDS: '2',
      TOOL_SOURCES_MAX_PER_USER: '3',
      TOOLS_HTTP_ALLOW_HOSTS: '127.0.0.1/32',
      GATEWAY_SKIP_AUTH: '0',
      PASSWORD_SCRYPT_N: '1024',
      JWT_SECRET: 'tool-sources-test-secret-0123456789abcdef',
      RATE_LIMIT_REQUESTS: '100000',
      MAX_TOKENS_PER_REQUEST: '0',
      MAX_COST_PER_REQUEST: '0',
    },
    { llm: scriptedProvider(llm) },
  );
  a = await registerUser(t.base, 'ts-a');
  b = await registerUser(t.base, 'ts-b');
}, 60_000);
afterAll(async () => {
  await t?.stop();
  await Promise.allSettled([llm?.close(), mcp?.close(), api?.close()]);
});
beforeEach(() => llm.reset());

describe('registering an MCP server', () => {
  it('stores it (headers write-only, encrypted at rest), lists its tools for its owner only', async () => {
    const r = await post(a, '/api/v1/tools/mcp-servers', { name: 'calc', url: mcp.url, headers: { Authorization: SECRET } });
    const body = await json(r);
    expect(r.status, JSON.stringify(body)).toBe(201);
    expect(body).toMatchObject({ name: 'calc', owner: 'user', url: mcp.url, header_names: ['Authorization'], tools: ['mcp.calc.add', 'mcp.calc.slow'] });
    const listed = await get(a, '/api/v1/tools/mcp-servers');
    expect(listed.servers.map((s: { name: string }) => s.name)).toEqual(['local', 'calc']);
    expect(JSON.stringify(listed)).not.toContain('s3cret');
    const [row] = await t.app.store.sql`SELECT headers_enc FROM tool_sources WHERE name = 'calc'`;
    expect(row!.headers_enc).toMatch(/^v1:/);
    expect(row!.headers_enc).not.toContain('s3cret');

    const mine = await toolNames(a);
    expect(mine).toEqual(expect.arrayContaining(['calculator', 'mcp.calc.add', 'mcp.local.echo']));
    const schema = ((await get(a, '/api/v1/tools')) as Array<{ name: string; parameters: unknown; category: string }>).find((x) => x.name === 'mcp.calc.add');
    expect(schema).toMatchObject({ category: 'mcp', parameters: add.inputSchema });
    // Another user sees the operator's server, never a's.
    const theirs = await toolNames(b);
    expect(theirs).toContain('mcp.local.echo');
    expect(theirs).not.toContain('mcp.calc.add');
    expect((await get(b, '/api/v1/tools/mcp-servers')).servers.map((s: { name: string }) => s.name)).toEqual(['local']);
  });

  it('runs its tools for the owner with the registered headers; 404 for anyone else', async () => {
    const r = await execute(a, 'mcp.calc.add', { a: 2, b: 40 });
    const body = await json(r);
    expect(r.status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({ success: true, text: '42' });
    expect(mcp.calls.at(-1)).toMatchObject({ name: 'add', args: { a: 2, b: 40 } });
    expect(mcp.calls.at(-1)!.headers.authorization).toBe(SECRET);
    expect((await execute(b, 'mcp.calc.add', { a: 1, b: 1 })).status).toBe(404);
    const bad = await execute(a, 'mcp.calc.add', { a: 2 });
    expect(bad.status).toBe(400);
    expect((await json(bad)).error).toMatch(/arguments\.b is required/);
  });

  it("runs the operator's stdio server for everyone", async () => {
    const r = await json(await execute(b, 'mcp.local.echo', { text: 'hi' }));
    expect(r).toMatchObject({ success: true, text: 'hi' });
  });

  it('a tool slower than its time limit ends at the limit with a clear error', async () => {
    const r = await json(await execute(a, 'mcp.calc.slow', {}));
    expect(r.success).toBe(false);
    expect(r.error).toMatch(/timed out after 2 s/);
  });

  it('refuses a duplicate (409), an operator name (409), an address the SSRF guard refuses, an unreachable server, bad fields', async () => {
    const dup = await post(a, '/api/v1/tools/mcp-servers', { name: 'calc', url: mcp.url });
    expect(dup.status).toBe(409);
    expect((await post(a, '/api/v1/tools/mcp-servers', { name: 'local', url: mcp.url })).status).toBe(409);
    // b may use the name a uses.
    const other = await post(b, '/api/v1/tools/mcp-servers', { name: 'calc', url: mcp.url });
    expect(other.status).toBe(201);
    expect((await json(await fetch(`${t.base}/api/v1/tools/mcp-servers/calc`, { method: 'DELETE', headers: b.h }))).success).toBe(true);

    const ssrf = await post(a, '/api/v1/tools/mcp-servers', { name: 'meta', url: 'http://169.254.169.254/mcp' });
    expect(ssrf.status).toBe(400);
    expect((await json(ssrf)).error).toMatch(/url: refused.*169\.254\.169\.254/);
    const down = await post(a, '/api/v1/tools/mcp-servers', { name: 'gone', url: 'http://127.0.0.1:9/mcp' });
    expect(down.status).toBe(400);
    expect((await json(down)).error).toMatch(/MCP server "gone"/);
    for (const [body, msg] of [
      [{ url: mcp.url }, /name is required/],
      [{ name: 'a.b', url: mcp.url }, /name must be/],
      [{ name: 'x', url: 'ftp://example.com' }, /url must be an absolute http or https URL/],
      [{ name: 'x', url: mcp.url, headers: { 'Bad Header': 'v' } }, /not a valid header name/],
      [{ name: 'x', url: mcp.url, command: 'rm' }, /unknown field: command/],
    ] as const) {
      const r = await post(a, '/api/v1/tools/mcp-servers', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect((await json(r)).error).toMatch(msg);
    }
    expect((await fetch(`${t.base}/api/v1/tools/mcp-servers`, { method: 'POST', body: '{}' })).status).toBe(401);
  });
});

describe('sources across processes and at rest', () => {
  it('another process hears of a new source at once (svc.toolsources.changed), not after its cache expires', async () => {
    const nc = t.app.bus.nc;
    const other = new ToolSources({
      store: new ToolSourceStore(t.app.store.sql, KEY),
      settings: { ...loadConfig({}).toolSources, mcp: { ...loadConfig({}).toolSources.mcp, servers: [] } },
      allowHosts: ['127.0.0.1/32'],
      maxResponseChars: 20_000,
      log: createLogger({ level: 'silent' }),
      changes: natsSourceChanges(nc),
    });
    try {
      const names = async () => (await other.toolsFor(a.userId)).map((x) => x.name);
      expect(await names()).not.toContain('mcp.calc2.add'); // cached now, for 30 s
      expect((await post(a, '/api/v1/tools/mcp-servers', { name: 'calc2', url: mcp.url })).status).toBe(201);
      await waitFor(async () => (await names()).includes('mcp.calc2.add'), 5_000);
      expect((await fetch(`${t.base}/api/v1/tools/mcp-servers/calc2`, { method: 'DELETE', headers: a.h })).status).toBe(200);
      await waitFor(async () => !(await names()).includes('mcp.calc2.add'), 5_000);
    } finally {
      await other.close();
    }
  });

  it('refuses credentials in a URL; a source whose headers cannot be decrypted is left out, the others stay, and it can be removed', async () => {
    const creds = await post(a, '/api/v1/tools/mcp-servers', { name: 'x', url: mcp.url.replace('http://', 'http://u:p@') });
    expect(creds.status).toBe(400);
    expect((await json(creds)).error).toMatch(/must not carry credentials/);
    expect((await post(a, '/api/v1/tools/mcp-servers', { name: 'broken', url: mcp.url })).status).toBe(201);
    await t.app.store.sql`UPDATE tool_sources SET headers_enc = 'v1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', updated_at = now() WHERE name = 'broken'`;
    t.app.bus.nc.publish(subjects.toolSourcesChanged, a.userId);
    await waitFor(async () => !(await toolNames(a)).includes('mcp.broken.add'));
    expect(await toolNames(a)).toContain('mcp.calc.add');
    expect((await fetch(`${t.base}/api/v1/tools/mcp-servers/broken`, { method: 'DELETE', headers: a.h })).status).toBe(200);
  });
});

describe('an agent using MCP tools', () => {
  it('calls one in a task: TOOL_INVOKED/TOOL_OBSERVATION name it, the model reads its result', async () => {
    llm.enqueue(
      { type: 'completion', content: '', toolCalls: [{ id: 'c1', name: 'mcp_calc_add', arguments: '{"a":20,"b":22}' }] },
      { type: 'completion', content: 'The sum is 42.' },
    );
    const r = await post(a, '/api/v1/tasks', { query: 'add 20 and 22', mode: 'standard' });
    const { task_id } = await json(r);
    const done = await waitFor(async () => {
      const s = await get(a, `/api/v1/tasks/${task_id}`);
      return /COMPLETED|FAILED/.test(s.status) ? s : undefined;
    }, 30_000);
    expect(done.status).toBe('TASK_STATUS_COMPLETED');
    const offered = llm.requests[0]!.body.tools.map((x: { function: { name: string } }) => x.function.name);
    expect(offered).toContain('mcp_calc_add');
    expect(llm.requests[1]!.messages!.find((m) => m.role === 'tool')!.content).toBe('42');
    const { events } = await readSse(`${t.base}/api/v1/stream/sse?workflow_id=${task_id}`, { timeoutMs: 20_000, headers: a.h });
    const evs = events.filter((e) => e.event !== 'done').map((e) => JSON.parse(e.data));
    expect(evs.find((e) => e.type === 'TOOL_INVOKED')?.payload).toMatchObject({ tool: 'mcp.calc.add', arguments: { a: 20, b: 22 } });
    expect(evs.find((e) => e.type === 'TOOL_OBSERVATION')?.payload).toMatchObject({ tool: 'mcp.calc.add', success: true });
    // Usage recorded like any tool's, under the task.
    await waitFor(async () => {
      const [u] = await t.app.store.sql`SELECT count(*)::int AS n FROM tool_calls WHERE tool = 'mcp.calc.add' AND task_id = ${task_id}`;
      return (u!.n as number) > 0;
    });
  });

  it('a server that goes away mid-task: the model is told which server failed, the task still answers, and it comes back', async () => {
    llm.enqueue({ type: 'completion', content: '', toolCalls: [{ id: 'c1', name: 'mcp_calc_add', arguments: '{"a":1,"b":2}' }] }, (req) => ({
      type: 'completion',
      content: `noted: ${String(req.messages!.find((m) => m.role === 'tool')!.content)}`,
    }));
    await mcp.stop();
    try {
      const { task_id } = await json(await post(a, '/api/v1/tasks', { query: 'add', mode: 'standard' }));
      const done = await waitFor(async () => {
        const s = await get(a, `/api/v1/tasks/${task_id}`);
        return /COMPLETED|FAILED/.test(s.status) ? s : undefined;
      }, 30_000);
      expect(done.status).toBe('TASK_STATUS_COMPLETED');
      expect(done.result).toMatch(/noted: .*MCP server "calc"/);
    } finally {
      await mcp.restart();
    }
    const back = await waitFor(
      async () => {
        const r = await json(await execute(a, 'mcp.calc.add', { a: 1, b: 1 }));
        return r.success ? r : undefined;
      },
      40_000,
      500,
    );
    expect(back.text).toBe('2');
  });

  it('an approval policy naming the server (mcp.local.*) holds its tool for a person; approved, it runs', async () => {
    llm.enqueue({ type: 'completion', content: '', toolCalls: [{ id: 'e1', name: 'mcp_local_echo', arguments: '{"text":"held"}' }] }, (req) => ({
      type: 'completion',
      content: `said: ${String(req.messages!.find((m) => m.role === 'tool')!.content)}`,
    }));
    const { task_id } = await json(await post(a, '/api/v1/tasks', { query: 'echo it', mode: 'standard' }));
    const pending = await waitFor(async () => {
      const r = await get(a, '/api/v1/approvals?status=pending');
      return (r.approvals as Array<{ workflow_id: string; approval_id: string; proposed_action: unknown }>).find((x) => x.workflow_id === task_id);
    }, 20_000);
    expect(pending.proposed_action).toMatchObject({ tool: 'mcp.local.echo', arguments: { text: 'held' } });
    expect((await post(a, '/api/v1/approvals/decision', { approval_id: pending.approval_id, workflow_id: task_id, approved: true })).status).toBe(200);
    const done = await waitFor(async () => {
      const s = await get(a, `/api/v1/tasks/${task_id}`);
      return /COMPLETED|FAILED/.test(s.status) ? s : undefined;
    }, 30_000);
    expect(done.result).toBe('said: held');
  });

  it('a tool list that changes reaches the listing', async () => {
    const mul: McpTestTool = { name: 'mul', inputSchema: { type: 'object', properties: {} }, handler: () => ({ text: 'x' }) };
    await mcp.setTools([add, slow, mul]);
    await waitFor(async () => (await toolNames(a)).includes('mcp.calc.mul'), 15_000, 200);
    await mcp.setTools([add, slow]);
    await waitFor(async () => !(await toolNames(a)).includes('mcp.calc.mul'), 15_000, 200);
  });
});

describe('OpenAPI documents', () => {
  it('registers from spec_url (base_url from its servers), runs an operation with the secret header, owner only', async () => {
    const r = await post(a, '/api/v1/tools/openapi', { name: 'pets', spec_url: `${api.origin}/openapi.json`, headers: { 'X-API-Key': 'pet-key' } });
    const body = await json(r);
    expect(r.status, JSON.stringify(body)).toBe(201);
    expect(body).toMatchObject({
      name: 'pets',
      base_url: `${api.origin}/v1`,
      title: 'Pets',
      version: '2.1.0',
      header_names: ['X-API-Key'],
      tools: ['openapi.pets.get_pet'],
    });
    expect(JSON.stringify(await get(a, '/api/v1/tools/openapi'))).not.toContain('pet-key');
    const out = await json(await execute(a, 'openapi.pets.get_pet', { id: 7 }));
    expect(out).toMatchObject({ success: true });
    expect(out.output.body).toEqual({ id: 7, name: 'Rex' });
    expect((await execute(b, 'openapi.pets.get_pet', { id: 7 })).status).toBe(404);
    expect(await toolNames(b)).not.toContain('openapi.pets.get_pet');
  });

  it('inline documents; refusals: both or neither of spec and spec_url, no operationId, a base_url the guard refuses, the per-user limit', async () => {
    const bad = async (body: unknown, status: number, msg: RegExp) => {
      const r = await post(b, '/api/v1/tools/openapi', body);
      const j = await json(r);
      expect(r.status, JSON.stringify(j)).toBe(status);
      expect(j.error).toMatch(msg);
    };
    await bad({ name: 'p' }, 400, /exactly one of spec_url and spec/);
    await bad({ name: 'p', spec: PETSTORE, spec_url: `${api.origin}/openapi.json` }, 400, /exactly one of spec_url and spec/);
    await bad(
      { name: 'p', spec: { ...PETSTORE, paths: { '/x': { get: { responses: { '200': { description: 'ok' } } } } } }, base_url: api.origin },
      400,
      /no operation with an operationId/,
    );
    await bad({ name: 'p', spec: PETSTORE, base_url: 'http://10.1.2.3/' }, 400, /base_url: refused/);
    await bad({ name: 'p', spec: PETSTORE }, 400, /base_url is required/);
    for (const n of ['p1', 'p2', 'p3'])
      expect((await post(b, '/api/v1/tools/openapi', { name: n, spec: PETSTORE, base_url: `${api.origin}/v1` })).status).toBe(201);
    await bad({ name: 'p4', spec: PETSTORE, base_url: `${api.origin}/v1` }, 403, /at most 3 tool sources/);
    expect(await toolNames(b)).toEqual(expect.arrayContaining(['openapi.p1.get_pet', 'openapi.p3.get_pet']));
  });

  it('removal: the tools go; another user cannot remove what is not theirs (404)', async () => {
    expect((await fetch(`${t.base}/api/v1/tools/openapi/pets`, { method: 'DELETE', headers: b.h })).status).toBe(404);
    const r = await fetch(`${t.base}/api/v1/tools/openapi/pets`, { method: 'DELETE', headers: a.h });
    expect(r.status).toBe(200);
    expect(await toolNames(a)).not.toContain('openapi.pets.get_pet');
    expect((await fetch(`${t.base}/api/v1/tools/openapi/pets`, { method: 'DELETE', headers: a.h })).status).toBe(404);
  });
});
