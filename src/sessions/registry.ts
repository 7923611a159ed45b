import { randomUUID } from 'node:crypto';
import { UUID_RE } from '../kernel/index.js';
import { rowInserter, type postgres, type Sql } from '../store/index.js';
import type { SessionRef, SessionRegistry } from '../tasks/index.js';

/**
 * The registry tasks/ calls: registers the sessions a batch of new tasks names (a UUID is
 * the session's id, anything else its external id), and resolves a session's names.
 */
export interface SessionDirectory extends SessionRegistry {
  /** The UUID of the owner's session known by `sessionId` (its id or external id), if the owner has one. */
  ownedSessionId(sessionId: string, owner: string | null): Promise<string | undefined>;
  /**
   * Registers one new session under `ref.sessionId` (a UUID is its id, anything else its
   * external id) as its owner's: its UUID, or undefined when the owner has one by that name.
   */
  createSession(ref: SessionRef): Promise<string | undefined>;
  /** Records a compressed history summary in the session's context (`history_summary`). */
  recordHistorySummary(sessionId: string, owner: string | null, record: Record<string, unknown>): Promise<void>;
}

interface NewSession {
  id: string;
  external_id: string | null;
  user_id: string | null;
  tenant_id: string | null;
  created_at: Date;
  updated_at: Date;
  last_activity_at: Date;
}

const insertSessions = rowInserter<NewSession>(
  'sessions',
  [
    ['id', 'uuid'],
    ['external_id', 'text'],
    ['user_id', 'uuid'],
    ['tenant_id', 'uuid'],
    ['created_at', 'timestamptz'],
    ['updated_at', 'timestamptz'],
    ['last_activity_at', 'timestamptz'],
  ],
  'ON CONFLICT DO NOTHING',
);

/** A session's row: a UUID name is its id, anything else its external id (with a new id). */
function newSession(r: SessionRef): NewSession {
  const isId = UUID_RE.test(r.sessionId);
  return {
    id: isId ? r.sessionId : randomUUID(),
    external_id: isId ? null : r.sessionId,
    user_id: r.userId,
    tenant_id: r.tenantId,
    created_at: r.at,
    updated_at: r.at,
    last_activity_at: r.at,
  };
}

export function sessionRegistry(sql: Sql): SessionDirectory {
  return {
    async recordHistorySummary(sessionId, owner, record) {
      await sql`UPDATE sessions SET context = context || ${sql.json({ history_summary: record } as postgres.JSONValue)}, updated_at = now()
        WHERE (id::text = ${sessionId} OR external_id = ${sessionId}) AND user_id IS NOT DISTINCT FROM ${owner}::uuid`;
    },
    async ensureSessions(refs: SessionRef[]) {
      if (refs.length) await insertSessions(sql, refs.map(newSession));
    },
    async createSession(r) {
      const n = newSession(r);
      const rows = await sql<{ id: string }[]>`INSERT INTO sessions (id, external_id, user_id, tenant_id, created_at, updated_at, last_activity_at)
        VALUES (${n.id}::uuid, ${n.external_id}, ${n.user_id}::uuid, ${n.tenant_id}::uuid, ${n.created_at}, ${n.updated_at}, ${n.last_activity_at})
        ON CONFLICT DO NOTHING RETURNING id::text`;
      return rows[0]?.id;
    },
    async ownedSessionId(sessionId, owner) {
      const rows = UUID_RE.test(sessionId)
        ? await sql<{ id: string }[]>`SELECT id::text FROM sessions WHERE (id = ${sessionId}::uuid OR external_id = ${sessionId})
            AND user_id IS NOT DISTINCT FROM ${owner}::uuid AND deleted_at IS NULL ORDER BY (id = ${sessionId}::uuid) DESC LIMIT 1`
        : await sql<
            { id: string }[]
          >`SELECT id::text FROM sessions WHERE external_id = ${sessionId} AND user_id IS NOT DISTINCT FROM ${owner}::uuid AND deleted_at IS NULL LIMIT 1`;
      return rows[0]?.id;
    },
    async namesOf(sessionId: string, owner: string | null) {
      const other = UUID_RE.test(sessionId)
        ? await sql<
            { n: string }[]
          >`SELECT external_id AS n FROM sessions WHERE id = ${sessionId}::uuid AND external_id IS NOT NULL AND user_id IS NOT DISTINCT FROM ${owner}::uuid`
        : await sql<{ n: string }[]>`SELECT id::text AS n FROM sessions WHERE external_id = ${sessionId} AND user_id IS NOT DISTINCT FROM ${owner}::uuid`;
      return [sessionId, ...other.map((r) => r.n)];
    },
  };
}
