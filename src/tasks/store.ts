/**
 * The SQL of the tasks and task_events tables, and nothing else's.
 *
 * Task inserts are coalesced into multi-row INSERTs of fixed text (one round trip for every
 * task submitted in the same tick; store/insert-rows.ts) and each caller is resolved only
 * after its row is committed; the sessions a batch names are registered first through the
 * session registry (sessions/ owns that table). A terminal status is written once: the update
 * is conditional on the row not being terminal already.
 */
import { TERMINAL_STATUSES } from '../kernel/index.js';
import { countTaskFinished } from '../metrics/index.js';
import { Batcher, rowInserter, type Sql, type postgres } from '../store/index.js';
import type { EventRow, ListTasksQuery, NewTask, QueuedTask, TaskBrief, TaskOutcome, TaskRow } from './model.js';
import { closeOpenWaits } from './wait-close.js';

/** Events a statement carries at most (a bound on one message, not a parameter limit). */
const EVENT_ROWS_PER_INSERT = 1000;

const insertTasks = rowInserter<QueuedTask & { status: string; updated_at: Date }>(
  'tasks',
  [
    ['id', 'uuid'],
    ['session_id', 'text'],
    ['user_id', 'uuid'],
    ['tenant_id', 'uuid'],
    ['query', 'text'],
    ['context', 'jsonb'],
    ['options', 'jsonb'],
    ['mode', 'text'],
    ['status', 'text'],
    ['trace_id', 'text'],
    ['created_at', 'timestamptz'],
    ['updated_at', 'timestamptz'],
  ],
  'ON CONFLICT (id) DO NOTHING',
);

const insertEventRows = rowInserter<EventRow>(
  'task_events',
  [
    ['workflow_id', 'uuid'],
    ['seq', 'bigint'],
    ['type', 'text'],
    ['agent_id', 'text'],
    ['message', 'text'],
    ['payload', 'jsonb'],
    ['ts', 'timestamptz'],
    ['stream_id', 'text'],
  ],
  'ON CONFLICT DO NOTHING',
);

/** A session a batch of new tasks names, as the task gives it (UUID id or external id). */
export interface SessionRef {
  sessionId: string;
  userId: string | null;
  tenantId: string | null;
  at: Date;
}

/**
 * What tasks need from sessions (implemented by sessions/, wired by the app): register the
 * sessions new tasks name, and the names a session is known by (its id and external id).
 */
export interface SessionRegistry {
  ensureSessions(refs: SessionRef[]): Promise<void>;
  namesOf(sessionId: string, owner: string | null): Promise<string[]>;
}

export class TaskStore {
  private readonly taskInserts: Batcher<QueuedTask>;
  constructor(
    readonly sql: Sql,
    private readonly sessions: SessionRegistry,
  ) {
    this.taskInserts = new Batcher((items) => this.insertTaskRows(items));
  }

  async ping(): Promise<void> {
    await this.sql`SELECT 1`;
  }

  insertTask(t: NewTask): Promise<void> {
    return this.taskInserts.push({ ...t, user_id: t.user_id ?? null, tenant_id: t.tenant_id ?? null, trace_id: t.trace_id ?? null });
  }

  private async insertTaskRows(items: QueuedTask[]): Promise<void> {
    const rows = items.map((t) => ({ ...t, context: t.context ?? {}, options: t.options ?? {}, status: 'TASK_STATUS_QUEUED', updated_at: t.created_at }));
    // The sessions the batch names exist before its tasks (a session id that is a UUID is the
    // session's id, anything else its external id).
    const seen = new Set<string>();
    const refs: SessionRef[] = [];
    for (const t of items) {
      const k = `${t.user_id ?? ''}\0${t.session_id}`;
      if (seen.has(k)) continue;
      seen.add(k);
      refs.push({ sessionId: t.session_id, userId: t.user_id, tenantId: t.tenant_id, at: t.created_at });
    }
    // No foreign key ties tasks to sessions: both statements run at once (one round trip).
    await Promise.all([this.sessions.ensureSessions(refs), insertTasks(this.sql, rows)]);
  }

  async getTask(id: string): Promise<TaskRow | undefined> {
    const rows = await this.sql<TaskRow[]>`SELECT * FROM tasks WHERE id = ${id}::uuid`;
    return rows[0];
  }

