/**
 * Scheduler role: fires due cron schedules as tasks and records their runs.
 *
 * Leadership. Every scheduler process competes for one lease, the key `leader` of the KV
 * bucket `SCHEDULER` (TTL LEASE_MS): `create` takes a free lease, the holder renews it every
 * tick with `update(key, value, revision)` (fails if anyone else wrote it), and releases it
 * with a revision-checked delete on stop. Only the holder, and only while its last renewal
 * is younger than the lease minus a safety margin, fires runs and tracks their outcomes.
 *
 * Exactly once per due time. The lease is an optimisation, not the guarantee: a run is
 * claimed in one Postgres transaction that inserts the run row — (schedule_id,
 * triggered_at) is unique, `ON CONFLICT DO NOTHING` — and advances the schedule's
 * next_run_at conditionally on the value it read. Two schedulers that both believe they
 * lead (split brain, a paused process whose lease expired) cannot both claim one due time;
 * the loser neither submits a task nor counts a run.
 *
 * Runs are at most once. A claim is committed before the task is submitted; if the submit
 * fails the run is recorded FAILED with the error. If the process dies between the claim and
 * the submit (no workflow id recorded), the run is marked FAILED after ORPHAN_MS by the next
 * leader rather than resubmitted, since the first submit may have reached the orchestrator.
 *
 * Missed runs (policy). Due times that passed while no scheduler was running are not
 * replayed one by one: when a scheduler finds a schedule due, it fires ONE catch-up run for
 * the most recent due time at or before now (its triggered_at is that time) and skips every
 * older missed time without recording it; next_run_at then moves to the first occurrence
 * after now. So after any outage, however long, each schedule runs once on start-up and then
 * follows its cron again. Runs that fell due while a schedule was PAUSED are skipped too:
 * resume computes next_run_at from the time of resuming.
 *
 * Outcomes. The leader polls open runs (PENDING, RUNNING) against the `tasks` table each
 * tick: a terminal task completes its run (status COMPLETED/FAILED/CANCELLED/TIMEOUT without
 * the TASK_STATUS_ prefix, result, error, model, provider, tokens, cost, timings) and bumps
 * successful_runs or failed_runs once (the run update is conditional on the run being open).
 * A run whose cost exceeds the schedule's max_budget_per_run_usd is recorded with an
 * error_message saying so and the schedule is PAUSED automatically. A run still open
 * timeout_seconds after it fired is recorded TIMEOUT and its task is cancelled.
 */
import { randomUUID } from 'node:crypto';
import { create, type JsonObject } from '@bufbuild/protobuf';
import type { Client } from '@connectrpc/connect';
import type { KV } from '@nats-io/kv';
import { BUCKETS, coreReplicas, openBucket, type Bus } from '../bus/index.js';
import { toAppError, type Logger } from '../kernel/index.js';
import { countScheduleRun } from '../metrics/index.js';
import { SubmitTaskRequestSchema, type OrchestratorService } from '../gen/svc/v1/orchestrator_pb.js';
import type { Sql } from '../store/index.js';
import type { TaskStore } from '../tasks/index.js';
import { nextRun, prevRun } from './cron.js';

export interface SchedulerDeps {
  bus: Bus;
  store: TaskStore;
  log: Logger;
  orchestrator: Client<typeof OrchestratorService>;
  instanceId: string;
  maxBudgetUsd: number;
  /** Tick period (ms): lease renewal, due-schedule scan and outcome polling. Default 1000. */
  tickMs?: number;
}

export const SCHEDULER_BUCKET = BUCKETS.scheduler;
export const LEADER_KEY = 'leader';
/** Lease lifetime; the holder renews it every tick. */
export const LEASE_MS = 10_000;
/** A leader stops acting this long before its lease would expire. */
const LEASE_MARGIN_MS = 2_000;
/** A claimed run with no workflow id after this long lost its scheduler before the submit. */
const ORPHAN_MS = 120_000;
const DUE_BATCH = 100;
const SUBMIT_TIMEOUT_MS = 30_000;

const RUN_STATUS: Record<string, string> = {
  TASK_STATUS_QUEUED: 'PENDING',
  TASK_STATUS_RUNNING: 'RUNNING',
  TASK_STATUS_COMPLETED: 'COMPLETED',
  TASK_STATUS_FAILED: 'FAILED',
  TASK_STATUS_CANCELLED: 'CANCELLED',
  TASK_STATUS_TIMEOUT: 'TIMEOUT',
};
const TERMINAL = new Set(['COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT']);

interface DueRow {
  id: string;
  user_id: string | null;
  tenant_id: string | null;
  cron_expression: string;
  timezone: string;
  task_query: string;
  task_context: Record<string, unknown>;
  next_run_at: Date;
  next_txt: string;
}

