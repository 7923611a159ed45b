/**
 * The agent loop end to end: the real openai SDK (OpenAiProvider) against a local
 * OpenAI-compatible server that scripts tool calls, and the whole service around it.
 * Standard mode: the model asks for tools, the registry runs them, results go back as `tool`
 * messages; events in order; roles narrow the tools; max_iterations ends the loop; tool calls
 * run TOOL_PARALLELISM at a time; budgets stop a task cleanly; every model call is recorded.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { UsageStore } from '../src/llm/index.js';
import { createClient, type Interceptor } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { StatusCode } from '../src/gen/svc/v1/common_pb.js';
import { OrchestratorService } from '../src/gen/svc/v1/orchestrator_pb.js';
import { TEST_RPC_TOKEN, json, readSse, startTestApp, waitFor, type TestApp } from './helpers/app.js';
import { startOpenAiServer, type OpenAiTestServer, type RecordedRequest, scriptedProvider } from './helpers/openai-server.js';

let llm: OpenAiTestServer;
let t: TestApp;
let pages: Server;
let pagesBase: string;
/** Requests the page server is handling right now, and the most at once. */
const inFlight = { now: 0, max: 0 };

beforeAll(async () => {
  llm = await startOpenAiServer();
  pages = createServer((req, res) => {
    inFlight.now++;
    inFlight.max = Math.max(inFlight.max, inFlight.now);
    setTimeout(() => {
      inFlight.now--;
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`page ${req.url}`);
    }, 300);
  });
  await new Promise<void>((r) => pages.listen(0, '127.0.0.1', () => r()));
  pagesBase = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
  t = await startTestApp(
    { TOOLS_HTTP_ALLOW_HOSTS: '127.0.0.1/32', TOOL_PARALLELISM: '2', MAX_TOKENS_PER_REQUEST: '0', MAX_COST_PER_REQUEST: '0' },
    {
      llm: scriptedProvider(llm),
    },
  );
});
afterAll(async () => {
  await t?.stop();
  await llm?.close();
  await new Promise<void>((r) => pages.close(() => r()));
});
beforeEach(() => {
  llm.reset();
  inFlight.max = 0;
});

