/**
 * The statement that closes a finished task's waits for people: open ones can no longer be
 * decided, decided ones need no wake. One fragment for WaitStore.closeOpen and for
 * TaskStore.finishTask, which runs it in the same statement as the task's terminal state.
 */
import type { Sql } from '../store/index.js';

export const closeOpenWaits = (sql: Sql, taskId: string) => sql`UPDATE task_waits SET
    status = CASE WHEN status = 'pending' THEN 'closed' ELSE status END,
    decided_at = COALESCE(decided_at, now()), consumed_at = COALESCE(consumed_at, now())
  WHERE task_id = ${taskId}::uuid AND (status = 'pending' OR consumed_at IS NULL)`;
