/**
 * GET /api/v1/tasks/{id}/timeline and its builder (src/runtime/timeline.ts): steps in order
 * with agents, times, statuses and retries; crash-retried, parallel, failed and running
 * steps; the events-only derivation once the journal has expired; ownership (404 / 403).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTimeline, stepOfAgent, type TimelineEvent, type TimelineInput } from '../src/runtime/index.js';
import { json, startTestApp, waitFor, type TestApp } from './helpers/app.js';
import { colleagueOf } from './helpers/users.js';
import { rng } from './helpers/rng.js';

// --- the builder ---------------------------------------------------------------------------

const T0 = Date.parse('2025-01-01T00:00:00.000Z');
const at = (ms: number) => new Date(T0 + ms);
/** Events 1, 2, 3, ... 10 ms apart: [type, agent, step named by an ERROR_RECOVERY]. */
const evs = (spec: [string, string, string?][]): TimelineEvent[] =>
  spec.map(([type, agentId, step], i) => ({ seq: i + 1, type, agentId, at: at((i + 1) * 10), ...(step ? { step } : {}) }));
/** Journal entries written 5 ms after their last event (`extra` ms later still). */
const journal = (entries: [string, number, number?][]) =>
  new Map(entries.map(([name, seqAfter, extra]) => [name, { seqAfter, at: at(seqAfter * 10 + 5 + (extra ?? 0)).toISOString() }]));

const agentRun = (agent: string): [string, string][] => [
  ['AGENT_STARTED', agent],
  ['LLM_PARTIAL', agent],
  ['LLM_OUTPUT', agent],
  ['AGENT_COMPLETED', agent],
];

/** A standard-mode workflow: start, history, plan, two subtasks, synthesize, finish. */
function standard(): TimelineInput {
  const events = evs([
    ['WORKFLOW_STARTED', 'orchestrator'], // 1
    ...agentRun('planner'), // 2-5
    ['PROGRESS', 'planner'], // 6
    ...agentRun('agent-1'), // 7-10
    ...agentRun('agent-2'), // 11-14
    ...agentRun('synthesizer'), // 15-18
    ['WORKFLOW_COMPLETED', 'orchestrator'], // 19
    ['STREAM_END', 'orchestrator'], // 20
  ]);
  return {
    workflowId: 'wf',
    status: 'TASK_STATUS_COMPLETED',
    createdAt: at(0),
    completedAt: at(200),
    events,
    journal: journal([
      ['start', 1],
      ['history', 1, 1],
      ['plan', 6],
      ['subtask-1', 10],
      ['subtask-2', 14],
      ['synthesize', 18],
      ['finish', 20],
    ]),
  };
}

const names = (t: ReturnType<typeof buildTimeline>) => t.steps.map((s) => s.name);

