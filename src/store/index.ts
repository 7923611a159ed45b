/**
 * Postgres store: the source of truth for tasks and archived events.
 *
 * Guarantees: migrations are plain SQL files applied in order under an advisory lock, so any
 * number of processes may start at once. Task inserts are coalesced into multi-row INSERTs
 * (one round trip for every task submitted in the same tick) and each caller is resolved only
 * after its row is committed. A terminal status is written once: the update is conditional on
 * the row not being terminal already.
 *
 * The same code runs against a PostgreSQL server and against embedded PGlite (served on a
 * local socket), which allows one connection at a time.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { TERMINAL_STATUSES, UUID_RE, type Logger } from '../kernel/index.js';

export type Sql = postgres.Sql;

/**
 * A subquery of the names a session is known by: the given one and its other name (the
 * external id when given the UUID, or the reverse), for `tasks.session_id IN (...)`. Tasks
 * keep whichever name the client used. Both lookups go through an index.
 */
export function sessionNames(sql: Sql, sessionId: string, owner: string | null) {
  const alias = UUID_RE.test(sessionId)
    ? sql`SELECT s.external_id FROM sessions s WHERE s.id = ${sessionId}::uuid AND s.external_id IS NOT NULL AND s.user_id IS NOT DISTINCT FROM ${owner}::uuid`
    : sql`SELECT s.id::text FROM sessions s WHERE s.external_id = ${sessionId} AND s.user_id IS NOT DISTINCT FROM ${owner}::uuid`;
  return sql`SELECT ${sessionId}::text UNION ALL ${alias}`;
}

export interface NewTask {
  id: string;
  sessionId: string;
  userId?: string | null;
  tenantId?: string | null;
  query: string;
  context: Record<string, unknown>;
  options: Record<string, unknown>;
  mode: string;
  traceId?: string | null;
  createdAt: Date;
}

export interface TaskRow {
  id: string;
  session_id: string;
  user_id: string | null;
  tenant_id: string | null;
  query: string;
  context: Record<string, unknown>;
  options: Record<string, unknown>;
  mode: string;
  status: string;
  result: string | null;
  metadata: Record<string, unknown>;
  error: string;
  model_used: string;
  provider: string;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  cost_usd: number;
  trace_id: string | null;
  created_at: Date;
  updated_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
}

export interface TaskOutcome {
  status: (typeof TERMINAL_STATUSES)[number];
  result?: string | null;
  error?: string;
  metadata?: Record<string, unknown>;
  modelUsed?: string;
  provider?: string;
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  costUsd?: number;
}

export interface EventRow {
  workflow_id: string;
  seq: number;
  type: string;
  agent_id: string;
  message: string;
  payload: unknown;
  ts: Date;
  stream_id: string;
}

export interface ListTasksQuery {
  limit: number;
  offset: number;
  sessionId?: string;
  status?: string;
  userId?: string;
  tenantId?: string;
}

const EVENT_ROWS_PER_INSERT = 1000;

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'migrations');

export function connectSql(url: string, opts: { max: number; log?: Logger }): Sql {
  return postgres(url, {
    max: opts.max,
    onnotice: () => {},
    idle_timeout: 0,
    connect_timeout: 10,
    // jsonb values are passed through sql.json(); results parse automatically.
    types: {},
  });
}

