/**
 * AgentService over the real HTTP/2 port (AGENT_GRPC_PORT) with the gRPC protocol: internal
 * RPC authentication, tool discovery (bash never listed, PERMISSION_DENIED on direct get),
 * ExecuteTask and StreamExecuteTask against a local OpenAI-compatible server that scripts the
 * model (a calculator call, then an answer), the request fields it honours (available_tools,
 * max_iterations, timeout_seconds, token_budget, session_id) and the ones it refuses.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Code, ConnectError, createClient, type CallOptions, type Client, type Interceptor, type Transport } from '@connectrpc/connect';
import { Http2SessionManager, createGrpcTransport } from '@connectrpc/connect-node';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AgentState, ExecutionMode, StatusCode } from '../src/gen/svc/v1/common_pb.js';
import { AgentService, type StreamExecuteTaskResponse } from '../src/gen/svc/v1/agent_pb.js';
import { SessionService } from '../src/gen/svc/v1/session_pb.js';
import { TEST_RPC_TOKEN, startTestApp, waitFor, type TestApp } from './helpers/app.js';
import { startOpenAiServer, type OpenAiTestServer, type RecordedRequest, scriptedProvider } from './helpers/openai-server.js';

let t: TestApp;
let llm: OpenAiTestServer;
let workspace: string;
const h2: Http2SessionManager[] = [];
const userA = { userId: randomUUID(), tenantId: randomUUID() };
const userB = { userId: randomUUID(), tenantId: randomUUID() };

const as =
  (u: { userId: string; tenantId: string }): Interceptor =>
  (next) =>
  (req) => {
    req.header.set('authorization', `Bearer ${TEST_RPC_TOKEN}`);
    req.header.set('x-caller-kind', 'user');
    req.header.set('x-caller-user-id', u.userId);
    req.header.set('x-caller-tenant-id', u.tenantId);
    return next(req);
  };

function transport(port: number, interceptors: Interceptor[]): Transport {
  const url = `http://127.0.0.1:${port}`;
  const m = new Http2SessionManager(url);
  h2.push(m);
  return createGrpcTransport({ baseUrl: url, sessionManager: m, interceptors });
}

let agent: Client<typeof AgentService>;
let agentB: Client<typeof AgentService>;

beforeAll(async () => {
  llm = await startOpenAiServer();
  workspace = mkdtempSync(join(tmpdir(), 'agent-rpc-ws-'));
  t = await startTestApp(
    {
      ROLES: 'agent,orchestrator',
      TOOLS_ENABLE_BASH: '1',
      WORKER_CONCURRENCY: '7',
      WORKSPACE_ROOT: workspace,
      PARTIAL_CHUNK_CHARS: '8',
    },
    {
      llm: scriptedProvider(llm),
    },
  );
  expect(t.app.agentPort).toBeGreaterThan(0);
  expect(t.app.agentPort).not.toBe(50051);
  agent = createClient(AgentService, transport(t.app.agentPort!, [as(userA)]));
  agentB = createClient(AgentService, transport(t.app.agentPort!, [as(userB)]));
}, 60_000);
afterAll(async () => {
  for (const m of h2) m.abort();
  await t?.stop();
  await llm?.close();
  if (workspace) rmSync(workspace, { recursive: true, force: true });
});
beforeEach(() => llm.reset());

async function failure(p: Promise<unknown> | AsyncIterable<unknown>): Promise<ConnectError> {
  try {
    if (Symbol.asyncIterator in p) for await (const _ of p);
    else await p;
  } catch (err) {
    return ConnectError.from(err);
  }
  throw new Error('expected the call to fail');
}

const toolNames = (r: RecordedRequest) => ((r.body?.tools ?? []) as { function: { name: string } }[]).map((x) => x.function.name).sort();

/** The model asks for the calculator, then answers with what the tool message said. */
function scriptCalculator() {
  llm.enqueue(
    {
      type: 'completion',
      content: 'Let me compute that.',
      toolCalls: [{ id: 'call_1', name: 'calculator', arguments: '{"expression":"2+2*3"}' }],
      usage: { prompt_tokens: 20, completion_tokens: 10, total_tokens: 30 },
    },
    (req) => {
      const tool = req.messages?.find((m) => m.role === 'tool') as { content: string } | undefined;
      return {
        type: 'completion',
        content: `The answer is ${tool?.content.includes('8') ? '8' : 'unknown'}.`,
        usage: { prompt_tokens: 40, completion_tokens: 5, total_tokens: 45 },
      };
    },
  );
}

