/**
 * Waits for people (plan review, approvals): the SQL of the task_waits table and the wake.
 *
 * A workflow that must wait opens a wait (idempotent: a replay after a crash opens the same
 * one) and passivates; nothing of it stays in any process's memory. A decision is written
 * here first, once (conditional on the wait being pending, so a second decision acts on
 * nothing), and then a wake message (the task's start message again, under a new
 * de-duplication id) puts the workflow back on the work queue, where any worker re-activates
 * it and reads the decision. `due_at` is the wait's durable timer, read by the wait timers of
 * the runtime; a decided wait that its workflow has not consumed is woken again, so a wake
 * lost between the decision and its publish is only late, never lost.
 */
import { randomUUID } from 'node:crypto';
import { subjects, type Bus } from '../bus/index.js';
import { TERMINAL_STATUSES } from '../kernel/index.js';
import type { Sql } from '../store/index.js';
import { startHeaders, startMessage, type QueuedTask, type TaskStart } from './model.js';
import type { TaskStore } from './store.js';
import { closeOpenWaits } from './wait-close.js';

/** pending: waiting for a person; decided: answered (or timed out); closed: the task ended first. */
export type WaitStatus = 'pending' | 'decided' | 'closed';

export interface WaitRow {
  id: string;
  task_id: string;
  wait_key: string;
  kind: string;
  status: WaitStatus;
  user_id: string | null;
  tenant_id: string | null;
  session_id: string | null;
  request: Record<string, unknown>;
  decision: Record<string, unknown> | null;
  decided_by: string | null;
  timed_out: boolean;
  created_at: Date;
  due_at: Date;
  decided_at: Date | null;
  consumed_at: Date | null;
}

export interface OpenWait {
  /** Public id of the wait (an approval_id); defaults to a new UUID. */
  id?: string;
  taskId: string;
  key: string;
  kind: string;
  userId?: string | null;
  tenantId?: string | null;
  sessionId?: string | null;
  request: Record<string, unknown>;
  dueAt: Date;
}

/** How a decision went: `changed` false when the wait was already decided (or never existed). */
export interface Decided {
  changed: boolean;
  row?: WaitRow;
}

const enc = new TextEncoder();
const TERMINAL = new Set<string>(TERMINAL_STATUSES);

/** A wait row read back through to_jsonb: its timestamps are strings there. */
function revive(w: WaitRow): WaitRow {
  const at = (v: Date | string | null) => (v === null ? null : new Date(v));
  return { ...w, created_at: at(w.created_at)!, due_at: at(w.due_at)!, decided_at: at(w.decided_at), consumed_at: at(w.consumed_at) };
}

export class WaitStore {
  constructor(
    private readonly sql: Sql,
    private readonly tasks: TaskStore,
    private readonly bus: Bus,
  ) {}

  /** Opens the wait `key` of a task; a wait opened before (a replay) is returned as it is. */
  async open(w: OpenWait): Promise<WaitRow> {
    const [row] = await this.sql<WaitRow[]>`
      INSERT INTO task_waits (id, task_id, wait_key, kind, user_id, tenant_id, session_id, request, due_at)
      VALUES (${w.id ?? randomUUID()}, ${w.taskId}::uuid, ${w.key}, ${w.kind}, ${w.userId ?? null}, ${w.tenantId ?? null},
              ${w.sessionId ?? null}, ${this.sql.json(w.request as never)}, ${w.dueAt})
      ON CONFLICT (task_id, wait_key) DO NOTHING
      RETURNING *`;
    return row ?? (await this.byKey(w.taskId, w.key))!;
  }

  async byKey(taskId: string, key: string): Promise<WaitRow | undefined> {
    const [row] = await this.sql<WaitRow[]>`SELECT * FROM task_waits WHERE task_id = ${taskId}::uuid AND wait_key = ${key}`;
    return row;
  }

  async byId(id: string): Promise<WaitRow | undefined> {
    const [row] = await this.sql<WaitRow[]>`SELECT * FROM task_waits WHERE id = ${id}`;
    return row;
  }

  /** The task's waits still open (pending), oldest first. */
  async pendingOf(taskId: string): Promise<WaitRow[]> {
    return this.sql<WaitRow[]>`SELECT * FROM task_waits WHERE task_id = ${taskId}::uuid AND status = 'pending' ORDER BY created_at`;
  }

  /** Pending waits of a kind for an owner (optionally one session), oldest first. */
  async pending(kind: string, o: { userId?: string | null; tenantId?: string | null; sessionIds?: string[]; limit?: number }): Promise<WaitRow[]> {
    const limit = o.limit ?? 100;
    return this.sql<WaitRow[]>`
      SELECT * FROM task_waits
      WHERE status = 'pending' AND kind = ${kind}
        AND user_id IS NOT DISTINCT FROM ${o.userId ?? null}::uuid
        AND tenant_id IS NOT DISTINCT FROM ${o.tenantId ?? null}::uuid
        ${o.sessionIds ? this.sql`AND session_id IN ${this.sql(o.sessionIds)}` : this.sql``}
      ORDER BY created_at LIMIT ${limit}`;
  }

