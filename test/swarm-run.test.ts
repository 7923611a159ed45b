/**
 * The swarm workflow (context.force_swarm) with the offline provider: a plan from the request's
 * parts, one agent per task running from the SWARM_AGENTS queue, their events emitted by the lead
 * with one gap-free seq in the producers' order, the swarm metadata; the message route (owner
 * only, 404s, 400s) with a person's message becoming a task; cancel and pause reaching the
 * agents; a disabled swarm refused.
 */
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSUMERS, STREAMS } from '../src/bus/index.js';
import { MAX_PERSON_MESSAGE_CHARS, SWARM_DISABLED } from '../src/swarm/index.js';
import { json, startTestApp, waitFor, type TestApp } from './helpers/app.js';
import { eventsOf, finished, postMessage, submitSwarm, untilEvent } from './helpers/swarm.js';
import { registerUser } from './helpers/users.js';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.stop();
});

const post = (base: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

describe('swarm (offline provider)', () => {
  it('runs one agent per part of the request and emits the producers in order with a gap-free seq', async () => {
    const id = await submitSwarm(t.base, 'Describe the Rhine. Describe the Danube. Compare their lengths.');
    const s = await finished(t.base, id);
    expect(s.status, s.error).toBe('TASK_STATUS_COMPLETED');
    expect(s.metadata.workflow_type).toBe('swarm');
    expect(s.metadata.total_agents).toBe(3);
    expect(s.metadata.total_tokens).toBeGreaterThan(0);
    expect(s.metadata.model_breakdown[0]).toMatchObject({ model: 'offline-deterministic', provider: 'offline' });
    expect(s.metadata.model_breakdown[0].executions).toBe(5); // plan, 3 agents, synthesis
    expect(s.metadata.tasks.map((x: any) => x.description)).toEqual(['Describe the Rhine.', 'Describe the Danube.', 'Compare their lengths.']);
    const evs = await eventsOf(t.base, id);
    expect(evs.map((e) => e.seq)).toEqual(evs.map((_, i) => i + 1));
    // The producers: nothing but the spec's types (the synthesis streams the answer as LLM_PARTIAL).
    const types = evs.filter((e) => !['LLM_PARTIAL', 'STREAM_END'].includes(e.type)).map((e) => `${e.type}:${e.agent_id}`);
    expect(types.slice(0, 9)).toEqual([
      'WORKFLOW_STARTED:swarm-supervisor',
      'PROGRESS:swarm-supervisor',
      'LEAD_DECISION:swarm-lead',
      'TASKLIST_UPDATED:swarm-lead',
      'LEAD_DECISION:swarm-lead',
      'TEAM_RECRUITED:swarm-lead',
      'TASKLIST_UPDATED:swarm-lead',
      'TEAM_STATUS:swarm-lead',
      expect.stringMatching(/^AGENT_STARTED:agent-\d$/),
    ]);
    expect(types.slice(-2)).toEqual(['PROGRESS:swarm-supervisor', 'WORKFLOW_COMPLETED:swarm-supervisor']);
    const allowed = new Set(['LEAD_DECISION', 'TASKLIST_UPDATED', 'TEAM_STATUS', 'TEAM_RECRUITED', 'TEAM_RETIRED']);
    for (const e of evs.slice(1, -2)) {
      if (e.agent_id === 'swarm-lead') expect(allowed.has(e.type), e.type).toBe(true);
    }
    for (const a of ['agent-1', 'agent-2', 'agent-3']) {
      expect(evs.filter((e) => e.agent_id === a).map((e) => e.type)).toEqual(['AGENT_STARTED', 'PROGRESS', 'AGENT_COMPLETED']);
    }
    const synth = evs.findIndex((e) => e.type === 'PROGRESS' && e.payload?.stage === 'synthesizing');
    expect(synth).toBeGreaterThan(Math.max(...evs.map((e, i) => (e.type === 'AGENT_COMPLETED' ? i : -1))));
    // The task list in the last TASKLIST_UPDATED: every task done by its agent.
    const list = evs.filter((e) => e.type === 'TASKLIST_UPDATED').at(-1)!;
    expect(list.payload.tasks.map((x: any) => [x.id, x.status, x.agent])).toEqual([
      ['t1', 'done', 'agent-1'],
      ['t2', 'done', 'agent-2'],
      ['t3', 'done', 'agent-3'],
    ]);
  });

  it('refuses force_swarm at the top level and combined with a plan review or a skill; with research options the swarm runs', async () => {
    const top = await post(t.base, '/api/v1/tasks', { query: 'q', force_swarm: true });
    expect(top.status).toBe(400);
    expect(await json(top)).toEqual({ error: 'force_swarm belongs inside context: set context.force_swarm' });
    const reviewed = await post(t.base, '/api/v1/tasks', { query: 'q', context: { force_swarm: true, force_research: true, require_review: true } });
    expect(reviewed.status).toBe(400);
    expect((await json(reviewed)).error).toBe('context.force_swarm cannot be combined with a plan review, a template, a skill or a catalogue agent');
    // What the reference SDK's own end-to-end check sends: the swarm runs (research is its fallback route).
    const mixed = await post(t.base, '/api/v1/tasks', {
      query: 'Research recent battery technology. Summarize the tradeoffs.',
      context: { force_swarm: true, force_research: true, research_strategy: 'standard' },
    });
    expect(mixed.status).toBe(200);
    const { task_id } = (await json(mixed)) as { task_id: string };
    const done = await finished(t.base, task_id);
    expect(done.status).toBe('TASK_STATUS_COMPLETED');
    expect((done.metadata as Record<string, unknown>).workflow_type).toBe('swarm');
  });

  it('the message route: 404 for no running swarm, 400 for a bad message, 404 once the swarm has ended', async () => {
    const unknown = '4f1c2b7e-9a8d-4c3b-8e2f-1a2b3c4d5e6f';
    expect(await postMessage(t.base, unknown, { message: 'hi' })).toEqual({ status: 404, body: { error: 'Swarm not found' } });
    expect((await postMessage(t.base, 'not-a-uuid', { message: 'hi' })).status).toBe(404);
    for (const body of [{}, { message: '' }, { message: '   ' }, { message: 7 }]) {
      const r = await postMessage(t.base, unknown, body);
      expect(r, JSON.stringify(body)).toEqual({ status: 400, body: { error: 'message is required (a non-empty string)' } });
    }
    const long = await postMessage(t.base, unknown, { message: 'x'.repeat(MAX_PERSON_MESSAGE_CHARS + 1) });
    expect(long).toEqual({ status: 400, body: { error: `message must be at most ${MAX_PERSON_MESSAGE_CHARS} characters` } });
    expect((await postMessage(t.base, unknown, '{not json')).status).toBe(400);
    const id = await submitSwarm(t.base, 'One thing.');
    expect((await finished(t.base, id)).status).toBe('TASK_STATUS_COMPLETED');
    expect(await postMessage(t.base, id, { message: 'too late' })).toEqual({ status: 404, body: { error: 'Swarm not found' } });
    // A task that is no swarm has no lead to message.
    const plain = await json(await post(t.base, '/api/v1/tasks', { query: 'hello', mode: 'simple' }));
    expect((await postMessage(t.base, plain.task_id, { message: 'hi' })).status).toBe(404);
  });
});

describe('swarm with authentication and a slow model', () => {
  let a: TestApp;
  beforeAll(async () => {
    // Every offline answer takes a second or two (20 ms a word): the swarm runs long enough to message, cancel and pause.
    // The tests poll the task's status: no per-key rate limit in their way.
    a = await startTestApp({ GATEWAY_SKIP_AUTH: '0', OFFLINE_LLM_CHUNK_DELAY_MS: '20', PASSWORD_SCRYPT_N: '1024', RATE_LIMIT_REQUESTS: '100000' });
  });
  afterAll(async () => {
    await a?.stop();
  });

  /** No agent of any swarm left in progress on the SWARM_AGENTS queue. */
  async function agentsDrained(): Promise<void> {
    const nc = await connect({ servers: a.natsUrl });
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

  it("only the owner reaches the lead; the owner's message becomes a task with an agent of its own", async () => {
    const owner = await registerUser(a.base, 'swarm-owner');
    const other = await registerUser(a.base, 'swarm-other');
    const id = await submitSwarm(a.base, 'Describe the Rhine. Describe the Danube.', owner.h);
    await untilEvent(a.base, id, (e) => e.type === 'AGENT_STARTED', owner.h);
    expect(await postMessage(a.base, id, { message: 'hi' }, other.h)).toEqual({ status: 404, body: { error: 'Swarm not found' } });
    expect((await postMessage(a.base, id, { message: 'hi' })).status).toBe(401);
    expect(await postMessage(a.base, id, { message: 'Also describe the Elbe.' }, owner.h)).toEqual({
      status: 200,
      body: { success: true, status: 'delivered' },
    });
    const s = await finished(a.base, id, owner.h, 60_000);

    expect(s.status, s.error).toBe('TASK_STATUS_COMPLETED');
    expect(s.metadata.total_agents).toBe(3);
    expect(s.metadata.tasks.at(-1)).toMatchObject({ id: 't3', description: 'Also describe the Elbe.', source: 'person', agent: 'agent-3', status: 'done' });
    const evs = await eventsOf(a.base, id, owner.h);
    expect(evs.find((e) => e.type === 'LEAD_DECISION' && e.payload?.decision === 'person_message')?.payload).toMatchObject({
      message: 'Also describe the Elbe.',
      reason: 'the model gave no task list: the message becomes a task',
    });
    expect(evs.map((e) => e.seq)).toEqual(evs.map((_, i) => i + 1));
  }, 60_000);

  it('a message sent before the lead has planned (what the reference SDK does on RUNNING) waits in its mailbox and is acted on', async () => {
    const owner = await registerUser(a.base, 'swarm-early');
    const other = await registerUser(a.base, 'swarm-early-other');
    const id = await submitSwarm(a.base, 'Describe the Rhine.', owner.h);
    expect(await postMessage(a.base, id, { message: 'hi' }, other.h)).toEqual({ status: 404, body: { error: 'Swarm not found' } });
    expect(await postMessage(a.base, id, { message: 'Also describe the Oder.' }, owner.h)).toEqual({
      status: 200,
      body: { success: true, status: 'delivered' },
    });
    const s = await finished(a.base, id, owner.h, 60_000);
    expect(s.status, s.error).toBe('TASK_STATUS_COMPLETED');
    expect(s.metadata.tasks.map((x: { description: string }) => x.description)).toContain('Also describe the Oder.');
  }, 60_000);

  it('cancel reaches every agent: the task ends CANCELLED and no agent stays in progress', { timeout: 60_000 }, async () => {
    const u = await registerUser(a.base, 'swarm-cancel');
    const id = await submitSwarm(a.base, 'Describe the Rhine. Describe the Danube. Describe the Elbe.', u.h);
    await untilEvent(a.base, id, (e) => e.type === 'AGENT_STARTED', u.h);
    expect((await post(a.base, `/api/v1/tasks/${id}/cancel`, { reason: 'enough' }, u.h)).status).toBe(200);
    const s = await finished(a.base, id, u.h);
    expect(s.status).toBe('TASK_STATUS_CANCELLED');
    await agentsDrained();
    // The swarm is over: no lead to message.
    expect((await postMessage(a.base, id, { message: 'still there?' }, u.h)).status).toBe(404);
  });

  it('pause holds the swarm and its agents; resume lets them finish', async () => {
    const u = await registerUser(a.base, 'swarm-pause');
    const id = await submitSwarm(a.base, 'Describe the Rhine. Describe the Danube.', u.h);
    await untilEvent(a.base, id, (e) => e.type === 'AGENT_STARTED', u.h);
    expect((await post(a.base, `/api/v1/tasks/${id}/pause`, { reason: 'hold on' }, u.h)).status).toBe(200);
    await untilEvent(a.base, id, (e) => e.type === 'WORKFLOW_PAUSED', u.h, 30_000);
    const paused = await json(await fetch(`${a.base}/api/v1/tasks/${id}`, { headers: u.h }));
    expect(paused.status).toBe('TASK_STATUS_PAUSED');
    expect((await post(a.base, `/api/v1/tasks/${id}/resume`, {}, u.h)).status).toBe(200);
    const s = await finished(a.base, id, u.h, 60_000);
    expect(s.status, s.error).toBe('TASK_STATUS_COMPLETED');
    const evs = await eventsOf(a.base, id, u.h);
    expect(evs.filter((e) => e.type === 'AGENT_COMPLETED').length).toBe(2);
    expect(evs.map((e) => e.type)).toContain('WORKFLOW_RESUMED');
  }, 60_000);
});

describe('swarm disabled', () => {
  it('SWARM_ENABLED=false: a task asking for a swarm is a 400 saying so; others run', async () => {
    const off = await startTestApp({ SWARM_ENABLED: 'false' });
    try {
      for (const path of ['/api/v1/tasks', '/api/v1/tasks/stream']) {
        const r = await post(off.base, path, { query: 'q', context: { force_swarm: true } });
        expect(r.status, path).toBe(400);
        expect(await json(r)).toEqual({ error: SWARM_DISABLED });
      }
      expect((await post(off.base, '/api/v1/tasks', { query: 'q', context: { force_swarm: false } })).status).toBe(200);
    } finally {
      await off.stop();
    }
  });
});
