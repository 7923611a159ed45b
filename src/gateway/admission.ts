/**
 * Admission: what a request passes before a handler runs. Authentication (the Authenticator
 * from auth/: API keys, JWTs, or the anonymous development principal), the per-key rate limit
 * and the burst limit on the task list (counters in NATS KV, shared by every gateway), and the
 * Idempotency-Key cache for task submission (NATS KV, one entry per key, claimed atomically so
 * concurrent requests with the same key get one task and the same reply).
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import type { Bus } from '../bus/index.js';
import { AppError, Code, badRequest, unavailable, type Logger, type Principal } from '../kernel/index.js';
import { createAuthenticator, type AuthService, type Authenticator } from '../auth/index.js';
import type { Reply, Req } from './http.js';
import { RateLimitedError, RateLimiter, rateHeaders, type Limit } from './rate-limit.js';

export interface AdmissionConfig {
  skipAuth: boolean;
  rateLimitRequests: number;
  rateLimitWindowSeconds: number;
  taskListBurstPerSecond: number;
}

export class Admission {
  /** Credentials to a Principal; the stream endpoints call it directly (their replies are not JSON). */
  readonly auth: Authenticator;
  readonly idempotency: Idempotency;
  private readonly limiter: RateLimiter;
  private readonly limits: { perKey: Limit; burst: Limit };

  constructor(cfg: AdmissionConfig, deps: { bus: Bus; log: Logger; authService?: AuthService }) {
    this.auth = createAuthenticator({ skipAuth: cfg.skipAuth, verifier: deps.authService });
    this.limiter = new RateLimiter(deps.bus.kv.ratelimit, deps.log, () => deps.bus.connected);
    this.limits = {
      perKey: { name: 'key', requests: cfg.rateLimitRequests, windowSeconds: cfg.rateLimitWindowSeconds },
      burst: { name: 'tasklist', requests: cfg.taskListBurstPerSecond, windowSeconds: 1 },
    };
    this.idempotency = new Idempotency(deps.bus, deps.log);
  }

  /**
   * Authenticates and counts the request against the per-key limit (and the burst limit
   * where asked); returns the principal and the X-RateLimit-* headers for the reply.
   */
  async admit(req: Req, o: { burst?: boolean; allowQueryKey?: boolean } = {}): Promise<{ p: Principal; headers: Record<string, string> }> {
    const p = await this.auth.authenticate({ headers: req.headers, query: req.query, allowQueryKey: o.allowQueryKey });
    const headers: Record<string, string> = {};
    if (p.anonymous) return { p, headers };
    if (o.burst) {
      const b = await this.limiter.hit(p, this.limits.burst);
      if (b && !b.allowed) throw new RateLimitedError(b);
    }
    const d = await this.limiter.hit(p, this.limits.perKey);
    if (d) {
      if (!d.allowed) throw new RateLimitedError(d);
      Object.assign(headers, rateHeaders(d));
    }
    return { p, headers };
  }

  /** Counts an authenticated stream request against the per-key limit (no headers: streams write their own). */
  async limitStream(p: Principal): Promise<void> {
    const d = await this.limiter.hit(p, this.limits.perKey);
    if (d && !d.allowed) throw new RateLimitedError(d);
  }
}

const enc = new TextEncoder();
const dec = new TextDecoder();
const PENDING = '"__pending__"';

/**
 * How long a pending mark holds its key unless its holder renews it. The holder renews it
 * every PENDING_RENEW_MS while its request runs, so only a holder that died (a killed gateway)
 * lets it lapse, and a retry then takes the key over instead of waiting for the bucket's TTL.
 */
export const PENDING_LEASE_MS = 5_000;
const PENDING_RENEW_MS = 1_500;
/** How long a request that finds the key held waits for the holder's reply. */
const AWAIT_REPLY_MS = 10_000;

const isWrongRevision = (err: unknown) => err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamWrongLastSequence;

/**
 * The Idempotency-Key cache: the key is per principal and per endpoint (a hash of both and the
 * header); the first request claims it (a KV create, atomic) with a pending mark, runs, and
 * stores its reply; a request that finds a reply gets it back with `Idempotency-Replayed:
 * true`; one that finds a live mark waits up to 10 s for the reply. A failed request releases
 * its claim. The mark is a lease (its age is the KV entry's server time, renewed by
 * re-writing it): a mark older than PENDING_LEASE_MS belongs to a request whose process died,
 * and the next request takes it over (a compare-and-set on its revision). Entries expire with
 * the bucket's TTL (IDEMPOTENCY_TTL_SECONDS).
 */
