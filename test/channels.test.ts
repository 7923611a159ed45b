/**
 * /api/v1/channels and the inbound webhook over the whole service: CRUD with write-only,
 * encrypted credentials, owner-only access (403), 404, duplicate names (409); platform_a
 * signatures (URL-verification challenge, good/bad signature, stale and future timestamps,
 * replayed event ids stored once, bot messages ignored), platform_b signatures with the
 * reply-token acknowledgement reaching a local server, and a disabled channel refusing.
 * Accepted messages are read back from the CHANNEL_INBOX stream.
 */
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channelKeyOf, decryptCredentials, encryptCredentials } from '../src/channels/index.js';
import { json, startTestApp, waitFor, type TestApp } from './helpers/app.js';

const SECRET_KEY = randomBytes(32).toString('base64');
const acks: { auth?: string; body: any }[] = [];
let platformB: Server;
let t: TestApp;
const saved = { key: process.env.CHANNEL_SECRET_KEY, url: process.env.PLATFORM_B_API_URL };

beforeAll(async () => {
  platformB = createServer((req, res) => {
    let data = '';
    req.on('data', (c) => (data += c));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v2/bot/message/reply') acks.push({ auth: req.headers.authorization, body: JSON.parse(data) });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => platformB.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(platformB.address() as AddressInfo).port}`;
  // The gateway reads the channels settings from its config, else from the environment.
  process.env.CHANNEL_SECRET_KEY = SECRET_KEY;
  process.env.PLATFORM_B_API_URL = url;
  t = await startTestApp({
    GATEWAY_SKIP_AUTH: '0',
    PASSWORD_SCRYPT_N: '1024',
    JWT_SECRET: 'channels-test-secret-0123456789abcdefghijklmnop',
    RATE_LIMIT_REQUESTS: '100000',
    CHANNEL_SECRET_KEY: SECRET_KEY,
    PLATFORM_B_API_URL: url,
  });
});
afterAll(async () => {
  await t?.stop();
  await new Promise((r) => platformB?.close(r));
  for (const [k, v] of [
    ['CHANNEL_SECRET_KEY', saved.key],
    ['PLATFORM_B_API_URL', saved.url],
  ] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

interface User {
  key: string;
  id: string;
}
async function register(): Promise<User> {
  const r = await fetch(`${t.base}/api/v1/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: `chan-${randomUUID()}@example.com`, password: 'password123' }),
  });
  expect(r.status).toBe(201);
  const b = await json(r);
  return { key: b.api_key, id: b.user.id };
}

const call = (u: User, method: string, path: string, body?: unknown) =>
  fetch(`${t.base}${path}`, {
    method,
    headers: { 'X-API-Key': u.key, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });

const A_CREDS = { signing_secret: 'a-signing-secret-XYZ', bot_token: 'xoxb-secret-bot-token', app_id: 'A123' };
const B_CREDS = { channel_secret: 'b-channel-secret-XYZ', channel_access_token: 'b-access-token-XYZ' };

let alice: User;
let bob: User;
beforeAll(async () => {
  alice = await register();
  bob = await register();
});

async function createChannel(u: User, type: 'platform_a' | 'platform_b', extra: Record<string, unknown> = {}) {
  const r = await call(u, 'POST', '/api/v1/channels', { type, name: `ch-${randomUUID()}`, credentials: type === 'platform_a' ? A_CREDS : B_CREDS, ...extra });
  expect(r.status).toBe(200);
  return json(r);
}

/** Messages stored in CHANNEL_INBOX for one channel. */
async function inboxCount(channelId: string): Promise<number> {
  const subject = `svc.channels.inbox.${channelId}`;
  const info = await t.app.bus.jsm.streams.info('CHANNEL_INBOX', { subjects_filter: subject });
  return (info.state.subjects as Record<string, number> | undefined)?.[subject] ?? 0;
}
async function lastInbox(channelId: string): Promise<any> {
  const m = await t.app.bus.jsm.streams.getMessage('CHANNEL_INBOX', { last_by_subj: `svc.channels.inbox.${channelId}` });
  return m!.json();
}

function signA(body: string, secret = A_CREDS.signing_secret, ts = Math.floor(Date.now() / 1000)) {
  const sig = 'v0=' + createHmac('sha256', secret).update(`v0:${ts}:${body}`).digest('hex');
  return { 'X-PlatformA-Request-Timestamp': String(ts), 'X-PlatformA-Signature': sig, 'content-type': 'application/json' };
}
const signB = (body: string, secret = B_CREDS.channel_secret) => ({
  'X-PlatformB-Signature': createHmac('sha256', secret).update(body).digest('base64'),
  'content-type': 'application/json',
});
const hook = (id: string, body: string, headers: Record<string, string>) => fetch(`${t.base}/api/v1/channels/${id}/webhook`, { method: 'POST', headers, body });
const aEvent = (eventId: string, event: Record<string, unknown>) =>
  JSON.stringify({
    type: 'event_callback',
    event_id: eventId,
    event: { type: 'message', channel: 'C1', user: 'U1', ts: '1700000000.000100', text: 'hello', ...event },
  });

describe('channels CRUD', () => {
  it('creates, lists, gets, updates and deletes; credentials never returned', async () => {
    const name = `support-${randomUUID()}`;
    const r = await call(alice, 'POST', '/api/v1/channels', { type: 'platform_a', name, credentials: A_CREDS, config: { agent_name: 'helper' } });
    expect(r.status).toBe(200);
    const text = await r.text();
    for (const v of Object.values(A_CREDS)) expect(text).not.toContain(v);
    const c = JSON.parse(text);
    expect(Object.keys(c).sort()).toEqual(['config', 'created_at', 'enabled', 'id', 'name', 'type', 'updated_at', 'user_id']);
    expect(c).toMatchObject({ type: 'platform_a', name, enabled: true, config: { agent_name: 'helper' }, user_id: alice.id });

    const list = await call(alice, 'GET', '/api/v1/channels');
    const listText = await list.text();
    expect(JSON.parse(listText).map((x: { id: string }) => x.id)).toContain(c.id);
    expect(listText).not.toContain(A_CREDS.signing_secret);
    expect((await json(await call(bob, 'GET', '/api/v1/channels'))).map((x: { id: string }) => x.id)).not.toContain(c.id);

    const one = await call(alice, 'GET', `/api/v1/channels/${c.id}`);
    expect(one.status).toBe(200);
    expect((await json(one)).name).toBe(name);

    const up = await call(alice, 'PUT', `/api/v1/channels/${c.id}`, {
      name: `${name}-2`,
      enabled: false,
      credentials: { ...A_CREDS, bot_token: 'xoxb-new-token' },
    });
    expect(up.status).toBe(200);
    const upText = await up.text();
    expect(upText).not.toContain('xoxb-new-token');
    expect(JSON.parse(upText)).toMatchObject({ name: `${name}-2`, enabled: false });

    const del = await call(alice, 'DELETE', `/api/v1/channels/${c.id}`);
    expect(del.status).toBe(200);
    expect(await json(del)).toEqual({ message: 'Channel deleted' });
    expect((await call(alice, 'GET', `/api/v1/channels/${c.id}`)).status).toBe(404);
  });

  it('stores credentials encrypted (no plaintext in the row) and decryptable with the key only', async () => {
    const c = await createChannel(alice, 'platform_b');
    const [row] = await t.app.store.sql`SELECT * FROM channels WHERE id = ${c.id}`;
    const dump = JSON.stringify(row);
    for (const v of Object.values(B_CREDS)) expect(dump).not.toContain(v);
    expect(row!.credentials_enc).toMatch(/^v1:/);
    const key = channelKeyOf(SECRET_KEY, '/nonexistent');
    expect(decryptCredentials(key, c.id, row!.credentials_enc)).toEqual(B_CREDS);
    expect(() => decryptCredentials(randomBytes(32), c.id, row!.credentials_enc)).toThrow(/cannot be decrypted/);
    // Bound to the row: the same ciphertext does not decrypt under another id.
    expect(() => decryptCredentials(key, randomUUID(), row!.credentials_enc)).toThrow(/cannot be decrypted/);
  });

  it('validates type, name and the credentials of each type', async () => {
    const cases: [unknown, RegExp][] = [
      [{ name: 'x', credentials: A_CREDS }, /type is required/],
      [{ type: 'platform_c', name: 'x', credentials: A_CREDS }, /type must be one of/],
      [{ type: 'platform_a', credentials: A_CREDS }, /name is required/],
      [{ type: 'platform_a', name: 'x' }, /credentials is required/],
      [{ type: 'platform_a', name: 'x', credentials: { signing_secret: 's', bot_token: 't' } }, /credentials.app_id is required/],
      [{ type: 'platform_b', name: 'x', credentials: A_CREDS }, /not a platform_b credential/],
      [{ type: 'platform_a', name: 'x', credentials: A_CREDS, extra: 1 }, /unknown field: extra/],
    ];
    for (const [body, msg] of cases) {
      const r = await call(alice, 'POST', '/api/v1/channels', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      const e = await json(r);
      expect(e.error).toMatch(msg);
      expect(JSON.stringify(e)).not.toContain(A_CREDS.signing_secret);
    }
  });

  it("403 for another user's channel, 404 for unknown, 409 for a duplicate name per user and type", async () => {
    const c = await createChannel(alice, 'platform_a');
    for (const [m, body] of [
      ['GET', undefined],
      ['PUT', { name: 'stolen' }],
      ['DELETE', undefined],
    ] as const) {
      const r = await call(bob, m, `/api/v1/channels/${c.id}`, body);
      expect(r.status, m).toBe(403);
    }
    expect((await call(alice, 'GET', `/api/v1/channels/${c.id}`)).status).toBe(200); // not deleted by bob
    for (const m of ['GET', 'DELETE'] as const) expect((await call(alice, m, `/api/v1/channels/${randomUUID()}`)).status).toBe(404);
    expect((await call(alice, 'PUT', `/api/v1/channels/${randomUUID()}`, { name: 'x' })).status).toBe(404);
    expect((await call(alice, 'GET', '/api/v1/channels/not-a-uuid')).status).toBe(404);

    const dup = await call(alice, 'POST', '/api/v1/channels', { type: 'platform_a', name: c.name, credentials: A_CREDS });
    expect(dup.status).toBe(409);
    // Same name: another type, or another user, is fine.
    expect((await call(alice, 'POST', '/api/v1/channels', { type: 'platform_b', name: c.name, credentials: B_CREDS })).status).toBe(200);
    expect((await call(bob, 'POST', '/api/v1/channels', { type: 'platform_a', name: c.name, credentials: A_CREDS })).status).toBe(200);
    // Renaming onto an existing name: 409.
    const other = await createChannel(alice, 'platform_a');
    expect((await call(alice, 'PUT', `/api/v1/channels/${other.id}`, { name: c.name })).status).toBe(409);
  });

  it('requires authentication for CRUD', async () => {
    expect((await fetch(`${t.base}/api/v1/channels`)).status).toBe(401);
  });
});

describe('platform_a webhook', () => {
  it('answers the URL-verification challenge (signed)', async () => {
    const c = await createChannel(alice, 'platform_a');
    const body = JSON.stringify({ type: 'url_verification', challenge: 'chal-123' });
    const r = await hook(c.id, body, signA(body));
    expect(r.status).toBe(200);
    expect(await json(r)).toEqual({ challenge: 'chal-123' });
    expect(await inboxCount(c.id)).toBe(0);
  });

  it('a good signature: dispatched, one message in CHANNEL_INBOX with the routing facts', async () => {
    const c = await createChannel(alice, 'platform_a', { config: { agent_name: 'helper' } });
    const body = aEvent('Ev-good', { type: 'app_mention', thread_ts: '1699999999.000001' });
    const r = await hook(c.id, body, signA(body));
    expect(r.status).toBe(200);
    expect(await json(r)).toEqual({ status: 'dispatched' });
    expect(await inboxCount(c.id)).toBe(1);
    expect(await lastInbox(c.id)).toMatchObject({
      channel_id: c.id,
      channel_type: 'platform_a',
      user_id: alice.id,
      event_id: 'Ev-good',
      event_type: 'app_mention',
      thread_id: '1699999999.000001',
      sender: 'U1',
      text: 'hello',
      agent_name: 'helper',
      conversation: 'C1',
    });
  });

  it('a bad or missing signature is 401 and stores nothing', async () => {
    const c = await createChannel(alice, 'platform_a');
    const body = aEvent('Ev-bad', {});
    expect((await hook(c.id, body, signA(body, 'wrong-secret'))).status).toBe(401);
    // Signed, then the body changed.
    expect((await hook(c.id, body.replace('hello', 'hellO'), signA(body))).status).toBe(401);
    expect((await hook(c.id, body, { 'content-type': 'application/json' })).status).toBe(401);
    expect(await inboxCount(c.id)).toBe(0);
  });

  it('refuses a timestamp older than 5 minutes or more than 5 minutes ahead, even correctly signed', async () => {
    const c = await createChannel(alice, 'platform_a');
    const body = aEvent('Ev-stale', {});
    // Each timestamp is taken right before its request and 30 s past the limit: on a loaded
    // machine seconds can pass between two requests, and "5 minutes ahead" shrinks as they do.
    const now = () => Math.floor(Date.now() / 1000);
    const stale = await hook(c.id, body, signA(body, A_CREDS.signing_secret, now() - 330));
    expect(stale.status).toBe(401);
    expect((await json(stale)).error).toMatch(/5 minutes/);
    expect((await hook(c.id, body, signA(body, A_CREDS.signing_secret, now() + 330))).status).toBe(401);
    expect(await inboxCount(c.id)).toBe(0);
    // Within the window: accepted.
    expect((await hook(c.id, body, signA(body, A_CREDS.signing_secret, now() - 200))).status).toBe(200);
    expect(await inboxCount(c.id)).toBe(1);
  });

  it('a replayed event id (platform retry) is stored once', async () => {
    const c = await createChannel(alice, 'platform_a');
    const body = aEvent('Ev-replay', {});
    for (let i = 0; i < 3; i++) {
      const r = await hook(c.id, body, signA(body));
      expect(r.status).toBe(200);
      expect(await json(r)).toEqual({ status: 'dispatched' });
    }
    expect(await inboxCount(c.id)).toBe(1);
    const other = aEvent('Ev-replay-2', {});
    await hook(c.id, other, signA(other));
    expect(await inboxCount(c.id)).toBe(2);
  });

  it('ignores bot messages and other event types', async () => {
    const c = await createChannel(alice, 'platform_a');
    for (const [id, ev] of [
      ['Ev-bot1', { bot_id: 'B1' }],
      ['Ev-bot2', { subtype: 'bot_message' }],
      ['Ev-react', { type: 'reaction_added' }],
    ] as const) {
      const body = aEvent(id, ev);
      const r = await hook(c.id, body, signA(body));
      expect(r.status).toBe(200);
      expect((await json(r)).status).toBe('ignored');
    }
    expect(await inboxCount(c.id)).toBe(0);
  });

  it('a disabled channel accepts nothing (404, like an unknown channel)', async () => {
    const c = await createChannel(alice, 'platform_a');
    expect((await call(alice, 'PUT', `/api/v1/channels/${c.id}`, { enabled: false })).status).toBe(200);
    const body = aEvent('Ev-disabled', {});
    expect((await hook(c.id, body, signA(body))).status).toBe(404);
    expect(await inboxCount(c.id)).toBe(0);
    expect((await hook(randomUUID(), body, signA(body))).status).toBe(404);
    // Enabled again: accepted.
    expect((await call(alice, 'PUT', `/api/v1/channels/${c.id}`, { enabled: true })).status).toBe(200);
    expect((await hook(c.id, body, signA(body))).status).toBe(200);
    expect(await inboxCount(c.id)).toBe(1);
  });
});

describe('platform_b webhook', () => {
  const bBody = (events: unknown[]) => JSON.stringify({ destination: 'U0', events });
  const textEvent = (id: string, text: string, replyToken = `rt-${id}`) => ({
    type: 'message',
    webhookEventId: id,
    replyToken,
    source: { type: 'user', userId: 'Ub1' },
    message: { type: 'text', id: `m-${id}`, text },
  });

  it('verifies the signature, stores the first text message and acknowledges through the reply token', async () => {
    const c = await createChannel(alice, 'platform_b');
    const body = bBody([{ type: 'follow', replyToken: 'rt-follow', source: { userId: 'Ub1' } }, textEvent('wb-1', 'first'), textEvent('wb-2', 'second')]);
    const r = await hook(c.id, body, signB(body));
    expect(r.status).toBe(200);
    expect(await json(r)).toEqual({ status: 'dispatched' });
    expect(await inboxCount(c.id)).toBe(1);
    expect(await lastInbox(c.id)).toMatchObject({
      channel_type: 'platform_b',
      event_id: 'wb-1',
      text: 'first',
      reply_token: 'rt-wb-1',
      sender: 'Ub1',
      thread_id: 'Ub1',
    });
    const ack = await waitFor(async () => acks.find((a) => a.body.replyToken === 'rt-wb-1'));
    expect(ack.auth).toBe(`Bearer ${B_CREDS.channel_access_token}`);
    expect(ack.body.messages).toEqual([{ type: 'text', text: expect.any(String) }]);

    // A retry of the same event: stored once, acknowledged once.
    expect((await hook(c.id, body, signB(body))).status).toBe(200);
    expect(await inboxCount(c.id)).toBe(1);
    // A sentinel event sent after the retry was answered: once its acknowledgement is in, one the
    // retry had started would be in too.
    const next = bBody([textEvent('wb-3', 'third')]);
    expect((await hook(c.id, next, signB(next))).status).toBe(200);
    await waitFor(async () => acks.find((a) => a.body.replyToken === 'rt-wb-3'));
    expect(acks.filter((a) => a.body.replyToken === 'rt-wb-1')).toHaveLength(1);
  });

  it('a bad or missing signature is 401 and stores nothing; no text message is ignored', async () => {
    const c = await createChannel(alice, 'platform_b');
    const body = bBody([textEvent('wb-bad', 'x')]);
    expect((await hook(c.id, body, signB(body, 'wrong'))).status).toBe(401);
    expect((await hook(c.id, body, { 'content-type': 'application/json' })).status).toBe(401);
    expect(await inboxCount(c.id)).toBe(0);
    const empty = bBody([]);
    const r = await hook(c.id, empty, signB(empty));
    expect(r.status).toBe(200);
    expect((await json(r)).status).toBe('ignored');
    expect(await inboxCount(c.id)).toBe(0);
    expect(acks.find((a) => a.body.replyToken === 'rt-wb-bad')).toBeUndefined();
  });
});

describe('channel key', () => {
  it('CHANNEL_SECRET_KEY in hex or base64; else generated once into DATA_DIR with mode 0600', () => {
    const raw = randomBytes(32);
    expect(channelKeyOf(raw.toString('hex'), '/nonexistent').equals(raw)).toBe(true);
    expect(channelKeyOf(raw.toString('base64'), '/nonexistent').equals(raw)).toBe(true);
    expect(() => channelKeyOf('c2hvcnQ=', '/nonexistent')).toThrow(/32 bytes/);
    const dir = mkdtempSync(join(tmpdir(), 'chan-key-'));
    const k1 = channelKeyOf(undefined, dir);
    const file = join(dir, 'channel-secret.key');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(channelKeyOf(undefined, dir).equals(k1)).toBe(true);
    expect(Buffer.from(readFileSync(file, 'utf8'), 'base64').equals(k1)).toBe(true);
    const enc = encryptCredentials(k1, 'id-1', { a: 'b' });
    expect(decryptCredentials(k1, 'id-1', enc)).toEqual({ a: 'b' });
  });
});
