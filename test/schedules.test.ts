/**
 * /api/v1/schedules: every endpoint with its error cases, ownership across users and limits.
 * Runs and the scheduler role: schedule-runs.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useSchedulesApp, valid } from './helpers/schedules.js';

const h = useSchedulesApp();
const { register, api, createSchedule, makeDue, runsOf } = h;

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
    const row = (await h.a.app.store.sql`SELECT user_id, tenant_id FROM schedules WHERE id = ${r.body.schedule_id}`)[0];
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
    await h.a.app.store.sql`INSERT INTO schedule_runs (id, schedule_id, triggered_at, query, status) VALUES (${randomUUID()}, ${id}, now(), 'q', 'COMPLETED')`;
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
