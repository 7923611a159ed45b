/**
 * Store contract, run against both databases the service supports:
 * - the real PostgreSQL server of the test run (`inject('pgUrl')` when `pgKind` is 'postgres');
 *   skipped with a printed reason when the run has none, failed instead under REQUIRE_REAL_POSTGRES=1;
 * - an embedded PGlite started here in a temp dir (one connection, as the service uses it).
 * The server database is this file's own (cloned from the run's template); on PGlite it is shared
 * with other files, so every id, session, user and tenant here is fresh, and no assertion counts
 * rows it did not create.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it, onTestFinished } from 'vitest';
import { EMBEDDED_PG_MAX_CONNECTIONS, startEmbeddedPostgres } from '../src/embedded/pglite.js';
import { connectSql, migrate, type Sql } from '../src/store/index.js';
import { sessionRegistry } from '../src/sessions/index.js';
import { TaskStore, type EventRow, type QueuedTask } from '../src/tasks/index.js';

/** A task to insert, in the names the test reads best. */
interface NewTask {
  id: string;
  sessionId: string;
  userId: string | null;
  tenantId: string | null;
  query: string;
  context: Record<string, unknown>;
  options: Record<string, unknown>;
  mode: string;
  traceId: string | null;
  createdAt: Date;
}

const queued = (t: NewTask): QueuedTask => ({
  id: t.id,
  session_id: t.sessionId,
  user_id: t.userId,
  tenant_id: t.tenantId,
  query: t.query,
  context: t.context,
  options: t.options,
  mode: t.mode,
  trace_id: t.traceId,
  created_at: t.createdAt,
});

interface Target {
  name: string;
  server: boolean;
  max: number;
  start(): Promise<{ url: string; stop(): Promise<void> }>;
}

const pgKind = inject('pgKind');
const requireReal = process.env.REQUIRE_REAL_POSTGRES === '1';

const serverTarget: Target = {
  name: 'PostgreSQL server',
  server: true,
  max: 5,
  start: async () => ({ url: inject('pgUrl'), stop: async () => {} }),
};

const pgliteTarget: Target = {
  name: 'embedded PGlite',
  server: false,
  max: EMBEDDED_PG_MAX_CONNECTIONS,
  async start() {
    const dir = await mkdtemp(join(tmpdir(), 'store-test-pglite-'));
    try {
      const pg = await startEmbeddedPostgres({ dataDir: dir });
      return {
        url: pg.url,
        stop: async () => {
          await pg.stop();
          await rm(dir, { recursive: true, force: true });
        },
      };
    } catch (err) {
      await rm(dir, { recursive: true, force: true });
      throw err;
    }
  },
};

if (pgKind !== 'postgres') {
  const reason = `the test run has no real PostgreSQL server (pgKind=${pgKind}); set TEST_DATABASE_URL or install PostgreSQL`;
  if (requireReal) {
    describe('Store contract: PostgreSQL server', () => {
      it('is required (REQUIRE_REAL_POSTGRES=1)', () => {
        throw new Error(`REQUIRE_REAL_POSTGRES=1 but ${reason}`);
      });
    });
  } else {
    console.warn(`[store.test] skipping the PostgreSQL server contract: ${reason}`);
    describe.skip(`Store contract: PostgreSQL server (skipped: ${reason})`, () => {
      it('skipped', () => {});
    });
  }
} else {
  contract(serverTarget);
}
contract(pgliteTarget);

function task(over: Partial<NewTask> = {}): NewTask {
  return {
    id: randomUUID(),
    sessionId: `store-test-${randomUUID()}`,
    userId: null,
    tenantId: null,
    query: 'what is 2+2?',
    context: {},
    options: {},
    mode: 'EXECUTION_MODE_SIMPLE',
    traceId: null,
    createdAt: new Date(),
    ...over,
  };
}

