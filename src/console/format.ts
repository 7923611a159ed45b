/** Small display helpers shared by the pages: status and mode names, times, JSON. */

/** TASK_STATUS_RUNNING -> RUNNING, EXECUTION_MODE_SIMPLE -> SIMPLE. */
export function shortName(v: string | undefined): string {
  return (v ?? '').replace(/^(TASK_STATUS_|EXECUTION_MODE_)/, '');
}

export function time(iso: string | null | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

export function json(v: unknown): string {
  return JSON.stringify(v, null, 2);
}

export const TERMINAL = new Set(['COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT']);
