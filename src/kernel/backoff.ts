/**
 * One exponential backoff for every retry loop of the service: the ceiling doubles from
 * `baseMs` per attempt up to `capMs`; jitter spreads retries of many callers apart
 * ('full': anywhere in [0, ceiling], 'equal': in [ceiling/2, ceiling], 'none': the ceiling);
 * a server's Retry-After is a floor the delay never goes under.
 */
export interface Backoff {
  /** First ceiling (ms); doubled per attempt. */
  baseMs: number;
  /** Largest ceiling (ms). */
  capMs: number;
  jitter?: 'full' | 'equal' | 'none';
}

/** Delay before retry number `attempt` (1-based), at least `retryAfterMs` when given. */
export function backoffDelay(b: Backoff, attempt: number, retryAfterMs?: number, random: () => number = Math.random): number {
  const ceiling = Math.min(b.capMs, b.baseMs * 2 ** Math.max(0, attempt - 1));
  const jitter = b.jitter ?? 'full';
  const delay = jitter === 'none' ? ceiling : jitter === 'equal' ? ceiling / 2 + random() * (ceiling / 2) : random() * ceiling;
  return Math.round(Math.max(retryAfterMs ?? 0, delay));
}