async function submit(body: Record<string, unknown>): Promise<string> {
  const r = await fetch(`${t.base}/api/v1/tasks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const b = await json(r);
  expect(r.status, JSON.stringify(b)).toBe(200);
  return b.task_id;
}

async function events(id: string) {
  const { events: evs } = await readSse(`${t.base}/api/v1/stream/sse?workflow_id=${id}`, { timeoutMs: 30_000 });
  return evs.filter((e) => e.event !== 'done').map((e) => JSON.parse(e.data) as { type: string; agent_id: string; message: string; payload?: any });
}

async function finished(id: string) {
  return waitFor(async () => {
    const s = await json(await fetch(`${t.base}/api/v1/tasks/${id}`));
    return /COMPLETED|FAILED|CANCELLED|TIMEOUT/.test(s.status) ? s : undefined;
  }, 30_000);
}

const toolNames = (r: RecordedRequest) => ((r.body?.tools ?? []) as { function: { name: string } }[]).map((x) => x.function.name).sort();

describe('standard mode: one agent with a tool loop', () => {
  it('calls the calculator, feeds its result back as a tool message, and answers; events in order', async () => {
    llm.enqueue(
      { type: 'completion', content: 'Let me compute that.', toolCalls: [{ id: 'call_1', name: 'calculator', arguments: '{"expression":"2+2*3"}' }] },
      (req) => {
        const tool = req.messages?.find((m) => m.role === 'tool') as { content: string; tool_call_id: string } | undefined;
        return { type: 'completion', content: `The answer is ${tool?.content.includes('8') ? '8' : 'unknown'}.` };
      },
    );
    const id = await submit({ query: 'What is 2+2*3?', mode: 'standard' });
    const evs = await events(id);
    const s = await finished(id);
    expect(s.status).toBe('TASK_STATUS_COMPLETED');
    expect(s.result).toBe('The answer is 8.');
    expect(s.metadata.tool_calls).toBe(1);

    // The first request offered the generalist's tools (never bash); the second carried the result.
    expect(llm.requests).toHaveLength(2);
    const offered = toolNames(llm.requests[0]!);
    expect(offered).toContain('calculator');
    expect(offered).toContain('web_fetch');
    expect(offered).not.toContain('bash');
    const second = llm.requests[1]!.messages as any[];
    const assistant = second.find((m) => m.role === 'assistant');
    expect(assistant.tool_calls[0]).toMatchObject({ id: 'call_1', function: { name: 'calculator', arguments: '{"expression":"2+2*3"}' } });
    expect(second.find((m) => m.role === 'tool')).toMatchObject({ tool_call_id: 'call_1' });
    expect(second.find((m) => m.role === 'tool').content).toContain('8');

    const types = evs.map((e) => e.type).filter((x) => x !== 'LLM_PARTIAL');
    const at = (type: string) => types.indexOf(type);
    expect(types.slice(0, 1)).toEqual(['WORKFLOW_STARTED']);
    expect(at('AGENT_STARTED')).toBeLessThan(at('AGENT_THINKING'));
    expect(at('AGENT_THINKING')).toBeLessThan(at('TOOL_INVOKED'));
    expect(at('TOOL_INVOKED')).toBeLessThan(at('TOOL_OBSERVATION'));
    expect(at('TOOL_OBSERVATION')).toBeLessThan(at('LLM_OUTPUT'));
    expect(at('LLM_OUTPUT')).toBeLessThan(at('AGENT_COMPLETED'));
    expect(types.at(-1)).toBe('STREAM_END');
    const thinking = evs.find((e) => e.type === 'AGENT_THINKING')!;
    expect(thinking.message).toBe('Let me compute that.');
    const invoked = evs.find((e) => e.type === 'TOOL_INVOKED')!;
    expect(invoked.payload).toEqual({ tool: 'calculator', call_id: 'call_1', arguments: { expression: '2+2*3' } });
    const obs = evs.find((e) => e.type === 'TOOL_OBSERVATION')!;
    expect(obs.payload).toMatchObject({ tool: 'calculator', call_id: 'call_1', success: true });
    expect(obs.payload.output).toContain('8');
    expect(typeof obs.payload.execution_time_ms).toBe('number');
  });

  it('a role narrows the tools: a writer is offered file_read only, and a call to another tool is refused to the model', async () => {
    llm.enqueue(
      { type: 'completion', content: '', toolCalls: [{ id: 'c1', name: 'calculator', arguments: '{"expression":"1+1"}' }] },
      { type: 'completion', content: 'done' },
    );
    const id = await submit({ query: 'Write something', mode: 'standard', context: { role: 'writer' } });
    const s = await finished(id);
    expect(s.status).toBe('TASK_STATUS_COMPLETED');
    expect(toolNames(llm.requests[0]!)).toEqual(['file_read']);
    const obs = (await events(id)).find((e) => e.type === 'TOOL_OBSERVATION')!;
    expect(obs.payload.success).toBe(false);
    expect(obs.payload.output).toContain('tool calculator is not available to this agent; available: file_read');
    expect(s.metadata.role).toBe('writer');
  });

  it('max_iterations ends the loop: after that many tool rounds the model must answer without tools', async () => {
    let n = 0;
    llm.setDefault((req) =>
      req.body?.tools?.length
        ? { type: 'completion', content: '', toolCalls: [{ id: `loop-${++n}`, name: 'calculator', arguments: '{"expression":"1+1"}' }] }
        : { type: 'completion', content: 'final without tools' },
    );
    const id = await submit({ query: 'Loop forever', mode: 'standard', max_iterations: 3 });
    const s = await finished(id);
    expect(s.status).toBe('TASK_STATUS_COMPLETED');
    expect(s.result).toBe('final without tools');
    expect(llm.requests).toHaveLength(4);
    expect(llm.requests.map((r) => (r.body?.tools?.length ?? 0) > 0)).toEqual([true, true, true, false]);
    expect(s.metadata.tool_calls).toBe(3);
  });

  it('runs the tool calls of one turn TOOL_PARALLELISM (2) at a time', async () => {
    const calls = [1, 2, 3, 4].map((i) => ({ id: `f${i}`, name: 'web_fetch', arguments: JSON.stringify({ url: `${pagesBase}/p${i}` }) }));
    llm.enqueue({ type: 'completion', content: '', toolCalls: calls }, { type: 'completion', content: 'fetched' });
    const id = await submit({ query: 'Fetch four pages', mode: 'standard' });
    const s = await finished(id);
    expect(s.status).toBe('TASK_STATUS_COMPLETED');
    expect(inFlight.max).toBe(2);
    const toolMsgs = (llm.requests[1]!.messages as any[]).filter((m) => m.role === 'tool');
    expect(toolMsgs.map((m) => m.tool_call_id)).toEqual(['f1', 'f2', 'f3', 'f4']);
    expect(toolMsgs[2].content).toContain('page /p3');
  });

  it('records every model call; usage and model_breakdown come from the records', async () => {
    llm.enqueue(
      {
        type: 'completion',
        content: 'thinking',
        toolCalls: [{ id: 'u1', name: 'calculator', arguments: '{"expression":"3*3"}' }],
        usage: { prompt_tokens: 30, completion_tokens: 5, total_tokens: 35 },
      },
      { type: 'completion', content: '9', usage: { prompt_tokens: 50, completion_tokens: 2, total_tokens: 52 } },
    );
    const id = await submit({ query: '3*3?', mode: 'standard' });
    const s = await finished(id);
    expect(s.status).toBe('TASK_STATUS_COMPLETED');
    // Written off the step path: they land shortly after.
    const rows = await waitFor(async () => {
      const r = await t.app.store.sql`SELECT agent_id, model, input_tokens, output_tokens, total_tokens FROM llm_calls WHERE task_id = ${id}::uuid ORDER BY id`;
      return r.length === 2 ? r : undefined;
    });
    expect(rows.map((r) => [r.agent_id, r.model, r.total_tokens])).toEqual([
      ['standard-agent', 'm-small', 35],
      ['standard-agent', 'm-small', 52],
    ]);
    expect(s.usage).toMatchObject({ total_tokens: 87, input_tokens: 80, output_tokens: 7 });
    expect(s.metadata.model_breakdown).toEqual([expect.objectContaining({ model: 'm-small', executions: 2, tokens: 87 })]);
    // The tier shares the model service reports come from the same records.
    const shares = await new UsageStore(t.app.store.sql).tierShares(1);
    expect(shares.small!.calls).toBeGreaterThanOrEqual(2);
    expect(shares.small!.share).toBeGreaterThan(0);
    // The tool execution was recorded too (asynchronously).
    await waitFor(async () => {
      const [r] = await t.app.store.sql`SELECT count(*)::int AS n FROM tool_calls WHERE task_id = ${id}::uuid AND tool = 'calculator' AND success`;
      return r!.n === 1 ? true : undefined;
    });
  });
});

describe('budgets', () => {
  let b: TestApp;
  beforeAll(async () => {
    b = await startTestApp(
      { MAX_TOKENS_PER_REQUEST: '100', MAX_COST_PER_REQUEST: '0' },
      {
        llm: scriptedProvider(llm),
      },
    );
  });
  afterAll(async () => {
    await b?.stop();
  });

  it('warns at 80%, refuses the call past the limit, and ends the task FAILED naming the budget', async () => {
    llm.setDefault({
      type: 'completion',
      content: '',
      toolCalls: [{ id: 'b1', name: 'calculator', arguments: '{"expression":"1"}' }],
      usage: { prompt_tokens: 40, completion_tokens: 5, total_tokens: 45 },
    });
    const r = await fetch(`${b.base}/api/v1/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'spend', mode: 'standard' }),
    });
    const { task_id: id } = await json(r);
    const s = await waitFor(async () => {
      const x = await json(await fetch(`${b.base}/api/v1/tasks/${id}`));
      return /COMPLETED|FAILED/.test(x.status) ? x : undefined;
    }, 30_000);
    expect(s.status).toBe('TASK_STATUS_FAILED');
    expect(s.error).toBe('budget exceeded: MAX_TOKENS_PER_REQUEST (135 of 100 tokens used)');
    // 45, 90 (>= 80: warning), 135 (>= 100: at the limit), then the 4th call is refused.
    expect(llm.requests).toHaveLength(3);
    const { events: evs } = await readSse(`${b.base}/api/v1/stream/sse?workflow_id=${id}`, { timeoutMs: 30_000 });
    const thresholds = evs
      .filter((e) => e.event !== 'done')
      .map((e) => JSON.parse(e.data))
      .filter((e) => e.type === 'BUDGET_THRESHOLD');
    expect(thresholds.map((e) => e.payload.threshold)).toEqual([0.8, 1]);
    expect(thresholds[0].payload).toMatchObject({ budget: 'MAX_TOKENS_PER_REQUEST', used: 90, limit: 100, unit: 'tokens' });
    // Over gRPC the task's status code says why it ended.
    const asSystem: Interceptor = (next) => (req) => {
      req.header.set('authorization', `Bearer ${TEST_RPC_TOKEN}`);
      req.header.set('x-caller-kind', 'system');
      return next(req);
    };
    const orch = createClient(OrchestratorService, createGrpcTransport({ baseUrl: `http://127.0.0.1:${b.app.grpcPort}`, interceptors: [asSystem] }));
    const st = await orch.getTaskStatus({ taskId: id });
    expect(st.statusCode).toBe(StatusCode.BUDGET_EXCEEDED);
    expect(st.errorMessage).toBe('budget exceeded: MAX_TOKENS_PER_REQUEST (135 of 100 tokens used)');
  });
});