function contract(target: Target): void {
  describe(`Store contract: ${target.name}`, () => {
    let db: { url: string; stop(): Promise<void> };
    let sql: Sql;
    let store: TaskStore;
    const insert = (t: NewTask) => store.insertTask(queued(t));
    /** INSERT statements sent through sql.unsafe (the store's multi-row statements). */
    let unsafeCalls = 0;

    beforeAll(async () => {
      db = await target.start();
      sql = connectSql(db.url, { max: target.max });
      // Counts the store's multi-row statements; everything else passes straight through.
      const counted = new Proxy(sql, {
        get(t, p, r) {
          if (p === 'unsafe') {
            return (...args: Parameters<Sql['unsafe']>) => {
              unsafeCalls++;
              return t.unsafe(...args);
            };
          }
          return Reflect.get(t, p, r);
        },
      });
      await migrate(sql);
      store = new TaskStore(counted, sessionRegistry(counted));
    });

    afterAll(async () => {
      await store?.close();
      await db?.stop();
    });

    describe('migrate()', () => {
      it('is idempotent: a second run applies nothing and leaves one record per file', async () => {
        expect(await migrate(sql)).toEqual([]);
        expect(await migrate(sql)).toEqual([]);
        const rows = await sql`SELECT name, count(*)::int AS n FROM schema_migrations GROUP BY name ORDER BY name`;
        expect(rows.length).toBeGreaterThan(0);
        expect(rows.every((r) => r.n === 1)).toBe(true);
        expect(rows.map((r) => r.name)).toContain('001_init.sql');
        await store.ping();
      });

      it('concurrent runs on an existing schema all succeed and apply nothing', async () => {
        const results = await Promise.all([migrate(sql), migrate(sql), migrate(sql)]);
        expect(results).toEqual([[], [], []]);
      });

      it('concurrent runs on a fresh database apply each migration exactly once', async () => {
        let url = db.url;
        let cleanup: () => Promise<void>;
        if (target.server) {
          // A fresh database on the same server, so "first run" is real.
          const name = `store_migrate_${randomUUID().replace(/-/g, '')}`;
          await sql.unsafe(`CREATE DATABASE ${name}`);
          const u = new URL(db.url);
          u.pathname = `/${name}`;
          url = u.toString();
          cleanup = async () => {
            await sql.unsafe(`DROP DATABASE IF EXISTS ${name}`);
          };
        } else {
          const fresh = await pgliteTarget.start();
          url = fresh.url;
          cleanup = fresh.stop;
        }
        // Separate pools on the server (separate sessions racing for the lock); one pool on PGlite.
        const pools = target.server ? [1, 2, 3, 4].map(() => connectSql(url, { max: 2 })) : [connectSql(url, { max: 1 })];
        try {
          const runs = await Promise.all([0, 1, 2, 3].map((i) => migrate(pools[i % pools.length]!)));
          const applied = runs.flat().sort();
          const [first] = runs.filter((r) => r.length > 0);
          expect(first).toBeDefined();
          expect(applied).toEqual([...first!].sort()); // every file applied by exactly one run
          expect(applied).toContain('001_init.sql');
          const [{ n }] = await pools[0]!`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_name IN ('tasks', 'task_events')`;
          expect(n).toBe(2);
        } finally {
          await Promise.all(pools.map((p) => p.end({ timeout: 5 })));
          await cleanup();
        }
      });
    });

    describe('insertTask / getTask', () => {
      it('coalesces many concurrent inserts into few statements and stores every row', async () => {
        const sessionId = `store-test-batch-${randomUUID()}`;
        const base = Date.now();
        const tasks = Array.from({ length: 250 }, (_, i) => task({ sessionId, query: `q${i}`, createdAt: new Date(base + i), context: { i } }));
        const before = unsafeCalls;
        await Promise.all(tasks.map((t) => insert(t)));
        expect(unsafeCalls - before).toBeGreaterThan(0);
        expect(unsafeCalls - before).toBeLessThan(10); // not one statement per task
        const [{ n }] = await sql`SELECT count(*)::int AS n FROM tasks WHERE session_id = ${sessionId}`;
        expect(n).toBe(250);
        const some = await store.getTask(tasks[137]!.id);
        expect(some?.query).toBe('q137');
        expect(some?.context).toEqual({ i: 137 });
      });

      it('round-trips a task: jsonb as objects (not strings), nulls, defaults, timestamps', async () => {
        const context = { a: 1, nested: { list: [1, 'two', null, { deep: true }], ok: false }, text: 'é€😀 "quoted"', empty: {} };
        const options = { model_tier: 'large', max_iterations: 3 };
        const t = task({
          context,
          options,
          userId: randomUUID(),
          tenantId: randomUUID(),
          traceId: 'trace-1',
          mode: 'EXECUTION_MODE_STANDARD',
          createdAt: new Date('2024-05-06T07:08:09.123Z'),
        });
        await insert(t);
        const row = await store.getTask(t.id);
        expect(row).toBeDefined();
        expect(typeof row!.context).toBe('object');
        expect(row!.context).toEqual(context);
        expect(row!.options).toEqual(options);
        expect(row!.metadata).toEqual({});
        expect(row).toMatchObject({
          id: t.id,
          session_id: t.sessionId,
          user_id: t.userId,
          tenant_id: t.tenantId,
          query: t.query,
          mode: 'EXECUTION_MODE_STANDARD',
          status: 'TASK_STATUS_QUEUED',
          result: null,
          error: '',
          model_used: '',
          provider: '',
          input_tokens: 0,
          output_tokens: 0,
          total_tokens: 0,
          cost_usd: 0,
          trace_id: 'trace-1',
          started_at: null,
          completed_at: null,
        });
        expect(row!.created_at).toBeInstanceOf(Date);
        expect(row!.created_at.toISOString()).toBe('2024-05-06T07:08:09.123Z');
        expect(row!.updated_at.toISOString()).toBe('2024-05-06T07:08:09.123Z');
        // Stored as jsonb objects, queryable by key: not a JSON string inside jsonb.
        const [types] =
          await sql`SELECT jsonb_typeof(context) AS c, jsonb_typeof(options) AS o, context->'nested'->>'ok' AS ok FROM tasks WHERE id = ${t.id}::uuid`;
        expect(types).toEqual({ c: 'object', o: 'object', ok: 'false' });
      });

      it('stores null user and tenant, and a repeated id is ignored (first insert wins)', async () => {
        const t = task({ query: 'first' });
        await insert(t);
        await insert({ ...t, query: 'second', context: { changed: true } });
        const row = await store.getTask(t.id);
        expect(row?.query).toBe('first');
        expect(row?.context).toEqual({});
        expect(row?.user_id).toBeNull();
        expect(row?.tenant_id).toBeNull();
      });

      it('a bad row fails only its own caller, not the others in the same batch', async () => {
        const sessionId = `store-test-bad-${randomUUID()}`;
        const good = Array.from({ length: 5 }, () => task({ sessionId }));
        const bad = task({ sessionId, userId: 'not-a-uuid' });
        const results = await Promise.allSettled([...good.slice(0, 2), bad, ...good.slice(2)].map((t) => insert(t)));
        expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
        const [{ n }] = await sql`SELECT count(*)::int AS n FROM tasks WHERE session_id = ${sessionId}`;
        expect(n).toBe(5);
      });

      it('getTask of an unknown id is undefined', async () => {
        expect(await store.getTask(randomUUID())).toBeUndefined();
      });
    });

    describe('state transitions', () => {
      it('claimStart: QUEUED -> RUNNING once (started_at kept); a redelivery sees RUNNING and changes nothing', async () => {
        const t = task();
        await insert(t);
        const at1 = new Date('2030-01-01T00:00:01.000Z');
        const at2 = new Date('2030-01-01T00:00:02.000Z');
        expect(await store.claimStart(t.id, at1)).toBe('TASK_STATUS_RUNNING');
        let row = await store.getTask(t.id);
        expect(row?.status).toBe('TASK_STATUS_RUNNING');
        expect(row?.started_at?.toISOString()).toBe(at1.toISOString());
        expect(await store.claimStart(t.id, at2)).toBe('TASK_STATUS_RUNNING'); // a redelivery
        row = await store.getTask(t.id);
        expect(row?.started_at?.toISOString()).toBe(at1.toISOString());
        expect(row?.updated_at.toISOString()).toBe(at1.toISOString());
      });

      it('claimStart does nothing to a finished task and reports its status', async () => {
        const t = task();
        await insert(t);
        const end = new Date('2030-01-01T00:00:05.000Z');
        expect(await store.finishTask(t.id, { status: 'TASK_STATUS_CANCELLED' }, end)).toBe(true);
        expect(await store.claimStart(t.id, new Date('2030-01-01T00:00:09.000Z'))).toBe('TASK_STATUS_CANCELLED');
        const row = await store.getTask(t.id);
        expect(row?.status).toBe('TASK_STATUS_CANCELLED');
        expect(row?.started_at).toBeNull();
        expect(row?.updated_at.toISOString()).toBe(end.toISOString());
      });

      it('withdrawQueued deletes a QUEUED task only; claimStart then finds nothing', async () => {
        const queued = task();
        const running = task();
        await insert(queued);
        await insert(running);
        await store.claimStart(running.id, new Date());
        expect(await store.withdrawQueued(running.id)).toBe(false);
        expect((await store.getTask(running.id))?.status).toBe('TASK_STATUS_RUNNING');
        expect(await store.withdrawQueued(queued.id)).toBe(true);
        expect(await store.getTask(queued.id)).toBeUndefined();
        expect(await store.claimStart(queued.id, new Date())).toBeUndefined();
      });

      it('finishTask writes the terminal state once; a second call returns false and changes nothing', async () => {
        const t = task();
        await insert(t);
        await store.claimStart(t.id, new Date('2030-02-01T00:00:00.000Z'));
        const done = new Date('2030-02-01T00:00:10.000Z');
        const first = await store.finishTask(
          t.id,
          {
            status: 'TASK_STATUS_COMPLETED',
            result: 'the answer is 4',
            metadata: { agents: [{ id: 'a1', tokens: 12 }], cached: false },
            modelUsed: 'model-x',
            provider: 'openai',
            inputTokens: 100,
            outputTokens: 20,
            totalTokens: 120,
            costUsd: 0.0125,
          },
          done,
        );
        expect(first).toBe(true);
        const after = await store.getTask(t.id);
        expect(after).toMatchObject({
          status: 'TASK_STATUS_COMPLETED',
          result: 'the answer is 4',
          error: '',
          metadata: { agents: [{ id: 'a1', tokens: 12 }], cached: false },
          model_used: 'model-x',
          provider: 'openai',
          input_tokens: 100,
          output_tokens: 20,
          total_tokens: 120,
          cost_usd: 0.0125,
        });
        expect(after?.completed_at?.toISOString()).toBe(done.toISOString());
        const [mt] = await sql`SELECT jsonb_typeof(metadata) AS t FROM tasks WHERE id = ${t.id}::uuid`;
        expect(mt?.t).toBe('object');

        const second = await store.finishTask(
          t.id,
          { status: 'TASK_STATUS_FAILED', error: 'late failure', result: 'other' },
          new Date('2030-02-01T00:01:00.000Z'),
        );
        expect(second).toBe(false);
        expect(await store.setStatus(t.id, 'TASK_STATUS_RUNNING', new Date('2030-02-01T00:02:00.000Z'))).toBe(false);
        expect(await store.getTask(t.id)).toEqual(after);
      });

      it('concurrent finishTask calls: exactly one wins', async () => {
        const t = task();
        await insert(t);
        const statuses = ['TASK_STATUS_COMPLETED', 'TASK_STATUS_FAILED', 'TASK_STATUS_TIMEOUT', 'TASK_STATUS_CANCELLED'] as const;
        const wins = await Promise.all(statuses.map((status) => store.finishTask(t.id, { status, error: status }, new Date())));
        expect(wins.filter(Boolean)).toHaveLength(1);
        const row = await store.getTask(t.id);
        expect(row?.status).toBe(statuses[wins.indexOf(true)]);
        expect(row?.error).toBe(row?.status);
      });

      it('finishTask of an unknown task returns false', async () => {
        expect(await store.finishTask(randomUUID(), { status: 'TASK_STATUS_FAILED' }, new Date())).toBe(false);
      });
    });

    describe('listTasks', () => {
      const sessionId = `store-test-list-${randomUUID()}`;
      const otherSession = `store-test-list-other-${randomUUID()}`;
      const userA = randomUUID();
      const userB = randomUUID();
      const tenant = randomUUID();
      const base = Date.parse('2031-03-01T00:00:00.000Z');
      // Five tasks one second apart in one session, inserted out of order; plus one elsewhere.
      const tasks = [3, 0, 4, 1, 2].map((i) =>
        task({ sessionId, query: `t${i}`, createdAt: new Date(base + i * 1000), userId: i % 2 ? userB : userA, tenantId: i >= 3 ? tenant : null }),
      );
      const elsewhere = task({ sessionId: otherSession, userId: userA, tenantId: tenant, createdAt: new Date(base + 10_000) });

      beforeAll(async () => {
        await Promise.all([...tasks, elsewhere].map((t) => insert(t)));
        const byQuery = (q: string) => tasks.find((t) => t.query === q)!.id;
        await store.finishTask(byQuery('t1'), { status: 'TASK_STATUS_COMPLETED' }, new Date());
        await store.finishTask(byQuery('t3'), { status: 'TASK_STATUS_COMPLETED' }, new Date());
        await store.claimStart(byQuery('t4'), new Date());
      });

      const queries = (r: { rows: { query: string }[] }) => r.rows.map((x) => x.query);

      it('pages newest first with the total of all matches', async () => {
        const p1 = await store.listTasks({ sessionId, limit: 2, offset: 0 });
        expect(queries(p1)).toEqual(['t4', 't3']);
        expect(p1.total).toBe(5);
        const p2 = await store.listTasks({ sessionId, limit: 2, offset: 2 });
        expect(queries(p2)).toEqual(['t2', 't1']);
        expect(p2.total).toBe(5);
        const p3 = await store.listTasks({ sessionId, limit: 2, offset: 4 });
        expect(queries(p3)).toEqual(['t0']);
        expect(p3.total).toBe(5);
        const all = await store.listTasks({ sessionId, limit: 100, offset: 0 });
        expect(queries(all)).toEqual(['t4', 't3', 't2', 't1', 't0']);
        // Rows are task rows: the window total is not one of their fields.
        expect(all.rows[0]).not.toHaveProperty('total');
        expect(all.rows[0]!.context).toEqual({});
      });

      it('an offset past the end returns no rows but still the total', async () => {
        const r = await store.listTasks({ sessionId, limit: 10, offset: 50 });
        expect(r.rows).toEqual([]);
        expect(r.total).toBe(5);
        const none = await store.listTasks({ sessionId: `store-test-none-${randomUUID()}`, limit: 10, offset: 0 });
        expect(none).toEqual({ rows: [], total: 0 });
      });

      it('filters by status, user and tenant, alone and combined', async () => {
        const done = await store.listTasks({ sessionId, status: 'TASK_STATUS_COMPLETED', limit: 10, offset: 0 });
        expect(queries(done)).toEqual(['t3', 't1']);
        expect(done.total).toBe(2);
        expect(queries(await store.listTasks({ sessionId, status: 'TASK_STATUS_RUNNING', limit: 10, offset: 0 }))).toEqual(['t4']);
        expect(queries(await store.listTasks({ sessionId, status: 'TASK_STATUS_QUEUED', limit: 10, offset: 0 }))).toEqual(['t2', 't0']);

        const byUserA = await store.listTasks({ userId: userA, limit: 10, offset: 0 });
        expect(byUserA.rows.map((r) => r.id)).toEqual([elsewhere.id, ...['t4', 't2', 't0'].map((q) => tasks.find((t) => t.query === q)!.id)]);
        expect(byUserA.total).toBe(4);
        const userAInSession = await store.listTasks({ sessionId, userId: userA, limit: 10, offset: 0 });
        expect(queries(userAInSession)).toEqual(['t4', 't2', 't0']);
        expect(queries(await store.listTasks({ sessionId, userId: userB, limit: 10, offset: 0 }))).toEqual(['t3', 't1']);

        const byTenant = await store.listTasks({ tenantId: tenant, limit: 10, offset: 0 });
        expect(byTenant.total).toBe(3);
        expect(byTenant.rows[0]!.id).toBe(elsewhere.id);
        expect(queries(await store.listTasks({ sessionId, tenantId: tenant, limit: 10, offset: 0 }))).toEqual(['t4', 't3']);
        const combo = await store.listTasks({ sessionId, tenantId: tenant, userId: userB, status: 'TASK_STATUS_COMPLETED', limit: 10, offset: 0 });
        expect(queries(combo)).toEqual(['t3']);
        expect(combo.total).toBe(1);
        expect(await store.listTasks({ userId: randomUUID(), limit: 10, offset: 0 })).toEqual({ rows: [], total: 0 });
      });

      it('unfiltered: newest first across sessions, total counts at least these rows', async () => {
        const r = await store.listTasks({ limit: 100, offset: 0 });
        expect(r.total).toBeGreaterThanOrEqual(6);
        const times = r.rows.map((x) => x.created_at.getTime());
        expect(times).toEqual([...times].sort((a, b) => b - a));
      });

      it('ties on created_at are ordered by id, descending, so pages never overlap', async () => {
        const s = `store-test-tie-${randomUUID()}`;
        const at = new Date('2031-04-01T00:00:00.000Z');
        const tied = Array.from({ length: 6 }, () => task({ sessionId: s, createdAt: at }));
        await Promise.all(tied.map((t) => insert(t)));
        const ids: string[] = [];
        for (let off = 0; off < 6; off += 4) ids.push(...(await store.listTasks({ sessionId: s, limit: 4, offset: off })).rows.map((r) => r.id));
        expect(ids).toEqual(
          tied
            .map((t) => t.id)
            .sort()
            .reverse(),
        );
      });
    });

    describe('insertEvents / listEvents', () => {
      const ev = (workflowId: string, seq: number, over: Partial<EventRow> = {}): EventRow => ({
        workflow_id: workflowId,
        seq,
        type: 'LLM_PARTIAL',
        agent_id: 'agent-1',
        message: `m${seq}`,
        payload: { seq, delta: `d${seq}` },
        ts: new Date(Date.parse('2032-01-01T00:00:00.000Z') + seq),
        stream_id: `${seq}-0`,
        ...over,
      });

      it('lists events in seq order with payloads as JSON values, not strings', async () => {
        const wf = randomUUID();
        const payloads: unknown[] = [
          { a: { b: [1, 2, { c: 'é' }] } },
          [1, 'two', null],
          'just text',
          42,
          true,
          null,
          undefined,
          [true, false],
          '{"looks":"like json"}',
          [],
        ];
        const events = payloads.map((payload, i) => ev(wf, i + 1, { payload }));
        await store.insertEvents([...events].reverse());
        const got = await store.listEvents(wf);
        expect(got.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        expect(got.map((e) => e.payload)).toEqual([
          { a: { b: [1, 2, { c: 'é' }] } },
          [1, 'two', null],
          'just text',
          42,
          true,
          null,
          null,
          [true, false],
          '{"looks":"like json"}',
          [],
        ]);
        expect(got[0]).toEqual({ ...events[0], payload: events[0]!.payload });
        expect(got[0]!.ts).toBeInstanceOf(Date);
        expect(typeof got[0]!.seq).toBe('number');
        const types = await sql`SELECT seq::int AS seq, jsonb_typeof(payload) AS t FROM task_events WHERE workflow_id = ${wf}::uuid ORDER BY seq`;
        expect(types.map((r) => r.t)).toEqual(['object', 'array', 'string', 'number', 'boolean', null, null, 'array', 'string', 'array']);
      });

      it('sends a batch of any size as one statement, prepared once per connection', async () => {
        const one = target.max === 1 ? sql : connectSql(db.url, { max: 1 });
        if (one !== sql) onTestFinished(() => one.end());
        const oneStore = target.max === 1 ? store : new TaskStore(one, sessionRegistry(one));
        const wf = randomUUID();
        const message = `it's "quoted" \\ {braces}, NULL, é`;
        for (const [from, n] of Object.entries({ 1: 1, 2: 3, 5: 40 })) {
          await oneStore.insertEvents(Array.from({ length: n }, (_, i) => ev(wf, Number(from) + i, { message })));
        }
        const got = await oneStore.listEvents(wf);
        expect([got.length, got[43]!.seq, got[0]!.message]).toEqual([44, 44, message]);
        const [{ n }] = await one`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement LIKE 'INSERT INTO task_events%'`;
        expect(n).toBe(1);
      });

      it('is idempotent: a repeated (workflow, seq) is ignored and the first copy kept', async () => {
        const wf = randomUUID();
        await store.insertEvents([ev(wf, 1), ev(wf, 2), ev(wf, 3)]);
        await store.insertEvents([ev(wf, 2, { message: 'replayed', payload: { replayed: true } }), ev(wf, 3), ev(wf, 4)]);
        await store.insertEvents([ev(wf, 4), ev(wf, 4)]); // duplicates within one statement too
        await store.insertEvents([]);
        const got = await store.listEvents(wf);
        expect(got.map((e) => [e.seq, e.message])).toEqual([
          [1, 'm1'],
          [2, 'm2'],
          [3, 'm3'],
          [4, 'm4'],
        ]);
        expect(got[1]!.payload).toEqual({ seq: 2, delta: 'd2' });
      });

      it('afterSeq and limit page through one workflow only', async () => {
        const wf = randomUUID();
        const other = randomUUID();
        await store.insertEvents([...Array.from({ length: 10 }, (_, i) => ev(wf, i + 1)), ev(other, 1), ev(other, 100)]);
        expect((await store.listEvents(wf, 0, 3)).map((e) => e.seq)).toEqual([1, 2, 3]);
        expect((await store.listEvents(wf, 3, 3)).map((e) => e.seq)).toEqual([4, 5, 6]);
        expect((await store.listEvents(wf, 8)).map((e) => e.seq)).toEqual([9, 10]);
        expect(await store.listEvents(wf, 10)).toEqual([]);
        expect((await store.listEvents(other)).map((e) => e.seq)).toEqual([1, 100]);
        expect(await store.listEvents(randomUUID())).toEqual([]);
      });

      it('inserts thousands of events at once (several statements)', async () => {
        const wf = randomUUID();
        const n = 8300; // 9 statements of at most 1,000 rows
        await store.insertEvents(Array.from({ length: n }, (_, i) => ev(wf, i + 1, { payload: { i } })));
        expect((await sql`SELECT count(*)::int AS c FROM task_events WHERE workflow_id = ${wf}::uuid`)[0]!.c).toBe(n);
        const tail = await store.listEvents(wf, n - 2);
        expect(tail.map((e) => e.seq)).toEqual([n - 1, n]);
        expect(tail[1]!.payload).toEqual({ i: n - 1 });
      });
    });
  });
}
