/**
 * Benchmark: waiting for people (the durable wait of src/runtime/wait.ts).
 *
 * N tasks (10,000; 2,000 with --quick) are submitted at once to one process (orchestrator and
 * archiver roles, and a worker of 64 slots running a workflow that takes a step, waits for a
 * decision, and takes another step). Every one of them opens its wait and passivates. Reported:
 * - worker slots held while all N wait (target 0);
 * - RSS added by N waiting tasks, after a GC, against the RSS before they were submitted
 *   (target < 50 MB);
 * - decision → workflow resumed: decisions are made at 100/s (WaitStore.decide: the decision
 *   written in PostgreSQL, then the wake published on the work queue) and each is timed to
 *   the moment the workflow's code after its wait runs on the worker (replayed from its
 *   journal) (target p99 < 50 ms).
 * Reference, same run: the same wake done by a PostgreSQL LISTEN/NOTIFY round: the waiting
 * side holds its N waits in memory (a promise each) and LISTENs; a decision is the same
 * UPDATE of a row plus pg_notify in one transaction; timed to the promise's resolution. It
 * is the usual in-process way, with no durability of the waiting side: the workflow lives in
 * that process's memory, which is what the durable wait gives up holding.
 */
import { randomUUID } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import postgres from 'postgres';
import { CONSUMERS, STREAMS, subjects } from '../src/bus/index.js';
import { createLogger } from '../src/kernel/index.js';
import { OfflineProvider } from '../src/llm/index.js';
import { Worker, waitFor, type WorkflowRunner } from '../src/runtime/index.js';
import { WaitStore, startMessage, type QueuedTask } from '../src/tasks/index.js';
import { percentilesOf, type Percentiles } from './lib/hist.js';
import { inProcessService, type Nats, type Pg } from './lib/infra.js';
import { fmtInt, fmtRatio, table, verdict } from './lib/report.js';

const SLOTS = 64;
const RATE = Number(process.env.BENCH_WAITS_RATE ?? 100);

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

async function settledRss(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 100));
  }
  return process.memoryUsage().rss;
}

