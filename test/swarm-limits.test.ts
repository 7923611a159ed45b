/**
 * Every swarm limit of config/features.yaml hitting, with small values and a scripted model:
 * max_agents, max_iterations_per_agent, agent_timeout_seconds (every agent failing, then the
 * re-route without force_swarm, and its failure too), max_total_llm_calls (also before any agent
 * finished: the re-route), max_total_tokens, max_wall_clock_minutes. (max_messages_per_agent and the workspace limits: swarm-messages.test.ts.)
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';
import { startOpenAiServer, scriptedProvider, type OpenAiTestServer } from './helpers/openai-server.js';
import { agentOf, eventsOf, finished, offersTools, submitSwarm, swarmConfig, swarmModel, text, toolCall, usersOf } from './helpers/swarm.js';

let llm: OpenAiTestServer;
const apps: TestApp[] = [];

async function app(limits: Record<string, unknown>): Promise<TestApp> {
  const a = await startTestApp({ CONFIG_PATH: swarmConfig(limits), MAX_TOKENS_PER_REQUEST: '0', MAX_COST_PER_REQUEST: '0' }, { llm: scriptedProvider(llm) });
  apps.push(a);
  return a;
}

beforeAll(async () => {
  llm = await startOpenAiServer();
});
afterAll(async () => {
  for (const a of apps) await a.stop();
  await llm?.close();
});
beforeEach(() => llm.reset());

/** An agent that keeps calling tools (a message to the lead each turn). */
const looping = (a: string, turn: number, delayMs = 0) => toolCall(`c${turn}-${a}`, 'send_message', { to: 'lead', text: `turn ${turn}` }, { delayMs });

