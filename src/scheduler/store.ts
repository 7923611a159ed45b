/**
 * Schedules in Postgres: owner-scoped CRUD for the gateway, and the claim / outcome writes of
 * the scheduler. Every owner-facing query is scoped by `user_id IS NOT DISTINCT FROM` (the
 * anonymous development principal owns the rows whose user_id is NULL); a schedule of another
 * owner is indistinguishable from a missing one.
 */
import { randomUUID } from 'node:crypto';
import type { Sql } from '../store/index.js';
import { UUID_RE } from '../kernel/index.js';

export type ScheduleStatus = 'ACTIVE' | 'PAUSED';

export interface Owner {
  userId: string | null;
  tenantId: string | null;
}

export interface ScheduleRow {
  id: string;
  user_id: string | null;
  tenant_id: string | null;
  name: string;
  description: string;
  cron_expression: string;
  timezone: string;
  task_query: string;
  task_context: Record<string, unknown>;
  max_budget_per_run_usd: number;
  timeout_seconds: number;
  status: ScheduleStatus;
  next_run_at: Date | null;
  last_run_at: Date | null;
  total_runs: number;
  successful_runs: number;
  failed_runs: number;
  paused_at: Date | null;
  pause_reason: string;
  created_at: Date;
  updated_at: Date;
}

export interface RunRow {
  id: string;
  schedule_id: string;
  triggered_at: Date;
  fired_at: Date;
  workflow_id: string | null;
  query: string;
  status: string;
  result: string | null;
  error_message: string;
  model_used: string;
  provider: string;
  total_tokens: number;
  total_cost_usd: number;
  duration_ms: string | number | null;
  started_at: Date | null;
  completed_at: Date | null;
}

export interface NewSchedule {
  name: string;
  description: string;
  cronExpression: string;
  timezone: string;
  taskQuery: string;
  taskContext: Record<string, unknown>;
  maxBudgetPerRunUsd: number;
  timeoutSeconds: number;
  nextRunAt: Date;
}

export type SchedulePatch = Partial<{
  name: string;
  description: string;
  cron_expression: string;
  timezone: string;
  task_query: string;
  task_context: Record<string, unknown>;
  max_budget_per_run_usd: number;
  timeout_seconds: number;
  next_run_at: Date;
}>;

export class ScheduleLimitError extends Error {
  override name = 'ScheduleLimitError';
}

export class ScheduleStore {
  constructor(private readonly sql: Sql) {}

