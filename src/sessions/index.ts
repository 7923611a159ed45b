/**
 * Sessions: a conversation of tasks. A session is addressed by its UUID or by its external
 * id (unique per owner). Sessions are created implicitly by the first task that names them
 * (the registry, called by TaskStore before it inserts a batch of tasks) and soft-deleted.
 * Every read is scoped to the owner: the anonymous development principal owns the sessions
 * created without a user.
 *
 * Tasks reference a session by the string the client used (tasks.session_id); a session's
 * tasks are those whose session_id is its id or its external id, with the same owner. A
 * session reports the name its client gave it as its session id (sessionName), its UUID as id.
 *
 * This folder returns domain objects (camelCase, Dates); the HTTP routes and SessionService
 * map them. history.ts decides which earlier turns a new task of a session sees.
 */
export { ACTIVE_WINDOW_HOURS, conversation, type ConversationMessage, type Session, type SessionRow, type SessionTask, type SessionTurn } from './model.js';
export { requireSession, resolveSession } from './lookup.js';
export { sessionRegistry, type SessionDirectory } from './registry.js';
export { Sessions } from './sessions.js';
export {
  applyWindow,
  loadTurns,
  PRESETS,
  summaryPrompt,
  turnsToMessages,
  windowSettings,
  withSummary,
  type Turn,
  type Windowed,
  type WindowSettings,
} from './history.js';
