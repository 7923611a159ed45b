/**
 * The task enums, defined once: status names (as stored in `tasks.status` and sent on the
 * wire), execution mode names, the workflow modes a submission may ask for, and model tiers.
 */

export const TASK_STATUSES = [
  'TASK_STATUS_UNSPECIFIED',
  'TASK_STATUS_QUEUED',
  'TASK_STATUS_RUNNING',
  'TASK_STATUS_COMPLETED',
  'TASK_STATUS_FAILED',
  'TASK_STATUS_CANCELLED',
  'TASK_STATUS_TIMEOUT',
  'TASK_STATUS_PAUSED',
] as const;
export type TaskStatusName = (typeof TASK_STATUSES)[number];

/** Statuses a task never leaves. */
export const TERMINAL_STATUSES = ['TASK_STATUS_COMPLETED', 'TASK_STATUS_FAILED', 'TASK_STATUS_CANCELLED', 'TASK_STATUS_TIMEOUT'] as const;
export type TerminalStatus = (typeof TERMINAL_STATUSES)[number];

export const EXECUTION_MODES = ['EXECUTION_MODE_UNSPECIFIED', 'EXECUTION_MODE_SIMPLE', 'EXECUTION_MODE_STANDARD', 'EXECUTION_MODE_COMPLEX'] as const;
export type ExecutionModeName = (typeof EXECUTION_MODES)[number];

/** The workflow modes a submission may request (`mode_name`). */
export const MODES = ['simple', 'standard', 'complex', 'supervisor'] as const;
export type Mode = (typeof MODES)[number];

/** The execution mode recorded for a workflow mode (supervisor runs as complex). */
export const EXECUTION_MODE: Record<Mode, ExecutionModeName> = {
  simple: 'EXECUTION_MODE_SIMPLE',
  standard: 'EXECUTION_MODE_STANDARD',
  complex: 'EXECUTION_MODE_COMPLEX',
  supervisor: 'EXECUTION_MODE_COMPLEX',
};

/** The workflow mode a recorded execution mode re-runs as (a Map: the key comes from a row). */
export const MODE_BY_EXECUTION = new Map<string, Mode>([
  ['EXECUTION_MODE_SIMPLE', 'simple'],
  ['EXECUTION_MODE_STANDARD', 'standard'],
  ['EXECUTION_MODE_COMPLEX', 'complex'],
]);

export const TIERS = ['small', 'medium', 'large'] as const;
export type Tier = (typeof TIERS)[number];
/** A Set, not an object literal: a key from a request must never find a prototype member. */
const TIER_SET = new Set<string>(TIERS);
export const isTier = (s: string): s is Tier => TIER_SET.has(s);
