/**
 * Sessions: a conversation of tasks. A session is addressed by its UUID or by its external
 * id (unique per owner). Sessions are created implicitly by the first task that names them
 * (see Store.insertTaskRows) and soft-deleted. Every read here is scoped to the owner: the
 * anonymous development principal owns the sessions created without a user.
 *
 * Tasks reference a session by the string the client used (tasks.session_id); a session's
 * tasks are those whose session_id is its id or its external id, with the same owner.
 */
import { randomUUID } from 'node:crypto';
import { badRequest, conflict, notFound } from '../errors/index.js';
import type { Principal } from '../gateway/auth.js';
import { UUID_RE, type Sql } from '../store/index.js';

export interface SessionRow {
  id: string;
  external_id: string | null;
  user_id: string | null;
  tenant_id: string | null;
  title: string;
  context: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
  last_activity_at: Date;
  deleted_at: Date | null;
}

const owner = (p: Principal) => p.userId ?? null;

/**
 * The caller's live session named by `idOrExternal` (UUID or external id), or undefined.
 * Another owner's session is indistinguishable from a missing one.
 */
export async function resolveSession(sql: Sql, idOrExternal: string, p: Principal, opts: { includeDeleted?: boolean } = {}): Promise<SessionRow | undefined> {
  if (!idOrExternal || idOrExternal.length > 255) return undefined;
  const u = owner(p);
  const rows = UUID_RE.test(idOrExternal)
    ? await sql<SessionRow[]>`SELECT * FROM sessions WHERE (id = ${idOrExternal}::uuid OR external_id = ${idOrExternal})
        AND user_id IS NOT DISTINCT FROM ${u}::uuid ORDER BY (id = ${idOrExternal}::uuid) DESC LIMIT 1`
    : await sql<SessionRow[]>`SELECT * FROM sessions WHERE external_id = ${idOrExternal} AND user_id IS NOT DISTINCT FROM ${u}::uuid LIMIT 1`;
  const s = rows[0];
  if (!s || (s.deleted_at && !opts.includeDeleted)) return undefined;
  return s;
}

export async function requireSession(sql: Sql, idOrExternal: string, p: Principal): Promise<SessionRow> {
  const s = await resolveSession(sql, idOrExternal, p);
  if (!s) throw notFound('Session not found');
  return s;
}

export function sessionJson(s: SessionRow, extra: { task_count?: number; total_tokens?: number; total_cost_usd?: number } = {}) {
  return {
    session_id: s.id,
    id: s.id,
    external_id: s.external_id,
    title: s.title,
    created_at: s.created_at.toISOString(),
    updated_at: s.updated_at.toISOString(),
    last_activity_at: s.last_activity_at.toISOString(),
    ...extra,
  };
}

/** SQL condition: tasks of session `s` (by id or external id, same owner). */
const tasksOf = (sql: Sql, s: SessionRow) =>
  sql`(t.session_id = ${s.id} OR (${s.external_id}::text IS NOT NULL AND t.session_id = ${s.external_id}::text)) AND t.user_id IS NOT DISTINCT FROM ${s.user_id}::uuid`;

export class Sessions {
  constructor(private readonly sql: Sql) {}

  async list(p: Principal, limit: number, offset: number) {
    const sql = this.sql;
    const rows = await sql<(SessionRow & { total: string; task_count: number; total_tokens: number; total_cost_usd: number; last_task_at: Date | null })[]>`
      SELECT s.*, count(*) OVER () AS total,
        COALESCE(agg.task_count, 0)::int AS task_count, COALESCE(agg.total_tokens, 0)::int AS total_tokens, COALESCE(agg.total_cost, 0)::float8 AS total_cost_usd,
        agg.last_task_at
      FROM sessions s
      LEFT JOIN LATERAL (
        SELECT count(*) AS task_count, sum(t.total_tokens) AS total_tokens, sum(t.cost_usd) AS total_cost, max(t.created_at) AS last_task_at FROM tasks t
        WHERE (t.session_id = s.id::text OR (s.external_id IS NOT NULL AND t.session_id = s.external_id)) AND t.user_id IS NOT DISTINCT FROM s.user_id
      ) agg ON TRUE
      WHERE s.user_id IS NOT DISTINCT FROM ${owner(p)}::uuid AND s.deleted_at IS NULL
      ORDER BY GREATEST(s.last_activity_at, COALESCE(agg.last_task_at, s.last_activity_at)) DESC, s.id
      LIMIT ${limit} OFFSET ${offset}`;
    let total = rows.length ? Number(rows[0].total) : 0;
    if (!rows.length && offset > 0) {
      const [c] = await sql`SELECT count(*)::int AS n FROM sessions WHERE user_id IS NOT DISTINCT FROM ${owner(p)}::uuid AND deleted_at IS NULL`;
      total = c.n as number;
    }
    return {
      sessions: rows.map((r) =>
        sessionJson(
          { ...r, last_activity_at: r.last_task_at && r.last_task_at > r.last_activity_at ? r.last_task_at : r.last_activity_at },
          { task_count: r.task_count, total_tokens: r.total_tokens, total_cost_usd: r.total_cost_usd },
        ),
      ),
      total_count: total,
      limit,
      offset,
    };
  }

