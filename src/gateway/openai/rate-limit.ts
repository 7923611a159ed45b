/**
 * Rate limits per API key and model (NATS KV counters shared by every gateway, fixed
 * one-minute windows): a request counts when admitted; tokens count when its task ends (its
 * usage). A request is refused with 429 when over the request limit, or when the tokens of the
 * window plus its prompt estimate (4 characters a token) are over the token limit. Like the
 * REST limits, the anonymous development principal (GATEWAY_SKIP_AUTH=1) is not limited.
 * X-RateLimit-Reset-* are durations as OpenAI writes them ("12s").
 */
import { createHash } from 'node:crypto';
import type { KV } from '@nats-io/kv';
import { countInWindow } from '../../bus/index.js';
import type { Logger, Principal } from '../../kernel/index.js';
import { ChatRateLimited } from './errors.js';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

export class ChatRateLimiter {
  constructor(
    private readonly kv: KV,
    private readonly log: Logger,
    private readonly connected: () => boolean,
    private readonly limits: { requests: number; tokens: number },
  ) {}

  private keys(p: Principal, model: string) {
    const who = sha(p.key).slice(0, 32);
    const m = /^[A-Za-z0-9_-]{1,64}$/.test(model) ? model : sha(model).slice(0, 16);
    return { req: `oai-req.${who}.${m}`, tok: `oai-tok.${who}.${m}` };
  }

  /**
   * Counts the request and checks both limits; returns the X-RateLimit-* headers, or throws
   * 429 with them. Not limited: the anonymous principal, and any request while NATS is
   * unreachable (fail open, like the REST limits).
   */
  async admit(p: Principal, model: string, estimate: number, nowMs = Date.now()): Promise<Record<string, string>> {
    if (p.anonymous || !this.connected()) return {};
    const k = this.keys(p, model);
    let req, tok;
    try {
      [req, tok] = await Promise.all([countInWindow(this.kv, k.req, 60_000, nowMs), countInWindow(this.kv, k.tok, 60_000, nowMs, 0)]);
    } catch (err) {
      this.log.warn({ err }, 'openai rate limit bucket unavailable; request allowed');
      return {};
    }
    const resetAt = req?.resetAtMs ?? tok?.resetAtMs ?? nowMs + 60_000;
    const seconds = Math.max(1, Math.ceil((resetAt - nowMs) / 1000));
    const count = req?.count ?? 0;
    const used = tok?.count ?? 0;
    const headers: Record<string, string> = {
      'X-RateLimit-Limit-Requests': String(this.limits.requests),
      'X-RateLimit-Remaining-Requests': String(Math.max(0, this.limits.requests - count)),
      'X-RateLimit-Limit-Tokens': String(this.limits.tokens),
      'X-RateLimit-Remaining-Tokens': String(Math.max(0, this.limits.tokens - used)),
      'X-RateLimit-Reset-Requests': `${seconds}s`,
      'X-RateLimit-Reset-Tokens': `${seconds}s`,
    };
    const refuse = (why: string) => {
      throw new ChatRateLimited(`Rate limit reached for ${model}: ${why}. Please retry after ${seconds} seconds.`, {
        ...headers,
        'Retry-After': String(seconds),
      });
    };
    if (count > this.limits.requests) refuse(`${this.limits.requests} requests per minute`);
    if (used + estimate > this.limits.tokens) refuse(`${this.limits.tokens} tokens per minute (used ${used}, this request about ${estimate})`);
    return headers;
  }

  /** Adds a finished request's tokens to its window. */
  async record(p: Principal, model: string, tokens: number): Promise<void> {
    if (p.anonymous || tokens <= 0 || !this.connected()) return;
    await countInWindow(this.kv, this.keys(p, model).tok, 60_000, Date.now(), tokens).catch((err) => this.log.warn({ err }, 'openai token count not recorded'));
  }
}
