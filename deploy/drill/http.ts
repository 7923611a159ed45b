/**
 * The drill's HTTP client in front of the gateways, behaving as a load balancer would: a
 * request goes to the next gateway in turn, a refused connection fails over to the other one
 * at once, and a cut connection, a hang or a 503 is counted (by kind, in the ErrorBook) and
 * retried after Retry-After until the request's deadline. Every attempt has a hard limit, so
 * that nothing the drill sends can wait forever: an attempt with no answer in time is a hang.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { errorKind, failureOutcome, type ErrorBook, type Outcome } from './checks.js';

export interface Answer {
  status: number;
  headers: Headers;
  body: any;
  /** Time of the answering attempt (not of the retries before it), ms. */
  ms: number;
  gateway: string;
}

export interface RequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: unknown;
  /** Give up after this long in all (ms). */
  deadlineMs?: number;
  /** Only this gateway (probes): no fail-over. */
  only?: string;
  /** Where the error book files this request's errors (e.g. `submit`). */
  what: string;
}

export class Gateways {
  private next = 0;
  /** Set when the drill stops: pending retries end. */
  stopping = false;

  constructor(
    readonly bases: readonly string[],
    readonly errors: ErrorBook,
    /** An attempt with no complete answer within this is a hang. */
    readonly hangMs: number,
  ) {}

  /** The gateway the next request starts on (round robin). */
  pick(): string {
    return this.bases[this.next++ % this.bases.length]!;
  }

  /** One attempt against one gateway. */
  async attempt(base: string, path: string, o: RequestOptions): Promise<{ outcome: Outcome; answer?: Answer }> {
    const t0 = performance.now();
    try {
      const res = await fetch(`${base}${path}`, {
        method: o.method ?? 'GET',
        headers: { ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}), ...o.headers },
        body: o.body === undefined ? undefined : typeof o.body === 'string' ? o.body : JSON.stringify(o.body),
        signal: AbortSignal.timeout(this.hangMs),
      });
      const text = await res.text();
      let body: any = text;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        /* not JSON: kept as text */
      }
      const answer: Answer = { status: res.status, headers: res.headers, body, ms: performance.now() - t0, gateway: base };
      if (res.status < 500) return { outcome: { kind: 'ok', status: res.status }, answer };
      return { outcome: { kind: 'status', status: res.status, retryAfter: res.headers.has('retry-after') }, answer };
    } catch (err) {
      return { outcome: failureOutcome(err) };
    }
  }

  /**
   * A request with fail-over and retries, until an answer below 500 or the deadline. Retrying a
   * write is only safe when it is idempotent (an Idempotency-Key, a claim): callers make sure.
   */
  async request(path: string, o: RequestOptions): Promise<Answer | undefined> {
    const end = Date.now() + (o.deadlineMs ?? 60_000);
    let base = o.only ?? this.pick();
    for (let tries = 0; !this.stopping && Date.now() < end; tries++) {
      const { outcome, answer } = await this.attempt(base, path, o);
      if (outcome.kind === 'ok') return answer;
      this.errors.add(errorKind(outcome), `${o.what} ${base}${path}${answer ? `: ${JSON.stringify(answer.body).slice(0, 160)}` : ''}`);
      let wait = Math.min(250 * 2 ** Math.min(tries, 3), 2000);
      if (outcome.kind === 'status' && outcome.retryAfter) wait = Math.min(Number(answer!.headers.get('retry-after')) * 1000 || wait, 5000);
      if (outcome.kind === 'refused' && tries % this.bases.length !== this.bases.length - 1) wait = 0; // the next gateway at once
      if (!o.only) base = this.bases[(this.bases.indexOf(base) + 1) % this.bases.length]!;
      if (wait) await sleep(Math.min(wait, Math.max(0, end - Date.now())));
    }
    return undefined;
  }
}