  /**
   * Stores a decision, once; then wakes the workflow. A wait already decided is left as it
   * was (`changed` false), so a decision sent twice acts once.
   */
  async decide(id: string, decision: Record<string, unknown>, o: { by?: string; timedOut?: boolean } = {}): Promise<Decided> {
    // One statement: the decision (only while the task has not ended) and the task's row for
    // its wake.
    const [r] = await this.sql<{ wait: WaitRow; task: QueuedTask | null }[]>`
      WITH d AS (
        UPDATE task_waits SET status = 'decided', decision = ${this.sql.json(decision as never)}, decided_by = ${o.by ?? null},
          timed_out = ${o.timedOut ?? false}, decided_at = now(), woken_at = now()
        WHERE id = ${id} AND status = 'pending'
          AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.id = task_waits.task_id AND t.status IN ${this.sql(TERMINAL_STATUSES as unknown as string[])})
        RETURNING *)
      SELECT to_jsonb(d) AS wait, (SELECT to_jsonb(t) FROM tasks t WHERE t.id = d.task_id) AS task FROM d`;
    if (!r) return { changed: false, row: await this.byId(id) };
    const row = revive(r.wait);
    if (r.task) {
      const task = { ...r.task, created_at: new Date(r.task.created_at) };
      await (async () => this.publishWake(task, await this.waitedMs(row.task_id)))().catch(() => {
        /* the wait timers wake decided, unconsumed waits again */
      });
    }
    return { changed: true, row };
  }

  /**
   * The live actor that holds the workflow reads its wait: when decided, the decision is
   * marked consumed (the timers stop waking it; a crash before it is journaled leaves the
   * work-queue message unacked, and its redelivery reads it again) and the task is RUNNING
   * again, in the same statement.
   */
  async take(taskId: string, key: string): Promise<WaitRow | undefined> {
    const [r] = await this.sql<{ wait: WaitRow }[]>`
      WITH w AS (SELECT * FROM task_waits WHERE task_id = ${taskId}::uuid AND wait_key = ${key}),
      -- Data-modifying CTEs run whether or not the SELECT reads them.
      c AS (UPDATE task_waits SET consumed_at = COALESCE(task_waits.consumed_at, now())
            FROM w WHERE task_waits.id = w.id AND w.status <> 'pending' RETURNING task_waits.id),
      r AS (UPDATE tasks SET status = 'TASK_STATUS_RUNNING', updated_at = now()
            FROM w WHERE tasks.id = w.task_id AND w.status = 'decided'
              AND tasks.status NOT IN ${this.sql(TERMINAL_STATUSES as unknown as string[])} RETURNING tasks.id)
      SELECT to_jsonb(w) AS wait FROM w`;
    return r ? revive(r.wait) : undefined;
  }

  /** The task ended: its open waits can no longer be decided, and no decision of it needs a wake. */
  async closeOpen(taskId: string): Promise<void> {
    await closeOpenWaits(this.sql, taskId);
  }

  /** Wakes a task only if it waits for a person (a cancel must reach a passivated workflow). */
  async wakeIfWaiting(taskId: string): Promise<boolean> {
    const [r] = await this.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM task_waits WHERE task_id = ${taskId}::uuid AND status = 'pending'`;
    return r && r.n > 0 ? this.wake(taskId) : false;
  }

  /** Pending waits whose timer is due (oldest first). */
  async due(now: Date, limit = 200): Promise<WaitRow[]> {
    return this.sql<WaitRow[]>`SELECT * FROM task_waits WHERE status = 'pending' AND due_at <= ${now} ORDER BY due_at LIMIT ${limit}`;
  }

  /** Decided waits that no workflow consumed although their wake is older than `before`. */
  async unconsumed(before: Date, limit = 200): Promise<WaitRow[]> {
    return this.sql<WaitRow[]>`
      SELECT * FROM task_waits WHERE status = 'decided' AND consumed_at IS NULL
        AND COALESCE(woken_at, decided_at) < ${before}
      ORDER BY decided_at LIMIT ${limit}`;
  }

  /**
   * Milliseconds the task spent waiting for decisions so far (not counted against its time
   * limit): the union of its decided waits' intervals, so waits open at the same time (parallel
   * agents each asking) count once.
   */
  async waitedMs(taskId: string): Promise<number> {
    const [r] = await this.sql<{ ms: number | null }[]>`
      WITH iv AS (
        SELECT created_at AS s, decided_at AS e FROM task_waits WHERE task_id = ${taskId}::uuid AND decided_at IS NOT NULL),
      marked AS (
        SELECT s, e, CASE WHEN s <= max(e) OVER (ORDER BY s, e ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) THEN 0 ELSE 1 END AS starts FROM iv),
      islands AS (SELECT s, e, sum(starts) OVER (ORDER BY s, e) AS island FROM marked)
      SELECT COALESCE(SUM(EXTRACT(EPOCH FROM (hi - lo)) * 1000), 0)::float8 AS ms
      FROM (SELECT min(s) AS lo, max(e) AS hi FROM islands GROUP BY island) x`;
    return Math.round(Number(r?.ms ?? 0));
  }

  /**
   * Puts the task's start message back on the work queue under a fresh de-duplication id,
   * with the time it waited (its time limit is extended by that much). A task that ended
   * needs no wake; a duplicate wake is harmless (the journal makes it a replay).
   */
  async wake(taskId: string): Promise<boolean> {
    const [row, waited] = await Promise.all([this.tasks.getTask(taskId), this.waitedMs(taskId)]);
    if (!row) return false;
    if (TERMINAL.has(row.status)) {
      await this.closeOpen(taskId);
      return false;
    }
    await this.publishWake(row as unknown as QueuedTask, waited);
    await this.sql`UPDATE task_waits SET woken_at = now() WHERE task_id = ${taskId}::uuid AND status = 'decided' AND consumed_at IS NULL`;
    return true;
  }

  private async publishWake(task: QueuedTask, waitedMs: number): Promise<void> {
    const start: TaskStart = { ...startMessage(task), waited_ms: Math.round(waitedMs) };
    await this.bus.events.publish(subjects.taskStart(task.id, start.priority), enc.encode(JSON.stringify(start)), {
      msgId: `${task.id}:wake:${randomUUID()}`,
      headers: startHeaders(task),
    });
  }
}