export class Idempotency {
  /** The renewal timers of the marks this process holds, by KV key. */
  private readonly held = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly bus: Bus,
    private readonly log: Logger,
  ) {}

  /** The cache key for this request's Idempotency-Key header, if it has one (400 when malformed). */
  keyOf(req: Req, p: Principal, scope: string): { idemKey?: string; kvKey?: string } {
    const idemKey = req.headers['idempotency-key'];
    if (idemKey !== undefined && (idemKey.length === 0 || idemKey.length > 255)) throw badRequest('Idempotency-Key must be 1 to 255 characters');
    const kvKey = idemKey ? createHash('sha256').update(`${p.key}\0${scope}\0${idemKey}`).digest('hex') : undefined;
    return { idemKey, kvKey };
  }

  /** The stored reply (marked replayed); waits when a live request holds the key; undefined when there is none (or its holder died). */
  async cachedReply(kvKey: string): Promise<Reply | undefined> {
    const e = await this.entry(kvKey);
    if (!e) return undefined;
    if (e.reply) return e.reply;
    return e.stale ? undefined : this.awaitReply(kvKey);
  }

  /**
   * Claims the key atomically (or takes over a lapsed mark): false when a live request holds
   * it (then `awaitReply`); 503 with Retry-After `retryAfterSeconds` when the store is unreachable.
   */
  async claim(kvKey: string, retryAfterSeconds: number): Promise<boolean> {
    const kv = this.bus.kv.idempotency;
    const unreachable = (err: unknown) =>
      unavailable('Service temporarily unavailable: the idempotency store is unreachable; retry later', err, retryAfterSeconds);
    let revision: number;
    try {
      revision = await kv.create(kvKey, enc.encode(PENDING));
    } catch (err) {
      if (!isWrongRevision(err)) throw unreachable(err);
      const e = await this.entry(kvKey);
      if (!e?.stale) return false;
      try {
        revision = await kv.update(kvKey, enc.encode(PENDING), e.revision);
      } catch (err2) {
        if (isWrongRevision(err2)) return false; // another retry took it over first
        throw unreachable(err2);
      }
      this.log.warn({ idempotency_key: kvKey }, 'took over an idempotency key whose holder stopped renewing it');
    }
    this.hold(kvKey, revision);
    return true;
  }

  /** Stores the reply for later requests with the same key (a failed write is logged, not fatal). */
  async store(kvKey: string, reply: Reply): Promise<void> {
    this.unhold(kvKey);
    await this.bus.kv.idempotency.put(kvKey, enc.encode(JSON.stringify(reply))).catch((err) => this.log.warn({ err }, 'idempotency cache write failed'));
  }

  /** Releases the claim of a request that failed, so a retry runs again. */
  async release(kvKey: string): Promise<void> {
    this.unhold(kvKey);
    await this.bus.kv.idempotency.delete(kvKey).catch(() => {});
  }

  /**
   * Another request holds the key: wait (up to 10 s) for its reply. Its failure or death is
   * 503 with Retry-After (a retry runs the request); still running after the wait, 409 with
   * Retry-After.
   */
  async awaitReply(kvKey: string): Promise<Reply> {
    const end = Date.now() + AWAIT_REPLY_MS;
    while (Date.now() < end) {
      await sleep(20);
      const e = await this.entry(kvKey);
      if (e?.reply) return e.reply;
      if (!e || e.stale) throw new AppError(Code.Unavailable, 'A request with the same Idempotency-Key did not complete; retry', { retryable: true });
    }
    throw new AppError(Code.Aborted, 'A request with the same Idempotency-Key is in progress; retry', { retryAfter: Math.ceil(PENDING_LEASE_MS / 1000) });
  }

  /** The key's entry: its reply (marked replayed), or a pending mark and whether it lapsed; undefined when absent or unreadable. */
  private async entry(kvKey: string): Promise<{ reply?: Reply; stale: boolean; revision: number } | undefined> {
    const e = await this.bus.kv.idempotency.get(kvKey).catch(() => null);
    if (!e || e.operation !== 'PUT' || !e.value.length) return undefined;
    const text = dec.decode(e.value);
    if (text === PENDING) return { stale: Date.now() - e.created.getTime() > PENDING_LEASE_MS, revision: e.revision };
    const reply = JSON.parse(text) as Reply;
    return { reply: { ...reply, headers: { ...reply.headers, 'Idempotency-Replayed': 'true' } }, stale: false, revision: e.revision };
  }

  /** Renews the mark at `revision` until the request ends; stops when another request took it over. */
  private hold(kvKey: string, revision: number): void {
    this.unhold(kvKey);
    let rev = revision;
    const timer = setInterval(() => {
      this.bus.kv.idempotency.update(kvKey, enc.encode(PENDING), rev).then(
        (r) => {
          rev = r;
        },
        (err: unknown) => {
          // A changed revision: the request ended meanwhile, or its lapsed mark was taken over.
          if (!isWrongRevision(err)) this.log.warn({ err }, 'idempotency mark renewal failed');
          else if (this.held.get(kvKey) === timer) this.unhold(kvKey);
        },
      );
    }, PENDING_RENEW_MS);
    timer.unref();
    this.held.set(kvKey, timer);
  }

  private unhold(kvKey: string): void {
    clearInterval(this.held.get(kvKey));
    this.held.delete(kvKey);
  }
}
