/**
 * The scheduler role: runs fired from due schedules (made due by moving next_run_at into the
 * past in SQL), the missed-run policy, per-run budget pause, timeouts, paused schedules, and
 * several scheduler processes on one NATS firing each due time exactly once.
 */
import { randomUUID } from 'node:crypto';
import { createClient } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { Kvm } from '@nats-io/kv';
import { describe, expect, inject, it } from 'vitest';
import { OrchestratorService } from '../src/gen/svc/v1/orchestrator_pb.js';
import { createLogger } from '../src/kernel/index.js';
import type { TaskStore } from '../src/tasks/index.js';
import { LEADER_KEY, Scheduler } from '../src/scheduler/index.js';
import { startTestNats } from './harness/nats.js';
import { connectTestBus } from './harness/bus.js';
import { TEST_RPC_TOKEN, waitFor } from './helpers/app.js';
import { useSchedulesApp, type User } from './helpers/schedules.js';

// Embedded PGlite is one database session shared by every client: two whole app processes
// writing tasks through it at once interleave their statements (e.g. `portal "" does not
// exist`), so the tests that need a second process run against a real PostgreSQL only.
const singleSessionDb = inject('pgKind') === 'pglite';
// A second process with every role (scheduler included) on the same NATS.
const h = useSchedulesApp({ second: !singleSessionDb });
const { register, api, createSchedule, makeDue, runsOf, waitRunsDone } = h;

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
    // The run's time is its task's, started to completed; a real run takes some.
    expect(run.duration_ms).toBe(new Date(run.completed_at).getTime() - new Date(run.started_at).getTime());
    expect(run.duration_ms).toBeGreaterThan(0);
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
    const [task] = await h.a.app.store.sql`SELECT user_id, tenant_id, query, context, status FROM tasks WHERE id = ${run.workflow_id}`;
    expect(task).toMatchObject({ user_id: u.id, tenant_id: u.tenantId, query: run.query, status: 'TASK_STATUS_COMPLETED', context: { source: 'schedule' } });
    const s = (await api(u, 'GET', `/api/v1/schedules/${id}`)).body;
    expect(s).toMatchObject({ status: 'ACTIVE', total_runs: 1, successful_runs: 1, failed_runs: 0 });
    expect(new Date(s.last_run_at).getTime()).toBeGreaterThanOrEqual(due.getTime());
    expect(new Date(s.next_run_at).getTime()).toBeGreaterThan(Date.now());
    expect(new Date(s.next_run_at).getUTCMinutes()).toBe(0);
    const page = await api(u, 'GET', `/api/v1/schedules/${id}/runs`);
    expect(page.body).toMatchObject({ total_count: 1, page: 1, page_size: 20 });
    // The task's owner can read it through the task API.
    const t = await fetch(`${h.a.base}/api/v1/tasks/${run.workflow_id}`, { headers: { 'X-API-Key': u.key } });
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
      await h.a.app.store.sql`
        INSERT INTO tasks (id, session_id, user_id, tenant_id, query, status, result, error, model_used, provider, total_tokens, cost_usd, started_at, completed_at)
        VALUES (${task}, ${randomUUID()}, ${u.id}, ${u.tenantId}, 'q', ${status}, ${status === 'TASK_STATUS_COMPLETED' ? 'answer' : null}, ${error}, 'm-1', 'p-1', 42, ${cost},
                now() - ${hoursAgo + ' hours'}::interval, now() - ${hoursAgo + ' hours'}::interval + interval '1.5 seconds')`;
      await h.a.app.store.sql`
        INSERT INTO schedule_runs (id, schedule_id, triggered_at, workflow_id, query, status)
        VALUES (${randomUUID()}, ${id}, date_trunc('hour', now()) - ${hoursAgo + ' hours'}::interval, ${task}, 'q', 'RUNNING')`;
      await h.a.app.store.sql`UPDATE schedules SET total_runs = total_runs + 1 WHERE id = ${id}`;
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
    await h.a.app.store.sql`
      INSERT INTO tasks (id, session_id, user_id, tenant_id, query, status, started_at)
      VALUES (${task}, ${randomUUID()}, ${u.id}, ${u.tenantId}, 'slow', 'TASK_STATUS_RUNNING', now() - interval '10 seconds')`;
    await h.a.app.store.sql`
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
    // The paused one is due strictly earlier. A scheduler pass claims due schedules one at a
    // time, oldest due first, and records each claim before the next: so the pass that fired
    // the active one would already have recorded a run of the paused one. No sleep needed.
    await makeDue(id, '2 minutes');
    await makeDue(live, '1 minute');
    await waitRunsDone(u, live);
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
        const [{ n }] = await h.a.app.store.sql`SELECT count(*)::int AS n FROM tasks WHERE query = ${x.query}`;
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
        baseUrl: `http://127.0.0.1:${h.a.app.grpcPort}`,
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
      new Scheduler({
        bus: h.a.app.bus,
        store: h.a.app.store,
        log: createLogger({ level: 'silent' }),
        orchestrator,
        instanceId: `rogue-${n}`,
        maxBudgetUsd: 10,
      });
    const rogues = [mk(1), mk(2), mk(3)];
    await Promise.all(ids.map((x) => makeDue(x.id)));
    // Three schedulers that all think they lead, plus the real ones, race for the same due times.
    const claims = (await Promise.all(rogues.map((r) => r.fireDue()))).flat().filter((c) => ids.some((x) => x.id === c.scheduleId));
    expect(new Set(claims.map((c) => c.scheduleId)).size).toBe(claims.length);
    for (const x of ids) await waitRunsDone(x.u, x.id);
    for (const x of ids) {
      expect(await runsOf(x.id)).toHaveLength(1);
      const [{ n }] = await h.a.app.store.sql`SELECT count(*)::int AS n FROM tasks WHERE query = ${x.query}`;
      expect(n).toBe(1);
    }
  });

  it('leader lease: one holder at a time, renewed by revision, lost when overwritten, released on stop', async () => {
    const nats = await startTestNats();
    const log = createLogger({ level: 'silent' });
    const bus = await connectTestBus(
      nats.url,
      'lease-test',
      { maxDeliver: 10, eventsMaxAgeSeconds: 3600, eventsMaxPerWorkflow: 1000, idempotencyTtlSeconds: 3600 },
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
    await h.b!.stop();
    h.b = undefined;
    const id = await createSchedule(u, { cron_expression: '0 * * * *' });
    await makeDue(id);
    const [run] = await waitRunsDone(u, id);
    expect(run.status).toBe('COMPLETED');
    expect(await runsOf(id)).toHaveLength(1);
  });
});