describe('response cache (ENABLE_CACHE, through the configured provider)', () => {
  let c: TestApp;
  beforeAll(async () => {
    c = await startTestApp({ LLM_BASE_URL: llm.baseUrl, LLM_API_KEY: 'sk-test', LLM_MODEL: 'cache-model', ENABLE_CACHE: '1', MAX_TOKENS_PER_REQUEST: '0' });
  });
  afterAll(async () => {
    await c?.stop();
  });

  const run = async (query: string) => {
    const r = await fetch(`${c.base}/api/v1/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, mode: 'simple' }),
    });
    const { task_id: id } = await json(r);
    const s = await waitFor(async () => {
      const x = await json(await fetch(`${c.base}/api/v1/tasks/${id}`));
      return /COMPLETED|FAILED/.test(x.status) ? x : undefined;
    }, 30_000);
    return { id, s };
  };

  it('the same request again is answered from the cache: no model call, no cost, marked as a hit', async () => {
    llm.setDefault({ type: 'completion', content: 'NATS is a messaging system.', usage: { prompt_tokens: 20, completion_tokens: 6, total_tokens: 26 } });
    const q = `What is NATS? ${Date.now()}`;
    const first = await run(q);
    expect(first.s.status).toBe('TASK_STATUS_COMPLETED');
    expect(llm.requests).toHaveLength(1);
    const second = await run(q);
    expect(second.s).toMatchObject({ status: 'TASK_STATUS_COMPLETED', result: 'NATS is a messaging system.' });
    expect(llm.requests).toHaveLength(1);
    expect(second.s.usage.estimated_cost).toBe(0);
    expect(second.s.metadata).toMatchObject({ cache_hits: 1, cache_score: 1 });
    const [row] = await waitFor(async () => {
      const r = await c.app.store.sql`SELECT cache_hit, total_tokens FROM llm_calls WHERE task_id = ${second.id}::uuid`;
      return r.length ? r : undefined;
    });
    expect(row).toMatchObject({ cache_hit: true, total_tokens: 0 });
    const { events } = await readSse(`${c.base}/api/v1/stream/sse?workflow_id=${second.id}`, { timeoutMs: 20_000 });
    const out = events.filter((e) => e.event === 'thread.message.completed').map((e) => JSON.parse(e.data));
    expect(out[0].payload).toMatchObject({ cache_hit: true, cache_score: 1 });
    // A different question is not a hit.
    await run(`Explain JetStream consumers in detail ${Date.now()}`);
    expect(llm.requests).toHaveLength(2);
  });
});

describe('budgets enforced by the model layer (LLM_DISABLE_BUDGETS=0)', () => {
  let b: TestApp;
  beforeAll(async () => {
    b = await startTestApp(
      { MAX_TOKENS_PER_REQUEST: '100', MAX_COST_PER_REQUEST: '0', LLM_DISABLE_BUDGETS: '0' },
      {
        llm: scriptedProvider(llm),
      },
    );
  });
  afterAll(async () => {
    await b?.stop();
  });

  it('refuses the call past the limit the same way; the workflow emits no BUDGET_THRESHOLD', async () => {
    llm.setDefault({
      type: 'completion',
      content: '',
      toolCalls: [{ id: 'b1', name: 'calculator', arguments: '{"expression":"1"}' }],
      usage: { prompt_tokens: 40, completion_tokens: 5, total_tokens: 45 },
    });
    const r = await fetch(`${b.base}/api/v1/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'spend', mode: 'standard' }),
    });
    const { task_id: id } = await json(r);
    const s = await waitFor(async () => {
      const x = await json(await fetch(`${b.base}/api/v1/tasks/${id}`));
      return /COMPLETED|FAILED/.test(x.status) ? x : undefined;
    }, 30_000);
    expect(s.status).toBe('TASK_STATUS_FAILED');
    expect(s.error).toBe('budget exceeded: MAX_TOKENS_PER_REQUEST (135 of 100 tokens used)');
    expect(llm.requests).toHaveLength(3);
    const { events } = await readSse(`${b.base}/api/v1/stream/sse?workflow_id=${id}`, { timeoutMs: 30_000 });
    expect(events.some((e) => e.event === 'BUDGET_THRESHOLD')).toBe(false);
  });
});