describe('authentication', () => {
  it('refuses every AgentService RPC without the internal token, with a wrong one, and without a caller', async () => {
    const bare = createClient(AgentService, transport(t.app.agentPort!, []));
    const calls: [string, (o: CallOptions) => Promise<unknown> | AsyncIterable<unknown>][] = [
      ['ExecuteTask', (o) => bare.executeTask({ query: 'What is 2+2?' }, o)],
      ['StreamExecuteTask', (o) => bare.streamExecuteTask({ query: 'What is 2+2?' }, o)],
      ['GetCapabilities', (o) => bare.getCapabilities({}, o)],
      ['HealthCheck', (o) => bare.healthCheck({}, o)],
      ['DiscoverTools', (o) => bare.discoverTools({}, o)],
      ['GetToolCapability', (o) => bare.getToolCapability({ toolName: 'calculator' }, o)],
    ];
    expect(calls).toHaveLength(AgentService.methods.length);
    const variants: [string, Record<string, string>][] = [
      ['no token', { 'x-caller-kind': 'system' }],
      ['wrong token', { authorization: 'Bearer not-the-token', 'x-caller-kind': 'system' }],
      ['no caller', { authorization: `Bearer ${TEST_RPC_TOKEN}` }],
    ];
    for (const [name, call] of calls) {
      for (const [what, headers] of variants) {
        expect((await failure(call({ headers, timeoutMs: 10_000 }))).code, `${name}: ${what}`).toBe(Code.Unauthenticated);
      }
    }
    // Nothing reached the model.
    expect(llm.requests).toHaveLength(0);
    // With the token and a caller, the same client works.
    expect((await bare.healthCheck({}, { headers: { authorization: `Bearer ${TEST_RPC_TOKEN}`, 'x-caller-kind': 'system' } })).healthy).toBe(true);
  });
});