interface OpenRun {
  id: string;
  schedule_id: string;
  workflow_id: string | null;
  status: string;
  fired_at: Date;
  started_at: Date | null;
  max_budget_per_run_usd: number;
  timeout_seconds: number;
  task_status: string | null;
  result: string | null;
  error: string | null;
  model_used: string | null;
  provider: string | null;
  total_tokens: number | null;
  cost_usd: number | null;
  task_started_at: Date | null;
  task_completed_at: Date | null;
}

type TaskFields = 'task_status' | 'result' | 'error' | 'model_used' | 'provider' | 'total_tokens' | 'cost_usd' | 'task_started_at' | 'task_completed_at';

/** A claimed due time: the run row exists and the schedule moved on. */
export interface Claim {
  runId: string;
  scheduleId: string;
  triggeredAt: Date;
}

export class Scheduler {
  readonly id: string;
  private readonly sql: Sql;
  private kv?: KV;
  private revision = 0;
  private leaseUntil = 0;
  private timer?: NodeJS.Timeout;
  private current?: Promise<void>;
  private stopped = false;

  constructor(private readonly d: SchedulerDeps) {
    this.sql = d.store.sql;
    // Several schedulers may share an instance id (e.g. one process in tests): the lease holder id is unique.
    this.id = `${d.instanceId}:${randomUUID()}`;
  }

  async start(): Promise<void> {
    // Same replication as the core buckets (the bus options are not passed to this role).
    const replicas = await coreReplicas(this.d.bus.jsm);
    this.kv = await openBucket(this.d.bus.nc, this.d.bus.jsm, SCHEDULER_BUCKET, { history: 1, ttlMs: LEASE_MS, replicas });
    this.schedule(0);
  }

