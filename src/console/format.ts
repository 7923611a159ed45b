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

/** The objects of the list under `key` in a task's metadata that have a string `field` (anything else left out). */
export function metadataRecords(metadata: Record<string, unknown> | undefined, key: string, field: string): Record<string, unknown>[] {
  const list = metadata?.[key];
  if (!Array.isArray(list)) return [];
  return list.filter((r): r is Record<string, unknown> => !!r && typeof r === 'object' && typeof (r as Record<string, unknown>)[field] === 'string');
}

export const TERMINAL = new Set(['COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT']);

/** A duration: 850 ms, 12.3 s, 4 min 5 s ('' when unknown). */
export function ms(v: number | undefined): string {
  if (v === undefined || !Number.isFinite(v)) return '';
  if (v < 1000) return `${Math.round(v)} ms`;
  if (v < 60_000) return `${(v / 1000).toFixed(1)} s`;
  const s = Math.round(v / 1000);
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}

/** A cost in US dollars with as many decimals as it has (2 to 6): $0.0015; `zero` for 0 ('' when unknown). */
export function usd(v: number | undefined, zero = '$0'): string {
  if (v === undefined || !Number.isFinite(v)) return '';
  if (v === 0) return zero;
  return `$${v.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 6 })}`;
}

/** The phase a workflow event puts a task in, as the live and swarm views show it. */
export const PHASES: Record<string, string> = {
  WORKFLOW_STARTED: 'running',
  WORKFLOW_PAUSING: 'pausing',
  WORKFLOW_PAUSED: 'paused',
  WORKFLOW_RESUMED: 'running',
  WORKFLOW_CANCELLING: 'cancelling',
  WORKFLOW_CANCELLED: 'cancelled',
  WORKFLOW_COMPLETED: 'completed',
  WORKFLOW_FAILED: 'failed',
};