describe('swarm limits', () => {
  let small: TestApp;
  beforeAll(async () => {
    small = await app({ max_agents: 2, max_iterations_per_agent: 2 });
  });

  it('max_agents: tasks beyond it are blocked, with a LEAD_DECISION saying why', async () => {
    llm.setDefault(swarmModel({ plan: ['one', 'two', 'three'] }));
    const id = await submitSwarm(small.base, 'Three things.');
    const s = await finished(small.base, id);
    expect(s.status, s.error).toBe('TASK_STATUS_COMPLETED');
    expect(s.metadata.total_agents).toBe(2);
    expect(s.metadata.tasks.map((x: any) => x.status)).toEqual(['done', 'done', 'blocked']);
    const evs = await eventsOf(small.base, id);
    const blocked = evs.find((e) => e.type === 'LEAD_DECISION' && e.payload?.decision === 'blocked')!;
    expect(blocked.payload).toMatchObject({ tasks: ['t3'], reason: 'max_agents (2) reached' });
    expect(new Set(evs.filter((e) => e.type === 'AGENT_STARTED').map((e) => e.agent_id))).toEqual(new Set(['agent-1', 'agent-2']));
  });

  it('max_iterations_per_agent: after that many tool rounds the agent must answer without tools', async () => {
    llm.setDefault(swarmModel({ plan: ['loop'], agent: (a, turn, r) => (offersTools(r) ? looping(a, turn) : text(`${a} forced answer`)) }));
    const id = await submitSwarm(small.base, 'Loop.');
    const s = await finished(small.base, id);
    expect(s.status, s.error).toBe('TASK_STATUS_COMPLETED');
    const mine = llm.requests.filter((r) => agentOf(r) === 'agent-1');
    expect(mine.map(offersTools)).toEqual([true, true, false]);
    expect(usersOf(mine[2]!).at(-1)).toMatch(/You have used all 2 tool rounds/);
  });

  describe('agent_timeout_seconds, every agent failing', () => {
    let slow: TestApp;
    beforeAll(async () => {
      slow = await app({ agent_timeout_seconds: 1 });
    });

    it('routes the task again without force_swarm when every agent failed', async () => {
      llm.setDefault(swarmModel({ plan: ['a', 'b'], agent: () => text('too late', { delayMs: 2500 }), other: () => text('rerouted answer') }));
      const id = await submitSwarm(slow.base, 'Two slow things.');
      const s = await finished(slow.base, id);
      expect(s.status, s.error).toBe('TASK_STATUS_COMPLETED');
      expect(s.result).toBe('rerouted answer');
      expect(s.metadata).toMatchObject({ workflow_type: 'swarm', rerouted: true, total_agents: 2 });
      expect(s.metadata.swarm_failures).toEqual([
        "agent-1: agent agent-1 timed out: its execution took longer than the swarm's agent_timeout_seconds (1 s)",
        expect.stringMatching(/^agent-2: agent agent-2 timed out/),
      ]);
      const evs = await eventsOf(slow.base, id);
      expect(evs.find((e) => e.type === 'LEAD_DECISION' && e.payload?.decision === 'reroute')).toBeDefined();
      expect(evs.filter((e) => e.type === 'AGENT_COMPLETED' && e.agent_id.startsWith('agent-')).map((e) => e.payload?.success)).toEqual([false, false]);
      expect(evs.map((e) => e.seq)).toEqual(evs.map((_, i) => i + 1));
    });

    it('fails with result empty, an error naming the failure and metadata.cost_usd when the re-route fails too', async () => {
      llm.setDefault(
        swarmModel({
          plan: ['a', 'b'],
          agent: () => text('too late', { delayMs: 2500 }),
          other: () => ({ type: 'error', status: 400, message: 'scripted refusal', errorType: 'invalid_request_error' }),
        }),
      );
      const id = await submitSwarm(slow.base, 'Two slow things.');
      const s = await finished(slow.base, id);
      expect(s.status).toBe('TASK_STATUS_FAILED');
      expect(s.result ?? '').toBe('');
      expect(s.error).toMatch(/^swarm failed: every agent failed \(agent-1: agent agent-1 timed out.*the task routed again without force_swarm failed too: /);
      expect(typeof s.metadata.cost_usd).toBe('number');
      expect(s.metadata).toMatchObject({ workflow_type: 'swarm', total_agents: 2 });
      expect(s.metadata.model_breakdown.length).toBeGreaterThan(0);
    });
  });

  describe('the totals', () => {
    let totals: TestApp;
    beforeAll(async () => {
      totals = await app({ max_total_llm_calls: 5, max_total_tokens: 5000 });
    });

    it('max_total_llm_calls: the agents are stopped and the answer is the results so far, without a synthesis call', async () => {
      llm.setDefault(swarmModel({ plan: ['quick', 'endless'], agent: (a, turn) => (a === 'agent-1' ? text('agent-1 result') : looping(a, turn, 100)) }));
      const id = await submitSwarm(totals.base, 'Quick and endless.');
      const s = await finished(totals.base, id);
      expect(s.status, s.error).toBe('TASK_STATUS_COMPLETED');
      expect(s.metadata.stop_reason).toBe('max_total_llm_calls');
      expect(s.result).toContain('agent-1 (quick): agent-1 result');
      expect(s.result).toMatch(/The swarm stopped early: \d+ model calls reached max_total_llm_calls \(5\)/);
      expect(llm.requests.some((r) => usersOf(r).some((u) => u.startsWith('Combine the results')))).toBe(false);
      const evs = await eventsOf(totals.base, id);
      expect(evs.find((e) => e.type === 'LEAD_DECISION' && e.payload?.decision === 'stop')?.payload).toMatchObject({
        limit: 'max_total_llm_calls',
        agents: ['agent-2'],
      });
      expect(evs.find((e) => e.type === 'AGENT_COMPLETED' && e.agent_id === 'agent-2')?.payload?.error).toMatch(/^stopped by the lead: /);
    });

    it('max_total_tokens: a turn past it stops the swarm', async () => {
      const big = { prompt_tokens: 6000, completion_tokens: 10, total_tokens: 6010 };
      llm.setDefault(
        swarmModel({ plan: ['quick', 'hungry'], agent: (a, turn) => (a === 'agent-1' ? text('agent-1 result') : { ...looping(a, turn, 100), usage: big }) }),
      );
      const id = await submitSwarm(totals.base, 'Quick and hungry.');
      const s = await finished(totals.base, id);
      expect(s.status, s.error).toBe('TASK_STATUS_COMPLETED');
      expect(s.metadata.stop_reason).toBe('max_total_tokens');
      expect(s.metadata.total_tokens).toBeGreaterThanOrEqual(6010);
    });

    it('a limit reached before any agent finished: the whole swarm failed, so the task is routed again without force_swarm', async () => {
      llm.setDefault(swarmModel({ plan: ['endless'], agent: (a, turn) => looping(a, turn, 50), other: () => text('rerouted answer') }));
      const id = await submitSwarm(totals.base, 'Endless.');
      const s = await finished(totals.base, id);
      expect(s.status, s.error).toBe('TASK_STATUS_COMPLETED');
      expect(s.result).toBe('rerouted answer');
      expect(s.metadata).toMatchObject({ workflow_type: 'swarm', rerouted: true, stop_reason: 'max_total_llm_calls', total_agents: 1 });
      const evs = await eventsOf(totals.base, id);
      expect(evs.find((e) => e.type === 'LEAD_DECISION' && e.payload?.decision === 'reroute')?.payload?.reason).toMatch(
        /^the swarm stopped before any agent finished: \d+ model calls reached max_total_llm_calls \(5\) \(agent-1: stopped by the lead: /,
      );
    });

    it('a limit reached before any agent finished and the re-route failing too: FAILED naming both', async () => {
      llm.setDefault(
        swarmModel({
          plan: ['endless'],
          agent: (a, turn) => looping(a, turn, 50),
          other: () => ({ type: 'error', status: 400, message: 'scripted refusal', errorType: 'invalid_request_error' }),
        }),
      );
      const id = await submitSwarm(totals.base, 'Endless.');
      const s = await finished(totals.base, id);
      expect(s.status).toBe('TASK_STATUS_FAILED');
      expect(s.error).toMatch(
        /^swarm failed: the swarm stopped before any agent finished: \d+ model calls reached max_total_llm_calls \(5\) .*the task routed again without force_swarm failed too: /,
      );
      expect(s.metadata).toMatchObject({ workflow_type: 'swarm', stop_reason: 'max_total_llm_calls' });
      expect(typeof s.metadata.cost_usd).toBe('number');
    });
  });

  it('max_wall_clock_minutes: the agents are stopped when the time is up and the lead answers from what it has', async () => {
    const clock = await app({ max_wall_clock_minutes: 0.05 });
    llm.setDefault(swarmModel({ plan: ['quick', 'slow'], agent: (a, turn) => (a === 'agent-1' ? text('agent-1 result') : looping(a, turn, 700)) }));
    const started = Date.now();
    const id = await submitSwarm(clock.base, 'Quick and slow.');
    const s = await finished(clock.base, id);
    expect(s.status, s.error).toBe('TASK_STATUS_COMPLETED');
    expect(Date.now() - started).toBeGreaterThanOrEqual(3000);
    expect(s.metadata.stop_reason).toBe('max_wall_clock_minutes');
    expect(s.result).toBe('swarm answer');
  });
});
