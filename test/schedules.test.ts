/**
 * /api/v1/schedules and the scheduler role: every endpoint with its error cases, ownership
 * across users, limits, runs fired from due schedules (made due by moving next_run_at into
 * the past in SQL), the missed-run policy, per-run budget pause, and two scheduler processes
 * on one NATS firing each due time exactly once.
 */
import { randomUUID } from 'node:crypto';
import { createClient } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { Kvm } from '@nats-io/kv';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { OrchestratorService } from '../src/gen/svc/v1/orchestrator_pb.js';
import { createLogger } from '../src/kernel/index.js';
import { connectBus } from '../src/bus/index.js';
import type { TaskStore } from '../src/tasks/index.js';
import { LEADER_KEY, Scheduler } from '../src/scheduler/index.js';
import { startTestNats } from './harness/nats.js';
import { TEST_RPC_TOKEN, json, startTestApp, waitFor, type TestApp } from './helpers/app.js';

const env = {
  GATEWAY_SKIP_AUTH: '0',
  PASSWORD_SCRYPT_N: '1024',
  JWT_SECRET: 'schedules-test-secret-0123456789abcdefghijklmnop',
  RATE_LIMIT_REQUESTS: '100000',
  SCHEDULE_MAX_PER_USER: '4',
  // Every role, the scheduler included (other test files run without it).
  ROLES: 'all',
  LLM_SERVICE_PORT: '0',
  AGENT_GRPC_PORT: '0',
};
// Embedded PGlite is one database session shared by every client: two whole app processes
// writing tasks through it at once interleave their statements (e.g. `portal "" does not
// exist`), so the tests that need a second process run against a real PostgreSQL only.
const singleSessionDb = inject('pgKind') === 'pglite';
let a: TestApp;
let b: TestApp | undefined;
beforeAll(async () => {
  a = await startTestApp(env);
  // A second process with every role (scheduler included) on the same NATS.
  if (!singleSessionDb) b = await startTestApp({ ...env }, { natsUrl: a.natsUrl });
});
afterAll(async () => {
  await b?.stop();
  await a?.stop();
});

interface User {
  key: string;
  id: string;
  tenantId: string;
}

