/**
 * Fixed-window counters shared by every process: one KV key per (name, window start),
 * incremented with compare-and-set so concurrent processes never lose a count. Used by the
 * gateway's request rate limits and the tools' per-minute limits (bucket RATELIMIT, whose
 * TTL removes old windows).
 */
import type { KV } from '@nats-io/kv';

const enc = new TextEncoder();
const dec = new TextDecoder();

export interface WindowCount {
  /** This call's position in the window (1 = first). */
  count: number;
  /** Unix ms when the window ends. */
  resetAtMs: number;
}

/**
 * Counts `by` events (default one) of `name` in the current window of `windowMs`. Undefined when heavy
 * contention on the key exhausted the attempts (callers treat that as allowed). Throws when
 * the bucket cannot be reached.
 */
export async function countInWindow(kv: KV, name: string, windowMs: number, nowMs = Date.now(), by = 1): Promise<WindowCount | undefined> {
  const start = Math.floor(nowMs / windowMs) * windowMs;
  const key = `${name}.${start}`;
  for (let attempt = 0; attempt < 8; attempt++) {
    const e = await kv.get(key);
    let n: number;
    let ok: boolean;
    if (!e || e.operation !== 'PUT') {
      n = by;
      ok = await kv.create(key, enc.encode(String(by))).then(
        () => true,
        () => false,
      );
    } else {
      n = Number(dec.decode(e.value)) + by;
      ok = await kv.update(key, enc.encode(String(n)), e.revision).then(
        () => true,
        () => false,
      );
    }
    if (ok) return { count: n, resetAtMs: start + windowMs };
  }
  return undefined;
}
