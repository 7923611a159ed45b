/**
 * Sessions and their aggregates, for the owner that asks: list, get, create, rename, delete,
 * and a session's tasks, turns and events. The routes and SessionService map what this
 * returns (camelCase, Dates).
 */
import { randomUUID } from 'node:crypto';
import { UUID_RE, badRequest, conflict, notFound, type Principal } from '../kernel/index.js';
import type { postgres, Sql } from '../store/index.js';
import type { EventRow, TaskStore } from '../tasks/index.js';
import { owner, requireSession, resolveSession } from './lookup.js';
import { ACTIVE_WINDOW_HOURS, sessionName, type Session, type SessionRow, type SessionTask, type SessionTurn } from './model.js';

/** The names tasks may give session `s`: its id, and its external id when it has one. */
const namesOfRow = (s: SessionRow) => (s.external_id ? [s.id, s.external_id] : [s.id]);

interface SummaryRow extends SessionRow {
  total: string;
  task_count: number;
  tokens_used: string;
  cost_usd: number;
  successful_tasks: number;
  failed_tasks: number;
  open_tasks: number;
  last_task_at: Date | null;
  latest_task_query: string | null;
  latest_task_status: string | null;
  first_task_mode: string | null;
  research_strategy: string | null;
  is_research: boolean;
  is_active: boolean;
}

function toSession(r: SummaryRow): Session {
  return {
    id: r.id,
    sessionId: sessionName(r),
    externalId: r.external_id,
    userId: r.user_id,
    tenantId: r.tenant_id,
    title: r.title,
    context: r.context ?? {},
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    lastActivityAt: r.last_task_at && r.last_task_at > r.last_activity_at ? r.last_task_at : r.last_activity_at,
    taskCount: r.task_count,
    tokensUsed: Number(r.tokens_used),
    costUsd: r.cost_usd,
    successfulTasks: r.successful_tasks,
    failedTasks: r.failed_tasks,
    openTasks: r.open_tasks,
    latestTaskQuery: r.latest_task_query,
    latestTaskStatus: r.latest_task_status,
    firstTaskMode: r.first_task_mode,
    researchStrategy: r.research_strategy,
    isResearch: r.is_research,
    isActive: r.is_active,
  };
}

/**
 * Sessions and their aggregates. The list and summary statement joins the session's tasks
 * read-only (counts, tokens, newest and first task) so a page of sessions is one round
 * trip; every other read of tasks goes through TaskStore.
 */
export class Sessions {
  constructor(
    private readonly sql: Sql,
    private readonly tasks: TaskStore,
  ) {}

  /**
   * Sessions matching `where` (a condition on `s`) with the aggregates of their tasks, in one
   * statement. The page is chosen first (ordered by the latest activity, which needs only
   * each session's newest task); the aggregates, the newest and the first task are then read
   * for the page's sessions only. Every task lookup goes through tasks_session_idx
   * (session_id, created_at) for both names of the session.
   */
  private summaries(where: postgres.PendingQuery<postgres.Row[]>, page?: { limit: number; offset: number }) {
    const sql = this.sql;
    const ofSession = sql`t.session_id IN (s.id::text, s.external_id) AND t.user_id IS NOT DISTINCT FROM s.user_id`;
    return sql<SummaryRow[]>`
      WITH pg AS (
        SELECT s.*, la.last_task_at, count(*) OVER () AS total
        FROM sessions s
        LEFT JOIN LATERAL (SELECT max(t.created_at) AS last_task_at FROM tasks t WHERE ${ofSession}) la ON TRUE
        WHERE ${where}
        ORDER BY GREATEST(s.last_activity_at, COALESCE(la.last_task_at, s.last_activity_at)) DESC, s.id
        ${page ? sql`LIMIT ${page.limit} OFFSET ${page.offset}` : sql``}
      )
      SELECT s.*,
        COALESCE(agg.task_count, 0)::int AS task_count,
        COALESCE(agg.tokens_used, 0)::bigint AS tokens_used,
        COALESCE(agg.cost_usd, 0)::float8 AS cost_usd,
        COALESCE(agg.successful, 0)::int AS successful_tasks,
        COALESCE(agg.failed, 0)::int AS failed_tasks,
        COALESCE(agg.open, 0)::int AS open_tasks,
        lt.query AS latest_task_query, lt.status AS latest_task_status,
        ft.mode AS first_task_mode,
        COALESCE(NULLIF(ft.options->>'research_strategy', ''), NULLIF(ft.context->>'research_strategy', '')) AS research_strategy,
        COALESCE(NULLIF(ft.options->>'research_strategy', '') IS NOT NULL OR NULLIF(ft.context->>'research_strategy', '') IS NOT NULL
          OR ft.context->>'force_research' = 'true', false) AS is_research,
        (COALESCE(agg.open, 0) > 0 OR GREATEST(s.last_activity_at, s.last_task_at) > now() - make_interval(hours => ${ACTIVE_WINDOW_HOURS})) AS is_active
      FROM pg s
      LEFT JOIN LATERAL (
        SELECT count(*) AS task_count, sum(t.total_tokens) AS tokens_used, sum(t.cost_usd) AS cost_usd,
          count(*) FILTER (WHERE t.status = 'TASK_STATUS_COMPLETED') AS successful,
          count(*) FILTER (WHERE t.status IN ('TASK_STATUS_FAILED', 'TASK_STATUS_TIMEOUT')) AS failed,
          count(*) FILTER (WHERE t.status IN ('TASK_STATUS_QUEUED', 'TASK_STATUS_RUNNING', 'TASK_STATUS_PAUSED')) AS open
        FROM tasks t WHERE ${ofSession}
      ) agg ON TRUE
      LEFT JOIN LATERAL (
        SELECT t.query, t.status FROM tasks t WHERE ${ofSession} ORDER BY t.created_at DESC, t.id DESC LIMIT 1
      ) lt ON TRUE
      LEFT JOIN LATERAL (
        SELECT t.mode, t.context, t.options FROM tasks t WHERE ${ofSession} ORDER BY t.created_at, t.id LIMIT 1
      ) ft ON TRUE
      ORDER BY GREATEST(s.last_activity_at, COALESCE(s.last_task_at, s.last_activity_at)) DESC, s.id`;
  }

