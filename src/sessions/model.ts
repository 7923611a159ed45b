/** What a session is (the row and the domain object) and the conversation its tasks make. */
import type { EventRow, TaskBrief } from '../tasks/index.js';

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

/**
 * The name clients know a session by: the external id when a client named it (a task's
 * `session_id` that is not a UUID), else its id. Both stay valid as path ids.
 */
export const sessionName = (s: Pick<SessionRow, 'id' | 'external_id'>): string => s.external_id ?? s.id;

/** A session with the aggregates of its tasks. */
export interface Session {
  id: string;
  /** sessionName: what the client that named the session calls it. */
  sessionId: string;
  externalId: string | null;
  userId: string | null;
  tenantId: string | null;
  title: string;
  context: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
  /** The later of the session's own activity and its newest task's submission. */
  lastActivityAt: Date;
  taskCount: number;
  tokensUsed: number;
  costUsd: number;
  /** Tasks COMPLETED. */
  successfulTasks: number;
  /** Tasks FAILED or TIMEOUT (cancelled ones are neither). */
  failedTasks: number;
  /** Tasks QUEUED, RUNNING or PAUSED. */
  openTasks: number;
  latestTaskQuery: string | null;
  latestTaskStatus: string | null;
  /** Execution mode of the session's first task (EXECUTION_MODE_*). */
  firstTaskMode: string | null;
  /** research_strategy of the first task (its options or context), if any. */
  researchStrategy: string | null;
  /** The first task asked for research (a research_strategy or context.force_research). */
  isResearch: boolean;
  /** A task is still open, or there was activity in the last 24 hours. */
  isActive: boolean;
}

/** One task of a session, as its history shows it. */
export type SessionTask = TaskBrief;

/** One message of the conversation: a task's query (user) and its result (assistant). */
export interface ConversationMessage {
  role: 'user' | 'assistant';
  content: string;
  taskId: string;
  at: Date;
  status?: string;
  tokens?: number;
}

export interface SessionTurn {
  /** Position in the session: 1 is its first task. */
  turn: number;
  task: SessionTask;
  events: EventRow[];
}

/** An active session: one with an open task, or activity within this window. */
export const ACTIVE_WINDOW_HOURS = 24;

/** The conversation of `tasks` (oldest first): each query, and each result that exists. */
export function conversation(tasks: SessionTask[]): ConversationMessage[] {
  const out: ConversationMessage[] = [];
  for (const t of tasks) {
    out.push({ role: 'user', content: t.query, taskId: t.id, at: t.createdAt });
    if (t.result !== null)
      out.push({ role: 'assistant', content: t.result, taskId: t.id, at: t.completedAt ?? t.createdAt, status: t.status, tokens: t.totalTokens });
  }
  return out;
}
