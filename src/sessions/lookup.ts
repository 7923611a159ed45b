/**
 * Finding the caller's session by the name a client uses (UUID or external id). Every read
 * is scoped to the owner: the anonymous development principal owns the sessions created
 * without a user.
 */
import { UUID_RE, notFound, type Principal } from '../kernel/index.js';
import type { Sql } from '../store/index.js';
import type { SessionRow } from './model.js';

/** The owner column's value for a principal (null: the anonymous development principal). */
export const owner = (p: Principal) => p.userId ?? null;

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
