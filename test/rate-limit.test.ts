/**
 * Per-key rate limits shared across gateway processes (NATS KV), burst limit on the task list.
 *
 * The counting is tested on the limiter with a fixed clock (two limiters on two NATS
 * connections stand for two gateways), so no request can fall into the next window; the HTTP
 * tests then show what a client sees, waiting for the 429 rather than assuming which request
 * of a window brings it.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RateLimiter, type Limit } from '../src/gateway/rate-limit.js';
import { createLogger, type Principal } from '../src/kernel/index.js';
import { json, startTestApp, type TestApp } from './helpers/app.js';

let a: TestApp;
let b: TestApp;
const env = {
  GATEWAY_SKIP_AUTH: '0',
  PASSWORD_SCRYPT_N: '1024',
  JWT_SECRET: 'rate-limit-test-secret-0123456789abcdef',
  RATE_LIMIT_REQUESTS: '6',
  RATE_LIMIT_WINDOW: '60',
  RATE_LIMIT_TASK_LIST_BURST: '3',
};
beforeAll(async () => {
  a = await startTestApp(env);
  // A second gateway on the same NATS: the counters are shared.
  b = await startTestApp({ ...env, ROLES: 'gateway,orchestrator' }, { natsUrl: a.natsUrl });
});
afterAll(async () => {
  await b?.stop();
  await a?.stop();
});

async function newKey(): Promise<string> {
  const r = await fetch(`${a.base}/api/v1/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: `rl-${randomUUID()}@example.com`, password: 'password123' }),
  });
  return (await json(r)).api_key;
}

const principal = (): Principal => ({ key: `key-${randomUUID()}`, userId: randomUUID(), anonymous: false });
const log = createLogger({ level: 'silent' });

describe('rate limit counting (fixed clock)', () => {
  // Ten seconds into a window: every request of a test falls into this one.
  const now = Math.floor(Date.now() / 60_000) * 60_000 + 10_000;
  const perKey: Limit = { name: `key-${randomUUID().slice(0, 8)}`, requests: 6, windowSeconds: 60 };

  it('counts one key across gateways: 6 allowed (remaining 5..0), the 7th refused until the window resets', async () => {
    const gateways = [new RateLimiter(a.app.bus.kv.ratelimit, log), new RateLimiter(b.app.bus.kv.ratelimit, log)];
    const p = principal();
    const decisions = [];
    for (let i = 0; i < 7; i++) decisions.push(await gateways[i % 2]!.hit(p, perKey, now));
    expect(decisions.map((d) => d!.allowed)).toEqual([true, true, true, true, true, true, false]);
    expect(decisions.map((d) => d!.remaining)).toEqual([5, 4, 3, 2, 1, 0, -1]);
    const reset = now / 1000 + 50;
    expect(decisions.every((d) => d!.limit === 6 && d!.reset === reset)).toBe(true);
    expect(decisions[6]!.retryAfter).toBe(50);
    // Another key is not affected; the next window starts again from zero.
    expect((await gateways[0]!.hit(principal(), perKey, now))!.remaining).toBe(5);
    const next = await gateways[1]!.hit(p, perKey, now + 60_000);
    expect(next).toMatchObject({ allowed: true, remaining: 5, reset: reset + 60 });
  });

  it('limits bursts per second', async () => {
    const limiter = new RateLimiter(a.app.bus.kv.ratelimit, log);
    const burst: Limit = { name: `burst-${randomUUID().slice(0, 8)}`, requests: 3, windowSeconds: 1 };
    const p = principal();
    const at = now + 500;
    const first = await Promise.all(Array.from({ length: 5 }, () => limiter.hit(p, burst, at)));
    expect(first.filter((d) => d!.allowed).length).toBe(3);
    expect(first.filter((d) => !d!.allowed).every((d) => d!.retryAfter === 1)).toBe(true);
    // The next second has its own window.
    expect((await limiter.hit(p, burst, at + 1000))!.allowed).toBe(true);
  });

  it('does not limit the anonymous development principal', async () => {
    const limiter = new RateLimiter(a.app.bus.kv.ratelimit, log);
    expect(await limiter.hit({ key: 'anonymous', anonymous: true }, perKey, now)).toBeUndefined();
  });
});

describe('rate limits over HTTP', () => {
  it('answers 429 with Retry-After and the spec body, shared by the gateways, per key', async () => {
    const key = await newKey();
    const other = await newKey();
    // Requests alternate between the gateways until one is refused: within one window that is
    // the 7th; a window that ends meanwhile only starts the count again.
    let over: Response | undefined;
    let last: Response | undefined;
    for (let i = 0; i < 14 && !over; i++) {
      const r = await fetch(`${i % 2 ? b.base : a.base}/api/v1/auth/me`, { headers: { 'X-API-Key': key } });
      if (r.status === 429) over = r;
      else {
        expect(r.status).toBe(200);
        expect(r.headers.get('x-ratelimit-limit')).toBe('6');
        expect(Number(r.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000 - 1);
        last = r;
      }
    }
    expect(over, 'no request was refused').toBeDefined();
    expect(last!.headers.get('x-ratelimit-remaining')).toBe('0');
    const body = await json(over!);
    expect(body.error).toBe('Rate limit exceeded');
    expect(body.retry_after).toBeGreaterThan(0);
    expect(body.retry_after).toBeLessThanOrEqual(60);
    expect(over!.headers.get('retry-after')).toBe(String(body.retry_after));
    expect(over!.headers.get('x-ratelimit-remaining')).toBe('0');
    // Another key is not affected.
    expect((await fetch(`${a.base}/api/v1/auth/me`, { headers: { 'X-API-Key': other } })).status).toBe(200);
  });

  it('applies the burst limit to the task list', async () => {
    const key = await newKey();
    // Eight at once: however they fall across one-second windows, one window gets more than 3
    // unless they spread over three or more seconds; then the next batch is tried.
    let burst: Response | undefined;
    for (let batch = 0; batch < 3 && !burst; batch++) {
      const replies = await Promise.all(Array.from({ length: 8 }, () => fetch(`${a.base}/api/v1/tasks`, { headers: { 'X-API-Key': key } })));
      burst = replies.find((r) => r.status === 429 && r.headers.get('x-ratelimit-limit') === '3');
      expect(replies.every((r) => r.status === 200 || r.status === 429)).toBe(true);
    }
    expect(burst, 'no request was refused by the burst limit').toBeDefined();
    expect((await json(burst!)).error).toBe('Rate limit exceeded');
  });
});
