/**
 * The session a completion runs in. X-Session-ID as given when the caller owns it or nobody
 * does (then it is created); another owner's id, or a deleted session, is a collision: a new
 * session `oai-<uuid>` is made. Without X-Session-ID: `oai-<hash>` of `user`, else of the first
 * system and first user message. X-Session-ID and X-Service-Session-ID (the session's UUID)
 * come back on creation and collision only.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Principal } from '../../kernel/index.js';
import type { Req } from '../http.js';
import type { SessionLookup } from '../route-deps.js';
import { OpenAiError } from './errors.js';
import type { CompletionRequest } from './request.js';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const visible = (v: string) => [...v].every((ch) => ch.charCodeAt(0) >= 0x20 && ch.charCodeAt(0) !== 0x7f);

/**
 * The session id of a request and the headers that announce a new one (creation or
 * collision). Without sessions (a gateway without a database) the id is used as is, without headers.
 */
export async function sessionOf(
  sessions: SessionLookup | undefined,
  p: Principal,
  req: Req,
  r: CompletionRequest,
): Promise<{ id: string; headers: Record<string, string> }> {
  const given = req.headers['x-session-id'];
  if (given !== undefined && (given.length === 0 || given.length > 255 || !visible(given))) {
    throw new OpenAiError(400, 'X-Session-ID must be 1 to 255 visible characters');
  }
  const wanted = given ?? `oai-${sha(r.user ? `user\0${r.user}` : `conversation\0${r.systemPrompt ?? ''}\0${r.firstUser}`).slice(0, 32)}`;
  if (!sessions) return { id: wanted, headers: {} };
  const ref = (id: string) => ({ sessionId: id, userId: p.userId ?? null, tenantId: p.tenantId ?? null, at: new Date() });
  const announce = (id: string, uuid: string) => ({ id, headers: { 'X-Session-ID': id, 'X-Service-Session-ID': uuid } });
  const found = await sessions.resolve(wanted, p, { includeDeleted: true });
  if (found && !found.deleted_at) return { id: wanted, headers: {} };
  if (!found) {
    // Created as the caller's; a request of theirs that created it meanwhile shares it.
    const made = await sessions.create(ref(wanted));
    if (made) return announce(wanted, made);
    const mine = await sessions.resolve(wanted, p);
    if (mine) return announce(wanted, mine.id);
  }
  const fresh = `oai-${randomUUID()}`;
  return announce(fresh, (await sessions.create(ref(fresh))) ?? '');
}
