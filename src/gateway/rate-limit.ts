/**
 * Request rate limits shared by every gateway process: fixed windows counted in the NATS KV
 * bucket RATELIMIT (key = principal + limiter + window start), incremented with
 * compare-and-set so concurrent gateways never lose a count. Applies to authenticated
 * principals (limits are per API key / user); the anonymous development principal
 * (GATEWAY_SKIP_AUTH=1) is not limited.
 *
 * If the bucket cannot be reached the request is allowed (fail open) and the failure logged:
 * a NATS hiccup must not take the API down.
 */
import { createHash } from 'node:crypto';
import type { KV } from '@nats-io/kv';
import { countInWindow } from '../bus/index.js';
import { AppError, Code, type Logger, type Principal } from '../kernel/index.js';

export interface Limit {
  name: string;
  requests: number;
  windowSeconds: number;
}

export interface RateDecision {
  limit: number;
  remaining: number;
  /** Unix seconds when the window resets. */
  reset: number;
  allowed: boolean;
  retryAfter: number;
}

export class RateLimitedError extends AppError {
  override name = 'RateLimitedError';
  constructor(readonly decision: RateDecision) {
    super(Code.ResourceExhausted, 'Rate limit exceeded');
  }
}

export function rateHeaders(d: RateDecision): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(d.limit),
    'X-RateLimit-Remaining': String(Math.max(0, d.remaining)),
    'X-RateLimit-Reset': String(d.reset),
    ...(d.allowed ? {} : { 'Retry-After': String(d.retryAfter) }),
  };
}

export class RateLimiter {
  /** `connected`: false while NATS is unreachable; requests are then allowed without waiting. */
  constructor(
    private readonly kv: KV,
    private readonly log: Logger,
    private readonly connected: () => boolean = () => true,
  ) {}

  /** Counts one request against `limit`; undefined when the principal is not limited. */
  async hit(p: Principal, limit: Limit, nowMs = Date.now()): Promise<RateDecision | undefined> {
    if (p.anonymous || !this.connected()) return undefined;
    const windowMs = limit.windowSeconds * 1000;
    const reset = Math.ceil((Math.floor(nowMs / windowMs) * windowMs + windowMs) / 1000);
    const who = createHash('sha256').update(p.key).digest('hex').slice(0, 32);
    let counted;
    try {
      counted = await countInWindow(this.kv, `${limit.name}.${who}`, windowMs, nowMs);
    } catch (err) {
      this.log.warn({ err }, 'rate limit bucket unavailable; request allowed');
      return undefined;
    }
    if (counted === undefined) return undefined; // heavy contention on one key: allow
    const count = counted.count;
    const allowed = count <= limit.requests;
    return { limit: limit.requests, remaining: limit.requests - count, reset, allowed, retryAfter: Math.max(1, reset - Math.floor(nowMs / 1000)) };
  }
}
