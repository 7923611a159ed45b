/**
 * The OpenAI-compatible layer (/v1) with authentication on and small limits: credentials,
 * rate limits per key and model (requests and tokens), sessions of different users, and the
 * non-streaming timeout.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startTestApp, type TestApp } from './helpers/app.js';
import { startOpenAiServer, type OpenAiTestServer, scriptedProvider } from './helpers/openai-server.js';
import { client, expectApiError, statusEventually } from './helpers/openai-compat.js';

describe('C: authentication on, small limits', () => {
  let t: TestApp;
  let llm: OpenAiTestServer;
  const env = {
    GATEWAY_SKIP_AUTH: '0',
    PASSWORD_SCRYPT_N: '1024',
    JWT_SECRET: 'openai-compat-test-secret-0123456789abcdef',
    ENABLE_CACHE: '0',
    OPENAI_RATE_LIMIT_REQUESTS: '3',
    OPENAI_RATE_LIMIT_TOKENS: '1000',
    OPENAI_COMPLETION_TIMEOUT_SECONDS: '2',
  };
  beforeAll(async () => {
    llm = await startOpenAiServer();
    t = await startTestApp(env, {
      llm: scriptedProvider(llm, 20_000),
    });
  });
  afterAll(async () => {
    await t?.stop();
    await llm?.close();
  });

  async function newKey(): Promise<string> {
    const r = await fetch(`${t.base}/api/v1/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: `oai-${randomUUID()}@example.com`, password: 'password123' }),
    });
    return (await json(r)).api_key;
  }

  /** Fixed one-minute windows: keep a test's requests inside one. */
  async function awayFromMinuteEdge(): Promise<void> {
    const into = (Date.now() % 60_000) / 1000;
    if (into > 50) await sleep((61 - into) * 1000);
  }

  it('requires credentials (401 authentication_error / invalid_api_key) and accepts Bearer and X-API-Key', async () => {
    const m = [{ role: 'user' as const, content: 'hi' }];
    await expectApiError(client(t.base, 'sk_not_a_real_key').chat.completions.create({ messages: m } as never), 401, 'authentication_error', 'invalid_api_key');
    await expectApiError(client(t.base, 'sk_not_a_real_key').models.list(), 401, 'authentication_error', 'invalid_api_key');
    const none = await fetch(`${t.base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messages: m }),
    });
    expect(none.status).toBe(401);
    expect((await json(none)).error).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key', message: 'Authentication required' });
    const key = await newKey();
    const r = await client(t.base, key).chat.completions.create({ messages: m } as never);
    expect(r.choices[0]!.message.content).toBe('echo: hi');
    const x = await fetch(`${t.base}/v1/models`, { headers: { 'X-API-Key': key } });
    expect(x.status).toBe(200);
    expect((await json(x)).data.length).toBe(5);
  });

  it('limits requests per key and model with the X-RateLimit-*-Requests/-Tokens headers, then 429 rate_limit_error', async () => {
    await awayFromMinuteEdge();
    const key = await newKey();
    const oai = client(t.base, key);
    const seen: Headers[] = [];
    for (let i = 0; i < 3; i++) {
      const { response } = await oai.chat.completions.create({ model: 'svc-chat', messages: [{ role: 'user', content: `r${i}` }] }).withResponse();
      seen.push(response.headers);
    }
    expect(seen.map((h) => h.get('x-ratelimit-limit-requests'))).toEqual(['3', '3', '3']);
    expect(seen.map((h) => h.get('x-ratelimit-remaining-requests'))).toEqual(['2', '1', '0']);
    for (const h of seen) {
      expect(h.get('x-ratelimit-limit-tokens')).toBe('1000');
      expect(Number(h.get('x-ratelimit-remaining-tokens'))).toBeLessThanOrEqual(1000);
      expect(h.get('x-ratelimit-reset-requests')).toMatch(/^\d+s$/);
      expect(h.get('x-ratelimit-reset-tokens')).toMatch(/^\d+s$/);
    }
    // The first request's tokens were counted before the later ones were admitted.
    expect(Number(seen[2]!.get('x-ratelimit-remaining-tokens'))).toBeLessThan(1000);
    const e = await expectApiError(
      oai.chat.completions.create({ model: 'svc-chat', messages: [{ role: 'user', content: 'r3' }] }),
      429,
      'rate_limit_error',
      'rate_limit_exceeded',
    );
    expect(e.message).toContain('3 requests per minute');
    const retry = Number(e.headers!.get('retry-after'));
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(60);
    expect(e.headers!.get('x-ratelimit-remaining-requests')).toBe('0');
    // Legacy completions of the same model share the limit; another model and another key do not.
    await expectApiError(oai.completions.create({ model: 'svc-chat', prompt: 'r4' }), 429, 'rate_limit_error', 'rate_limit_exceeded');
    const other = await oai.chat.completions.create({ model: 'svc-complex', messages: [{ role: 'user', content: 'other model' }] });
    expect(other.choices[0]!.finish_reason).toBe('stop');
    const k2 = await client(t.base, await newKey()).chat.completions.create({ model: 'svc-chat', messages: [{ role: 'user', content: 'other key' }] });
    expect(k2.choices[0]!.finish_reason).toBe('stop');
  });

  it('limits tokens per key and model: usage counts when a completion ends', async () => {
    await awayFromMinuteEdge();
    const oai = client(t.base, await newKey());
    llm.enqueue({ type: 'completion', content: 'big answer', usage: { prompt_tokens: 900, completion_tokens: 600, total_tokens: 1500 } });
    const { data, response } = await oai.chat.completions.create({ messages: [{ role: 'user', content: 'spend' }] } as never).withResponse();
    expect(data.usage!.total_tokens).toBe(1500);
    expect(response.headers.get('x-ratelimit-remaining-tokens')).toBe('1000');
    const e = await expectApiError(
      oai.chat.completions.create({ messages: [{ role: 'user', content: 'more' }] } as never),
      429,
      'rate_limit_error',
      'rate_limit_exceeded',
    );
    expect(e.message).toContain('1000 tokens per minute');
    expect(e.headers!.get('x-ratelimit-remaining-tokens')).toBe('0');
  });

  it("gives a new session when X-Session-ID names another user's session (collision)", async () => {
    const a = await newKey();
    const b = await newKey();
    const sid = randomUUID();
    const ask = async (key: string) => {
      const r = await fetch(`${t.base}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'X-Session-ID': sid },
        body: JSON.stringify({ messages: [{ role: 'user', content: 'mine?' }] }),
      });
      expect(r.status).toBe(200);
      await r.text();
      return r.headers;
    };
    const ha = await ask(a);
    expect(ha.get('x-session-id')).toBe(sid);
    expect(ha.get('x-service-session-id')).toBe(sid);
    expect((await ask(a)).get('x-session-id')).toBeNull();
    const hb = await ask(b);
    const other = hb.get('x-session-id')!;
    expect(other).toMatch(/^oai-/);
    expect(hb.get('x-service-session-id')).not.toBe(sid);
    const own = await fetch(`${t.base}/api/v1/sessions/${other}`, { headers: { 'X-API-Key': b } });
    expect((await json(own)).id).toBe(hb.get('x-service-session-id'));
    // B's task is in B's session, not in A's.
    const listA = await json(await fetch(`${t.base}/api/v1/tasks?session_id=${sid}`, { headers: { 'X-API-Key': a } }));
    expect(listA.tasks.map((x: any) => x.task_id)).not.toContain(hb.get('x-workflow-id'));
  });

  it('gives up on a non-streaming completion after the timeout (504 server_error / timeout) and cancels its task', async () => {
    const key = await newKey();
    llm.enqueue({ type: 'hang' });
    const t0 = Date.now();
    const r = await fetch(`${t.base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-API-Key': key },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'never answered' }] }),
    });
    expect(r.status).toBe(504);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1900);
    expect((await json(r)).error).toMatchObject({ type: 'server_error', code: 'timeout' });
    await statusEventually(t.base, r.headers.get('x-workflow-id')!, 'TASK_STATUS_CANCELLED', { 'X-API-Key': key });
  });
});
