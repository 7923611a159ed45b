/**
 * Bodies that existing clients read: for sessions (list and details), session history and
 * events, task status and events, the control endpoints, health and readiness, every field
 * the reference platform's public Python SDK reads is present with the type it expects, and
 * every body validates against its /openapi.json schema. Also: the session aggregates.
 */
import { randomUUID } from 'node:crypto';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, runTask, startTestApp, waitFor, type TestApp } from './helpers/app.js';

let t: TestApp;

let doc: any;
beforeAll(async () => {
  t = await startTestApp({
    GATEWAY_SKIP_AUTH: '0',
    PASSWORD_SCRYPT_N: '1024',
    JWT_SECRET: 'bodies-test-secret-0123456789abcdefghij',
    RATE_LIMIT_REQUESTS: '100000',
  });
  doc = await json(await fetch(`${t.base}/openapi.json`));
});
afterAll(async () => {
  await t?.stop();
});

type Kind = 'string' | 'integer' | 'number' | 'boolean' | 'object' | 'array' | 'date';
/** `kind?` also accepts null (the SDK reads the field with a default, or as Optional). */
type Spec = Record<string, Kind | `${Kind}?`>;

function isKind(v: unknown, k: Kind): boolean {
  switch (k) {
    case 'string':
      return typeof v === 'string';
    case 'integer':
      return Number.isInteger(v);
    case 'number':
      return typeof v === 'number' && Number.isFinite(v);
    case 'boolean':
      return typeof v === 'boolean';
    case 'object':
      return typeof v === 'object' && v !== null && !Array.isArray(v);
    case 'array':
      return Array.isArray(v);
    case 'date':
      // What the SDK's timestamp parser takes: ISO 8601 with a zone.
      return typeof v === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(v) && !Number.isNaN(Date.parse(v));
  }
}

function expectFields(where: string, body: Record<string, unknown>, spec: Spec): void {
  for (const [field, want] of Object.entries(spec)) {
    const optional = want.endsWith('?');
    const kind = want.replace('?', '') as Kind;
    expect(field in body, `${where}: ${field} is present`).toBe(true);
    const v = body[field];
    if (optional && v === null) continue;
    expect(isKind(v, kind), `${where}: ${field} is ${want}, got ${JSON.stringify(v)}`).toBe(true);
  }
}

const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
/** The body validates against its component schema of /openapi.json (schemas are inlined there). */
function expectSchema(name: string, body: unknown): void {
  const check = ajv.compile(doc.components.schemas[name]);
  expect(check(body), `${name}: ${JSON.stringify(check.errors)}`).toBe(true);
}

