/**
 * The swarm workflow (context.force_swarm) with the offline provider: a plan from the request's
 * parts, one agent per task running from the SWARM_AGENTS queue, their events emitted by the lead
 * with one gap-free seq, in the producers' order, and the swarm metadata.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, readSse, startTestApp, waitFor, type TestApp } from './helpers/app.js';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.stop();
});

type Ev = { seq: number; type: string; agent_id: string; message: string; payload?: any };

async function submit(body: Record<string, unknown>) {
  const r = await fetch(`${t.base}/api/v1/tasks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, body: await json(r) };
}

async function finished(id: string) {
  return waitFor(async () => {
    const x = await json(await fetch(`${t.base}/api/v1/tasks/${id}`));
    return /COMPLETED|FAILED|CANCELLED|TIMEOUT/.test(x.status) ? x : undefined;
  }, 30_000);
}

async function eventsOf(id: string): Promise<Ev[]> {
  const { events } = await readSse(`${t.base}/api/v1/stream/sse?workflow_id=${id}`, { timeoutMs: 20_000 });
  return events.filter((e) => e.event !== 'done').map((e) => JSON.parse(e.data) as Ev);
}

describe('swarm (offline provider)', () => {
  it('runs one agent per part of the request and emits the producers in order with a gap-free seq', async () => {
    const sub = await submit({ query: 'Describe the Rhine. Describe the Danube. Compare their lengths.', context: { force_swarm: true } });
    expect(sub.status, JSON.stringify(sub.body)).toBe(200);
    const s = await finished(sub.body.task_id);
    expect(s.status, s.error).toBe('TASK_STATUS_COMPLETED');
    expect(s.metadata.workflow_type).toBe('swarm');
    expect(s.metadata.total_agents).toBe(3);
    expect(s.metadata.total_tokens).toBeGreaterThan(0);
    expect(s.metadata.model_breakdown[0]).toMatchObject({ model: 'offline-deterministic', provider: 'offline' });
    const evs = await eventsOf(sub.body.task_id);
    expect(evs.map((e) => e.seq)).toEqual(evs.map((_, i) => i + 1));
    const types = evs.map((e) => `${e.type}:${e.agent_id}`);
    expect(types[0]).toBe('WORKFLOW_STARTED:swarm-supervisor');
    expect(types[1]).toBe('PROGRESS:swarm-supervisor');
    expect(types).toContain('LEAD_DECISION:swarm-lead');
    for (const a of ['agent-1', 'agent-2', 'agent-3']) {
      const mine = evs.filter((e) => e.agent_id === a).map((e) => e.type);
      expect(mine[0]).toBe('AGENT_STARTED');
      expect(mine).toContain('PROGRESS');
      expect(mine.at(-1)).toBe('AGENT_COMPLETED');
    }
    const synth = evs.findIndex((e) => e.type === 'PROGRESS' && e.payload?.stage === 'synthesizing');
    expect(synth).toBeGreaterThan(Math.max(...evs.map((e, i) => (e.type === 'AGENT_COMPLETED' ? i : -1))));
    expect(types.filter((x) => x.startsWith('WORKFLOW_COMPLETED')).at(0)).toBe('WORKFLOW_COMPLETED:swarm-supervisor');
  });
});