async function register(): Promise<User> {
  const r = await fetch(`${a.base}/api/v1/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: `sched-${randomUUID()}@example.com`, password: 'password123' }),
  });
  expect(r.status).toBe(201);
  const body = await json(r);
  return { key: body.api_key, id: body.user.id, tenantId: body.user.tenant_id };
}

async function api(u: User | undefined, method: string, path: string, body?: unknown, base = a.base): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = {};
  if (u) headers['X-API-Key'] = u.key;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const r = await fetch(base + path, { method, headers, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: r.status, body: await json(r) };
}

const valid = (over: Record<string, unknown> = {}) => ({ name: 'Daily digest', cron_expression: '0 9 * * *', task_query: 'Summarise the news', ...over });

async function createSchedule(u: User, over: Record<string, unknown> = {}): Promise<string> {
  const r = await api(u, 'POST', '/api/v1/schedules', valid(over));
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.schedule_id;
}

/** Makes a schedule due by moving next_run_at into the past; returns the exact value set. */
async function makeDue(id: string, agoSql = '1 minute'): Promise<Date> {
  const [row] = await a.app.store
    .sql`UPDATE schedules SET next_run_at = date_trunc('milliseconds', now() - ${agoSql}::interval) WHERE id = ${id} RETURNING next_run_at`;
  return row.next_run_at as Date;
}

const runsOf = (id: string) => a.app.store.sql`SELECT * FROM schedule_runs WHERE schedule_id = ${id} ORDER BY triggered_at`;

async function waitRunsDone(u: User, id: string, n = 1, timeoutMs = 20_000) {
  return waitFor(
    async () => {
      const r = await api(u, 'GET', `/api/v1/schedules/${id}/runs`);
      const runs = r.body.runs as any[];
      return runs.length >= n && runs.every((x) => !['PENDING', 'RUNNING'].includes(x.status)) ? runs : undefined;
    },
    timeoutMs,
    100,
  );
}

/** Local wall-clock parts of a date in a timezone. */
function localParts(d: Date, timeZone: string) {
  const f = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', hour: '2-digit', minute: '2-digit', weekday: 'short' });
  const p = Object.fromEntries(f.formatToParts(d).map((x) => [x.type, x.value]));
  return { hour: Number(p.hour), minute: Number(p.minute), weekday: p.weekday };
}

describe('create and read', () => {
  it('creates a schedule with defaults and returns {schedule_id, message, next_run_at}', async () => {
    const u = await register();
    const before = Date.now();
    const r = await api(u, 'POST', '/api/v1/schedules', valid());
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['message', 'next_run_at', 'schedule_id']);
    expect(r.body.schedule_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.body.message).toMatch(/created/i);
    const next = new Date(r.body.next_run_at);
    expect(next.getTime()).toBeGreaterThan(before);
    expect(next.getTime()).toBeLessThanOrEqual(before + 24 * 3600_000);
    expect(next.getUTCHours()).toBe(9);
    expect(next.getUTCMinutes()).toBe(0);

    const g = await api(u, 'GET', `/api/v1/schedules/${r.body.schedule_id}`);
    expect(g.status).toBe(200);
    expect(g.body).toMatchObject({
      id: r.body.schedule_id,
      name: 'Daily digest',
      description: '',
      cron_expression: '0 9 * * *',
      timezone: 'UTC',
      task_query: 'Summarise the news',
      task_context: {},
      max_budget_per_run_usd: 10,
      timeout_seconds: 600,
      status: 'ACTIVE',
      next_run_at: r.body.next_run_at,
      last_run_at: null,
      total_runs: 0,
      successful_runs: 0,
      failed_runs: 0,
    });
    for (const k of ['created_at', 'updated_at']) expect(new Date(g.body[k]).getTime()).toBeGreaterThan(before - 5000);
    const row = (await a.app.store.sql`SELECT user_id, tenant_id FROM schedules WHERE id = ${r.body.schedule_id}`)[0];
    expect(row).toEqual({ user_id: u.id, tenant_id: u.tenantId });
  });

  it('stores every field and computes next_run_at in the IANA timezone', async () => {
    const u = await register();
    const body = valid({
      name: 'x'.repeat(255),
      description: 'weekday mornings in New York',
      cron_expression: '30 9 * * 1-5',
      timezone: 'America/New_York',
      task_context: { topic: 'analyst', depth: 2 },
      max_budget_per_run_usd: 2.5,
      timeout_seconds: 120,
    });
    const r = await api(u, 'POST', '/api/v1/schedules', body);
    expect(r.status).toBe(200);
    const local = localParts(new Date(r.body.next_run_at), 'America/New_York');
    expect(local).toMatchObject({ hour: 9, minute: 30 });
    expect(['Mon', 'Tue', 'Wed', 'Thu', 'Fri']).toContain(local.weekday);
    expect(new Date(r.body.next_run_at).getTime() - Date.now()).toBeLessThan(4 * 24 * 3600_000);
    const g = await api(u, 'GET', `/api/v1/schedules/${r.body.schedule_id}`);
    expect(g.body).toMatchObject({ ...body, status: 'ACTIVE' });
  });

  it('rejects invalid bodies with 400 and the reason', async () => {
    const u = await register();
    const cases: [unknown, RegExp][] = [
      ['{"name":', /invalid JSON/],
      [[1], /JSON object/],
      [valid({ name: undefined }), /name is required/],
      [valid({ name: '  ' }), /name is required/],
      [valid({ name: 'x'.repeat(256) }), /name must be at most 255/],
      [valid({ cron_expression: undefined }), /cron_expression is required/],
      [valid({ cron_expression: '0 9 * *' }), /invalid cron expression.*5 fields/],
      [valid({ cron_expression: '0 0 9 * * *' }), /invalid cron expression.*5 fields/],
      [valid({ cron_expression: '60 9 * * *' }), /invalid cron expression/],
      [valid({ cron_expression: '0 24 * * *' }), /invalid cron expression/],
      [valid({ cron_expression: '0 9 32 * *' }), /invalid cron expression/],
      [valid({ cron_expression: '0 9 * 13 *' }), /invalid cron expression/],
      [valid({ cron_expression: '0 9 * * 7' }), /invalid cron expression.*day of week/],
      [valid({ cron_expression: '0 9 * * MON' }), /invalid cron expression/],
      [valid({ cron_expression: '@hourly' }), /invalid cron expression/],
      [valid({ cron_expression: '0 9 30 2 *' }), /invalid cron expression/],
      [valid({ cron_expression: 'a b c d e' }), /invalid cron expression/],
      [valid({ cron_expression: 5 }), /cron_expression is required/],
      [valid({ timezone: 'Mars/Olympus_Mons' }), /invalid timezone/],
      [valid({ timezone: 'UTC; DROP TABLE' }), /invalid timezone/],
      [valid({ cron_expression: '*/30 * * * *' }), /interval too short.*60 minutes/],
      [valid({ cron_expression: '* * * * *' }), /interval too short/],
      [valid({ cron_expression: '15,45 * * * *' }), /interval too short/],
      [{ name: 'n', cron_expression: '0 * * * *' }, /task_query is required/],
      [valid({ task_query: '' }), /task_query is required/],
      [valid({ task_context: [1, 2] }), /task_context must be an object/],
      [valid({ task_context: 'x' }), /task_context must be an object/],
      [valid({ max_budget_per_run_usd: 10.01 }), /max_budget_per_run_usd must be at most 10/],
      [valid({ max_budget_per_run_usd: 0 }), /max_budget_per_run_usd/],
      [valid({ max_budget_per_run_usd: '5' }), /max_budget_per_run_usd/],
      [valid({ timeout_seconds: 0 }), /timeout_seconds/],
      [valid({ timeout_seconds: 1.5 }), /timeout_seconds/],
      [valid({ description: 7 }), /description must be a string/],
    ];
    for (const [body, re] of cases) {
      const r = await api(u, 'POST', '/api/v1/schedules', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(Object.keys(r.body)).toEqual(['error']);
      expect(r.body.error, JSON.stringify(body)).toMatch(re);
    }
    // Exactly at the minimum interval (60 minutes, also across midnight) is accepted.
    for (const cron of ['0 * * * *', '0 0,23 * * *', '0 */2 * * 0-6']) {
      expect((await api(u, 'POST', '/api/v1/schedules', valid({ cron_expression: cron }))).status, cron).toBe(200);
    }
    expect((await api(u, 'GET', '/api/v1/schedules')).body.total).toBe(3);
  });

  it('refuses more than SCHEDULE_MAX_PER_USER schedules per user with 403; deleting frees a slot', async () => {
    const u = await register();
    const other = await register();
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await createSchedule(u, { name: `s${i}` }));
    const over = await api(u, 'POST', '/api/v1/schedules', valid());
    expect(over.status).toBe(403);
    expect(over.body.error).toMatch(/schedule limit reached/);
    // Concurrent attempts cannot exceed it either.
    const burst = await Promise.all([0, 1, 2].map(() => api(u, 'POST', '/api/v1/schedules', valid())));
    expect(burst.map((r) => r.status)).toEqual([403, 403, 403]);
    // The limit is per user.
    expect((await api(other, 'POST', '/api/v1/schedules', valid())).status).toBe(200);
    expect((await api(u, 'DELETE', `/api/v1/schedules/${ids[0]}`)).status).toBe(200);
    expect((await api(u, 'POST', '/api/v1/schedules', valid())).status).toBe(200);
    expect((await api(u, 'GET', '/api/v1/schedules')).body.total).toBe(4);
  });

  it('requires authentication', async () => {
    expect((await api(undefined, 'GET', '/api/v1/schedules')).status).toBe(401);
    expect((await api(undefined, 'POST', '/api/v1/schedules', valid())).status).toBe(401);
  });
});

describe('list', () => {
  it('pages (default 1 / 50), filters by status and returns the summary fields', async () => {
    const u = await register();
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await createSchedule(u, { name: `n${i}` }));
    await api(u, 'POST', `/api/v1/schedules/${ids[1]}/pause`, { reason: 'holiday' });
    const all = await api(u, 'GET', '/api/v1/schedules');
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ total: 3, page: 1, page_size: 50 });
    expect(all.body.schedules).toHaveLength(3);
    expect(Object.keys(all.body.schedules[0]).sort()).toEqual(
      ['cron_expression', 'failed_runs', 'id', 'name', 'next_run_at', 'status', 'successful_runs', 'timezone', 'total_runs'].sort(),
    );
    const p2 = await api(u, 'GET', '/api/v1/schedules?page=2&page_size=2');
    expect(p2.body).toMatchObject({ total: 3, page: 2, page_size: 2 });
    expect(p2.body.schedules).toHaveLength(1);
    const p1 = await api(u, 'GET', '/api/v1/schedules?page=1&page_size=2');
    expect(new Set([...p1.body.schedules, ...p2.body.schedules].map((s: any) => s.id))).toEqual(new Set(ids));
    const paused = await api(u, 'GET', '/api/v1/schedules?status=PAUSED');
    expect(paused.body.total).toBe(1);
    expect(paused.body.schedules.map((s: any) => [s.id, s.status])).toEqual([[ids[1], 'PAUSED']]);
    const active = await api(u, 'GET', '/api/v1/schedules?status=ACTIVE');
    expect(active.body.schedules.map((s: any) => s.id).sort()).toEqual([ids[0], ids[2]].sort());
    for (const q of ['page_size=101', 'page_size=0', 'page=0', 'page=x', 'status=DELETED']) {
      const r = await api(u, 'GET', `/api/v1/schedules?${q}`);
      expect(r.status, q).toBe(400);
    }
    expect((await api(u, 'GET', '/api/v1/schedules?page_size=100')).body.page_size).toBe(100);
  });
});

describe('update, pause, resume, delete', () => {
  it('PUT updates any subset, recomputes next_run_at on cron or timezone changes, validates', async () => {
    const u = await register();
    const id = await createSchedule(u, { description: 'd', task_context: { a: 1 } });
    const orig = (await api(u, 'GET', `/api/v1/schedules/${id}`)).body;
    const r1 = await api(u, 'PUT', `/api/v1/schedules/${id}`, { name: 'Renamed' });
    expect(r1.status).toBe(200);
    expect(r1.body).toMatchObject({ ...orig, name: 'Renamed', updated_at: r1.body.updated_at });
    expect(new Date(r1.body.updated_at).getTime()).toBeGreaterThanOrEqual(new Date(orig.updated_at).getTime());

    const r2 = await api(u, 'PUT', `/api/v1/schedules/${id}`, {
      cron_expression: '15 18 * * *',
      timezone: 'Asia/Tokyo',
      task_context: { b: 2 },
      max_budget_per_run_usd: 1,
      timeout_seconds: 30,
      task_query: 'New query',
      description: '',
    });
    expect(r2.status).toBe(200);
    expect(r2.body).toMatchObject({
      name: 'Renamed',
      cron_expression: '15 18 * * *',
      timezone: 'Asia/Tokyo',
      task_context: { b: 2 },
      max_budget_per_run_usd: 1,
      timeout_seconds: 30,
      task_query: 'New query',
      description: '',
    });
    expect(localParts(new Date(r2.body.next_run_at), 'Asia/Tokyo')).toMatchObject({ hour: 18, minute: 15 });
    // A timezone change alone moves next_run_at too.
    const r3 = await api(u, 'PUT', `/api/v1/schedules/${id}`, { timezone: 'Europe/London' });
    expect(localParts(new Date(r3.body.next_run_at), 'Europe/London')).toMatchObject({ hour: 18, minute: 15 });
    expect(r3.body.next_run_at).not.toBe(r2.body.next_run_at);
    expect((await api(u, 'GET', `/api/v1/schedules/${id}`)).body).toEqual(r3.body);

    for (const [body, re] of [
      [{ cron_expression: '*/5 * * * *' }, /interval too short/],
      [{ cron_expression: '0 0 * * 8' }, /invalid cron/],
      [{ timezone: 'Nowhere/City' }, /invalid timezone/],
      [{ name: '' }, /name is required/],
      [{ name: 'y'.repeat(256) }, /255/],
      [{ max_budget_per_run_usd: 11 }, /max_budget_per_run_usd/],
      [{ task_query: '' }, /task_query/],
      [{ task_context: 3 }, /task_context/],
    ] as const) {
      const r = await api(u, 'PUT', `/api/v1/schedules/${id}`, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error).toMatch(re);
    }
    expect((await api(u, 'GET', `/api/v1/schedules/${id}`)).body).toEqual(r3.body);
    expect((await api(u, 'PUT', `/api/v1/schedules/${randomUUID()}`, { name: 'x' })).status).toBe(404);
  });

  it('pauses, refuses a second pause with 409, resumes with a fresh next_run_at', async () => {
    const u = await register();
    const id = await createSchedule(u, { cron_expression: '0 * * * *' });
    const p = await api(u, 'POST', `/api/v1/schedules/${id}/pause`, { reason: 'maintenance' });
    expect(p.status).toBe(200);
    expect(Object.keys(p.body).sort()).toEqual(['message', 'paused_at']);
    expect(Math.abs(new Date(p.body.paused_at).getTime() - Date.now())).toBeLessThan(60_000);
    expect((await api(u, 'GET', `/api/v1/schedules/${id}`)).body.status).toBe('PAUSED');
    const again = await api(u, 'POST', `/api/v1/schedules/${id}/pause`, { reason: 'again' });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatch(/already paused/);

    // Time passes while paused: resume does not replay, it schedules from now.
    await makeDue(id, '5 hours');
    const r = await api(u, 'POST', `/api/v1/schedules/${id}/resume`, { reason: 'done' });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['message', 'next_run_at']);
    const next = new Date(r.body.next_run_at);
    expect(next.getTime()).toBeGreaterThan(Date.now());
    expect(next.getUTCMinutes()).toBe(0);
    const g = (await api(u, 'GET', `/api/v1/schedules/${id}`)).body;
    expect(g).toMatchObject({ status: 'ACTIVE', next_run_at: r.body.next_run_at });
    const activeResume = await api(u, 'POST', `/api/v1/schedules/${id}/resume`, { reason: 'x' });
    expect(activeResume.status).toBe(409);
    // A body is optional; a non-string reason is not.
    expect((await api(u, 'POST', `/api/v1/schedules/${id}/pause`)).status).toBe(200);
    expect((await api(u, 'POST', `/api/v1/schedules/${id}/resume`, { reason: 5 })).status).toBe(400);
    expect((await api(u, 'POST', `/api/v1/schedules/${randomUUID()}/pause`, { reason: 'x' })).status).toBe(404);
    expect((await api(u, 'POST', `/api/v1/schedules/${randomUUID()}/resume`, { reason: 'x' })).status).toBe(404);
  });

  it('deletes permanently with its runs', async () => {
    const u = await register();
    const id = await createSchedule(u);
    await a.app.store.sql`INSERT INTO schedule_runs (id, schedule_id, triggered_at, query, status) VALUES (${randomUUID()}, ${id}, now(), 'q', 'COMPLETED')`;
    const d = await api(u, 'DELETE', `/api/v1/schedules/${id}`);
    expect(d.status).toBe(200);
    expect(Object.keys(d.body)).toEqual(['message']);
    expect((await api(u, 'GET', `/api/v1/schedules/${id}`)).status).toBe(404);
    expect((await api(u, 'GET', `/api/v1/schedules/${id}/runs`)).status).toBe(404);
    expect((await api(u, 'DELETE', `/api/v1/schedules/${id}`)).status).toBe(404);
    expect(await runsOf(id)).toHaveLength(0);
  });

  it("answers 404 for another user's schedule on every endpoint and leaves it untouched", async () => {
    const owner = await register();
    const intruder = await register();
    const id = await createSchedule(owner);
    const before = (await api(owner, 'GET', `/api/v1/schedules/${id}`)).body;
    const attempts: [string, string, unknown?][] = [
      ['GET', `/api/v1/schedules/${id}`],
      ['PUT', `/api/v1/schedules/${id}`, { name: 'mine now' }],
      ['GET', `/api/v1/schedules/${id}/runs`],
      ['POST', `/api/v1/schedules/${id}/pause`, { reason: 'x' }],
      ['POST', `/api/v1/schedules/${id}/resume`, { reason: 'x' }],
      ['DELETE', `/api/v1/schedules/${id}`],
    ];
    for (const [m, path, body] of attempts) {
      const r = await api(intruder, m, path, body);
      expect(r.status, `${m} ${path}`).toBe(404);
      expect(r.body).toEqual({ error: 'Schedule not found' });
    }
    expect((await api(intruder, 'GET', '/api/v1/schedules')).body).toMatchObject({ total: 0, schedules: [] });
    expect((await api(owner, 'GET', `/api/v1/schedules/${id}`)).body).toEqual(before);
    // Paused by its owner, the intruder cannot resume it either.
    await api(owner, 'POST', `/api/v1/schedules/${id}/pause`, { reason: 'x' });
    expect((await api(intruder, 'POST', `/api/v1/schedules/${id}/resume`, {})).status).toBe(404);
    expect((await api(owner, 'GET', `/api/v1/schedules/${id}`)).body.status).toBe('PAUSED');
    for (const bad of ['not-a-uuid', '00000000-0000-0000-0000-000000000000']) {
      expect((await api(owner, 'GET', `/api/v1/schedules/${bad}`)).status).toBe(404);
    }
  });
});

describe('runs', () => {
  it('fires a due schedule as a task of its owner and records the run with the spec fields', async () => {
    const u = await register();
    // A yearly cron: no cron time can fall between makeDue's time and the tick (with an hourly
    // one, a run crossing the top of the hour catches up that later time instead).
    const id = await createSchedule(u, { cron_expression: '0 0 1 1 *', task_query: `scheduled digest ${randomUUID()}`, task_context: { source: 'schedule' } });
    const due = await makeDue(id);
    const [run] = await waitRunsDone(u, id);
    expect(run.status).toBe('COMPLETED');
    expect(run.workflow_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(run.triggered_at).toBe(due.toISOString());
    expect(run.query).toMatch(/^scheduled digest /);
    expect(typeof run.result).toBe('string');
    expect(run.result.length).toBeGreaterThan(0);
    expect(run.model_used).toBeTruthy();
    expect(run.provider).toBeTruthy();
    expect(run.total_tokens).toBeGreaterThan(0);
    expect(typeof run.total_cost_usd).toBe('number');
    expect(Number.isInteger(run.duration_ms)).toBe(true);
    expect(run.duration_ms).toBeGreaterThanOrEqual(0);
    expect(new Date(run.completed_at).getTime()).toBeGreaterThanOrEqual(new Date(run.started_at).getTime());
    expect(run.error_message).toBeUndefined();
    expect(Object.keys(run).sort()).toEqual(
      [
        'completed_at',
        'duration_ms',
        'model_used',
        'provider',
        'query',
        'result',
        'started_at',
        'status',
        'total_cost_usd',
        'total_tokens',
        'triggered_at',
        'workflow_id',
      ].sort(),
    );
    const [task] = await a.app.store.sql`SELECT user_id, tenant_id, query, context, status FROM tasks WHERE id = ${run.workflow_id}`;
    expect(task).toMatchObject({ user_id: u.id, tenant_id: u.tenantId, query: run.query, status: 'TASK_STATUS_COMPLETED', context: { source: 'schedule' } });
    const s = (await api(u, 'GET', `/api/v1/schedules/${id}`)).body;
    expect(s).toMatchObject({ status: 'ACTIVE', total_runs: 1, successful_runs: 1, failed_runs: 0 });
    expect(new Date(s.last_run_at).getTime()).toBeGreaterThanOrEqual(due.getTime());
    expect(new Date(s.next_run_at).getTime()).toBeGreaterThan(Date.now());
    expect(new Date(s.next_run_at).getUTCMinutes()).toBe(0);
    const page = await api(u, 'GET', `/api/v1/schedules/${id}/runs`);
    expect(page.body).toMatchObject({ total_count: 1, page: 1, page_size: 20 });
    // The task's owner can read it through the task API.
    const t = await fetch(`${a.base}/api/v1/tasks/${run.workflow_id}`, { headers: { 'X-API-Key': u.key } });
    expect(t.status).toBe(200);
  });

  it('fires one catch-up run for the most recent missed time after an outage and skips older ones', async () => {
    const u = await register();
    const id = await createSchedule(u, { cron_expression: '0 * * * *' });
    await makeDue(id, '3 days');
    const runs = await waitRunsDone(u, id);
    const now = Date.now();
    const rows = await runsOf(id);
    expect(rows).toHaveLength(1);
    const trig = new Date(runs[0].triggered_at);
    expect(trig.getUTCMinutes()).toBe(0);
    expect(trig.getUTCSeconds()).toBe(0);
    expect(now - trig.getTime()).toBeLessThan(3600_000 + 60_000);
    const s = (await api(u, 'GET', `/api/v1/schedules/${id}`)).body;
    expect(s.total_runs).toBe(1);
    expect(new Date(s.next_run_at).getTime()).toBeGreaterThan(trig.getTime());
  });

  it('records task failures, pages runs newest first, and pauses the schedule when a run exceeds its budget', async () => {
    const u = await register();
    const id = await createSchedule(u, { cron_expression: '0 * * * *', max_budget_per_run_usd: 0.5 });
    // Runs whose tasks already ended (inserted directly, as if fired earlier).
    const insertRun = async (hoursAgo: number, status: string, cost: number, error = '') => {
      const task = randomUUID();
      await a.app.store.sql`
        INSERT INTO tasks (id, session_id, user_id, tenant_id, query, status, result, error, model_used, provider, total_tokens, cost_usd, started_at, completed_at)
        VALUES (${task}, ${randomUUID()}, ${u.id}, ${u.tenantId}, 'q', ${status}, ${status === 'TASK_STATUS_COMPLETED' ? 'answer' : null}, ${error}, 'm-1', 'p-1', 42, ${cost},
                now() - ${hoursAgo + ' hours'}::interval, now() - ${hoursAgo + ' hours'}::interval + interval '1.5 seconds')`;
      await a.app.store.sql`
        INSERT INTO schedule_runs (id, schedule_id, triggered_at, workflow_id, query, status)
        VALUES (${randomUUID()}, ${id}, date_trunc('hour', now()) - ${hoursAgo + ' hours'}::interval, ${task}, 'q', 'RUNNING')`;
      await a.app.store.sql`UPDATE schedules SET total_runs = total_runs + 1 WHERE id = ${id}`;
    };
    await insertRun(3, 'TASK_STATUS_FAILED', 0.01, 'provider exploded');
    await insertRun(2, 'TASK_STATUS_COMPLETED', 0.2);
    const two = await waitRunsDone(u, id, 2);
    expect(two.map((r: any) => r.status)).toEqual(['COMPLETED', 'FAILED']);
    expect(two[1]).toMatchObject({
      error_message: 'provider exploded',
      total_tokens: 42,
      total_cost_usd: 0.01,
      duration_ms: 1500,
      model_used: 'm-1',
      provider: 'p-1',
    });
    expect(two[1].result).toBeUndefined();
    expect(two[0]).toMatchObject({ result: 'answer', total_cost_usd: 0.2 });
    expect(two[0].error_message).toBeUndefined();
    let s = (await api(u, 'GET', `/api/v1/schedules/${id}`)).body;
    expect(s).toMatchObject({ status: 'ACTIVE', total_runs: 2, successful_runs: 1, failed_runs: 1 });

    await insertRun(1, 'TASK_STATUS_COMPLETED', 0.75);
    const three = await waitRunsDone(u, id, 3);
    expect(three[0]).toMatchObject({ status: 'COMPLETED', total_cost_usd: 0.75 });
    expect(three[0].error_message).toMatch(/budget exceeded/);
    s = (await api(u, 'GET', `/api/v1/schedules/${id}`)).body;
    expect(s).toMatchObject({ status: 'PAUSED', total_runs: 3, successful_runs: 2, failed_runs: 1 });
    // Auto-paused: a pause request now conflicts, resume works.
    expect((await api(u, 'POST', `/api/v1/schedules/${id}/pause`, { reason: 'x' })).status).toBe(409);

    const p = await api(u, 'GET', `/api/v1/schedules/${id}/runs?page=2&page_size=2`);
    expect(p.body).toMatchObject({ total_count: 3, page: 2, page_size: 2 });
    expect(p.body.runs.map((r: any) => r.status)).toEqual(['FAILED']);
    expect((await api(u, 'GET', `/api/v1/schedules/${id}/runs?page_size=0`)).status).toBe(400);
    expect((await api(u, 'POST', `/api/v1/schedules/${id}/resume`, { reason: 'raised budget' })).status).toBe(200);
  });

  it('records a run still open after timeout_seconds as TIMEOUT', async () => {
    const u = await register();
    const id = await createSchedule(u, { cron_expression: '0 * * * *', timeout_seconds: 1 });
    const task = randomUUID();
    await a.app.store.sql`
      INSERT INTO tasks (id, session_id, user_id, tenant_id, query, status, started_at)
      VALUES (${task}, ${randomUUID()}, ${u.id}, ${u.tenantId}, 'slow', 'TASK_STATUS_RUNNING', now() - interval '10 seconds')`;
    await a.app.store.sql`
      INSERT INTO schedule_runs (id, schedule_id, triggered_at, fired_at, workflow_id, query, status)
      VALUES (${randomUUID()}, ${id}, date_trunc('hour', now()), now() - interval '10 seconds', ${task}, 'slow', 'PENDING')`;
    const [run] = await waitRunsDone(u, id);
    expect(run).toMatchObject({ status: 'TIMEOUT', workflow_id: task, error_message: 'run exceeded timeout_seconds (1)' });
    expect(run.started_at).toBeTruthy();
    expect((await api(u, 'GET', `/api/v1/schedules/${id}`)).body).toMatchObject({ successful_runs: 0, failed_runs: 1 });
  });

  it('does not fire a paused schedule', async () => {
    const u = await register();
    const id = await createSchedule(u, { cron_expression: '0 * * * *' });
    const live = await createSchedule(u, { cron_expression: '0 * * * *' });
    await api(u, 'POST', `/api/v1/schedules/${id}/pause`, { reason: 'x' });
    await makeDue(id);
    await makeDue(live);
    // Once the active one (due at the same time) has fired, the paused one would have too.
    await waitRunsDone(u, live);
    await new Promise((r) => setTimeout(r, 1500));
    expect(await runsOf(id)).toHaveLength(0);
    expect((await api(u, 'GET', `/api/v1/schedules/${id}`)).body.total_runs).toBe(0);
  });
});

describe('several schedulers', () => {
  it.skipIf(singleSessionDb)('two scheduler processes on one NATS fire each due time exactly once', async () => {
    const u = await register();
    const users = [u, await register(), await register()];
    const ids: { u: User; id: string; query: string }[] = [];
    for (const owner of users) {
      for (let i = 0; i < 3; i++) {
        const query = `two schedulers ${randomUUID()}`;
        // Yearly: the two rounds' due times stay distinct even across the top of an hour.
        ids.push({ u: owner, id: await createSchedule(owner, { cron_expression: '0 0 1 1 *', task_query: query }), query });
      }
    }
    for (let round = 1; round <= 2; round++) {
      // Two distinct due times per schedule (round 1 a minute ago, round 2 now-ish).
      await Promise.all(ids.map((x) => makeDue(x.id, round === 1 ? '2 minutes' : '1 minute')));
      for (const x of ids) await waitRunsDone(x.u, x.id, round);
      for (const x of ids) {
        const rows = await runsOf(x.id);
        expect(rows).toHaveLength(round);
        expect(new Set(rows.map((r: any) => r.triggered_at.getTime())).size).toBe(round);
        const [{ n }] = await a.app.store.sql`SELECT count(*)::int AS n FROM tasks WHERE query = ${x.query}`;
        expect(n).toBe(round);
        expect((await api(x.u, 'GET', `/api/v1/schedules/${x.id}`)).body).toMatchObject({ total_runs: round, successful_runs: round });
      }
    }
  });

  it('racing claims without the lease (split brain) still fire each due time once', async () => {
    const u = await register();
    const other = await register();
    const ids: { u: User; id: string; query: string }[] = [];
    for (const owner of [u, other]) {
      for (let i = 0; i < 4; i++) {
        const query = `split brain ${randomUUID()}`;
        ids.push({ u: owner, id: await createSchedule(owner, { cron_expression: '0 * * * *', task_query: query }), query });
      }
    }
    // Like the real scheduler: the internal RPC token, calling as the system.
    const orchestrator = createClient(
      OrchestratorService,
      createGrpcTransport({
        baseUrl: `http://127.0.0.1:${a.app.grpcPort}`,
        interceptors: [
          (next) => (req) => {
            req.header.set('authorization', `Bearer ${TEST_RPC_TOKEN}`);
            req.header.set('x-caller-kind', 'system');
            return next(req);
          },
        ],
      }),
    );
    const mk = (n: number) =>
      new Scheduler({ bus: a.app.bus, store: a.app.store, log: createLogger({ level: 'silent' }), orchestrator, instanceId: `rogue-${n}`, maxBudgetUsd: 10 });
    const rogues = [mk(1), mk(2), mk(3)];
    await Promise.all(ids.map((x) => makeDue(x.id)));
    // Three schedulers that all think they lead, plus the real ones, race for the same due times.
    const claims = (await Promise.all(rogues.map((r) => r.fireDue()))).flat().filter((c) => ids.some((x) => x.id === c.scheduleId));
    expect(new Set(claims.map((c) => c.scheduleId)).size).toBe(claims.length);
    for (const x of ids) await waitRunsDone(x.u, x.id);
    for (const x of ids) {
      expect(await runsOf(x.id)).toHaveLength(1);
      const [{ n }] = await a.app.store.sql`SELECT count(*)::int AS n FROM tasks WHERE query = ${x.query}`;
      expect(n).toBe(1);
    }
  });

  it('leader lease: one holder at a time, renewed by revision, lost when overwritten, released on stop', async () => {
    const nats = await startTestNats();
    const log = createLogger({ level: 'silent' });
    const bus = await connectBus(
      {
        url: nats.url,
        name: 'lease-test',
        replicas: 1,
        ackWaitMs: 30_000,
        maxDeliver: 10,
        eventsMaxAgeSeconds: 3600,
        eventsMaxPerWorkflow: 1000,
        idempotencyTtlSeconds: 3600,
      },
      log,
    );
    // A database that has nothing due: only the lease is exercised here.
    const emptySql = Object.assign(async () => [], {});
    const deps = {
      bus,
      store: { sql: emptySql } as unknown as TaskStore,
      log,
      orchestrator: {} as never,
      instanceId: 'same',
      maxBudgetUsd: 10,
      tickMs: 3_600_000,
    };
    const s1 = new Scheduler(deps);
    const s2 = new Scheduler(deps);
    try {
      await s1.start();
      await s2.start();
      await waitFor(async () => s1.isLeader || s2.isLeader);
      const [leader, follower] = s1.isLeader ? [s1, s2] : [s2, s1];
      expect(follower.isLeader).toBe(false);
      expect(await follower.renewLease()).toBe(false);
      expect(await leader.renewLease()).toBe(true);
      expect(await leader.renewLease()).toBe(true);
      const kv = await new Kvm(bus.js).open('SCHEDULER');
      expect(new TextDecoder().decode((await kv.get(LEADER_KEY))!.value)).toBe(leader.id);
      // Someone else took the key (e.g. after the leader's lease expired): the old leader steps down.
      await kv.put(LEADER_KEY, new TextEncoder().encode('usurper'));
      expect(await leader.renewLease()).toBe(false);
      expect(leader.isLeader).toBe(false);
      await kv.purge(LEADER_KEY);
      expect(await leader.renewLease()).toBe(true);
      // A clean stop releases the lease at once.
      await leader.stop();
      expect(await follower.renewLease()).toBe(true);
      expect(follower.isLeader).toBe(true);
    } finally {
      await s1.stop();
      await s2.stop();
      await bus.close();
      await nats.stop();
    }
  });

  it.skipIf(singleSessionDb)('a scheduler that stops hands over: due runs still fire from the remaining process', async () => {
    const u = await register();
    await b!.stop();
    b = undefined;
    const id = await createSchedule(u, { cron_expression: '0 * * * *' });
    await makeDue(id);
    const [run] = await waitRunsDone(u, id);
    expect(run.status).toBe('COMPLETED');
    expect(await runsOf(id)).toHaveLength(1);
  });
});
