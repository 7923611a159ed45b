/**
 * AGENT_TIMEOUT_SECONDS=1 end to end, with a slow local OpenAI-compatible model server (the
 * real openai SDK behind the service's provider): an agent of standard, simple, complex and
 * supervisor mode, of a skill and of a template that runs past it fails its task with an
 * error naming the setting (DEADLINE_EXCEEDED),
 * well before the slow model would have answered; the limit is the agent's whole execution,
 * not one call; an agent within it is untouched; and AgentService's ExecuteTask, without a
 * config.timeout_seconds, takes it as its limit.
 */
import { randomUUID } from 'node:crypto';
import { createClient, type Interceptor } from '@connectrpc/connect';
import { Http2SessionManager, createGrpcTransport } from '@connectrpc/connect-node';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AgentService } from '../src/gen/svc/v1/agent_pb.js';
import { AgentState, StatusCode } from '../src/gen/svc/v1/common_pb.js';
import { TEST_RPC_TOKEN, json, readSse, startTestApp, waitFor, type TestApp } from './helpers/app.js';
import { startOpenAiServer, type OpenAiTestServer, type RecordedRequest, scriptedProvider } from './helpers/openai-server.js';
import { startResearchWeb } from './helpers/research-web.js';

let llm: OpenAiTestServer;
let t: TestApp;
let h2: Http2SessionManager | undefined;

beforeAll(async () => {
  llm = await startOpenAiServer();
  const web = await startResearchWeb();
  t = await startTestApp(
    { ...web.env, AGENT_TIMEOUT_SECONDS: '1', MAX_TOKENS_PER_REQUEST: '0', MAX_COST_PER_REQUEST: '0', ROLES: 'gateway,orchestrator,worker,archiver,agent' },
    { llm: scriptedProvider(llm) },
  );
});
afterAll(async () => {
  h2?.abort();
  await t?.stop();
  await llm?.close();
});
beforeEach(() => llm.reset());

const TIMED_OUT = /timed out: its execution took longer than AGENT_TIMEOUT_SECONDS \(1 s\)/;
const system = (r: RecordedRequest) => String((r.messages ?? []).find((m) => m.role === 'system')?.content ?? '');
const lastUser = (r: RecordedRequest) => String([...(r.messages ?? [])].reverse().find((m) => m.role === 'user')?.content ?? '');

