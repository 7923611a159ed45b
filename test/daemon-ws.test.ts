/**
 * The daemon WebSocket (GET /v1/ws/messages) with real WebSocket clients on two gateways (in
 * this process) sharing one NATS: authentication before the upgrade, `connected`, a reply by a
 * connection not holding the claim, progress extending the lease, expiry and re-dispatch,
 * thread affinity, a webhook reaching a daemon, invalid JSON ignored, large frames closing.
 * The 10-connection, 1,000-message run on two gateway processes is test/daemon-processes.test.ts.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { CONSUMERS, STREAMS } from '../src/bus/index.js';
import type { DaemonMessage, Owner } from '../src/daemon/index.js';
import { json, startTestApp, waitFor, type TestApp } from './helpers/app.js';
import { startPlatformServer, type PlatformServer } from './helpers/platform-server.js';

let a: TestApp;
let b: TestApp;
let platform: PlatformServer;
let key = '';
let owner: Owner;
const CLAIM_TTL_MS = 2000;

/** A barrier: the outbox consumer has nothing left to post or being retried. */
async function outboxDrained(): Promise<void> {
  await waitFor(
    async () => {
      const i = await a.app.bus.jsm.consumers.info(STREAMS.channelOutbox, CONSUMERS.channelSender);
      return !i.num_pending && !i.num_ack_pending;
    },
    30_000,
    50,
  );
}

beforeAll(async () => {
  platform = await startPlatformServer();
  // The pending-message TTL is long here: messages must wait for daemons, not go to the agent route.
  const env = {
    GATEWAY_SKIP_AUTH: '0',
    PASSWORD_SCRYPT_N: '1024',
    DAEMON_CLAIM_TTL_SECONDS: String(CLAIM_TTL_MS / 1000),
    DAEMON_PENDING_TTL_SECONDS: '600',
    PLATFORM_A_API_URL: platform.url,
    PLATFORM_B_API_URL: platform.url,
  };
  a = await startTestApp(env);
  b = await startTestApp(env, { natsUrl: a.natsUrl });
  const r = await fetch(`${a.base}/api/v1/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: `d-${randomUUID()}@example.com`, password: 'correct horse battery', name: 'D' }),
  });
  const body = await json(r);
  key = body.api_key;
  const me = await json(await fetch(`${a.base}/api/v1/auth/me`, { headers: { 'X-API-Key': key } }));
  owner = { tenantId: me.tenant_id ?? null, userId: me.id ?? me.user_id ?? null };
});
afterAll(async () => {
  await b?.stop();
  await a?.stop();
  await platform?.close();
});

const A_CREDS = { signing_secret: 'route-secret-XYZ', bot_token: 'xoxb-route', app_id: 'A9' };

async function createChannel(): Promise<{ id: string }> {
  const cr = await fetch(`${a.base}/api/v1/channels`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'X-API-Key': key },
    body: JSON.stringify({ type: 'platform_a', name: `route-${randomUUID()}`, credentials: A_CREDS }),
  });
  expect(cr.status).toBe(200);
  return json(cr);
}

/** A signed platform_a message event to `channelId`'s webhook (on gateway `app`). */
async function webhook(app: TestApp, channelId: string, text: string, ts: string): Promise<void> {
  const body = JSON.stringify({
    type: 'event_callback',
    event_id: `Ev${randomUUID()}`,
    event: { type: 'message', channel: 'C1', user: 'U1', ts, text },
  });
  const now = Math.floor(Date.now() / 1000);
  const sig = 'v0=' + createHmac('sha256', A_CREDS.signing_secret).update(`v0:${now}:${body}`).digest('hex');
  const w = await fetch(`${app.base}/api/v1/channels/${channelId}/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'X-PlatformA-Request-Timestamp': String(now), 'X-PlatformA-Signature': sig },
    body,
  });
  expect(await json(w)).toEqual({ status: 'dispatched' });
}

interface Client {
  ws: WebSocket;
  frames: { type: string; message_id?: string; payload?: any }[];
  send(f: unknown): void;
}