  async getTasks(ids: string[]): Promise<TaskRow[]> {
    return this.sql<TaskRow[]>`SELECT * FROM tasks WHERE id IN ${this.sql(ids)}`;
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

  /**
   * Writes the terminal state once; returns false if the task already ended. `closeWaits`: in the
   * same statement, its waits for people are closed (wait-close.ts; one round trip per finished
   * task instead of two).
   */
  async finishTask(id: string, o: TaskOutcome, at: Date, opts: { closeWaits?: boolean } = {}): Promise<boolean> {
    const closeWaits = opts.closeWaits ? this.sql`WITH closed AS (${closeOpenWaits(this.sql, id)}) ` : this.sql``;
    const r = await this.sql<{ mode: string; created_at: Date }[]>`${closeWaits}UPDATE tasks SET
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
      WHERE id = ${id}::uuid AND status NOT IN ${this.sql(TERMINAL_STATUSES as unknown as string[])} RETURNING mode, created_at`;
    if (r.count === 1) countTaskFinished(r[0].mode, o.status, (at.getTime() - r[0].created_at.getTime()) / 1000);
    return r.count === 1;
  }

  async listTasks(q: ListTasksQuery): Promise<{ rows: TaskRow[]; total: number }> {
    const sql = this.sql;
    const conds = [sql`TRUE`];
    if (q.sessionId) conds.push(sql`session_id IN ${sql(await this.sessions.namesOf(q.sessionId, q.userId ?? null))}`);
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

  /** QUEUED tasks older than `before` (oldest first): the reconciler checks their start messages. */
  staleQueued(before: Date, limit = 500): Promise<QueuedTask[]> {
    return this.sql<QueuedTask[]>`
      SELECT id, session_id, user_id, tenant_id, query, context, options, mode, trace_id, created_at FROM tasks
      WHERE status = 'TASK_STATUS_QUEUED' AND created_at < ${before}
      ORDER BY created_at LIMIT ${limit}`;
  }

  /**
   * The `limit` tasks of a session (known by `names`, same owner) submitted before `taskId`,
   * oldest first: a new task's conversation history.
   */
  async earlierTurns(
    taskId: string,
    names: string[],
    owner: string | null,
    limit: number,
  ): Promise<{ task_id: string; query: string; result: string | null }[]> {
    const rows = await this.sql<{ task_id: string; query: string; result: string | null; created_at: Date }[]>`
      SELECT * FROM (
        SELECT t.id AS task_id, t.query, t.result, t.created_at FROM tasks t
        WHERE t.session_id IN ${this.sql(names)}
          AND t.user_id IS NOT DISTINCT FROM ${owner}::uuid
          AND t.id <> ${taskId}::uuid
          AND t.created_at <= (SELECT created_at FROM tasks WHERE id = ${taskId}::uuid)
        ORDER BY t.created_at DESC LIMIT ${limit}
      ) x ORDER BY created_at`;
    return rows.map(({ task_id, query, result }) => ({ task_id, query, result }));
  }

  /**
   * A session's most recent `limit` tasks (skipping the `offset` newest), oldest first, and how
   * many tasks it has in all. `names`: the session's id and external id; same owner only.
   */
  async sessionTasks(names: string[], owner: string | null, limit: number, offset: number): Promise<{ tasks: TaskBrief[]; total: number }> {
    const sql = this.sql;
    const ofSession = sql`t.session_id IN ${sql(names)} AND t.user_id IS NOT DISTINCT FROM ${owner}::uuid`;
    const rows = await sql<(TaskBrief & { total: string })[]>`
      SELECT * FROM (
        SELECT t.id, t.query, t.result, t.status, t.mode, t.error, t.total_tokens AS "totalTokens", t.cost_usd::float8 AS "costUsd",
          t.created_at AS "createdAt", t.started_at AS "startedAt", t.completed_at AS "completedAt", count(*) OVER () AS total
        FROM tasks t WHERE ${ofSession} ORDER BY t.created_at DESC, t.id DESC LIMIT ${limit} OFFSET ${offset}
      ) x ORDER BY "createdAt", id`;
    let total = rows.length ? Number(rows[0].total) : 0;
    if (!rows.length && offset > 0) {
      const [c] = await sql`SELECT count(*)::int AS n FROM tasks t WHERE ${ofSession}`;
      total = c.n as number;
    }
    return { tasks: rows.map(({ total: _total, ...t }) => t), total };
  }

  /** The archived events of `ids`, by task then seq. */
  async eventsOfTasks(ids: string[]): Promise<EventRow[]> {
    if (!ids.length) return [];
    const rows = await this.sql<EventRow[]>`SELECT workflow_id, seq, type, agent_id, message, payload, ts, stream_id
      FROM task_events WHERE workflow_id IN ${this.sql(ids)} ORDER BY workflow_id, seq`;
    return rows.map((r) => ({ ...r, seq: Number(r.seq) }));
  }

  async insertEvents(events: EventRow[]): Promise<void> {
    for (let i = 0; i < events.length; i += EVENT_ROWS_PER_INSERT) await insertEventRows(this.sql, events.slice(i, i + EVENT_ROWS_PER_INSERT));
  }

  async listEvents(workflowId: string, afterSeq = 0, limit = 1000): Promise<EventRow[]> {
    const rows = await this.sql<EventRow[]>`SELECT workflow_id, seq, type, agent_id, message, payload, ts, stream_id
      FROM task_events WHERE workflow_id = ${workflowId}::uuid AND seq > ${afterSeq} ORDER BY seq LIMIT ${limit}`;
    return rows.map((r) => ({ ...r, seq: Number(r.seq) }));
  }

  /**
   * Every archived event of a workflow as the timeline needs it (src/runtime/timeline.ts), in
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
