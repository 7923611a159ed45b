/**
 * Daemon claims across two real gateway processes (`node src/main.ts`, ROLES=gateway) sharing
 * one nats-server and the test database, with 10 real WebSocket daemon clients (5 on each) and
 * 1,000 messages arriving through signed platform_a webhooks (half on each process):
 * - every connection is offered every message, and every claim is answered;
 * - exactly one grant per message and offer round;
 * - 1 message in 100 is won by a daemon that stalls (never replies): its claim expires after
 *   DAEMON_CLAIM_TTL_SECONDS, the message is offered again, and a second daemon wins and replies;
 * - 1 message in 100 is won by a daemon that works past the claim TTL sending `progress`: its
 *   lease holds (one grant only), and its reply goes through;
 * - every message's reply reaches the channel's API (a local platform server) exactly once, in
 *   the message's thread;
 * - kill -9 of a gateway holding claims and posts the platform keeps refusing: its unreplied
 *   claims expire and the other gateway's daemon gets the messages; the posts it had stored are
 *   delivered by the other gateway; every thread answered once.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import WebSocket from 'ws';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { STREAMS, subjects } from '../src/bus/index.js';
import { startTestNats, type TestNats } from './harness/nats.js';
import { json, waitFor } from './helpers/app.js';
import { startPlatformServer, type PlatformServer } from './helpers/platform-server.js';
import { gatewayBase, startServiceProcess, type ServiceProcess } from './helpers/process.js';

const N = 1000;
const CLAIM_TTL_S = 5;
const dirs: string[] = [];
let nats: TestNats;
let platform: PlatformServer;
const procs: ServiceProcess[] = [];
const bases: string[] = [];
let key = '';

beforeAll(async () => {
  nats = await startTestNats();
  platform = await startPlatformServer();
  for (let i = 0; i < 2; i++) {
    const dir = mkdtempSync(join(tmpdir(), 'taskorch-daemon-gw-'));
    dirs.push(dir);
    const p = await startServiceProcess({
      ROLES: 'gateway',
      DATA_DIR: dir,
      NATS_URL: nats.url,
      DATABASE_URL: inject('pgUrl'),
      GATEWAY_HOST: '127.0.0.1',
      GATEWAY_PORT: '0',
      GATEWAY_SKIP_AUTH: '0',
      PASSWORD_SCRYPT_N: '1024',
      // Both gateways decrypt the channel's credentials (either may post a reply).
      CHANNEL_SECRET_KEY: 'ab'.repeat(32),
      DAEMON_CLAIM_TTL_SECONDS: String(CLAIM_TTL_S),
      // Long: messages wait for the daemons here, never for the agent route.
      DAEMON_PENDING_TTL_SECONDS: '600',
      PLATFORM_A_API_URL: platform.url,
    });
    procs.push(p);
    bases.push(await gatewayBase(p));
  }
  const r = await fetch(`${bases[0]}/api/v1/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: `daemons-${randomUUID()}@example.com`, password: 'password123' }),
  });
  expect(r.status).toBe(201);
  key = (await json(r)).api_key;
}, 150_000);

afterAll(async () => {
  for (const p of procs) p.kill('SIGTERM');
  await Promise.all(procs.map((p) => p.exited));
  await platform?.close();
  await nats?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const A_CREDS = { signing_secret: 'procs-secret', bot_token: 'xoxb-procs', app_id: 'A7' };

/** Posts of a channel still in the outbox (stored, not yet accepted by the platform and acknowledged). */
async function outboxHolds(channelId: string): Promise<number> {
  const nc = await connect({ servers: nats.url });
  try {
    const subject = subjects.channelOutbox(channelId);
    const info = await (await jetstreamManager(nc)).streams.info(STREAMS.channelOutbox, { subjects_filter: subject });
    return info.state.subjects?.[subject] ?? 0;
  } finally {
    await nc.close();
  }
}
const ts = (i: number) => `1700001000.${String(i).padStart(6, '0')}`;

