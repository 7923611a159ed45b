/**
 * Task metrics: submissions, terminal states and their duration by mode, and the workflow
 * events workers publish. Modes are the recorded execution modes in lower case (`simple`,
 * `standard`, `complex`; a supervisor task is recorded as complex), statuses the terminal ones
 * (`completed`, `failed`, `cancelled`, `timeout`): a fixed, small set of label values.
 */
import { MODE_BY_EXECUTION } from '../kernel/index.js';
import { counter, histogram } from './registry.js';

const submitted = counter('taskorch_tasks_submitted_total', 'Tasks accepted: committed QUEUED and their start message stored, by mode.', ['mode']);
const finished = counter('taskorch_tasks_finished_total', 'Tasks that reached a terminal status, by mode and status.', ['mode', 'status']);
const duration = histogram(
  'taskorch_task_duration_seconds',
  'Time from submission to the terminal status (queue wait included), by mode.',
  ['mode'],
  [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600],
);
const published = counter('taskorch_events_published_total', 'Workflow events stored in JetStream by the workers of this process, by event type.', ['type']);

const modeLabel = (executionMode: string) => MODE_BY_EXECUTION.get(executionMode) ?? 'unspecified';

/** A task accepted (its execution mode as recorded, e.g. `EXECUTION_MODE_SIMPLE`). */
export function countTaskSubmitted(executionMode: string): void {
  submitted.inc({ mode: modeLabel(executionMode) });
}

/** A task's terminal status written (`TASK_STATUS_*`), `seconds` after it was submitted. */
export function countTaskFinished(executionMode: string, status: string, seconds: number): void {
  const mode = modeLabel(executionMode);
  finished.inc({ mode, status: status.replace(/^TASK_STATUS_/, '').toLowerCase() });
  duration.observe({ mode }, Math.max(0, seconds));
}

/** One workflow event acknowledged by JetStream. */
export function countEventPublished(type: string): void {
  published.inc({ type });
}
