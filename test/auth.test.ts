/**
 * Accounts, JWTs, API keys and task ownership with authentication enforced
 * (GATEWAY_SKIP_AUTH=0).
 */
import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashKey, newApiKey } from '../src/auth/index.js';
import { json, readSse, startTestApp, waitFor, type TestApp } from './helpers/app.js';

const SECRET = 'test-secret-0123456789-abcdefghijklmnopqrstuvwxyz';
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ GATEWAY_SKIP_AUTH: '0', JWT_SECRET: SECRET, PASSWORD_SCRYPT_N: '1024', API_KEY_CACHE_SECONDS: '5' });
});
afterAll(async () => {
  await t?.stop();
});

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(t.base + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
const get = (path: string, headers: Record<string, string> = {}) => fetch(t.base + path, { headers });
const email = () => `u-${randomUUID()}@example.com`;

async function register(extra: Record<string, unknown> = {}) {
  const e = email();
  const r = await post('/api/v1/auth/register', { email: e, password: 'correct horse battery', name: 'Ann', ...extra });
  expect(r.status).toBe(201);
  return { email: e, ...(await json(r)) };
}

describe('register and login', () => {
  it('registers a user in a new tenant with tokens and a default API key shown once', async () => {
    const u = await register({ tenant_name: 'Acme' });
    expect(u.user).toMatchObject({ email: u.email, name: 'Ann', tenant_name: 'Acme', is_active: true });
    expect(u.user.password_hash).toBeUndefined();
    expect(u.api_key).toMatch(/^sk_[A-Za-z0-9_-]{32}$/);
    expect(u).toMatchObject({ token_type: 'Bearer', expires_in: 900 });
    expect(u.access_token.split('.')).toHaveLength(3);
    const row = await t.app.store.sql`SELECT key_hash FROM api_keys WHERE user_id = ${u.user.id}::uuid`;
    expect(row[0].key_hash).toBe(hashKey(u.api_key));
    expect(JSON.stringify(row)).not.toContain(u.api_key);
    const pw = await t.app.store.sql`SELECT password_hash FROM users WHERE id = ${u.user.id}::uuid`;
    expect(pw[0].password_hash).toMatch(/^scrypt\$/);
  });

  it('rejects invalid registrations and a duplicate email', async () => {
    for (const [body, re] of [
      [{ password: 'longenough' }, /email is required/],
      [{ email: 'nope', password: 'longenough' }, /email/],
      [{ email: email() }, /password is required/],
      [{ email: email(), password: 'short' }, /at least 8/],
    ] as const) {
      const r = await post('/api/v1/auth/register', body);
      expect(r.status).toBe(400);
      expect((await json(r)).error).toMatch(re);
    }
    const u = await register();
    const dup = await post('/api/v1/auth/register', { email: u.email.toUpperCase(), password: 'another password' });
    expect(dup.status).toBe(409);
  });

  it('logs in with the right password only', async () => {
    const u = await register();
    const ok = await post('/api/v1/auth/login', { email: u.email, password: 'correct horse battery' });
    expect(ok.status).toBe(200);
    const body = await json(ok);
    expect(body.user.id).toBe(u.user.id);
    expect(body.access_token).toBeTruthy();
    for (const creds of [
      { email: u.email, password: 'wrong password' },
      { email: email(), password: 'correct horse battery' },
    ]) {
      const bad = await post('/api/v1/auth/login', creds);
      expect(bad.status).toBe(401);
      expect(await json(bad)).toEqual({ error: 'Invalid email or password' });
    }
  });
});

describe('credentials', () => {
  it('accepts X-API-Key, Bearer API key and Bearer JWT equally', async () => {
    const u = await register();
    const variants: Record<string, string>[] = [
      { 'X-API-Key': u.api_key },
      { Authorization: `Bearer ${u.api_key}` },
      { Authorization: `Bearer ${u.access_token}` },
    ];
    for (const h of variants) {
      const r = await get('/api/v1/auth/me', h);
      expect(r.status).toBe(200);
      expect((await json(r)).id).toBe(u.user.id);
    }
  });

  it('gives the spec messages for missing, invalid and expired credentials', async () => {
    expect(await json(await get('/api/v1/auth/me'))).toEqual({ error: 'Authentication required' });
    expect(await json(await get('/api/v1/auth/me', { 'X-API-Key': newApiKey() }))).toEqual({ error: 'Invalid API key' });
    expect(await json(await get('/api/v1/auth/me', { 'X-API-Key': 'sk_bad' }))).toEqual({ error: 'Invalid API key' });
    expect(await json(await get('/api/v1/auth/me', { Authorization: 'Bearer not.a.jwt' }))).toEqual({ error: 'Invalid or expired token' });
    const u = await register();
    const now = Math.floor(Date.now() / 1000);
    const expired = await new SignJWT({ tid: u.user.tenant_id, typ: 'access' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(u.user.id)
      .setIssuer('taskorch')
      .setIssuedAt(now - 100)
      .setExpirationTime(now - 10)
      .sign(new TextEncoder().encode(SECRET));
    const r = await get('/api/v1/auth/me', { Authorization: `Bearer ${expired}` });
    expect(r.status).toBe(401);
    expect(await json(r)).toEqual({ error: 'Invalid or expired token' });
    const forged = await new SignJWT({ tid: u.user.tenant_id, typ: 'access' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(u.user.id)
      .setIssuer('taskorch')
      .setExpirationTime(now + 100)
      .sign(new TextEncoder().encode('another secret of enough length!!'));
    expect((await get('/api/v1/auth/me', { Authorization: `Bearer ${forged}` })).status).toBe(401);
    // A refresh token is not an access token.
    expect((await get('/api/v1/auth/me', { Authorization: `Bearer ${u.refresh_token}` })).status).toBe(401);
  });

  it('rotates refresh tokens and revokes the family when a used one comes back', async () => {
    const u = await register();
    const r1 = await json(await post('/api/v1/auth/refresh', { refresh_token: u.refresh_token }));
    expect(r1.access_token).toBeTruthy();
    expect(r1.refresh_token).not.toBe(u.refresh_token);
    expect((await get('/api/v1/auth/me', { Authorization: `Bearer ${r1.access_token}` })).status).toBe(200);
    const reuse = await post('/api/v1/auth/refresh', { refresh_token: u.refresh_token });
    expect(reuse.status).toBe(401);
    // The whole family is revoked now, including the token issued by the rotation.
    expect((await post('/api/v1/auth/refresh', { refresh_token: r1.refresh_token })).status).toBe(401);
    expect((await post('/api/v1/auth/refresh', {})).status).toBe(400);
  });
});

describe('API keys', () => {
  it('creates (shown once), lists without secrets, uses and revokes keys', async () => {
    const u = await register();
    const h = { 'X-API-Key': u.api_key };
    const created = await post('/api/v1/auth/api-keys', { name: 'ci' }, h);
    expect(created.status).toBe(201);
    const k = await json(created);
    expect(k).toMatchObject({ name: 'ci', prefix: k.api_key.slice(0, 11) });
    expect((await get('/api/v1/auth/me', { 'X-API-Key': k.api_key })).status).toBe(200);
    const list = await json(await get('/api/v1/auth/api-keys', h));
    expect(list.count).toBe(2);
    expect(JSON.stringify(list)).not.toContain(k.api_key);
    expect(list.api_keys.map((x: { name: string }) => x.name).sort()).toEqual(['ci', 'default']);
    const del = await fetch(`${t.base}/api/v1/auth/api-keys/${k.id}`, { method: 'DELETE', headers: h });
    expect(del.status).toBe(200);
    expect(await json(await get('/api/v1/auth/me', { 'X-API-Key': k.api_key }))).toEqual({ error: 'Invalid API key' });
    expect((await fetch(`${t.base}/api/v1/auth/api-keys/${k.id}`, { method: 'DELETE', headers: h })).status).toBe(404);
    expect((await post('/api/v1/auth/api-keys', {}, h)).status).toBe(400);
  });

  it("cannot revoke another user's key", async () => {
    const a = await register();
    const b = await register();
    const k = await json(await post('/api/v1/auth/api-keys', { name: 'mine' }, { 'X-API-Key': a.api_key }));
    const r = await fetch(`${t.base}/api/v1/auth/api-keys/${k.id}`, { method: 'DELETE', headers: { 'X-API-Key': b.api_key } });
    expect(r.status).toBe(404);
    expect((await get('/api/v1/auth/me', { 'X-API-Key': k.api_key })).status).toBe(200);
  });

  it('refresh-key replaces the default key', async () => {
    const u = await register();
    const r = await json(await post('/api/v1/auth/refresh-key', {}, { 'X-API-Key': u.api_key }));
    expect(r.api_key).toMatch(/^sk_/);
    expect((await get('/api/v1/auth/me', { 'X-API-Key': u.api_key })).status).toBe(401);
    expect((await get('/api/v1/auth/me', { 'X-API-Key': r.api_key })).status).toBe(200);
  });
});

describe('task ownership', () => {
  it("keeps users out of each other's tasks, events and streams", async () => {
    const a = await register();
    const b = await register();
    const ha = { 'X-API-Key': a.api_key };
    const hb = { 'X-API-Key': b.api_key };
    const { task_id } = await json(await post('/api/v1/tasks', { query: 'private to a' }, ha));
    await waitFor(async () => (await json(await get(`/api/v1/tasks/${task_id}`, ha))).status === 'TASK_STATUS_COMPLETED');
    expect(await json(await get(`/api/v1/tasks/${task_id}`, hb))).toEqual({ error: 'Task not found' });
    expect((await get(`/api/v1/tasks/${task_id}/events`, hb)).status).toBe(404);
    expect((await readSse(`${t.base}/api/v1/stream/sse?workflow_id=${task_id}`, { headers: hb })).status).toBe(404);
    const listB = await json(await get('/api/v1/tasks', hb));
    expect(listB.tasks.map((x: { task_id: string }) => x.task_id)).not.toContain(task_id);
    const listA = await json(await get('/api/v1/tasks', ha));
    expect(listA.tasks.map((x: { task_id: string }) => x.task_id)).toContain(task_id);
    // The owner streams it, also with the api_key query fallback (SSE only).
    const own = await readSse(`${t.base}/api/v1/stream/sse?workflow_id=${task_id}&api_key=${a.api_key}`);
    expect(own.status).toBe(200);
    expect(own.events.at(-1)).toEqual({ event: 'done', data: '[DONE]' });
    expect((await get(`/api/v1/tasks?api_key=${a.api_key}`)).status).toBe(401);
    // Control endpoints and the WebSocket stream are owner-only too.
    for (const action of ['cancel', 'pause', 'resume']) {
      const r = await post(`/api/v1/tasks/${task_id}/${action}`, {}, hb);
      expect(r.status, action).toBe(404);
    }
    expect((await get(`/api/v1/tasks/${task_id}/control-state`, hb)).status).toBe(404);
    const wsStatus = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`ws://127.0.0.1:${t.app.gatewayPort}/api/v1/stream/ws?workflow_id=${task_id}`, { headers: hb });
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('open', () => {
        ws.close();
        resolve(101);
      });
      ws.on('error', () => {});
    });
    expect(wsStatus).toBe(404);
    const wsOwn = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`ws://127.0.0.1:${t.app.gatewayPort}/api/v1/stream/ws?workflow_id=${task_id}`, { headers: ha });
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('open', () => {
        ws.close();
        resolve(101);
      });
      ws.on('error', () => {});
    });
    expect(wsOwn).toBe(101);
  });

  it('answers 403 for another user of the same tenant', async () => {
    const a = await register();
    const colleague = randomUUID();
    const key = newApiKey();
    await t.app.store.sql`INSERT INTO users (id, tenant_id, email, password_hash) VALUES (${colleague}, ${a.user.tenant_id}, ${email()}, 'x')`;
    await t.app.store
      .sql`INSERT INTO api_keys (id, user_id, tenant_id, name, prefix, key_hash) VALUES (${randomUUID()}, ${colleague}, ${a.user.tenant_id}, 'k', ${key.slice(0, 11)}, ${hashKey(key)})`;
    const { task_id } = await json(await post('/api/v1/tasks', { query: 'mine' }, { 'X-API-Key': a.api_key }));
    const r = await get(`/api/v1/tasks/${task_id}`, { 'X-API-Key': key });
    expect(r.status).toBe(403);
    expect(await json(r)).toEqual({ error: 'Forbidden: not the task owner' });
  });
});
