/**
 * Tasks: the task model, its start message (built once), its SQL (tasks and task_events),
 * and its rules: submission (validation for every entry point, then commit and queue),
 * cancel, pause and resume through the durable control state. Context flags and numbers are
 * read as clients send them ("true", "1", "3"; context-values.ts) and stored normalised.
 */
export {
  conversationHistoryOf,
  MAX_CONVERSATION_HISTORY,
  MAX_STOP_SEQUENCES,
  MAX_TASK_MAX_TOKENS,
  startHeaders,
  startMessage,
  taskModelSettings,
  type ConversationTurn,
  type EventRow,
  type ListTasksQuery,
  type NewTask,
  type QueuedTask,
  type TaskBrief,
  type TaskModelSettings,
  type TaskOutcome,
  type TaskRow,
  type TaskAgent,
  type TaskStart,
} from './model.js';
export { TaskStore, type SessionRef, type SessionRegistry } from './store.js';
export {
  checkSubmission,
  complexityScore,
  detectMode,
  modeForScore,
  priorityOf,
  RESEARCH_ROUNDS,
  RESEARCH_STRATEGIES,
  submitTask,
  type CatalogCheck,
  type ModelChoiceCheck,
  type ResearchOptions,
  type ResearchStrategy,
  type Submission,
  type SubmitDeps,
  type SubmitRequest,
} from './submit.js';
export { enqueueStart, queueUnavailable, REFUSED_RETRY_AFTER_SECONDS, START_PUBLISH_DEADLINE_MS } from './enqueue.js';
export { cancelTask, EMPTY_CONTROL, pauseTask, readControl, resumeTask, updateControl, type ControlState } from './control.js';
export {
  CONTEXT_VALUE_RULES,
  contextBoolean,
  contextInteger,
  contextValue,
  normaliseContext,
  parseBoolean,
  parseInteger,
  parseNumber,
  recognisedNumber,
  type ContextValueRule,
} from './context-values.js';
export { firstGiven, NOT_AVAILABLE_CONTEXT_KEYS, NOT_AVAILABLE_FIELDS, notAvailableField, notAvailableMessage } from './not-available.js';
export { WaitStore, type Decided, type OpenWait, type WaitRow, type WaitStatus } from './waits.js';