describe('tools and capabilities', () => {
  it('DiscoverTools lists the registry without bash (even with TOOLS_ENABLE_BASH=1), with a category filter', async () => {
    const all = await agent.discoverTools({});
    const names = all.tools.map((x) => x.name);
    expect(names).toContain('calculator');
    expect(names).toContain('python_executor');
    expect(names).not.toContain('bash');
    const calc = all.tools.find((x) => x.name === 'calculator')!;
    expect(calc).toMatchObject({ category: 'math' });
    expect(calc.timeoutSeconds).toBeGreaterThan(0);
    expect(calc.parameters).toMatchObject({ type: 'object', properties: { expression: { type: 'string' } } });
    const math = await agent.discoverTools({ category: 'math' });
    expect(math.tools.map((x) => x.name)).toEqual(['calculator']);
    const file = await agent.discoverTools({ category: 'file' });
    expect(file.tools.map((x) => x.name).sort()).toEqual(['file_list', 'file_read', 'file_write']);
  });

  it('GetToolCapability: bash is PERMISSION_DENIED, an unknown tool NOT_FOUND, a listed tool described', async () => {
    const bash = await failure(agent.getToolCapability({ toolName: 'bash' }));
    expect(bash.code).toBe(Code.PermissionDenied);
    expect(bash.rawMessage).toBe('Tool not available via direct execution');
    expect((await failure(agent.getToolCapability({ toolName: 'no_such_tool' }))).code).toBe(Code.NotFound);
    expect((await failure(agent.getToolCapability({ toolName: '' }))).code).toBe(Code.InvalidArgument);
    const calc = await agent.getToolCapability({ toolName: 'calculator' });
    expect(calc.tool).toMatchObject({ name: 'calculator', category: 'math' });
  });

  it('GetCapabilities and HealthCheck describe this server', async () => {
    const c = await agent.getCapabilities({});
    expect(c.supportedTools).toContain('calculator');
    expect(c.supportedTools).not.toContain('bash');
    expect(c.supportedModes).toEqual(['simple', 'standard']);
    expect(c.maxConcurrentTasks).toBe(7); // WORKER_CONCURRENCY
    expect(c.maxMemoryMb).toBe(256n); // PYTHON_EXECUTOR_MEMORY_MB's default
    expect(c.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(c.roles).toContain('developer');
    const h = await agent.healthCheck({});
    expect(h).toMatchObject({ healthy: true, status: 'SERVING', activeTasks: 0, maxConcurrentTasks: 7, version: c.version });
  });
});

describe('ExecuteTask', () => {
  it('runs the tool loop: the calculator is called, its result fed back, and the answer comes with tool_calls, tool_results and metrics', async () => {
    scriptCalculator();
    const taskId = randomUUID();
    const r = await agent.executeTask({ metadata: { taskId }, query: 'What is 2+2*3?', mode: ExecutionMode.STANDARD, availableTools: ['calculator'] });
    expect(r.errorMessage).toBe('');
    expect(r).toMatchObject({ taskId, status: StatusCode.OK, finalState: AgentState.COMPLETED, result: 'The answer is 8.' });
    expect(r.toolCalls).toHaveLength(1);
    expect(r.toolCalls[0]).toMatchObject({ callId: 'call_1', name: 'calculator', arguments: { expression: '2+2*3' }, rawArguments: '' });
    expect(r.toolResults).toHaveLength(1);
    expect(r.toolResults[0]).toMatchObject({ callId: 'call_1', name: 'calculator', success: true, error: '' });
    expect(r.toolResults[0]!.output).toContain('8');
    const m = r.metrics!;
    expect(m.tokenUsage).toMatchObject({ promptTokens: 60, completionTokens: 15, totalTokens: 75, model: 'm-small' });
    expect(m.provider).toBe('openai');
    expect(m.modelCalls).toBe(2);
    expect(m.durationMs).toBeGreaterThan(0n);
    expect(m.cacheHit).toBe(false);

    // available_tools narrowed the offer to the calculator; the second call carried its result.
    expect(llm.requests).toHaveLength(2);
    expect(toolNames(llm.requests[0]!)).toEqual(['calculator']);
    const second = llm.requests[1]!.messages as any[];
    expect(second.find((x) => x.role === 'assistant').tool_calls[0]).toMatchObject({ id: 'call_1', function: { name: 'calculator' } });
    expect(second.find((x) => x.role === 'tool')).toMatchObject({ tool_call_id: 'call_1' });
    expect(second.find((x) => x.role === 'tool').content).toContain('8');
    // Both model calls are recorded under the run's task id.
    await waitFor(async () => {
      const [row] = await t.app.store.sql`SELECT count(*)::int AS n, sum(total_tokens)::int AS tokens FROM llm_calls WHERE task_id = ${taskId}::uuid`;
      return row!.n === 2 && row!.tokens === 75 ? true : undefined;
    });
  });

  it("without available_tools the agent is offered the role's tools: the generalist's (never bash), a writer's file_read only", async () => {
    llm.enqueue({ type: 'completion', content: 'ok' }, { type: 'completion', content: 'ok' });
    expect((await agent.executeTask({ query: 'Say ok' })).status).toBe(StatusCode.OK);
    const offered = toolNames(llm.requests[0]!);
    expect(offered).toContain('calculator');
    expect(offered).toContain('web_fetch');
    expect(offered).not.toContain('bash');
    expect((await agent.executeTask({ query: 'Say ok', context: { role: 'writer' } })).status).toBe(StatusCode.OK);
    expect(toolNames(llm.requests[1]!)).toEqual(['file_read']);
  });

  it('mode SIMPLE makes one model call without tools', async () => {
    const r = await agent.executeTask({ query: 'hello there', mode: ExecutionMode.SIMPLE });
    expect(r).toMatchObject({ status: StatusCode.OK, result: 'echo: hello there' });
    expect(llm.requests).toHaveLength(1);
    expect(llm.requests[0]!.body.tools).toBeUndefined();
  });

  it('config.max_iterations ends the loop: after that many tool rounds the model must answer without tools', async () => {
    llm.setDefault((req) =>
      req.body?.tools?.length
        ? { type: 'completion', content: '', toolCalls: [{ id: `c${llm.requests.length}`, name: 'calculator', arguments: '{"expression":"1+1"}' }] }
        : { type: 'completion', content: 'final answer' },
    );
    const r = await agent.executeTask({ query: 'loop forever', availableTools: ['calculator'], config: { maxIterations: 2 } });
    expect(r).toMatchObject({ status: StatusCode.OK, result: 'final answer' });
    expect(r.toolCalls).toHaveLength(2);
    expect(llm.requests).toHaveLength(3);
    expect(llm.requests[2]!.body.tools).toBeUndefined();
    expect(r.metrics!.modelCalls).toBe(3);
  });

  it('config.timeout_seconds aborts the run: status TIMEOUT, final state FAILED', async () => {
    llm.enqueue({ type: 'hang' });
    const t0 = Date.now();
    const r = await agent.executeTask({ query: 'never answered', config: { timeoutSeconds: 1 } }, { timeoutMs: 15_000 });
    const took = Date.now() - t0;
    expect(r).toMatchObject({ status: StatusCode.TIMEOUT, finalState: AgentState.FAILED, result: '' });
    expect(r.errorMessage).toContain('timeout_seconds');
    expect(took).toBeGreaterThanOrEqual(950);
    expect(took).toBeLessThan(8000);
    expect((await agent.healthCheck({})).activeTasks).toBe(0);
  });

  it('metadata.token_budget stops the run before the next model call: BUDGET_EXCEEDED naming the budget', async () => {
    scriptCalculator();
    const r = await agent.executeTask({ query: 'What is 2+2*3?', availableTools: ['calculator'], metadata: { tokenBudget: 10 } });
    expect(r).toMatchObject({ status: StatusCode.BUDGET_EXCEEDED, finalState: AgentState.FAILED });
    expect(r.errorMessage).toContain('TOKEN_BUDGET_PER_TASK');
    // The first call was made and counted; the second was refused.
    expect(llm.requests).toHaveLength(1);
    expect(r.metrics!.tokenUsage!.totalTokens).toBe(30);
    expect(r.toolCalls).toHaveLength(1);
  });

  it("metadata.session_id: the caller's own session gives the file tools its workspace; another user's is NOT_FOUND", async () => {
    const sessions = createClient(SessionService, transport(t.app.grpcPort!, [as(userA)]));
    const ext = `agent-rpc-${randomUUID()}`;
    const s = (await sessions.createSession({ externalId: ext, title: 'agent rpc' })).session!;
    llm.enqueue(
      { type: 'completion', content: '', toolCalls: [{ id: 'w1', name: 'file_write', arguments: '{"path":"notes.txt","content":"written by the agent"}' }] },
      { type: 'completion', content: 'saved' },
    );
    const r = await agent.executeTask({ query: 'save a note', metadata: { sessionId: ext }, availableTools: ['file_write'] });
    expect(r.toolResults[0], r.toolResults[0]?.output).toMatchObject({ success: true });
    expect(r.result).toBe('saved');
    expect(readFileSync(join(workspace, s.id, 'notes.txt'), 'utf8')).toBe('written by the agent');

    const before = llm.requests.length;
    expect((await failure(agentB.executeTask({ query: 'read their notes', metadata: { sessionId: ext } }))).code).toBe(Code.NotFound);
    expect((await failure(agentB.executeTask({ query: 'read their notes', metadata: { sessionId: s.id } }))).code).toBe(Code.NotFound);
    expect(llm.requests).toHaveLength(before);
  });

  it('refuses, naming the field, what it cannot honour, before any model call', async () => {
    const cases: [string, Parameters<typeof agent.executeTask>[0], string][] = [
      ['enable_learning', { query: 'q', config: { enableLearning: true } }, 'config.enable_learning'],
      ['enable_sandbox=false', { query: 'q', config: { enableSandbox: false } }, 'config.enable_sandbox'],
      ['enable_sandbox=true with bash', { query: 'q', context: { role: 'developer' }, config: { enableSandbox: true } }, 'config.enable_sandbox'],
      ['memory_limit_mb', { query: 'q', config: { memoryLimitMb: 512n } }, 'config.memory_limit_mb'],
      ['session_context', { query: 'q', sessionContext: { history: [{ role: 'user', content: 'earlier' }] } }, 'session_context'],
      ['mode COMPLEX', { query: 'q', mode: ExecutionMode.COMPLEX }, 'COMPLEX'],
      ['an unknown tool', { query: 'q', availableTools: ['calculator', 'teleport'] }, 'available_tools: unknown tool "teleport"'],
      ['a tool outside the role', { query: 'q', availableTools: ['bash'] }, 'available_tools: bash is not allowed for role generalist'],
      ['tools in SIMPLE mode', { query: 'q', mode: ExecutionMode.SIMPLE, availableTools: ['calculator'] }, 'available_tools'],
      ['max_iterations 51', { query: 'q', config: { maxIterations: 51 } }, 'config.max_iterations'],
      ['a negative timeout', { query: 'q', config: { timeoutSeconds: -1 } }, 'config.timeout_seconds'],
      ['a task_id that is no UUID', { query: 'q', metadata: { taskId: 'task-1' } }, 'metadata.task_id'],
      ['an unknown role', { query: 'q', context: { role: 'wizard' } }, 'unknown role: wizard'],
      ['an empty query', { query: '  ' }, 'query is required'],
    ];
    for (const [what, req, names] of cases) {
      const e = await failure(agent.executeTask(req));
      expect(e.code, what).toBe(Code.InvalidArgument);
      expect(e.rawMessage, what).toContain(names);
      // The streaming RPC applies the same rules (its request has the same fields).
      const s = await failure(agent.streamExecuteTask(req as Parameters<typeof agent.streamExecuteTask>[0]));
      expect(s.code, `${what} (stream)`).toBe(Code.InvalidArgument);
    }
    expect(llm.requests).toHaveLength(0);

    // The accepted forms of the same fields.
    llm.setDefault({ type: 'completion', content: 'fine' });
    const ok = await agent.executeTask({
      query: 'q',
      availableTools: ['calculator'],
      sessionContext: {},
      config: { enableSandbox: true, enableLearning: false, memoryLimitMb: 0n, maxIterations: 50, timeoutSeconds: 30 },
    });
    expect(ok).toMatchObject({ status: StatusCode.OK, result: 'fine' });
    const dev = await agent.executeTask({ query: 'q', context: { role: 'developer' }, availableTools: ['python_executor'], config: { enableSandbox: true } });
    expect(dev.status).toBe(StatusCode.OK);
    expect(toolNames(llm.requests[1]!)).toEqual(['python_executor']);
  });
});

describe('StreamExecuteTask', () => {
  it("streams the agent's events in order as updates, then the whole response", async () => {
    scriptCalculator();
    const updates: StreamExecuteTaskResponse[] = [];
    for await (const u of agent.streamExecuteTask({ query: 'What is 2+2*3?', availableTools: ['calculator'], config: { maxIterations: 3 } })) updates.push(u);
    const types = updates.map((u) => u.eventType).filter((x) => x !== 'LLM_PARTIAL');
    expect(types).toEqual(['AGENT_STARTED', 'AGENT_THINKING', 'TOOL_INVOKED', 'TOOL_OBSERVATION', 'LLM_OUTPUT', 'AGENT_COMPLETED', 'EXECUTION_RESULT']);
    const taskId = updates[0]!.taskId;
    expect(taskId).toMatch(/^[0-9a-f-]{36}$/);
    expect(updates.every((u) => u.taskId === taskId)).toBe(true);

    // The answer's text arrives as deltas before LLM_OUTPUT, and they add up to it.
    const out = updates.findIndex((u) => u.eventType === 'LLM_OUTPUT');
    const deltas = updates.slice(0, out).filter((u) => u.eventType === 'LLM_PARTIAL');
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.map((u) => u.message).join('')).toContain('The answer is 8.');

    const byType = (x: string) => updates.find((u) => u.eventType === x)!;
    expect(byType('AGENT_THINKING')).toMatchObject({ state: AgentState.PLANNING, message: 'Let me compute that.' });
    expect(byType('TOOL_INVOKED')).toMatchObject({
      state: AgentState.EXECUTING,
      toolCall: { callId: 'call_1', name: 'calculator', arguments: { expression: '2+2*3' } },
    });
    expect(byType('TOOL_INVOKED').toolResult).toBeUndefined();
    expect(byType('TOOL_OBSERVATION')).toMatchObject({ state: AgentState.EXECUTING, toolResult: { callId: 'call_1', success: true } });
    expect(byType('TOOL_OBSERVATION').toolResult!.output).toContain('8');
    expect(byType('LLM_OUTPUT').message).toBe('The answer is 8.');

    // Progress: model calls over the allowance (max_iterations + 1), never going back, 1 at the end.
    const progress = updates.map((u) => u.progress);
    for (let i = 1; i < progress.length; i++) expect(progress[i]).toBeGreaterThanOrEqual(progress[i - 1]!);
    expect(byType('TOOL_INVOKED').progress).toBeCloseTo(1 / 4);
    const last = updates.at(-1)!;
    expect(last).toMatchObject({ state: AgentState.COMPLETED, progress: 1, message: 'The answer is 8.' });
    expect(last.response).toMatchObject({ taskId, status: StatusCode.OK, result: 'The answer is 8.', finalState: AgentState.COMPLETED });
    expect(last.response!.toolCalls).toHaveLength(1);
    expect(last.response!.metrics!.tokenUsage!.totalTokens).toBe(75);
  });

  it('a run that fails ends the stream with a FAILED update carrying the response', async () => {
    llm.enqueue({ type: 'hang' });
    const updates: StreamExecuteTaskResponse[] = [];
    for await (const u of agent.streamExecuteTask({ query: 'never answered', config: { timeoutSeconds: 1 } }, { timeoutMs: 15_000 })) updates.push(u);
    const last = updates.at(-1)!;
    expect(last).toMatchObject({ eventType: 'EXECUTION_RESULT', state: AgentState.FAILED });
    expect(last.response).toMatchObject({ status: StatusCode.TIMEOUT, finalState: AgentState.FAILED });
    expect(updates[0]!.eventType).toBe('AGENT_STARTED');
  });
});
