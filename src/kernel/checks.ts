/**
 * One readiness check, timed: its outcome and latency, as the probes answer them (the gateway's
 * /readiness and the health port of processes without a gateway); a check still running after
 * 2 s has failed.
 */
import { setTimeout as sleep } from 'node:timers/promises';

export interface CheckResult {
  ok: boolean;
  latency_ms: number;
  error?: string;
}

export async function timedCheck(fn: () => Promise<unknown>): Promise<CheckResult> {
  const t0 = performance.now();
  const done = new AbortController();
  try {
    await Promise.race([fn(), sleep(2000, undefined, { signal: done.signal }).then(() => Promise.reject(new Error('timeout after 2s')))]);
    return { ok: true, latency_ms: +(performance.now() - t0).toFixed(2) };
  } catch (err) {
    return { ok: false, latency_ms: +(performance.now() - t0).toFixed(2), error: (err as Error).message };
  } finally {
    done.abort();
  }
}