async function register(): Promise<{ h: Record<string, string>; userId: string; tenantId: string }> {
  const r = await fetch(`${t.base}/api/v1/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: `b-${randomUUID()}@example.com`, password: 'password123' }),
  });
  const b = await json(r);
  return { h: { 'X-API-Key': b.api_key }, userId: b.user.id, tenantId: b.user.tenant_id };
}

const get = async (path: string, h: Record<string, string>) => {
  const r = await fetch(t.base + path, { headers: h });
  expect(r.status, path).toBe(200);
  return json(r);
};

/** Waits until the archive holds the task's whole stream (STREAM_END). */
const archived = (id: string, h: Record<string, string>) =>
  waitFor(async () => {
    const e = await get(`/api/v1/tasks/${id}/events`, h);
    return e.events.at(-1)?.type === 'STREAM_END' ? e : undefined;
  });

const SESSION_SUMMARY: Spec = {
  session_id: 'string',
  user_id: 'string',
  created_at: 'date',
  updated_at: 'date',
  title: 'string',
  task_count: 'integer',
  tokens_used: 'integer',
  token_budget: 'integer?',
  expires_at: 'date?',
  context: 'object',
  last_activity_at: 'date',
  is_active: 'boolean',
  successful_tasks: 'integer',
  failed_tasks: 'integer',
  success_rate: 'number',
  total_cost_usd: 'number',
  average_cost_per_task: 'number',
  budget_utilization: 'number',
  budget_remaining: 'integer?',
  is_near_budget_limit: 'boolean',
  latest_task_query: 'string',
  latest_task_status: 'string',
  is_research_session: 'boolean',
  first_task_mode: 'string',
};
const SESSION_DETAILS: Spec = {
  session_id: 'string',
  user_id: 'string',
  created_at: 'date',
  updated_at: 'date',
  title: 'string',
  context: 'object',
  tokens_used: 'integer',
  cost_usd: 'number',
  token_budget: 'integer?',
  task_count: 'integer',
  expires_at: 'date?',
  is_research_session: 'boolean',
  research_strategy: 'string?',
};
const EVENT: Spec = { type: 'string', workflow_id: 'string', message: 'string', agent_id: 'string', timestamp: 'date', seq: 'integer', stream_id: 'string' };

describe('sessions: the fields the SDK reads', () => {
  it('list, details, history and events carry them with the right types; the aggregates add up', async () => {
    const u = await register();
    const ext = `sdk-${randomUUID()}`;
    const a = await runTask(t.base, u.h, { query: 'first question', session_id: ext });
    const b = await runTask(t.base, u.h, { query: 'second question', session_id: ext });
    // A failed turn, written as the workflow would have.
    const failedId = randomUUID();
    await t.app.store.insertTask({
      id: failedId,
      session_id: ext,
      user_id: u.userId,
      tenant_id: u.tenantId,
      query: 'third question',
      context: {},
      options: {},
      mode: 'EXECUTION_MODE_SIMPLE',
      created_at: new Date(),
    });
    await t.app.store.finishTask(failedId, { status: 'TASK_STATUS_FAILED', error: 'boom' }, new Date());

    const list = await get('/api/v1/sessions?limit=20&offset=0', u.h);
    expectSchema('SessionList', list);
    expect(list.total_count).toBe(1);
    const s = list.sessions[0];
    expectFields('GET /sessions item', s, SESSION_SUMMARY);
    const tokens = a.usage.total_tokens + b.usage.total_tokens;
    expect(s).toMatchObject({
      user_id: u.userId,
      external_id: ext,
      task_count: 3,
      tokens_used: tokens,
      total_tokens: tokens,
      successful_tasks: 2,
      failed_tasks: 1,
      latest_task_query: 'third question',
      latest_task_status: 'TASK_STATUS_FAILED',
      first_task_mode: 'EXECUTION_MODE_SIMPLE',
      is_active: true,
      is_research_session: false,
    });
    expect(s.success_rate).toBeCloseTo(2 / 3);
    expect(s.average_cost_per_task).toBeCloseTo(s.total_cost_usd / 3);

    const details = await get(`/api/v1/sessions/${ext}`, u.h);
    expectSchema('Session', details);
    expectFields('GET /sessions/{id}', details, SESSION_DETAILS);
    expect(details).toMatchObject({
      session_id: s.session_id,
      tokens_used: tokens,
      cost_usd: s.total_cost_usd,
      task_count: 3,
      latest_task_status: 'TASK_STATUS_FAILED',
    });

    const hist = await get(`/api/v1/sessions/${ext}/history`, u.h);
    expectSchema('SessionHistory', hist);
    expect(hist.tasks.map((x: { task_id: string }) => x.task_id)).toEqual([a.task_id, b.task_id, failedId]);
    for (const item of hist.tasks) {
      expectFields('GET /sessions/{id}/history tasks[]', item, {
        task_id: 'string',
        query: 'string',
        result: 'string?',
        status: 'string',
        started_at: 'date?',
        created_at: 'date',
        completed_at: 'date?',
        total_tokens: 'integer',
      });
    }
    expect(hist.tasks[0]).toMatchObject({ query: 'first question', result: a.result, status: 'TASK_STATUS_COMPLETED', total_tokens: a.usage.total_tokens });
    expect(hist.tasks[2]).toMatchObject({ result: null, status: 'TASK_STATUS_FAILED', error_message: 'boom' });
    expect(hist.total).toBe(3);

    await archived(b.task_id, u.h);
    const ev = await get(`/api/v1/sessions/${ext}/events?limit=10&offset=0`, u.h);
    expectSchema('SessionEvents', ev);
    expect(ev.count).toBe(3);
    for (const turn of ev.turns) {
      expectFields('GET /sessions/{id}/events turns[]', turn, {
        turn: 'integer',
        task_id: 'string',
        user_query: 'string',
        final_output: 'string?',
        timestamp: 'date',
        events: 'array',
        metadata: 'object',
      });
      for (const e of turn.events) expectFields('turn event', e, EVENT);
    }
    expect(ev.turns[1]).toMatchObject({ turn: 2, task_id: b.task_id, user_query: 'second question', final_output: b.result });
    expect(ev.turns[1].metadata).toMatchObject({ tokens_used: b.usage.total_tokens, agents_involved: ['simple-agent'] });
    // The task's own duration: from its start (else its submission) to its completion, as its history row says.
    const hb = hist.tasks[1];
    expect(hb.task_id).toBe(b.task_id);
    const ran = Date.parse(hb.completed_at) - Date.parse(hb.started_at ?? hb.created_at);
    expect(ev.turns[1].metadata.execution_time_ms).toBe(ran);
    expect(hb.duration_ms).toBe(ran);
    // Paging: the newest turn skipped, turn numbers stay positions in the session.
    const page = await get(`/api/v1/sessions/${ext}/events?limit=1&offset=1`, u.h);
    expect(page.turns.map((x: { turn: number; task_id: string }) => [x.turn, x.task_id])).toEqual([[2, b.task_id]]);
    expect(page.count).toBe(3);
  });
});

describe('tasks, control, health: the fields the SDK reads', () => {
  it('task status, task events, cancel/pause/resume and control-state', async () => {
    const u = await register();
    const s = await runTask(t.base, u.h, { query: 'Say hi' });
    expectSchema('TaskStatus', s);
    expectFields('GET /tasks/{id}', s, {
      task_id: 'string',
      workflow_id: 'string',
      status: 'string',
      progress: 'number',
      result: 'string',
      error: 'string',
      created_at: 'date',
      updated_at: 'date',
      query: 'string',
      session_id: 'string',
      mode: 'string',
      model_used: 'string',
      provider: 'string',
      usage: 'object',
      metadata: 'object',
    });
    expect(s).toMatchObject({ workflow_id: s.task_id, progress: 1 });

    const events = await archived(s.task_id, u.h);
    expectSchema('EventList', events);
    for (const e of events.events) expectFields('GET /tasks/{id}/events', e, EVENT);

    const cs = await get(`/api/v1/tasks/${s.task_id}/control-state`, u.h);
    expectSchema('ControlState', cs);
    expectFields('GET /tasks/{id}/control-state', cs, {
      is_paused: 'boolean',
      is_cancelled: 'boolean',
      paused_at: 'date?',
      pause_reason: 'string?',
      paused_by: 'string?',
      cancel_reason: 'string?',
      cancelled_by: 'string?',
    });

    // A task that stays queued (a long one behind nothing would finish too fast): pause, resume, cancel.
    const queued = randomUUID();
    await t.app.store.insertTask({
      id: queued,
      session_id: randomUUID(),
      user_id: u.userId,
      tenant_id: u.tenantId,
      query: 'never started',
      context: {},
      options: {},
      mode: 'EXECUTION_MODE_SIMPLE',
      created_at: new Date(),
    });
    for (const action of ['pause', 'resume', 'cancel']) {
      const r = await fetch(`${t.base}/api/v1/tasks/${queued}/${action}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...u.h },
        body: JSON.stringify({ reason: `sdk ${action}` }),
      });
      expect(r.status, action).toBe(200);
      const body = await json(r);
      expectSchema('ControlResponse', body);
      expectFields(`POST /tasks/{id}/${action}`, body, { success: 'boolean' });
      expect(body.success).toBe(true);
      if (action === 'pause') {
        const paused = await get(`/api/v1/tasks/${queued}/control-state`, u.h);
        expect(paused).toMatchObject({ is_paused: true, pause_reason: 'sdk pause', paused_by: u.userId });
        expect(isKind(paused.paused_at, 'date')).toBe(true);
      }
    }
    expect(await get(`/api/v1/tasks/${queued}/control-state`, u.h)).toMatchObject({
      is_paused: false,
      is_cancelled: true,
      cancel_reason: 'sdk cancel',
      cancelled_by: u.userId,
    });

    const tl = await get(`/api/v1/tasks/${s.task_id}/timeline`, u.h);
    expectSchema('Timeline', tl);
  });

  it('health and readiness', async () => {
    const health = await json(await fetch(`${t.base}/health`));
    expectSchema('Health', health);
    expectFields('GET /health', health, { status: 'string', version: 'string', time: 'date', checks: 'object' });
    const ready = await json(await fetch(`${t.base}/readiness`));
    expectSchema('Readiness', ready);
    expectFields('GET /readiness', ready, { status: 'string', version: 'string', time: 'date', checks: 'object' });
    expect(ready.status).toBe('ready');
  });
});