  /** Explicit creation (tasks create sessions implicitly); 409 when the external id exists. */
  async create(p: Principal, input: { external_id?: string; title?: string }) {
    const ext = input.external_id?.trim() || null;
    if (ext && (ext.length > 255 || UUID_RE.test(ext))) throw badRequest('external_id must be at most 255 characters and not a UUID');
    const title = (input.title ?? '').trim();
    if (title.length > 255) throw badRequest('title must be at most 255 characters');
    const rows = await this.sql<SessionRow[]>`INSERT INTO sessions (id, external_id, user_id, tenant_id, title)
      VALUES (${randomUUID()}, ${ext}, ${owner(p)}::uuid, ${p.tenantId ?? null}::uuid, ${title}) ON CONFLICT DO NOTHING RETURNING *`;
    if (!rows.length) throw conflict('a session with this external_id already exists');
    return { ...sessionJson(rows[0], { task_count: 0, total_tokens: 0, total_cost_usd: 0 }), context: rows[0].context };
  }

  async get(p: Principal, idOrExternal: string) {
    const s = await requireSession(this.sql, idOrExternal, p);
    const [agg] = await this.sql<{ task_count: number; total_tokens: number; total_cost_usd: number }[]>`
      SELECT count(*)::int AS task_count, COALESCE(sum(t.total_tokens), 0)::int AS total_tokens, COALESCE(sum(t.cost_usd), 0)::float8 AS total_cost_usd
      FROM tasks t WHERE ${tasksOf(this.sql, s)}`;
    return { ...sessionJson(s, agg), context: s.context };
  }

  async updateTitle(p: Principal, idOrExternal: string, body: unknown) {
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw badRequest('request body must be a JSON object');
    const title = (body as { title?: unknown }).title;
    if (typeof title !== 'string') throw badRequest('title is required');
    const t = title.trim();
    if (!t) throw badRequest('title must not be empty');
    if (t.length > 255) throw badRequest('title must be at most 255 characters');
    const s = await requireSession(this.sql, idOrExternal, p);
    const [row] = await this.sql<SessionRow[]>`UPDATE sessions SET title = ${t}, updated_at = now() WHERE id = ${s.id}::uuid RETURNING *`;
    return sessionJson(row);
  }

  /** Soft delete; idempotent (deleting a deleted or unknown session is still 204). */
  async softDelete(p: Principal, idOrExternal: string): Promise<void> {
    const s = await resolveSession(this.sql, idOrExternal, p, { includeDeleted: true });
    if (!s || s.deleted_at) return;
    await this.sql`UPDATE sessions SET deleted_at = now(), updated_at = now() WHERE id = ${s.id}::uuid AND deleted_at IS NULL`;
  }

  /** The conversation: each task as a user message and, when it has one, the assistant reply. */
  async history(p: Principal, idOrExternal: string, limit: number) {
    const s = await requireSession(this.sql, idOrExternal, p);
    const rows = await this.sql<{ id: string; query: string; result: string | null; status: string; created_at: Date; completed_at: Date | null; total_tokens: number }[]>`
      SELECT * FROM (
        SELECT t.id, t.query, t.result, t.status, t.created_at, t.completed_at, t.total_tokens FROM tasks t
        WHERE ${tasksOf(this.sql, s)} ORDER BY t.created_at DESC LIMIT ${limit}
      ) x ORDER BY created_at`;
    const messages: { role: 'user' | 'assistant'; content: string; task_id: string; timestamp: string; status?: string; tokens?: number }[] = [];
    for (const r of rows) {
      messages.push({ role: 'user', content: r.query, task_id: r.id, timestamp: r.created_at.toISOString() });
      if (r.result !== null) {
        messages.push({ role: 'assistant', content: r.result, task_id: r.id, timestamp: (r.completed_at ?? r.created_at).toISOString(), status: r.status, tokens: r.total_tokens });
      }
    }
    return { session_id: s.id, messages, count: messages.length };
  }

  /** Archived events of the session's tasks, grouped by turn (one turn = one task). */
  async events(p: Principal, idOrExternal: string, limitTurns: number) {
    const s = await requireSession(this.sql, idOrExternal, p);
    const tasks = await this.sql<{ id: string; query: string; status: string; created_at: Date }[]>`
      SELECT * FROM (SELECT t.id, t.query, t.status, t.created_at FROM tasks t WHERE ${tasksOf(this.sql, s)} ORDER BY t.created_at DESC LIMIT ${limitTurns}) x ORDER BY created_at`;
    const ids = tasks.map((t) => t.id);
    const events = ids.length
      ? await this.sql<{ workflow_id: string; seq: string; type: string; agent_id: string; message: string; payload: unknown; ts: Date; stream_id: string }[]>`
          SELECT * FROM task_events WHERE workflow_id IN ${this.sql(ids)} ORDER BY workflow_id, seq`
      : [];
    const byTask = new Map<string, unknown[]>();
    for (const e of events) {
      const list = byTask.get(e.workflow_id) ?? [];
      list.push({ workflow_id: e.workflow_id, seq: Number(e.seq), stream_id: e.stream_id, type: e.type, agent_id: e.agent_id, message: e.message, timestamp: e.ts.toISOString(), ...(e.payload ? { payload: e.payload } : {}) });
      byTask.set(e.workflow_id, list);
    }
    const turns = tasks.map((t, i) => ({ turn: i + 1, task_id: t.id, query: t.query, status: t.status, timestamp: t.created_at.toISOString(), events: byTask.get(t.id) ?? [] }));
    return { session_id: s.id, turns, count: turns.length };
  }
}