  /** One session (by UUID) with its aggregates. */
  private async summary(id: string): Promise<Session> {
    const [r] = await this.summaries(this.sql`s.id = ${id}::uuid`);
    if (!r) throw notFound('Session not found');
    return toSession(r);
  }

  async list(p: Principal, limit: number, offset: number): Promise<{ sessions: Session[]; total: number }> {
    const sql = this.sql;
    // `=` / IS NULL rather than IS NOT DISTINCT FROM: both can use sessions_owner_activity_idx.
    const u = owner(p);
    const live = u ? sql`s.user_id = ${u}::uuid AND s.deleted_at IS NULL` : sql`s.user_id IS NULL AND s.deleted_at IS NULL`;
    const rows = await this.summaries(live, { limit, offset });
    let total = rows.length ? Number(rows[0].total) : 0;
    if (!rows.length && offset > 0) {
      const [c] = await sql`SELECT count(*)::int AS n FROM sessions WHERE user_id IS NOT DISTINCT FROM ${owner(p)}::uuid AND deleted_at IS NULL`;
      total = c.n as number;
    }
    return { sessions: rows.map(toSession), total };
  }

  /** Explicit creation (tasks create sessions implicitly); 409 when the external id exists. */
  async create(p: Principal, input: { external_id?: string; title?: string }): Promise<Session> {
    const ext = input.external_id?.trim() || null;
    if (ext && (ext.length > 255 || UUID_RE.test(ext))) throw badRequest('external_id must be at most 255 characters and not a UUID');
    const title = (input.title ?? '').trim();
    if (title.length > 255) throw badRequest('title must be at most 255 characters');
    const rows = await this.sql<SessionRow[]>`INSERT INTO sessions (id, external_id, user_id, tenant_id, title)
      VALUES (${randomUUID()}, ${ext}, ${owner(p)}::uuid, ${p.tenantId ?? null}::uuid, ${title}) ON CONFLICT DO NOTHING RETURNING *`;
    if (!rows.length) throw conflict('a session with this external_id already exists');
    return this.summary(rows[0].id);
  }

  async get(p: Principal, idOrExternal: string): Promise<Session> {
    const s = await requireSession(this.sql, idOrExternal, p);
    return this.summary(s.id);
  }

  async updateTitle(p: Principal, idOrExternal: string, body: unknown): Promise<Session> {
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw badRequest('request body must be a JSON object');
    const title = (body as { title?: unknown }).title;
    if (typeof title !== 'string') throw badRequest('title is required');
    const t = title.trim();
    if (!t) throw badRequest('title must not be empty');
    if (t.length > 255) throw badRequest('title must be at most 255 characters');
    const s = await requireSession(this.sql, idOrExternal, p);
    await this.sql`UPDATE sessions SET title = ${t}, updated_at = now() WHERE id = ${s.id}::uuid`;
    return this.summary(s.id);
  }

  /** Soft delete; idempotent (deleting a deleted or unknown session is still 204). */
  async softDelete(p: Principal, idOrExternal: string): Promise<void> {
    const s = await resolveSession(this.sql, idOrExternal, p, { includeDeleted: true });
    if (!s || s.deleted_at) return;
    await this.sql`UPDATE sessions SET deleted_at = now(), updated_at = now() WHERE id = ${s.id}::uuid AND deleted_at IS NULL`;
  }

  /**
   * The session's most recent `limit` tasks (skipping the `offset` newest), oldest first,
   * and how many tasks the session has in all.
   */
  private async recentTasks(s: SessionRow, limit: number, offset: number): Promise<{ tasks: SessionTask[]; total: number }> {
    return this.tasks.sessionTasks(namesOfRow(s), s.user_id, limit, offset);
  }

  /** The conversation: the session's most recent `limit` tasks, oldest first (`sessionId`: sessionName). */
  async history(p: Principal, idOrExternal: string, limit: number): Promise<{ sessionId: string; tasks: SessionTask[]; total: number }> {
    const s = await requireSession(this.sql, idOrExternal, p);
    const { tasks, total } = await this.recentTasks(s, limit, 0);
    return { sessionId: sessionName(s), tasks, total };
  }

  /**
   * Archived events of the session's tasks, grouped by turn (one turn = one task): the
   * `limit` most recent turns after skipping the `offset` newest, oldest first; `total` is
   * the number of turns of the session.
   */
  async events(p: Principal, idOrExternal: string, limit: number, offset = 0): Promise<{ sessionId: string; turns: SessionTurn[]; total: number }> {
    const s = await requireSession(this.sql, idOrExternal, p);
    const { tasks, total } = await this.recentTasks(s, limit, offset);
    const ids = tasks.map((t) => t.id);
    const events = await this.tasks.eventsOfTasks(ids);
    const byTask = new Map<string, EventRow[]>();
    for (const e of events) {
      const list = byTask.get(e.workflow_id) ?? [];
      list.push({ ...e, seq: Number(e.seq) });
      byTask.set(e.workflow_id, list);
    }
    const first = total - offset - tasks.length + 1;
    const turns = tasks.map((t, i) => ({ turn: first + i, task: t, events: byTask.get(t.id) ?? [] }));
    return { sessionId: sessionName(s), turns, total };
  }
}