  get isLeader(): boolean {
    return this.revision > 0 && Date.now() < this.leaseUntil;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.current = this.tick().finally(() => {
        this.current = undefined;
        this.schedule(this.d.tickMs ?? 1000);
      });
    }, ms);
  }

  private async tick(): Promise<void> {
    try {
      await this.renewLease();
      if (!this.isLeader || this.stopped) return;
      await this.fireDue();
      if (!this.isLeader || this.stopped) return;
      await this.trackRuns();
    } catch (err) {
      this.d.log.warn({ err }, 'scheduler tick failed');
    }
  }

  /** Takes the lease when free, renews it when held; loses it when someone else wrote it. */
  async renewLease(): Promise<boolean> {
    const kv = this.kv!;
    const value = new TextEncoder().encode(this.id);
    const started = Date.now();
    try {
      this.revision = this.revision ? await kv.update(LEADER_KEY, value, this.revision) : await kv.create(LEADER_KEY, value);
      this.leaseUntil = started + LEASE_MS - LEASE_MARGIN_MS;
      return true;
    } catch (err) {
      // A write whose reply was lost (or a retried create) may still have stored our id:
      // adopt that revision instead of waiting for our own lease to expire. The lease
      // deadline stays at the last confirmed renewal.
      const e = await kv.get(LEADER_KEY).catch(() => null);
      if (e && e.operation === 'PUT' && new TextDecoder().decode(e.value) === this.id) {
        this.revision = e.revision;
        return this.isLeader;
      }
      if (this.revision) this.d.log.info({ err: (err as Error).message, scheduler: this.id }, 'scheduler lease lost');
      this.revision = 0;
      this.leaseUntil = 0;
      return false;
    }
  }

  private async releaseLease(): Promise<void> {
    if (!this.revision || !this.kv) return;
    await this.kv.delete(LEADER_KEY, { previousSeq: this.revision }).catch(() => {});
    this.revision = 0;
    this.leaseUntil = 0;
  }

  /** Claims and submits every due schedule; returns the claims this scheduler won. */
  async fireDue(): Promise<Claim[]> {
    const due = await this.sql<DueRow[]>`
      SELECT id, user_id, tenant_id, cron_expression, timezone, task_query, task_context, next_run_at, next_run_at::text AS next_txt
      FROM schedules WHERE status = 'ACTIVE' AND next_run_at <= now()
      ORDER BY next_run_at LIMIT ${DUE_BATCH}`;
    const claims: Claim[] = [];
    for (const s of due) {
      // A started scheduler stops firing as soon as its lease is no longer safely held.
      if (this.stopped || (this.kv && !this.isLeader)) break;
      try {
        const claim = await this.claim(s);
        if (!claim) continue;
        claims.push(claim);
        await this.submit(s, claim);
      } catch (err) {
        this.d.log.error({ err, schedule_id: s.id }, 'schedule run failed to fire');
      }
    }
    return claims;
  }

  /**
   * One transaction: insert the run for the due time (unique per schedule and time), advance
   * next_run_at if nobody else did. Either both happen or neither does.
   */
  async claim(s: DueRow): Promise<Claim | undefined> {
    const now = new Date();
    let next: Date;
    let triggered: string;
    let triggeredAt: Date;
    try {
      // Catch-up policy: one run for the most recent due time, older missed times skipped.
      const latest = prevRun(s.cron_expression, s.timezone, now);
      if (latest.getTime() > s.next_run_at.getTime()) {
        triggeredAt = latest;
        triggered = latest.toISOString();
      } else {
        triggeredAt = s.next_run_at;
        triggered = s.next_txt;
      }
      next = nextRun(s.cron_expression, s.timezone, now);
    } catch (err) {
      this.d.log.error({ err, schedule_id: s.id }, 'schedule has an unusable cron expression: paused');
      await this.sql`UPDATE schedules SET status = 'PAUSED', paused_at = now(), pause_reason = 'invalid cron expression', updated_at = now()
                     WHERE id = ${s.id} AND status = 'ACTIVE'`;
      return undefined;
    }
    const runId = randomUUID();
    const won = await this.sql
      .begin(async (tx) => {
        const ins = await tx`
        INSERT INTO schedule_runs (id, schedule_id, triggered_at, query, status, fired_by)
        VALUES (${runId}, ${s.id}, ${triggered}::timestamptz, ${s.task_query}, 'PENDING', ${this.id})
        ON CONFLICT (schedule_id, triggered_at) DO NOTHING RETURNING id`;
        const counted = ins.length ? tx`, last_run_at = now(), total_runs = total_runs + 1` : tx``;
        const upd = await tx`
        UPDATE schedules SET next_run_at = ${next} ${counted}
        WHERE id = ${s.id} AND status = 'ACTIVE' AND next_run_at = ${s.next_txt}::timestamptz RETURNING id`;
        if (!upd.length) {
          // Someone else advanced, paused or deleted it since we read it: undo our insert.
          if (ins.length) throw new LostClaim();
          return false;
        }
        return ins.length > 0;
      })
      .catch((err) => {
        if (err instanceof LostClaim) return false;
        throw err;
      });
    return won ? { runId, scheduleId: s.id, triggeredAt } : undefined;
  }

  private async submit(s: DueRow, c: Claim): Promise<void> {
    try {
      const r = await this.d.orchestrator.submitTask(
        create(SubmitTaskRequestSchema, {
          metadata: {
            userId: s.user_id ?? '',
            tenantId: s.tenant_id ?? '',
            sessionId: '',
            labels: { schedule_id: s.id, schedule_run_id: c.runId },
          },
          query: s.task_query,
          context: (s.task_context ?? {}) as JsonObject,
          options: {},
        }),
        { timeoutMs: SUBMIT_TIMEOUT_MS },
      );
      await this.sql`UPDATE schedule_runs SET workflow_id = ${r.workflowId} WHERE id = ${c.runId}`;
      countScheduleRun(true);
      this.d.log.info({ schedule_id: s.id, workflow_id: r.workflowId, triggered_at: c.triggeredAt.toISOString() }, 'schedule run fired');
    } catch (err) {
      const msg = toAppError(err).message;
      this.d.log.warn({ err, schedule_id: s.id }, 'schedule run submit failed');
      countScheduleRun(false);
      await this.finishRun(c.runId, s.id, { status: 'FAILED', error_message: `task submission failed: ${msg}` }, undefined);
    }
  }

  /** Brings open runs up to date with their tasks; returns how many runs finished. */
  async trackRuns(): Promise<number> {
    const runs = await this.sql<Omit<OpenRun, TaskFields>[]>`
      SELECT r.id, r.schedule_id, r.workflow_id, r.status, r.fired_at, r.started_at,
             s.max_budget_per_run_usd, s.timeout_seconds
      FROM schedule_runs r
      JOIN schedules s ON s.id = r.schedule_id
      WHERE r.status IN ('PENDING', 'RUNNING')
      ORDER BY r.fired_at LIMIT 500`;
    // The runs' tasks, read through their owner (tasks/).
    const ids = runs.map((r) => r.workflow_id).filter((id): id is string => !!id);
    const tasks = new Map((ids.length ? await this.d.store.getTasks(ids) : []).map((t) => [t.id, t]));
    const open: OpenRun[] = runs.map((r) => {
      const t = r.workflow_id ? tasks.get(r.workflow_id) : undefined;
      return {
        ...r,
        task_status: t?.status ?? null,
        result: t?.result ?? null,
        error: t?.error ?? null,
        model_used: t?.model_used ?? null,
        provider: t?.provider ?? null,
        total_tokens: t?.total_tokens ?? null,
        cost_usd: t ? Number(t.cost_usd) : null,
        task_started_at: t?.started_at ?? null,
        task_completed_at: t?.completed_at ?? null,
      };
    });
    let finished = 0;
    const now = Date.now();
    for (const r of open) {
      const status = r.task_status ? RUN_STATUS[r.task_status] : undefined;
      if (status && TERMINAL.has(status)) {
        const cost = r.cost_usd ?? 0;
        const over = cost > r.max_budget_per_run_usd;
        const started = r.task_started_at ?? r.started_at;
        const completed = r.task_completed_at;
        const errors = [r.error ?? ''];
        if (over) errors.push(`budget exceeded: run cost ${cost} USD is over max_budget_per_run_usd ${r.max_budget_per_run_usd} USD; schedule paused`);
        const done = await this.finishRun(
          r.id,
          r.schedule_id,
          {
            status,
            result: r.result,
            error_message: errors.filter(Boolean).join('; '),
            model_used: r.model_used ?? '',
            provider: r.provider ?? '',
            total_tokens: r.total_tokens ?? 0,
            total_cost_usd: cost,
            started_at: started,
            completed_at: completed,
            duration_ms: started && completed ? Math.max(0, completed.getTime() - started.getTime()) : null,
          },
          over ? `budget exceeded: run cost ${cost} USD is over max_budget_per_run_usd ${r.max_budget_per_run_usd} USD` : undefined,
        );
        if (done) finished++;
      } else if (now - r.fired_at.getTime() > r.timeout_seconds * 1000) {
        const msg = `run exceeded timeout_seconds (${r.timeout_seconds})`;
        if (await this.finishRun(r.id, r.schedule_id, { status: 'TIMEOUT', error_message: msg, started_at: r.task_started_at }, undefined)) {
          finished++;
          if (r.workflow_id) {
            await this.d.orchestrator
              .cancelTask({ taskId: r.workflow_id, reason: `schedule ${msg}` }, { timeoutMs: SUBMIT_TIMEOUT_MS })
              .catch((err) => this.d.log.warn({ err, workflow_id: r.workflow_id }, 'could not cancel a timed-out schedule run'));
          }
        }
      } else if (!r.workflow_id && now - r.fired_at.getTime() > ORPHAN_MS) {
        if (await this.finishRun(r.id, r.schedule_id, { status: 'FAILED', error_message: 'scheduler stopped before the task was submitted' }, undefined))
          finished++;
      } else if (status === 'RUNNING' && r.status !== 'RUNNING') {
        await this.sql`UPDATE schedule_runs SET status = 'RUNNING', started_at = ${r.task_started_at} WHERE id = ${r.id} AND status = 'PENDING'`;
      }
    }
    return finished;
  }

  /** Closes an open run once and counts it; pauses the schedule when `pauseReason` is given. */
  private async finishRun(
    runId: string,
    scheduleId: string,
    f: {
      status: string;
      result?: string | null;
      error_message?: string;
      model_used?: string;
      provider?: string;
      total_tokens?: number;
      total_cost_usd?: number;
      started_at?: Date | null;
      completed_at?: Date | null;
      duration_ms?: number | null;
    },
    pauseReason: string | undefined,
  ): Promise<boolean> {
    const ok = f.status === 'COMPLETED';
    return this.sql.begin(async (tx) => {
      const upd = await tx`
        UPDATE schedule_runs SET status = ${f.status}, result = ${f.result ?? null}, error_message = ${f.error_message ?? ''},
          model_used = ${f.model_used ?? ''}, provider = ${f.provider ?? ''}, total_tokens = ${f.total_tokens ?? 0},
          total_cost_usd = ${f.total_cost_usd ?? 0}, started_at = ${f.started_at ?? null}, completed_at = ${f.completed_at ?? new Date()},
          duration_ms = ${f.duration_ms ?? null}
        WHERE id = ${runId} AND status IN ('PENDING', 'RUNNING') RETURNING id`;
      if (!upd.length) return false;
      await tx`
        UPDATE schedules SET successful_runs = successful_runs + ${ok ? 1 : 0}, failed_runs = failed_runs + ${ok ? 0 : 1}
        WHERE id = ${scheduleId}`;
      if (pauseReason) {
        await tx`UPDATE schedules SET status = 'PAUSED', paused_at = now(), pause_reason = ${pauseReason}, updated_at = now()
                 WHERE id = ${scheduleId} AND status = 'ACTIVE'`;
        this.d.log.warn({ schedule_id: scheduleId, run_id: runId }, pauseReason);
      }
      return true;
    }) as Promise<boolean>;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.current;
    await this.releaseLease();
  }
}

class LostClaim extends Error {}

export async function startScheduler(deps: SchedulerDeps): Promise<{ stop(): Promise<void> }> {
  const s = new Scheduler(deps);
  await s.start();
  deps.log.info({ scheduler: s.id }, 'scheduler started');
  return { stop: () => s.stop() };
}