/** Submits a task and waits for its end; returns its status and how long it took. */
async function run(body: Record<string, unknown>) {
  const t0 = Date.now();
  const r = await fetch(`${t.base}/api/v1/tasks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const b = await json(r);
  expect(r.status, JSON.stringify(b)).toBe(200);
  const s = await waitFor(async () => {
    const x = await json(await fetch(`${t.base}/api/v1/tasks/${b.task_id}`));
    return /COMPLETED|FAILED|CANCELLED|TIMEOUT/.test(x.status) ? x : undefined;
  }, 30_000);
  return { id: b.task_id as string, s, ms: Date.now() - t0 };
}

async function eventTypes(id: string) {
  const { events } = await readSse(`${t.base}/api/v1/stream/sse?workflow_id=${id}`, { timeoutMs: 20_000 });
  return events.filter((e) => e.event !== 'done').map((e) => JSON.parse(e.data) as { type: string; agent_id: string });
}

describe('AGENT_TIMEOUT_SECONDS=1', () => {
  it('standard mode: a model call past the limit is aborted and the task fails naming the setting', async () => {
    llm.setDefault({ type: 'completion', content: 'too late', delayMs: 8000 });
    const { id, s, ms } = await run({ query: 'Take your time.', mode: 'standard' });
    expect(s.status).toBe('TASK_STATUS_FAILED');
    expect(s.error).toMatch(TIMED_OUT);
    expect(s.metadata.error_code).toBe('DeadlineExceeded');
    expect(s.result ?? '').toBe('');
    expect(ms).toBeLessThan(6000); // the model would have answered after 8 s
    const evs = await eventTypes(id);
    expect(evs.some((e) => e.type === 'AGENT_STARTED')).toBe(true);
    expect(evs.some((e) => e.type === 'AGENT_COMPLETED')).toBe(false);
    expect(llm.requests).toHaveLength(1);
  });

  it('counts the agent, not one call: tool turns of 600 ms each fail it in the second', async () => {
    llm.setDefault({ type: 'completion', content: '', toolCalls: [{ id: 'c1', name: 'file_list', arguments: '{}' }], delayMs: 600 });
    const { s } = await run({ query: 'Keep computing.', mode: 'standard' });
    expect(s.status).toBe('TASK_STATUS_FAILED');
    expect(s.error).toMatch(TIMED_OUT);
    expect(llm.requests.length).toBeGreaterThanOrEqual(2);
  });

  it('simple mode: its one model call is bounded too', async () => {
    llm.setDefault({ type: 'completion', content: 'too late', delayMs: 8000 });
    const { s, ms } = await run({ query: 'hello', mode: 'simple' });
    expect(s.status).toBe('TASK_STATUS_FAILED');
    expect(s.error).toMatch(TIMED_OUT);
    expect(ms).toBeLessThan(6000);
  });

  it('complex mode: a subtask agent past the limit fails the task (its siblings are stopped)', async () => {
    llm.setDefault((r) => {
      if (system(r).startsWith('Decompose the user request'))
        return {
          type: 'completion',
          content: JSON.stringify([
            { id: 'quick', description: 'quick' },
            { id: 'slow', description: 'slow' },
          ]),
        };
      if (lastUser(r).includes('Your subtask: slow')) return { type: 'completion', content: 'too late', delayMs: 8000 };
      return { type: 'completion', content: 'done' };
    });
    const { s, ms } = await run({ query: 'Do quick and slow.', mode: 'complex' });
    expect(s.status).toBe('TASK_STATUS_FAILED');
    expect(s.error).toMatch(/agent \S+ timed out: its execution took longer than AGENT_TIMEOUT_SECONDS/);
    expect(ms).toBeLessThan(6000);
  });

  it('complex mode: a planner past the limit fails the task before any subtask runs', async () => {
    llm.setDefault({ type: 'completion', content: '[]', delayMs: 8000 });
    const { s, ms } = await run({ query: 'Plan slowly.', mode: 'complex' });
    expect(s.status).toBe('TASK_STATUS_FAILED');
    expect(s.error).toBe('agent planner timed out: its execution took longer than AGENT_TIMEOUT_SECONDS (1 s)');
    expect(ms).toBeLessThan(6000);
    expect(llm.requests).toHaveLength(1);
  });

  it('supervisor mode: a team member past the limit fails the task', async () => {
    llm.setDefault((r) => {
      if (system(r).startsWith('Decompose the user request'))
        return {
          type: 'completion',
          content: JSON.stringify([
            { id: 'x', description: 'x-task' },
            { id: 'y', description: 'y-task' },
          ]),
        };
      if (lastUser(r).includes('Your subtask: y')) return { type: 'completion', content: 'too late', delayMs: 8000 };
      return { type: 'completion', content: 'done' };
    });
    const { s, ms } = await run({ query: 'Lead a slow team.', mode: 'supervisor' });
    expect(s.status).toBe('TASK_STATUS_FAILED');
    expect(s.error).toMatch(/agent agent-\d timed out: its execution took longer than AGENT_TIMEOUT_SECONDS \(1 s\)/);
    expect(ms).toBeLessThan(6000);
  });

  it("a skill's agent (config/skills summarize) past the limit fails the task", async () => {
    llm.setDefault({ type: 'completion', content: 'too late', delayMs: 8000 });
    const { s, ms } = await run({ query: 'Summarise: NATS is a messaging system.', skill: 'summarize' });
    expect(s.status).toBe('TASK_STATUS_FAILED');
    expect(s.error).toMatch(TIMED_OUT);
    expect(ms).toBeLessThan(6000);
  });

  it("a template's model step (config/templates weekly-report) past the limit fails the task", async () => {
    llm.setDefault({ type: 'completion', content: 'too late', delayMs: 8000 });
    const { s, ms } = await run({ query: 'Shipped the memory routes.', context: { template: 'weekly-report' } });
    expect(s.status).toBe('TASK_STATUS_FAILED');
    expect(s.error).toMatch(TIMED_OUT);
    expect(ms).toBeLessThan(6000);
    expect(llm.requests).toHaveLength(1);
  });

  it('research mode: its agents are bounded too', async () => {
    llm.setDefault({ type: 'completion', content: 'too late', delayMs: 8000 });
    const { s, ms } = await run({ query: 'How does a fixed window rate limiter work?', research_strategy: 'quick' });
    expect(s.status).toBe('TASK_STATUS_FAILED');
    expect(s.error).toMatch(TIMED_OUT);
    expect(ms).toBeLessThan(6000);
  });

  it('an agent within the limit is untouched', async () => {
    llm.enqueue(
      { type: 'completion', content: '', toolCalls: [{ id: 'c1', name: 'file_list', arguments: '{}' }], delayMs: 200 },
      { type: 'completion', content: 'Nothing there yet.', delayMs: 200 },
    );
    const { s } = await run({ query: 'What is in my workspace?', mode: 'standard' });
    expect(s.status, s.error).toBe('TASK_STATUS_COMPLETED');
    expect(s.result).toBe('Nothing there yet.');
  });

  it('AgentService ExecuteTask without config.timeout_seconds: the setting is its limit', async () => {
    llm.setDefault({ type: 'hang' });
    const caller: Interceptor = (next) => (req) => {
      req.header.set('authorization', `Bearer ${TEST_RPC_TOKEN}`);
      req.header.set('x-caller-kind', 'user');
      req.header.set('x-caller-user-id', randomUUID());
      req.header.set('x-caller-tenant-id', randomUUID());
      return next(req);
    };
    const url = `http://127.0.0.1:${t.app.agentPort}`;
    h2 = new Http2SessionManager(url);
    const agent = createClient(AgentService, createGrpcTransport({ baseUrl: url, sessionManager: h2, interceptors: [caller] }));
    const t0 = Date.now();
    const r = await agent.executeTask({ query: 'never answered' }, { timeoutMs: 15_000 });
    expect(r).toMatchObject({ status: StatusCode.TIMEOUT, finalState: AgentState.FAILED, result: '' });
    expect(r.errorMessage).toBe('timed out after 1 s (AGENT_TIMEOUT_SECONDS)');
    expect(Date.now() - t0).toBeLessThan(5000);
  });
});