  /** Inserts a schedule unless the owner already has `maxPerUser` (checked under a per-owner lock). */
  async create(o: Owner, s: NewSchedule, maxPerUser: number): Promise<ScheduleRow> {
    return this.sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(hashtext(${'schedules:' + (o.userId ?? 'anonymous')}))`;
      const [{ n }] = await tx`SELECT count(*)::int AS n FROM schedules WHERE user_id IS NOT DISTINCT FROM ${o.userId}::uuid`;
      if (n >= maxPerUser) throw new ScheduleLimitError(`schedule limit reached: at most ${maxPerUser} schedules per user`);
      const rows = await tx<ScheduleRow[]>`
        INSERT INTO schedules (id, user_id, tenant_id, name, description, cron_expression, timezone, task_query, task_context,
                               max_budget_per_run_usd, timeout_seconds, status, next_run_at)
        VALUES (${randomUUID()}, ${o.userId}::uuid, ${o.tenantId}::uuid, ${s.name}, ${s.description}, ${s.cronExpression}, ${s.timezone},
                ${s.taskQuery}, ${tx.json(s.taskContext as never)}, ${s.maxBudgetPerRunUsd}, ${s.timeoutSeconds}, 'ACTIVE', ${s.nextRunAt})
        RETURNING *`;
      return rows[0];
    }) as Promise<ScheduleRow>;
  }

  async list(o: Owner, page: number, pageSize: number, status?: ScheduleStatus): Promise<{ rows: ScheduleRow[]; total: number }> {
    const filter = status ? this.sql`AND status = ${status}` : this.sql``;
    const [rows, [{ n }]] = await Promise.all([
      this.sql<ScheduleRow[]>`
        SELECT * FROM schedules WHERE user_id IS NOT DISTINCT FROM ${o.userId}::uuid ${filter}
        ORDER BY created_at DESC, id DESC LIMIT ${pageSize} OFFSET ${(page - 1) * pageSize}`,
      this.sql`SELECT count(*)::int AS n FROM schedules WHERE user_id IS NOT DISTINCT FROM ${o.userId}::uuid ${filter}`,
    ]);
    return { rows, total: n as number };
  }

  async get(o: Owner, id: string): Promise<ScheduleRow | undefined> {
    if (!UUID_RE.test(id)) return undefined;
    const rows = await this.sql<ScheduleRow[]>`SELECT * FROM schedules WHERE id = ${id}::uuid AND user_id IS NOT DISTINCT FROM ${o.userId}::uuid`;
    return rows[0];
  }

  async update(o: Owner, id: string, patch: SchedulePatch): Promise<ScheduleRow | undefined> {
    if (!UUID_RE.test(id)) return undefined;
    const set: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(patch)) if (v !== undefined) set[k] = k === 'task_context' ? this.sql.json(v as never) : v;
    if (!Object.keys(set).length) return this.get(o, id);
    const rows = await this.sql<ScheduleRow[]>`
      UPDATE schedules SET ${this.sql(set)}, updated_at = now()
      WHERE id = ${id}::uuid AND user_id IS NOT DISTINCT FROM ${o.userId}::uuid RETURNING *`;
    return rows[0];
  }

  /** 'paused' | 'already' (was paused) | undefined (not found). */
  async pause(o: Owner, id: string, reason: string): Promise<{ state: 'paused'; pausedAt: Date } | { state: 'already' } | undefined> {
    if (!UUID_RE.test(id)) return undefined;
    const rows = await this.sql<{ paused_at: Date }[]>`
      UPDATE schedules SET status = 'PAUSED', paused_at = now(), pause_reason = ${reason}, updated_at = now()
      WHERE id = ${id}::uuid AND user_id IS NOT DISTINCT FROM ${o.userId}::uuid AND status = 'ACTIVE' RETURNING paused_at`;
    if (rows.length) return { state: 'paused', pausedAt: rows[0].paused_at };
    return (await this.get(o, id)) ? { state: 'already' } : undefined;
  }

  /** Resumes a paused schedule with `next(row)` as its next run time. */
  async resume(o: Owner, id: string, next: (r: ScheduleRow) => Date): Promise<{ state: 'resumed'; nextRunAt: Date } | { state: 'active' } | undefined> {
    const cur = await this.get(o, id);
    if (!cur) return undefined;
    if (cur.status !== 'PAUSED') return { state: 'active' };
    const nextRunAt = next(cur);
    const rows = await this.sql<{ next_run_at: Date }[]>`
      UPDATE schedules SET status = 'ACTIVE', next_run_at = ${nextRunAt}, paused_at = NULL, pause_reason = '', updated_at = now()
      WHERE id = ${id}::uuid AND user_id IS NOT DISTINCT FROM ${o.userId}::uuid AND status = 'PAUSED'
        AND cron_expression = ${cur.cron_expression} AND timezone = ${cur.timezone}
      RETURNING next_run_at`;
    if (rows.length) return { state: 'resumed', nextRunAt: rows[0].next_run_at };
    return this.resume(o, id, next);
  }

  async delete(o: Owner, id: string): Promise<boolean> {
    if (!UUID_RE.test(id)) return false;
    const rows = await this.sql`DELETE FROM schedules WHERE id = ${id}::uuid AND user_id IS NOT DISTINCT FROM ${o.userId}::uuid RETURNING id`;
    return rows.length > 0;
  }

  async runs(scheduleId: string, page: number, pageSize: number): Promise<{ rows: RunRow[]; total: number }> {
    const [rows, [{ n }]] = await Promise.all([
      this.sql<RunRow[]>`
        SELECT * FROM schedule_runs WHERE schedule_id = ${scheduleId}::uuid
        ORDER BY triggered_at DESC, id DESC LIMIT ${pageSize} OFFSET ${(page - 1) * pageSize}`,
      this.sql`SELECT count(*)::int AS n FROM schedule_runs WHERE schedule_id = ${scheduleId}::uuid`,
    ]);
    return { rows, total: n as number };
  }
}