async function until(fn: () => Promise<boolean> | boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Paces `n` calls of `fn` at `rate` per second (each started on its slot, not after the previous). */
async function paced(n: number, rate: number, fn: (i: number) => Promise<void>): Promise<void> {
  const t0 = performance.now();
  const running: Promise<void>[] = [];
  for (let i = 0; i < n; i++) {
    const at = t0 + (i * 1000) / rate;
    const d = at - performance.now();
    if (d > 0) await new Promise((r) => setTimeout(r, d));
    running.push(fn(i));
  }
  await Promise.all(running);
}

export interface WaitsResults {
  tasks: number;
  submitSeconds: number;
  slotsHeldWhileWaiting: number;
  waitingRowsPending: number;
  rssAddedMb: number;
  decisions: number;
  resumed: Percentiles;
  reference: { resumed: Percentiles; rssAddedMb: number };
  ratioP99: number;
}

export async function runWaits(o: { nats: Nats; pg: Pg; quick: boolean; log: (s: string) => void }): Promise<{ results: WaitsResults; report: string }> {
  const n = o.quick ? 2000 : 10_000;
  const decisions = o.quick ? 500 : 1000;
  const { app } = await inProcessService(o.nats, o.pg, 'bench_waits', new OfflineProvider({ chunkDelayMs: 0 }), { ROLES: 'orchestrator,archiver' });
  const waits = new WaitStore(app.store.sql, app.store, app.bus);
  /** When each task's code after its wait ran (performance.now()). */
  const resumedAt = new Map<string, number>();
  const notify = new Map<string, () => void>();
  const runner: WorkflowRunner = async (ctx, task) => {
    await ctx.step('before', async () => true);
    await waitFor(ctx, {
      key: 'gate',
      kind: 'bench',
      timeoutMs: 3_600_000,
      request: {},
      owner: { userId: task.user_id, tenantId: task.tenant_id, sessionId: task.session_id },
    });
    resumedAt.set(task.task_id, performance.now());
    notify.get(task.task_id)?.();
    return { status: 'TASK_STATUS_COMPLETED', result: 'ok' };
  };
  const worker = new Worker(
    app.bus,
    app.store,
    runner,
    { concurrency: SLOTS, ackWaitMs: 30_000, maxDeliver: 5, taskTimeoutSeconds: 7200, waits },
    createLogger({ level: 'error' }),
  );
  let ref: { resumed: Percentiles; rssAddedMb: number } | undefined;
  try {
    await worker.start();
    // Warm the path (connections, JIT) with a few tasks that wait and are decided.
    const warm = await submitMany(app, 50);
    await until(async () => (await Promise.all(warm.map((id) => waits.byKey(id, 'gate')))).every((r) => r?.status === 'pending'), 60_000, 'warm-up waits');
    for (const id of warm) await waits.decide((await waits.byKey(id, 'gate'))!.id, { ok: true });
    await until(() => warm.every((id) => resumedAt.has(id)), 60_000, 'warm-up resumes');

    const rss0 = await settledRss();
    o.log(`waits: submitting ${n} tasks that wait for a person`);
    const t0 = performance.now();
    const ids = await submitMany(app, n);
    await until(
      async () => {
        const [r] = await app.store.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM task_waits WHERE status = 'pending' AND kind = 'bench'`;
        return (r?.n ?? 0) >= n && worker.inFlight === 0;
      },
      600_000,
      `${n} waiting tasks`,
    );
    const submitSeconds = (performance.now() - t0) / 1000;
    // Measured in steady state: the archiver has stored the submission burst's events.
    await until(
      async () => {
        const ci = await app.bus.jsm.consumers.info(STREAMS.events, CONSUMERS.archiver);
        return ci.num_pending === 0 && ci.num_ack_pending === 0;
      },
      300_000,
      'the archiver to catch up',
    );
    const slots = worker.inFlight;
    const [pendingRow] = await app.store.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM task_waits WHERE status = 'pending' AND kind = 'bench'`;
    const rss1 = await settledRss();
    o.log(`waits: ${n} waiting after ${submitSeconds.toFixed(1)} s; deciding ${decisions} at ${RATE}/s`);

    const rows = new Map(
      (await app.store.sql<{ id: string; task_id: string }[]>`SELECT id, task_id FROM task_waits WHERE status = 'pending' AND kind = 'bench'`).map((r) => [
        r.task_id,
        r.id,
      ]),
    );
    const lat: number[] = [];
    await paced(decisions, RATE, async (i) => {
      const id = ids[i]!;
      const done = new Promise<void>((r) => notify.set(id, r));
      const s = performance.now();
      await waits.decide(rows.get(id)!, { ok: true });
      await done;
      lat.push(resumedAt.get(id)! - s);
    });
    ref = await listenNotifyReference(o.pg, n, decisions);
    const resumed = percentilesOf(lat);
    const results: WaitsResults = {
      tasks: n,
      submitSeconds: +submitSeconds.toFixed(1),
      slotsHeldWhileWaiting: slots,
      waitingRowsPending: pendingRow?.n ?? 0,
      rssAddedMb: +((rss1 - rss0) / 2 ** 20).toFixed(1),
      decisions,
      resumed,
      reference: ref,
      ratioP99: resumed.p99 / ref.resumed.p99,
    };
    return { results, report: report(results) };
  } finally {
    await worker.stop();
    await app.stop();
  }
}

/** Tasks inserted and queued as the submission path does (row committed, then its start message). */
async function submitMany(app: Awaited<ReturnType<typeof inProcessService>>['app'], n: number): Promise<string[]> {
  const ids: string[] = [];
  const enc = new TextEncoder();
  for (let k = 0; k < n; k += 500) {
    const batch = Array.from({ length: Math.min(500, n - k) }, () => {
      const id = randomUUID();
      ids.push(id);
      const row: QueuedTask = {
        id,
        session_id: `bench-waits-${id}`,
        user_id: null,
        tenant_id: null,
        query: 'wait for a person',
        context: {},
        options: { mode: 'simple' },
        mode: 'EXECUTION_MODE_SIMPLE',
        trace_id: null,
        created_at: new Date(),
      };
      return row;
    });
    await Promise.all(batch.map((r) => app.store.insertTask(r)));
    await Promise.all(batch.map((r) => app.bus.events.publish(subjects.taskStart(r.id), enc.encode(JSON.stringify(startMessage(r))), { msgId: r.id })));
  }
  return ids;
}

/**
 * The reference: N waits held in memory, woken by LISTEN/NOTIFY. A decision is one
 * transaction (UPDATE of the wait's row, pg_notify with its id); the listener resolves the
 * waiting promise. Same PostgreSQL server, same rate.
 */
async function listenNotifyReference(pg: Pg, n: number, decisions: number): Promise<{ resumed: Percentiles; rssAddedMb: number }> {
  const url = await pg.database('bench_waits_ref');
  const sql = postgres(url, { max: 4, onnotice: () => {} });
  const listener = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await sql`CREATE TABLE waits (id text PRIMARY KEY, status text NOT NULL DEFAULT 'pending', decision jsonb)`;
    const ids = Array.from({ length: n }, () => randomUUID());
    for (let k = 0; k < n; k += 1000) await sql`INSERT INTO waits ${sql(ids.slice(k, k + 1000).map((id) => ({ id })))}`;
    const rss0 = await settledRss();
    const waiting = new Map<string, () => void>();
    const resumed = ids.map((id) => new Promise<number>((r) => waiting.set(id, () => r(performance.now()))));
    await listener.listen('wake', (id) => waiting.get(id)?.());
    const rss1 = await settledRss();
    const lat: number[] = [];
    await paced(decisions, RATE, async (i) => {
      const id = ids[i]!;
      const s = performance.now();
      await sql.begin(async (tx) => {
        await tx`UPDATE waits SET status = 'decided', decision = ${tx.json({ ok: true })} WHERE id = ${id} AND status = 'pending'`;
        await tx`SELECT pg_notify('wake', ${id})`;
      });
      lat.push((await resumed[i]!) - s);
    });
    return { resumed: percentilesOf(lat), rssAddedMb: +((rss1 - rss0) / 2 ** 20).toFixed(1) };
  } finally {
    await listener.end({ timeout: 2 });
    await sql.end({ timeout: 2 });
  }
}

function report(r: WaitsResults): string {
  const ms = (v: number) => (Number.isFinite(v) ? v.toFixed(2) : 'n/a');
  return table(
    `Waiting for people: ${fmtInt(r.tasks)} tasks waiting in one process (${SLOTS} worker slots), decisions at ${RATE}/s`,
    ['measure', 'service (durable wait)', 'reference (LISTEN/NOTIFY, in memory)', 'ratio', 'target', 'verdict'],
    [
      [
        'worker slots held while all wait',
        r.slotsHeldWhileWaiting,
        `${fmtInt(r.tasks)} (one waiter per task in memory)`,
        '',
        '0',
        verdict(r.slotsHeldWhileWaiting === 0),
      ],
      ['waits pending (rows)', fmtInt(r.waitingRowsPending), '', '', `${fmtInt(r.tasks)}`, verdict(r.waitingRowsPending === r.tasks)],
      ['RSS added by the waiting tasks (MB)', r.rssAddedMb, r.reference.rssAddedMb, '', '< 50', verdict(r.rssAddedMb < 50)],
      ['decision → resumed p50 (ms)', ms(r.resumed.p50), ms(r.reference.resumed.p50), fmtRatio(r.resumed.p50 / r.reference.resumed.p50), '', ''],
      ['decision → resumed p99 (ms)', ms(r.resumed.p99), ms(r.reference.resumed.p99), fmtRatio(r.ratioP99), '< 50', verdict(r.resumed.p99 < 50)],
      ['decision → resumed max (ms)', ms(r.resumed.max), ms(r.reference.resumed.max), '', '', ''],
    ],
    [
      `${fmtInt(r.tasks)} tasks submitted and passivated in ${r.submitSeconds} s; ${fmtInt(r.decisions)} decisions timed.`,
      'Service: decision written once in PostgreSQL (task_waits), wake on the JetStream work queue, workflow re-activated and replayed from its journal on the worker.',
      'Reference: the same UPDATE + pg_notify in one transaction, resolving a promise held in memory by a LISTEN connection (no durability of the waiting side).',
    ],
  );
}