interface Frame {
  type: string;
  message_id?: string;
  payload?: any;
  at: number;
}

describe('daemon claims on two gateway processes', () => {
  it('10 connections, 1,000 messages: one grant per offer, expiry re-dispatch, progress holding the lease, every reply posted once', async () => {
    const cr = await fetch(`${bases[0]}/api/v1/channels`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-API-Key': key },
      body: JSON.stringify({ type: 'platform_a', name: `procs-${randomUUID()}`, credentials: A_CREDS }),
    });
    expect(cr.status).toBe(200);
    const channel = await json(cr);

    const stalled = new Set<string>(); // message ids whose first winner stalled
    const timers: NodeJS.Timeout[] = [];
    const clients: { ws: WebSocket; frames: Frame[] }[] = [];
    for (let i = 0; i < 10; i++) {
      const ws = new WebSocket(`${bases[i % 2]!.replace('http', 'ws')}/v1/ws/messages`, { headers: { 'X-API-Key': key } });
      const c = { ws, frames: [] as Frame[] };
      const send = (f: unknown) => ws.readyState === WebSocket.OPEN && ws.send(JSON.stringify(f));
      ws.on('message', (d) => {
        const f = { ...(JSON.parse(String(d)) as Omit<Frame, 'at'>), at: Date.now() };
        c.frames.push(f);
        if (f.type === 'message') send({ type: 'claim', message_id: f.message_id });
        if (f.type !== 'claim_ack' || !f.payload.granted) return;
        const id = f.message_id!;
        const m = c.frames.find((x) => x.type === 'message' && x.message_id === id)!;
        const n = Number(/message (\d+)/.exec(m.payload.text)![1]);
        const reply = () => send({ type: 'reply', message_id: id, payload: { thread_id: m.payload.thread_id, text: `re: ${m.payload.text}`, format: 'text' } });
        if (n % 100 === 7 && !stalled.has(id)) {
          stalled.add(id); // this daemon is stuck: no progress, no reply
        } else if (n % 100 === 13) {
          // Works past the claim TTL, telling the server it is alive every second (a TTL is five of
          // those: a loaded machine would have to stall four seconds to lose the lease).
          for (let k = 1; k <= 7; k++)
            timers.push(setTimeout(() => send({ type: 'progress', message_id: id, payload: { status: 'working', percent: k * 12 } }), k * 1000));
          timers.push(setTimeout(reply, CLAIM_TTL_S * 1000 + 3000));
        } else {
          reply();
        }
      });
      await new Promise<void>((res, rej) => {
        ws.once('open', () => res());
        ws.once('error', rej);
      });
      clients.push(c);
    }
    try {
      await waitFor(async () => clients.every((c) => c.frames.some((f) => f.type === 'connected')) || undefined, 10_000);
      // 1,000 signed webhooks, half to each gateway process, 16 at a time.
      let next = 0;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (next < N) {
            const i = next++;
            const body = JSON.stringify({
              type: 'event_callback',
              event_id: `Ev${randomUUID()}`,
              event: { type: 'message', channel: 'C5', user: 'U5', ts: ts(i), text: `message ${i}` },
            });
            const now = Math.floor(Date.now() / 1000);
            const sig = 'v0=' + createHmac('sha256', A_CREDS.signing_secret).update(`v0:${now}:${body}`).digest('hex');
            const w = await fetch(`${bases[i % 2]}/api/v1/channels/${channel.id}/webhook`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', 'X-PlatformA-Request-Timestamp': String(now), 'X-PlatformA-Signature': sig },
              body,
            });
            expect(await json(w)).toEqual({ status: 'dispatched' });
          }
        }),
      );

      // Every reply posted once, in its thread (the stalled ones after their claim expired).
      const posts = () => platform.delivered().filter((x) => x.path === '/chat.postMessage');
      await waitFor(async () => posts().length >= N || undefined, 150_000, 250);
      // Nothing more can be posted once the outbox holds nothing for the channel.
      await waitFor(async () => (await outboxHolds(channel.id)) === 0 || undefined, 30_000, 50);
      expect(posts()).toHaveLength(N);
      const byText = new Map(posts().map((p) => [p.body.text as string, p.body]));
      for (let i = 0; i < N; i++) expect(byText.get(`re: message ${i}`), `reply ${i}`).toMatchObject({ channel: 'C5', thread_ts: ts(i) });

      // Grants per message, over all connections.
      const idOf = new Map<number, string>();
      for (const f of clients[0]!.frames) if (f.type === 'message') idOf.set(Number(/message (\d+)/.exec(f.payload.text)![1]), f.message_id!);
      expect(idOf.size).toBe(N);
      const grants = (id: string) =>
        clients.flatMap((c) => c.frames.filter((f) => f.type === 'claim_ack' && f.message_id === id && f.payload.granted)).sort((a, b) => a.at - b.at);
      const offers = (c: { frames: Frame[] }, id: string) => c.frames.filter((f) => f.type === 'message' && f.message_id === id).length;
      for (let i = 0; i < N; i++) {
        const id = idOf.get(i)!;
        const g = grants(id);
        if (i % 100 === 7) {
          // The stalled claim expired: offered again to every connection, won by exactly one more.
          expect(g, `message ${i}`).toHaveLength(2);
          expect(g[1]!.at - g[0]!.at).toBeGreaterThanOrEqual(CLAIM_TTL_S * 1000 - 500);
          for (const c of clients) expect(offers(c, id)).toBeGreaterThanOrEqual(2);
        } else {
          // Once, including the ones that worked past the TTL on progress alone.
          expect(g, `message ${i}`).toHaveLength(1);
        }
        // Every connection was offered it.
        for (const c of clients) expect(offers(c, id)).toBeGreaterThanOrEqual(1);
      }
      expect(stalled.size).toBe(N / 100);
      // Every claim was answered: one claim_ack per message frame each connection got.
      for (const c of clients) expect(c.frames.filter((f) => f.type === 'claim_ack').length).toBe(c.frames.filter((f) => f.type === 'message').length);
      // Both processes' connections won messages.
      const winners = (c: { frames: Frame[] }) => c.frames.filter((f) => f.type === 'claim_ack' && f.payload.granted).length;
      expect(clients.filter((_, i) => i % 2 === 0).reduce((s, c) => s + winners(c), 0)).toBeGreaterThan(0);
      expect(clients.filter((_, i) => i % 2 === 1).reduce((s, c) => s + winners(c), 0)).toBeGreaterThan(0);
    } finally {
      timers.forEach((t) => clearTimeout(t));
      clients.forEach((c) => c.ws.close());
    }
  }, 240_000);

  it('kill -9 of a gateway holding claims and retrying posts: nothing is lost, every thread answered once', async () => {
    const cr = await fetch(`${bases[1]}/api/v1/channels`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-API-Key': key },
      body: JSON.stringify({ type: 'platform_a', name: `kill-${randomUUID()}`, credentials: A_CREDS }),
    });
    expect(cr.status).toBe(200);
    const channel = await json(cr);
    const open = async (base: string) => {
      const ws = new WebSocket(`${base.replace('http', 'ws')}/v1/ws/messages`, { headers: { 'X-API-Key': key } });
      const frames: Frame[] = [];
      ws.on('message', (d) => frames.push({ ...(JSON.parse(String(d)) as Omit<Frame, 'at'>), at: Date.now() }));
      ws.on('error', () => undefined); // its gateway is killed
      await new Promise<void>((res, rej) => {
        ws.once('open', () => res());
        ws.once('error', rej);
      });
      return { ws, frames, send: (f: unknown) => ws.readyState === WebSocket.OPEN && ws.send(JSON.stringify(f)) };
    };
    const K = 10;
    const kts = (i: number) => `1700002000.${String(i).padStart(6, '0')}`;
    // Only a daemon on gateway 0 at first: it claims all, replies to half; the platform refuses
    // the first posts, asking for a retry well after the kill (so none is in flight then).
    const doomed = await open(bases[0]!);
    const refused = 3;
    platform.script(...Array.from({ length: refused }, () => ({ status: 503, retryAfter: 10 })));
    for (let i = 0; i < K; i++) {
      const body = JSON.stringify({
        type: 'event_callback',
        event_id: `Ev${randomUUID()}`,
        event: { type: 'message', channel: 'C6', user: 'U6', ts: kts(i), text: `kill ${i}` },
      });
      const now = Math.floor(Date.now() / 1000);
      const sig = 'v0=' + createHmac('sha256', A_CREDS.signing_secret).update(`v0:${now}:${body}`).digest('hex');
      const w = await fetch(`${bases[1]}/api/v1/channels/${channel.id}/webhook`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'X-PlatformA-Request-Timestamp': String(now), 'X-PlatformA-Signature': sig },
        body,
      });
      expect(await json(w)).toEqual({ status: 'dispatched' });
    }
    const msgs = await waitFor(async () => {
      const ms = doomed.frames.filter((f) => f.type === 'message' && /^kill \d+$/.test(f.payload.text));
      return ms.length === K ? ms : undefined;
    }, 20_000);
    for (const m of msgs) doomed.send({ type: 'claim', message_id: m.message_id });
    await waitFor(async () => doomed.frames.filter((f) => f.type === 'claim_ack' && f.payload.granted).length === K || undefined, 20_000);
    const n = (m: Frame) => Number(/kill (\d+)/.exec(m.payload.text)![1]);
    for (const m of msgs)
      if (n(m) % 2 === 0) doomed.send({ type: 'reply', message_id: m.message_id, payload: { thread_id: m.payload.thread_id, text: `first ${n(m)}` } });
    // The replies are stored (their claims end) and every post was tried once: some refused (and
    // waiting for their retry), the others accepted. Gateway 0 dies once every accepted post was
    // also acknowledged (left the outbox): a post the platform took but whose acknowledgement the
    // kill cut off is posted again by the other gateway (at least once), which is not this test.
    const firsts = () => platform.calls.filter((c) => /^first /.test(c.body?.text ?? ''));
    await waitFor(async () => firsts().length >= K / 2 || undefined, 20_000);
    await waitFor(async () => (await outboxHolds(channel.id)) === refused || undefined, 20_000, 20);
    procs[0]!.kill('SIGKILL');
    await procs[0]!.exited;
    // A daemon on the surviving gateway answers whatever comes to it.
    const survivor = await open(bases[1]!);
    survivor.ws.on('message', (d) => {
      const f = JSON.parse(String(d));
      if (f.type === 'message' && /^kill \d+$/.test(f.payload.text)) survivor.send({ type: 'claim', message_id: f.message_id });
      if (f.type === 'claim_ack' && f.payload.granted) {
        const m = survivor.frames.find((x) => x.type === 'message' && x.message_id === f.message_id)!;
        survivor.send({ type: 'reply', message_id: f.message_id, payload: { thread_id: m.payload.thread_id, text: `second ${n(m)}` } });
      }
    });
    const posted = () => platform.delivered().filter((c) => c.path === '/chat.postMessage' && c.body.channel === 'C6');
    await waitFor(async () => posted().length >= K || undefined, 90_000, 250);
    // Nothing more can be posted once the outbox holds nothing for the channel.
    await waitFor(async () => (await outboxHolds(channel.id)) === 0 || undefined, 30_000, 50);
    const byThread = new Map<string, string[]>();
    for (const p of posted()) byThread.set(p.body.thread_ts, [...(byThread.get(p.body.thread_ts) ?? []), p.body.text]);
    for (let i = 0; i < K; i++) expect(byThread.get(kts(i)), `thread ${i}`).toEqual([i % 2 === 0 ? `first ${i}` : `second ${i}`]);
    survivor.ws.close();
  }, 150_000);
});