export async function migrate(sql: Sql, log?: Logger): Promise<string[]> {
  const files = readdirSync(MIGRATIONS_DIR)
    .filter((f) => f.endsWith('.sql'))
    .sort();
  const applied: string[] = [];
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(727274)`;
    await tx`CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`;
    const done = new Set((await tx`SELECT name FROM schema_migrations`).map((r) => r.name as string));
    for (const f of files) {
      if (done.has(f)) continue;
      await tx.unsafe(readFileSync(join(MIGRATIONS_DIR, f), 'utf8'));
      await tx`INSERT INTO schema_migrations (name) VALUES (${f})`;
      applied.push(f);
    }
  });
  if (applied.length) log?.info({ applied }, 'database migrations applied');
  return applied;
}

/** SQLSTATE classes 22 (data exception) and 23 (integrity constraint): caused by one row's values. */
const isDataError = (err: unknown) => /^2[23]/.test(String((err as { code?: unknown })?.code ?? ''));

/**
 * Coalesces calls made in the same tick into one multi-row statement. When a batch fails on a
 * row's data (e.g. an invalid uuid), its items are retried one by one so that only the bad
 * item's caller gets the error, not every caller that happened to share its tick.
 */
class Batcher<T> {
  private pending: { item: T; resolve: () => void; reject: (e: unknown) => void }[] = [];
  private scheduled = false;
  constructor(
    private readonly flushFn: (items: T[]) => Promise<void>,
    private readonly maxBatch = 500,
  ) {}
  push(item: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }
  private async flush(): Promise<void> {
    this.scheduled = false;
    while (this.pending.length) {
      const batch = this.pending.splice(0, this.maxBatch);
      try {
        await this.flushFn(batch.map((b) => b.item));
        batch.forEach((b) => b.resolve());
      } catch (err) {
        if (batch.length > 1 && isDataError(err)) {
          await Promise.all(batch.map((b) => this.flushFn([b.item]).then(b.resolve, b.reject)));
        } else {
          batch.forEach((b) => b.reject(err));
        }
      }
    }
  }
}

export class Store {
  private readonly taskInserts: Batcher<NewTask>;
  constructor(readonly sql: Sql) {
    this.taskInserts = new Batcher((items) => this.insertTaskRows(items));
  }

  async ping(): Promise<void> {
    await this.sql`SELECT 1`;
  }

  insertTask(t: NewTask): Promise<void> {
    return this.taskInserts.push(t);
  }

  private async insertTaskRows(items: NewTask[]): Promise<void> {
    const rows = items.map((t) => ({
      id: t.id,
      session_id: t.sessionId,
      user_id: t.userId ?? null,
      tenant_id: t.tenantId ?? null,
      query: t.query,
      context: this.sql.json((t.context ?? {}) as postgres.JSONValue),
      options: this.sql.json((t.options ?? {}) as postgres.JSONValue),
      mode: t.mode,
      status: 'TASK_STATUS_QUEUED',
      trace_id: t.traceId ?? null,
      created_at: t.createdAt,
      updated_at: t.createdAt,
    }));
    const cols = ['id', 'session_id', 'user_id', 'tenant_id', 'query', 'context', 'options', 'mode', 'status', 'trace_id', 'created_at', 'updated_at'] as const;
    const params: unknown[] = [];
    const tuples = rows.map((r) => {
      const ph = cols.map((c) => {
        const v = r[c]; // jsonb params are sql.json() parameters: typed jsonb, serialised once by the driver
        params.push(v);
        const i = params.length;
        return c === 'context' || c === 'options'
          ? `$${i}::jsonb`
          : c === 'id' || c === 'user_id' || c === 'tenant_id'
            ? `$${i}::uuid`
            : c === 'created_at' || c === 'updated_at'
              ? `$${i}::timestamptz`
              : `$${i}`;
      });
      return `(${ph.join(',')})`;
    });
    // The tasks' sessions are created in the same statement (a data-modifying CTE): a session
    // id that is a UUID is the session's id, anything else is its external id.
    const seen = new Set<string>();
    const sessionTuples: string[] = [];
    for (const t of items) {
      const k = `${t.userId ?? ''}\0${t.sessionId}`;
      if (seen.has(k)) continue;
      seen.add(k);
      const isId = UUID_RE.test(t.sessionId);
      params.push(isId ? t.sessionId : randomUUID(), isId ? null : t.sessionId, t.userId ?? null, t.tenantId ?? null, t.createdAt);
      const b = params.length - 5;
      sessionTuples.push(
        `($${b + 1}::uuid,$${b + 2}::text,$${b + 3}::uuid,$${b + 4}::uuid,$${b + 5}::timestamptz,$${b + 5}::timestamptz,$${b + 5}::timestamptz)`,
      );
    }
    await this.sql.unsafe(
      `WITH s AS (INSERT INTO sessions (id, external_id, user_id, tenant_id, created_at, updated_at, last_activity_at) VALUES ${sessionTuples.join(',')} ON CONFLICT DO NOTHING)
       INSERT INTO tasks (${cols.join(',')}) VALUES ${tuples.join(',')} ON CONFLICT (id) DO NOTHING`,
      params as postgres.ParameterOrJSON<never>[],
    );
  }

  async getTask(id: string): Promise<TaskRow | undefined> {
    const rows = await this.sql<TaskRow[]>`SELECT * FROM tasks WHERE id = ${id}::uuid`;
    return rows[0];
  }

  /**
   * A worker's claim on a task it is about to run: QUEUED becomes RUNNING. Returns the
   * task's status afterwards, or undefined when the row does not exist: the submission was
   * withdrawn (refused while the bus was down) and must never run.
   */
  async claimStart(id: string, at: Date): Promise<string | undefined> {
    const [r] = await this.sql<{ status: string | null }[]>`
      WITH u AS (
        UPDATE tasks SET status = 'TASK_STATUS_RUNNING', started_at = COALESCE(started_at, ${at}), updated_at = ${at}
        WHERE id = ${id}::uuid AND status = 'TASK_STATUS_QUEUED' RETURNING status)
      SELECT COALESCE((SELECT status FROM u), (SELECT status FROM tasks WHERE id = ${id}::uuid)) AS status`;
    return r?.status ?? undefined;
  }

  /**
   * Takes back a submission whose start message could not be published: deleted only while
   * still QUEUED, so it either never runs (true) or a worker already claimed it (false).
   */
  async withdrawQueued(id: string): Promise<boolean> {
    const r = await this.sql`DELETE FROM tasks WHERE id = ${id}::uuid AND status = 'TASK_STATUS_QUEUED'`;
    return r.count === 1;
  }

  async setStatus(id: string, status: string, at: Date): Promise<boolean> {
    const r = await this.sql`UPDATE tasks SET status = ${status}, updated_at = ${at}
      WHERE id = ${id}::uuid AND status NOT IN ${this.sql(TERMINAL_STATUSES as unknown as string[])}`;
    return r.count === 1;
  }

  /** Writes the terminal state once; returns false if the task already ended. */
  async finishTask(id: string, o: TaskOutcome, at: Date): Promise<boolean> {
    const r = await this.sql`UPDATE tasks SET
        status = ${o.status},
        result = ${o.result ?? null},
        error = ${o.error ?? ''},
        metadata = ${this.sql.json((o.metadata ?? {}) as postgres.JSONValue)},
        model_used = ${o.modelUsed ?? ''},
        provider = ${o.provider ?? ''},
        input_tokens = ${o.inputTokens ?? 0},
        output_tokens = ${o.outputTokens ?? 0},
        total_tokens = ${o.totalTokens ?? 0},
        cost_usd = ${o.costUsd ?? 0},
        updated_at = ${at},
        completed_at = ${at}
      WHERE id = ${id}::uuid AND status NOT IN ${this.sql(TERMINAL_STATUSES as unknown as string[])}`;
    return r.count === 1;
  }

  async listTasks(q: ListTasksQuery): Promise<{ rows: TaskRow[]; total: number }> {
    const sql = this.sql;
    const conds = [sql`TRUE`];
    if (q.sessionId) conds.push(sql`session_id IN (${sessionNames(sql, q.sessionId, q.userId ?? null)})`);
    if (q.status) conds.push(sql`status = ${q.status}`);
    if (q.userId) conds.push(sql`user_id = ${q.userId}::uuid`);
    if (q.tenantId) conds.push(sql`tenant_id = ${q.tenantId}::uuid`);
    const where = conds.reduce((acc, c) => sql`${acc} AND ${c}`);
    const withTotal = await sql<(TaskRow & { total: string })[]>`
      SELECT *, count(*) OVER () AS total FROM tasks WHERE ${where}
      ORDER BY created_at DESC, id DESC LIMIT ${q.limit} OFFSET ${q.offset}`;
    let total = withTotal.length ? Number(withTotal[0].total) : 0;
    if (!withTotal.length && q.offset > 0) {
      const [c] = await sql`SELECT count(*)::int AS n FROM tasks WHERE ${where}`;
      total = c.n as number;
    }
    const rows = withTotal.map(({ total: _total, ...row }) => row as TaskRow);
    return { rows, total };
  }

  async insertEvents(events: EventRow[]): Promise<void> {
    // 8 parameters a row; a statement takes at most 65535 parameters.
    for (let i = 0; i < events.length; i += EVENT_ROWS_PER_INSERT) await this.insertEventRows(events.slice(i, i + EVENT_ROWS_PER_INSERT));
  }

  private async insertEventRows(events: EventRow[]): Promise<void> {
    if (!events.length) return;
    const params: unknown[] = [];
    const tuples = events.map((e) => {
      // sql.json: the driver would otherwise type a boolean (or an array of them) as bool[] and the
      // ::jsonb cast fails; typed as jsonb, every JSON value is serialised once.
      params.push(
        e.workflow_id,
        e.seq,
        e.type,
        e.agent_id,
        e.message,
        e.payload == null ? null : this.sql.json(e.payload as postgres.JSONValue),
        e.ts,
        e.stream_id,
      );
      const b = params.length - 8;
      return `($${b + 1}::uuid,$${b + 2}::bigint,$${b + 3},$${b + 4},$${b + 5},$${b + 6}::jsonb,$${b + 7}::timestamptz,$${b + 8})`;
    });
    await this.sql.unsafe(
      `INSERT INTO task_events (workflow_id, seq, type, agent_id, message, payload, ts, stream_id) VALUES ${tuples.join(',')} ON CONFLICT DO NOTHING`,
      params as postgres.ParameterOrJSON<never>[],
    );
  }

  async listEvents(workflowId: string, afterSeq = 0, limit = 1000): Promise<EventRow[]> {
    const rows = await this.sql<EventRow[]>`SELECT workflow_id, seq, type, agent_id, message, payload, ts, stream_id
      FROM task_events WHERE workflow_id = ${workflowId}::uuid AND seq > ${afterSeq} ORDER BY seq LIMIT ${limit}`;
    return rows.map((r) => ({ ...r, seq: Number(r.seq) }));
  }

  /**
   * Every archived event of a workflow as the timeline needs it (src/actors/timeline.ts), in
   * seq order: no message or payload, only the step an ERROR_RECOVERY names. One primary-key
   * range scan.
   */
  async timelineEvents(workflowId: string): Promise<{ seq: number; type: string; agentId: string; at: Date; step: string | null }[]> {
    const rows = await this.sql<{ seq: string; type: string; agent_id: string; ts: Date; step: string | null }[]>`
      SELECT seq, type, agent_id, ts, CASE WHEN type = 'ERROR_RECOVERY' THEN payload->>'step' END AS step
      FROM task_events WHERE workflow_id = ${workflowId}::uuid ORDER BY seq`;
    return rows.map((r) => ({ seq: Number(r.seq), type: r.type, agentId: r.agent_id, at: r.ts, step: r.step }));
  }

  async close(): Promise<void> {
    await this.sql.end({ timeout: 5 });
  }
}
