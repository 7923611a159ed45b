/** Per-key rate limits shared across gateway processes (NATS KV), burst limit on the task list. */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

describe('rate limits', () => {
  it('counts requests per key across gateways and answers 429 with Retry-After and the spec body', async () => {
    const key = await newKey();
    const other = await newKey();
    const seen: { status: number; limit: string | null; remaining: string | null }[] = [];
    for (let i = 0; i < 6; i++) {
      const base = i % 2 ? b.base : a.base;
      const r = await fetch(`${base}/api/v1/auth/me`, { headers: { 'X-API-Key': key } });
      seen.push({ status: r.status, limit: r.headers.get('x-ratelimit-limit'), remaining: r.headers.get('x-ratelimit-remaining') });
      expect(Number(r.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000 - 1);
    }
    expect(seen.map((s) => s.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(seen.map((s) => s.remaining)).toEqual(['5', '4', '3', '2', '1', '0']);
    expect(seen.every((s) => s.limit === '6')).toBe(true);
    const over = await fetch(`${b.base}/api/v1/tasks/${randomUUID()}`, { headers: { 'X-API-Key': key } });
    expect(over.status).toBe(429);
    const body = await json(over);
    expect(body.error).toBe('Rate limit exceeded');
    expect(body.retry_after).toBeGreaterThan(0);
    expect(body.retry_after).toBeLessThanOrEqual(60);
    expect(over.headers.get('retry-after')).toBe(String(body.retry_after));
    expect(over.headers.get('x-ratelimit-remaining')).toBe('0');
    // Another key is not affected.
    expect((await fetch(`${a.base}/api/v1/auth/me`, { headers: { 'X-API-Key': other } })).status).toBe(200);
  });

  it('limits bursts on the task list', async () => {
    const key = await newKey();
    const replies = await Promise.all(Array.from({ length: 6 }, () => fetch(`${a.base}/api/v1/tasks`, { headers: { 'X-API-Key': key } })));
    const statuses = replies.map((r) => r.status);
    // 3 per second: six concurrent requests span at most two one-second windows, and every
    // request also counts against the per-key limit of 6 (register used none).
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(1);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(3);
  });
});
