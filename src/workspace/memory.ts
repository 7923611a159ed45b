/**
 * Per-user memory: files an agent keeps for its user across sessions, beside the session
 * workspaces, under `<workspace root>/memory/<user UUID>/`.
 *
 * Decisions:
 * - The folder is named by the user's id, which the service itself issued (a UUID, from the
 *   authenticated principal or the task's owner), never by anything a client or a model
 *   wrote; an id that is not a UUID is refused (no path component is built from it). It is
 *   written in lower case, so one user has one folder however the id was spelled.
 * - `memory` is not a UUID, so it can never be a session's folder (those are session UUIDs).
 * - Inside, every rule of the session workspace applies unchanged, since it is the same
 *   `Workspace` (workspace.ts): `..`, absolute paths and NUL bytes → 400
 *   `invalid path: traversal not allowed`, links leading out of the user's folder blocked,
 *   files over 100 MB refused with 413, a user who has no folder yet lists `/` as empty.
 * - No user (an anonymous caller, a task without an owner): the file tools refuse the memory
 *   scope with NO_USER_MESSAGE; the gateway lists an empty memory (an anonymous caller can
 *   have none: nothing can write it).
 */
import { join } from 'node:path';
import { UUID_RE, badRequest } from '../kernel/index.js';
import type { WorkspaceOptions } from './model.js';
import { Workspace } from './workspace.js';

/** The folder under the workspace root that holds every user's memory. */
export const MEMORY_DIR = 'memory';
export const NO_USER_MESSAGE = 'memory needs a user: this call has no authenticated user, so there is no memory to use';

/** The memory of every user: a workspace whose folders are user ids, under `<root>/memory`. */
export function memoryWorkspace(root: string, opts: WorkspaceOptions = {}): Workspace {
  return new Workspace(join(root, MEMORY_DIR), opts);
}

/** The memory folder's name for `userId`; none (no user) → 400 NO_USER_MESSAGE. */
export function memoryFolderOf(userId: string | null | undefined): string {
  if (!userId) throw badRequest(NO_USER_MESSAGE);
  if (!UUID_RE.test(userId)) throw badRequest('memory needs a user: the user id is not a UUID');
  return userId.toLowerCase();
}