async function open(app: TestApp): Promise<Client> {
  const ws = new WebSocket(`${app.base.replace('http', 'ws')}/v1/ws/messages`, { headers: { 'X-API-Key': key } });
  const c: Client = { ws, frames: [], send: (f) => ws.send(typeof f === 'string' ? f : JSON.stringify(f)) };
  ws.on('message', (d) => c.frames.push(JSON.parse(String(d))));
  await new Promise<void>((res, rej) => {
    ws.once('open', () => res());
    ws.once('error', rej);
  });
  await waitFor(async () => (c.frames.some((f) => f.type === 'connected') ? true : undefined), 5000, 10);
  return c;
}

const msg = (thread = `t-${randomUUID()}`): DaemonMessage => ({
  message_id: randomUUID(),
  channel: 'platform_a',
  channel_id: randomUUID(),
  channel_type: 'platform_a',
  thread_id: thread,
  sender: 'alice',
  text: 'hello daemon',
  timestamp: new Date().toISOString(),
});

describe('daemon WebSocket', () => {
  it('refuses an unauthenticated upgrade with 401', async () => {
    const ws = new WebSocket(`${a.base.replace('http', 'ws')}/v1/ws/messages`);
    const status = await new Promise<number>((res) => ws.once('unexpected-response', (_req, r) => res(r.statusCode ?? 0)));
    expect(status).toBe(401);
  });

  it("a reply by a connection that does not hold the claim routes nothing; the holder's reply is posted once", async () => {
    const channel = await createChannel();
    const c1 = await open(a);
    const c2 = await open(b);
    try {
      await webhook(a, channel.id, 'whose is it', '1700000000.000900');
      const m = await waitFor(async () => c1.frames.find((f) => f.type === 'message' && f.payload.text === 'whose is it'), 15_000);
      await waitFor(async () => c2.frames.find((f) => f.type === 'message' && f.message_id === m.message_id));
      c1.send({ type: 'claim', message_id: m.message_id });
      await waitFor(async () => c1.frames.find((f) => f.type === 'claim_ack' && f.message_id === m.message_id && f.payload.granted));
      const posts = () => platform.delivered().filter((x) => x.path === '/chat.postMessage' && x.body.thread_ts === '1700000000.000900');
      c2.send({ type: 'reply', message_id: m.message_id, payload: { text: 'not mine' } });
      const notice = await waitFor(async () => c2.frames.find((f) => f.type === 'system' && f.message_id === m.message_id));
      expect(notice.payload.text).toMatch(/does not hold the claim/);
      // Refused before anything was stored: were it routed, its post would take the one slot of
      // the message's de-duplication id (`reply:<message_id>`) and the holder's text below would
      // never be posted.
      expect(posts()).toHaveLength(0);
      // The holder's claim was untouched: another claim still loses, and its reply is posted.
      c2.send({ type: 'claim', message_id: m.message_id });
      await waitFor(async () => c2.frames.find((f) => f.type === 'claim_ack' && f.message_id === m.message_id));
      expect(c2.frames.find((f) => f.type === 'claim_ack' && f.message_id === m.message_id)!.payload.granted).toBe(false);
      c1.send({ type: 'reply', message_id: m.message_id, payload: { text: 'mine' } });
      await waitFor(async () => posts().length || undefined, 15_000);
      await outboxDrained();
      expect(posts().map((p) => p.body.text)).toEqual(['mine']);
    } finally {
      c1.ws.close();
      c2.ws.close();
    }
  }, 30_000);

  it('a claim not replied within the claim TTL expires and the message is offered again; progress extends it', async () => {
    const c1 = await open(a);
    const c2 = await open(b);
    try {
      const m = msg();
      await a.app.daemon!.dispatch(m, owner);
      await waitFor(async () =>
        c1.frames.some((f) => f.message_id === m.message_id) && c2.frames.some((f) => f.message_id === m.message_id) ? true : undefined,
      );
      c1.send({ type: 'claim', message_id: m.message_id });
      await waitFor(async () => (c1.frames.some((f) => f.type === 'claim_ack' && f.message_id === m.message_id) ? true : undefined));
      expect(c1.frames.find((f) => f.type === 'claim_ack')!.payload.granted).toBe(true);
      // Half a TTL later (or more, on a loaded machine) the holder reports progress...
      await new Promise((res) => setTimeout(res, CLAIM_TTL_MS / 2));
      const progressAt = Date.now();
      c1.send({ type: 'progress', message_id: m.message_id, payload: {} });
      // ...then, without more progress, the claim expires and the sweeper offers the message
      // again: not before a TTL after the progress (without it, half a TTL earlier). A lower
      // bound only: load can delay the offer, never bring it forward.
      const before = c2.frames.filter((f) => f.type === 'message' && f.message_id === m.message_id).length;
      await waitFor(
        async () => (c2.frames.filter((f) => f.type === 'message' && f.message_id === m.message_id).length > before ? true : undefined),
        15_000,
        20,
      );
      expect(Date.now() - progressAt).toBeGreaterThanOrEqual(CLAIM_TTL_MS - 100);
      c2.send({ type: 'claim', message_id: m.message_id });
      const ack = await waitFor(async () => c2.frames.find((f) => f.type === 'claim_ack' && f.message_id === m.message_id));
      expect(ack.payload.granted).toBe(true);
    } finally {
      c1.ws.close();
      c2.ws.close();
    }
  }, 60_000);

  it('thread affinity: the next message of a thread goes only to the connection that claimed the last one', async () => {
    const c1 = await open(a);
    const c2 = await open(b);
    try {
      const thread = `t-${randomUUID()}`;
      const m1 = msg(thread);
      await a.app.daemon!.dispatch(m1, owner);
      await waitFor(async () => (c2.frames.some((f) => f.message_id === m1.message_id) ? true : undefined));
      c2.send({ type: 'claim', message_id: m1.message_id });
      await waitFor(async () => (c2.frames.some((f) => f.type === 'claim_ack' && f.payload.granted) ? true : undefined));
      // The grant's hint reached gateway a: b published it before acknowledging the claim, so
      // once the server has everything b sent, and a has everything the server sent it, a has it.
      await b.app.bus.nc.flush();
      await a.app.bus.nc.flush();
      const m2 = msg(thread);
      await a.app.daemon!.dispatch(m2, owner);
      await waitFor(async () => (c2.frames.some((f) => f.message_id === m2.message_id) ? true : undefined));
      // A sentinel on another thread goes to every connection, after anything a sent for m2.
      const m3 = msg();
      await a.app.daemon!.dispatch(m3, owner);
      await waitFor(async () => (c1.frames.some((f) => f.message_id === m3.message_id) ? true : undefined));
      expect(c1.frames.some((f) => f.message_id === m2.message_id)).toBe(false);
    } finally {
      c1.ws.close();
      c2.ws.close();
    }
  });

  it('a signed channel webhook reaches the owner daemon, which claims it (CHANNEL_INBOX → channel-router → dispatch)', async () => {
    const channel = await createChannel();
    const c = await open(b);
    try {
      await webhook(a, channel.id, 'route me', '1700000000.000200');
      const m = await waitFor(async () => c.frames.find((f) => f.type === 'message' && f.payload.text === 'route me'), 15_000);
      expect(m.payload).toMatchObject({ channel: 'platform_a', text: 'route me', thread_id: '1700000000.000200', sender: 'U1', agent_name: '' });
      c.send({ type: 'claim', message_id: m.message_id });
      const ack = await waitFor(async () => c.frames.find((f) => f.type === 'claim_ack' && f.message_id === m.message_id));
      expect(ack.payload.granted).toBe(true);
    } finally {
      c.ws.close();
    }
  }, 30_000);

  it('closes a connection that keeps more than 1,024 frames in flight', async () => {
    const c = await open(a);
    const closed = new Promise<number>((res) => c.ws.once('close', (code) => res(code)));
    for (let i = 0; i < 3000; i++) c.send({ type: 'claim', message_id: randomUUID() });
    expect(await closed).toBe(1008);
  });

  it('ignores invalid JSON and closes on a frame over 64 KB', async () => {
    const c = await open(a);
    c.send('this is not json');
    c.send({ type: 'claim', message_id: randomUUID() });
    await waitFor(async () => (c.frames.some((f) => f.type === 'claim_ack') ? true : undefined));
    expect(c.frames.find((f) => f.type === 'claim_ack')!.payload.granted).toBe(false);
    const closed = new Promise<number>((res) => c.ws.once('close', (code) => res(code)));
    c.send('x'.repeat(70 * 1024));
    expect(await closed).toBe(1006);
  });
});