describe('buildTimeline', () => {
  it('lists the journaled steps in order with their agents, times, statuses and the workflow totals', () => {
    const t = buildTimeline(standard());
    expect(t.source).toBe('journal');
    expect(names(t)).toEqual(['start', 'history', 'plan', 'subtask-1', 'subtask-2', 'synthesize', 'finish']);
    expect(t.steps.map((s) => s.agent)).toEqual(['orchestrator', null, 'planner', 'agent-1', 'agent-2', 'synthesizer', 'orchestrator']);
    expect(t.steps.every((s) => s.status === 'completed' && s.retries === 0 && s.journaled)).toBe(true);
    const plan = t.steps[2];
    expect(plan).toMatchObject({ firstSeq: 2, lastSeq: 6, seqAfter: 6, eventCount: 5, startedAt: at(20), endedAt: at(65), durationMs: 45 });
    // history emitted nothing: it ran between the end of start and its own journal entry.
    expect(t.steps[1]).toMatchObject({ startedAt: at(15), endedAt: at(16), durationMs: 1, eventCount: 0, firstSeq: null });
    expect(t).toMatchObject({ startedAt: at(10), endedAt: at(200), durationMs: 190, eventCount: 20, retries: 0, status: 'TASK_STATUS_COMPLETED' });
    expect(t.steps.reduce((n, s) => n + s.eventCount, 0)).toBe(20);
  });

  it('is deterministic: the order of the events and of the journal does not matter', () => {
    const a = standard();
    const rand = rng(20250101);
    const shuffled = a.events
      .map((e) => ({ e, k: rand() }))
      .sort((x, y) => x.k - y.k)
      .map((x) => x.e);
    const j = new Map([...a.journal].reverse());
    expect(buildTimeline({ ...a, events: shuffled, journal: j })).toEqual(buildTimeline(a));
    // A duplicated event (a re-sent publish) counts once.
    expect(buildTimeline({ ...a, events: [...a.events, a.events[4]] })).toEqual(buildTimeline(a));
  });

  it('counts a step cut off by a crash and run again as retried, with its first attempt in its time', () => {
    const events = evs([
      ['WORKFLOW_STARTED', 'orchestrator'], // 1
      ...agentRun('planner'), // 2-5
      ['AGENT_STARTED', 'agent-1'], // 6
      ['LLM_PARTIAL', 'agent-1'], // 7: the worker dies here
      ['ERROR_RECOVERY', 'orchestrator', 'subtask-1'], // 8
      ['AGENT_STARTED', 'agent-1'], // 9
      ['LLM_OUTPUT', 'agent-1'], // 10
      ['AGENT_COMPLETED', 'agent-1'], // 11
      ['WORKFLOW_COMPLETED', 'orchestrator'],
      ['STREAM_END', 'orchestrator'],
    ]);
    const t = buildTimeline({
      workflowId: 'wf',
      status: 'TASK_STATUS_COMPLETED',
      events,
      journal: journal([
        ['start', 1],
        ['history', 1],
        ['plan', 5],
        ['subtask-1', 11],
        ['finish', 13],
      ]),
    });
    const s = t.steps.find((x) => x.name === 'subtask-1')!;
    expect(s).toMatchObject({ agent: 'agent-1', status: 'retried', retries: 1, firstSeq: 6, lastSeq: 11, eventCount: 6, startedAt: at(60) });
    expect(t.retries).toBe(1);
    expect(t.steps.filter((x) => x.name !== 'subtask-1').every((x) => x.status === 'completed')).toBe(true);
  });

  it('counts a retry in place (ERROR_RECOVERY without a step) for the step whose agent it interrupted', () => {
    const events = evs([
      ['WORKFLOW_STARTED', 'orchestrator'],
      ['AGENT_STARTED', 'simple-agent'],
      ['ERROR_RECOVERY', 'orchestrator'],
      ['AGENT_STARTED', 'simple-agent'],
      ['LLM_OUTPUT', 'simple-agent'],
      ['AGENT_COMPLETED', 'simple-agent'],
      ['STREAM_END', 'orchestrator'],
    ]);
    const t = buildTimeline({
      workflowId: 'wf',
      status: 'TASK_STATUS_COMPLETED',
      events,
      journal: journal([
        ['start', 1],
        ['history', 1],
        ['agent', 6],
        ['finish', 7],
      ]),
    });
    expect(t.steps.find((s) => s.name === 'agent')).toMatchObject({ agent: 'simple-agent', retries: 1, status: 'retried', eventCount: 5 });
  });

  it('keeps the events of parallel steps with their own agents', () => {
    const spec: [string, string][] = [
      ['WORKFLOW_STARTED', 'orchestrator'], // 1
      ['AGENT_STARTED', 'agent-1'], // 2
      ['AGENT_STARTED', 'agent-2'], // 3
      ['LLM_OUTPUT', 'agent-2'], // 4
      ['AGENT_COMPLETED', 'agent-2'], // 5
      ['LLM_OUTPUT', 'agent-1'], // 6
      ['AGENT_COMPLETED', 'agent-1'], // 7
      ['STREAM_END', 'orchestrator'], // 8
    ];
    for (const j of [
      [
        ['start', 1],
        ['subtask-2', 5],
        ['subtask-1', 7],
        ['finish', 8],
      ],
      // Both finished before either was journaled: the shared number decides.
      [
        ['start', 1],
        ['subtask-2', 7],
        ['subtask-1', 7, 1],
        ['finish', 8],
      ],
      [
        ['start', 1],
        ['subtask-1', 7],
        ['subtask-2', 7, 1],
        ['finish', 8],
      ],
    ] as [string, number, number?][][]) {
      const t = buildTimeline({ workflowId: 'wf', status: 'TASK_STATUS_COMPLETED', events: evs(spec), journal: journal(j) });
      expect(names(t)).toEqual(['start', 'subtask-1', 'subtask-2', 'finish']);
      expect(t.steps[1]).toMatchObject({ agent: 'agent-1', firstSeq: 2, lastSeq: 7, eventCount: 3 });
      expect(t.steps[2]).toMatchObject({ agent: 'agent-2', firstSeq: 3, lastSeq: 5, eventCount: 3 });
    }
  });

  it('shows the step a failed task never finished as interrupted, and a running one as running', () => {
    const failed = evs([
      ['WORKFLOW_STARTED', 'orchestrator'],
      ...agentRun('planner'),
      ['AGENT_STARTED', 'agent-1'], // 6
      ['LLM_PARTIAL', 'agent-1'], // 7
      ['ERROR_OCCURRED', 'orchestrator'], // 8
      ['STREAM_END', 'orchestrator'], // 9
    ]);
    const t = buildTimeline({
      workflowId: 'wf',
      status: 'TASK_STATUS_FAILED',
      events: failed,
      journal: journal([
        ['start', 1],
        ['history', 1],
        ['plan', 5],
        ['finish', 9],
      ]),
    });
    expect(names(t)).toEqual(['start', 'history', 'plan', 'subtask-1', 'finish']);
    expect(t.steps[3]).toMatchObject({ agent: 'agent-1', status: 'interrupted', journaled: false, endedAt: at(70), durationMs: 10 });
    expect(t.steps[4]).toMatchObject({ agent: 'orchestrator', status: 'completed', firstSeq: 8 });
    expect(t.endedAt).toEqual(at(90));

    const running = buildTimeline({
      workflowId: 'wf',
      status: 'TASK_STATUS_RUNNING',
      events: failed.slice(0, 7),
      journal: journal([
        ['start', 1],
        ['history', 1],
        ['plan', 5],
      ]),
    });
    expect(running.steps.at(-1)).toMatchObject({ name: 'subtask-1', agent: 'agent-1', status: 'running', endedAt: null, durationMs: null });
    expect(running).toMatchObject({ endedAt: null, durationMs: null });
  });

  it('derives the steps from the events alone once the journal has expired', () => {
    const t = buildTimeline({ ...standard(), journal: new Map() });
    expect(t.source).toBe('events');
    expect(names(t)).toEqual(['start', 'plan', 'subtask-1', 'subtask-2', 'synthesize', 'finish']);
    expect(t.steps.map((s) => s.agent)).toEqual(['orchestrator', 'planner', 'agent-1', 'agent-2', 'synthesizer', 'orchestrator']);
    expect(t.steps.every((s) => s.status === 'completed' && !s.journaled)).toBe(true);
    // Without journal entries a step spans its own events, first to last (10 ms apart here).
    expect(t.steps.map((s) => [s.startedAt, s.endedAt, s.durationMs])).toEqual([
      [at(10), at(10), 0],
      [at(20), at(60), 40],
      [at(70), at(100), 30],
      [at(110), at(140), 30],
      [at(150), at(180), 30],
      [at(190), at(200), 10],
    ]);
    expect(t.steps.reduce((n, s) => n + s.eventCount, 0)).toBe(20);
    expect(t).toMatchObject({ startedAt: at(10), endedAt: at(200), durationMs: 190 });
    expect(['planner', 'synthesizer', 'simple-agent', 'agent-3', 'critic'].map(stepOfAgent)).toEqual(['plan', 'synthesize', 'agent', 'subtask-3', 'critic']);
    expect(buildTimeline({ workflowId: 'wf', status: 'TASK_STATUS_QUEUED', events: [], journal: new Map() })).toMatchObject({
      steps: [],
      startedAt: null,
      endedAt: null,
    });
  });
});

