/**
 * The end of a swarm, whatever ends its task: a TIMEOUT stops every agent (no model call after
 * it) and the message route answers 404; an agent still queued on SWARM_AGENTS never runs; a
 * person's message while the lead synthesises is a 404 (the lead no longer takes messages);
 * the task's budgets (MAX_TOKENS_PER_REQUEST) count the agents' calls and stop the swarm; the
 * agents' model calls are recorded (llm_calls) as they happen, so a timed-out swarm keeps them.
 */
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CONSUMERS, STREAMS } from '../src/bus/index.js';
import { startTestApp, waitFor, type TestApp } from './helpers/app.js';
import { startOpenAiServer, scriptedProvider, type OpenAiTestServer } from './helpers/openai-server.js';
import { agentOf, finished, postMessage, submitSwarm, swarmConfig, swarmModel, text, toolCall, untilEvent } from './helpers/swarm.js';

let llm: OpenAiTestServer;
const apps: TestApp[] = [];

async function app(env: Record<string, string>, limits: Record<string, unknown> = {}): Promise<TestApp> {
  const a = await startTestApp(
    { CONFIG_PATH: swarmConfig(limits), MAX_TOKENS_PER_REQUEST: '0', MAX_COST_PER_REQUEST: '0', RATE_LIMIT_REQUESTS: '100000', ...env },
    { llm: scriptedProvider(llm) },
  );
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

/** When each agent's model requests arrived. */
function clock() {
  const seen: { agent: string; at: number }[] = [];
  return { seen, note: (agent: string) => seen.push({ agent, at: Date.now() }) };
}

/** An agent that keeps calling tools (a message to the lead each turn). */
const looping = (a: string, turn: number, delayMs = 0) => toolCall(`c${turn}-${a}`, 'send_message', { to: 'lead', text: `turn ${turn}` }, { delayMs });

/** No agent start of any swarm left on SWARM_AGENTS (neither queued nor in progress). */
async function agentsDrained(t: TestApp): Promise<void> {
  const nc = await connect({ servers: t.natsUrl });
  try {
    const jsm = await jetstreamManager(nc);
    await waitFor(async () => {
      const ci = await jsm.consumers.info(STREAMS.swarmAgents, CONSUMERS.swarmAgents);
      return ci.num_ack_pending === 0 && ci.num_pending === 0;
    }, 10_000);
  } finally {
    await nc.close();
  }
}

describe('a swarm whose task ends', () => {
  let t: TestApp;
  beforeAll(async () => {
    // Two agents at a time, a 4 s task, in-progress acks (and the end check) every 500 ms.
    t = await app({ TASK_TIMEOUT_SECONDS: '4', WORKER_CONCURRENCY: '2', WORKER_ACK_WAIT_MS: '1500' });
  });

  it('TIMEOUT: the looping agents stop (no model call after the end) and the message route answers 404', async () => {
    const c = clock();
    llm.setDefault(
      swarmModel({
        plan: ['a', 'b'],
        agent: (a, turn) => {
          c.note(a);
          return looping(a, turn, 300);
        },
      }),
    );
    const id = await submitSwarm(t.base, 'Two endless things.');
    const s = await finished(t.base, id);
    expect(s.status).toBe('TASK_STATUS_TIMEOUT');
    const endedAt = Date.now();
    expect(new Set(c.seen.map((x) => x.agent))).toEqual(new Set(['agent-1', 'agent-2']));
    expect(await postMessage(t.base, id, { message: 'still there?' })).toEqual({ status: 404, body: { error: 'Swarm not found' } });
    await sleep(1500);
    expect(c.seen.filter((x) => x.at > endedAt)).toEqual([]);
    await agentsDrained(t);
    // The agents' model calls were recorded as they happened: the timed-out swarm's usage is not lost.
    const rows = await t.app.store.sql<{ agent_id: string; n: number }[]>`
      SELECT agent_id, count(*)::int AS n FROM llm_calls WHERE task_id = ${id}::uuid AND agent_id LIKE 'agent-%' GROUP BY agent_id ORDER BY agent_id`;
    expect(rows.map((r) => r.agent_id)).toEqual(['agent-1', 'agent-2']);
    expect(rows.every((r) => r.n >= 1)).toBe(true);
  }, 30_000);

  it('an agent still queued when the task ends never runs (its start is purged, or acked unrun)', async () => {
    const c = clock();
    // agent-1 and agent-2 hold both slots with a model call longer than the task; agent-3 waits on the queue.
    llm.setDefault(
      swarmModel({
        plan: ['a', 'b', 'c'],
        agent: (a) => {
          c.note(a);
          return text(`${a} late`, { delayMs: 7000 });
        },
      }),
    );
    const id = await submitSwarm(t.base, 'Three slow things.');
    const s = await finished(t.base, id);
    expect(s.status).toBe('TASK_STATUS_TIMEOUT');
    // Past the moment the stuck calls would have returned and freed a slot for agent-3.
    await sleep(5000);
    expect(c.seen.map((x) => x.agent).sort()).toEqual(['agent-1', 'agent-2']);
    await agentsDrained(t);
  }, 30_000);

  it("a person's message while the lead synthesises is a 404", async () => {
    llm.setDefault(swarmModel({ plan: ['a'], other: () => text('swarm answer', { delayMs: 1500 }) }));
    const id = await submitSwarm(t.base, 'One thing.');
    await untilEvent(t.base, id, (e) => e.type === 'PROGRESS' && e.payload?.stage === 'synthesizing');
    expect(await postMessage(t.base, id, { message: 'one more thing' })).toEqual({ status: 404, body: { error: 'Swarm not found' } });
    const s = await finished(t.base, id);
    expect(s.status, s.error).toBe('TASK_STATUS_COMPLETED');
    expect(s.result).toBe('swarm answer');
  });
});

describe("the task's budgets over the agents' calls", () => {
  it('MAX_TOKENS_PER_REQUEST: agents spending 1500 tokens a call stop the swarm, naming the setting', async () => {
    const t = await app({ MAX_TOKENS_PER_REQUEST: '2000' });
    const big = { prompt_tokens: 1400, completion_tokens: 100, total_tokens: 1500 };
    llm.setDefault(swarmModel({ plan: ['hungry'], agent: (a, turn) => ({ ...looping(a, turn, 50), usage: big }) }));
    const id = await submitSwarm(t.base, 'Hungry.');
    const s = await finished(t.base, id);
    expect(s.status).toBe('TASK_STATUS_FAILED');
    expect(s.error).toMatch(/^swarm stopped before any agent finished: budget exceeded: MAX_TOKENS_PER_REQUEST \(\d+ of 2000 tokens used\)/);
    expect(s.metadata).toMatchObject({ workflow_type: 'swarm', stop_reason: 'MAX_TOKENS_PER_REQUEST', error_code: 'ResourceExhausted' });
    // Stopped after the call that crossed it (reported with the agent's next turn): not one looping on.
    expect(llm.requests.filter((r) => agentOf(r) === 'agent-1').length).toBeLessThanOrEqual(3);
  }, 30_000);
});
