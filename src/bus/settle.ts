/**
 * A process's start-up JetStream requests (the manager, streams, consumers, buckets), run again
 * while they fail for a passing reason, so that a process started while a cluster elects leaders
 * or right after a node died comes up instead of exiting on the first timeout.
 */
import { backoffDelay, type Logger } from '../kernel/index.js';
/** How long a start waits for JetStream to settle (a cluster electing leaders, a node just lost). */
const SETTLE_MS = 120_000;
const SETTLE_BACKOFF = { baseMs: 250, capMs: 5_000, jitter: 'equal' as const };

/**
 * Runs the start-up's JetStream requests again while they fail for a passing reason: a
 * request timed out or found no responder, or the cluster has no leader yet (a node was just
 * killed, R3 streams are being placed on a loaded machine). Other errors (a stream's settings
 * refused, permissions) fail at once; after SETTLE_MS the last error is thrown.
 */
export async function untilSettled<T>(log: Pick<Logger, 'warn'>, fn: () => Promise<T>, settleMs = SETTLE_MS): Promise<T> {
  const deadline = Date.now() + settleMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (!passing(err) || Date.now() >= deadline) throw err;
      const ms = backoffDelay(SETTLE_BACKOFF, attempt);
      log.warn({ err: (err as Error).message, attempt, retryInMs: ms }, 'JetStream not ready at start-up; trying again');
      await new Promise((r) => setTimeout(r, ms));
    }
  }
}

export function passing(err: unknown): boolean {
  const e = err as { name?: string; message?: string; code?: string | number };
  if (e?.name === 'TimeoutError' || e?.name === 'NoRespondersError') return true;
  return /timeout|timed out|no responders|temporarily unavailable|no suitable peers|leader|not current|503/i.test(String(e?.message ?? ''));
}