// --- the endpoint ----------------------------------------------------------------------------

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({
    GATEWAY_SKIP_AUTH: '0',
    PASSWORD_SCRYPT_N: '1024',
    JWT_SECRET: 'timeline-test-secret-0123456789abcdefgh',
    RATE_LIMIT_REQUESTS: '100000',
  });
});
afterAll(async () => {
  await t?.stop();
});

async function register(): Promise<{ key: string; userId: string; tenantId: string }> {
  const r = await fetch(`${t.base}/api/v1/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: `tl-${randomUUID()}@example.com`, password: 'password123' }),
  });
  const b = await json(r);
  return { key: b.api_key, userId: b.user.id, tenantId: b.user.tenant_id };
}

const get = (path: string, key: string) => fetch(t.base + path, { headers: { 'X-API-Key': key } });

describe('GET /api/v1/tasks/{id}/timeline', () => {
  it("lists a complex task's steps in order with agents, durations, statuses and the workflow totals; owner-only", async () => {
    const u = await register();
    const r = await fetch(`${t.base}/api/v1/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-API-Key': u.key },
      body: JSON.stringify({ query: 'Research it. Then compare it. And write it up.', mode: 'complex' }),
    });
    const { task_id } = await json(r);
    const tl = await waitFor(async () => {
      const res = await get(`/api/v1/tasks/${task_id}/timeline`, u.key);
      expect(res.status).toBe(200);
      const b = await json(res);
      return b.status === 'TASK_STATUS_COMPLETED' && b.steps.at(-1)?.name === 'finish' && b.steps.at(-1).last_seq === b.stats.events ? b : undefined;
    }, 20_000);
    expect(tl).toMatchObject({ workflow_id: task_id, task_id, source: 'journal' });
    expect(tl.steps.map((s: { name: string }) => s.name)).toEqual([
      'start',
      'history',
      'plan',
      'subtask-1-turn-1',
      'subtask-2-turn-1',
      'subtask-3-turn-1',
      'synthesize',
      'finish',
    ]);
    expect(tl.steps.map((s: { agent: string | null }) => s.agent)).toEqual([
      'orchestrator',
      null,
      'planner',
      'agent-1',
      'agent-2',
      'agent-3',
      'synthesizer',
      'orchestrator',
    ]);
    let prevEnd = 0;
    for (const s of tl.steps) {
      expect(s, s.name).toMatchObject({ status: 'completed', retries: 0, journaled: true });
      expect(Date.parse(s.ended_at) - Date.parse(s.started_at), s.name).toBe(s.duration_ms);
      // Each subtask depends on the one before: a step starts once the one before it ended.
      expect(Date.parse(s.started_at), s.name).toBeGreaterThanOrEqual(prevEnd);
      prevEnd = Date.parse(s.ended_at);
    }
    // Every archived event belongs to exactly one step, in seq order.
    expect(tl.steps.reduce((n: number, s: { event_count: number }) => n + s.event_count, 0)).toBe(tl.stats.events);
    const seqs = tl.steps.filter((s: { first_seq: number | null }) => s.first_seq !== null).map((s: { first_seq: number }) => s.first_seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(tl.duration_ms).toBe(Date.parse(tl.ended_at) - Date.parse(tl.started_at));
    // One after the other, the steps fit inside the workflow's time; a real run takes some.
    expect(tl.duration_ms).toBeGreaterThanOrEqual(tl.steps.reduce((n: number, s: { duration_ms: number }) => n + s.duration_ms, 0));
    expect(tl.duration_ms).toBeGreaterThan(0);
    expect(tl.stats).toMatchObject({ steps: 8, retries: 0 });
    // The same input gives the same output.
    expect(await json(await get(`/api/v1/tasks/${task_id}/timeline`, u.key))).toEqual(tl);

    // Ownership: another tenant 404, another user of the same tenant 403, bad ids 404.
    const stranger = await register();
    expect((await get(`/api/v1/tasks/${task_id}/timeline`, stranger.key)).status).toBe(404);
    const { key } = await colleagueOf(t.app.store.sql, u);
    const forbidden = await get(`/api/v1/tasks/${task_id}/timeline`, key);
    expect(forbidden.status).toBe(403);
    expect(await json(forbidden)).toEqual({ error: 'Forbidden: not the task owner' });
    for (const id of [randomUUID(), 'not-a-uuid']) expect((await get(`/api/v1/tasks/${id}/timeline`, u.key)).status, id).toBe(404);
    expect((await fetch(`${t.base}/api/v1/tasks/${task_id}/timeline`)).status).toBe(401);
  });

  it('shows a crash-retried step from the archived events and the journal, and falls back to the events when the journal expired', async () => {
    const u = await register();
    const id = randomUUID();
    const store = t.app.store;
    const created = new Date(Date.now() - 60_000);
    await store.insertTask({
      id,
      session_id: `tl-${id}`,
      user_id: u.userId,
      tenant_id: u.tenantId,
      query: 'fixture',
      context: {},
      options: {},
      mode: 'EXECUTION_MODE_SIMPLE',
      created_at: created,
    });
    await store.finishTask(id, { status: 'TASK_STATUS_COMPLETED', result: 'ok' }, new Date(created.getTime() + 1000));
    const spec: [string, string, string?][] = [
      ['WORKFLOW_STARTED', 'orchestrator'],
      ['AGENT_STARTED', 'simple-agent'],
      ['LLM_PARTIAL', 'simple-agent'],
      ['ERROR_RECOVERY', 'orchestrator', 'agent'],
      ['AGENT_STARTED', 'simple-agent'],
      ['LLM_OUTPUT', 'simple-agent'],
      ['AGENT_COMPLETED', 'simple-agent'],
      ['WORKFLOW_COMPLETED', 'orchestrator'],
      ['STREAM_END', 'orchestrator'],
    ];
    const ms = (seq: number) => new Date(created.getTime() + 100 + seq * 10);
    await store.insertEvents(
      spec.map(([type, agent, step], i) => ({
        workflow_id: id,
        seq: i + 1,
        type,
        agent_id: agent,
        message: type,
        payload: step ? { step, resumed_after_seq: 3 } : null,
        ts: ms(i + 1),
        stream_id: `${ms(i + 1).getTime()}-${i + 1}`,
      })),
    );
    const put = (step: string, seqAfter: number) =>
      t.app.bus.journal.put(id, step, { result: {}, seqAfter, at: new Date(ms(seqAfter).getTime() + 5).toISOString() });
    await put('start', 1);
    await put('history', 1);
    await put('agent', 7);
    await put('finish', 9);

    const tl = await json(await get(`/api/v1/tasks/${id}/timeline`, u.key));
    expect(tl.source).toBe('journal');
    expect(tl.steps.map((s: { name: string }) => s.name)).toEqual(['start', 'history', 'agent', 'finish']);
    expect(tl.steps[2]).toMatchObject({
      agent: 'simple-agent',
      status: 'retried',
      retries: 1,
      first_seq: 2,
      last_seq: 7,
      seq_after: 7,
      event_count: 6,
      duration_ms: 55,
    });
    expect(tl.stats).toEqual({ steps: 4, events: 9, retries: 1 });
    expect(tl).toMatchObject({ status: 'TASK_STATUS_COMPLETED', started_at: ms(1).toISOString(), ended_at: ms(9).toISOString(), duration_ms: 80 });

    // The journal expires after 7 days: the timeline is then derived from the events.
    await t.app.bus.journal.purge(id);
    const fromEvents = await json(await get(`/api/v1/tasks/${id}/timeline`, u.key));
    expect(fromEvents.source).toBe('events');
    expect(fromEvents.steps.map((s: { name: string }) => s.name)).toEqual(['start', 'agent', 'finish']);
    expect(fromEvents.steps[1]).toMatchObject({ agent: 'simple-agent', status: 'retried', retries: 1, journaled: false, seq_after: null });
    expect(fromEvents).toMatchObject({ started_at: tl.started_at, ended_at: tl.ended_at, duration_ms: 80 });
  });
});
