/**
 * Channel routing end to end (issue 9, section 2.3), one gateway on a real nats-server and the
 * test database, the platforms' APIs played by a local server:
 * - no daemon claims a message within the pending-message TTL (5 s here): the default agent
 *   route runs it as the channel owner's task and posts the result to the thread (platform_a
 *   chat.postMessage in the thread; platform_b push to the conversation);
 * - config.agent_name naming a skill runs it; naming no agent: `Agent not found: <name>` posted;
 * - a daemon connecting during the wait gets the message, and no task runs;
 * - the outbox retries 5xx, 429 (Retry-After) and `ratelimited` with backoff, posts once; a
 *   final refusal is not retried; a post still failing when the gateway that stored it stops is
 *   delivered once by the other (the kill -9 case is test/daemon-processes.test.ts);
 * - a reply whose claim names a workflow is stored for it (DAEMON_SIGNALS), not posted.
 * "Nothing more happened" is shown by a barrier, never by a sleep: the channel consumers have
 * nothing left to deliver or to be acknowledged, or a sentinel message behind the one that
 * must not repeat has come through.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { BUCKETS, CONSUMERS, STREAMS, kvSnapshot } from '../src/bus/index.js';
import type { DaemonMessage } from '../src/daemon/index.js';
import { startTestNats, type TestNats } from './harness/nats.js';
import { json, startTestApp, waitFor, type TestApp } from './helpers/app.js';
import { startPlatformServer, type PlatformServer } from './helpers/platform-server.js';

let nats: TestNats;
let t: TestApp;
let platform: PlatformServer;
let env: Record<string, string>;
/** The test's own view of the bus (consumers and buckets), next to the gateway's. */
let nc: NatsConnection;
let js: JetStreamClient;
let jsm: JetStreamManager;

interface User {
  key: string;
  id: string;
  tenantId: string | null;
}
let alice: User;

beforeAll(async () => {
  nats = await startTestNats();
  nc = await connect({ servers: nats.url });
  js = jetstream(nc);
  jsm = await jetstreamManager(nc);
  platform = await startPlatformServer();
  env = {
    GATEWAY_SKIP_AUTH: '0',
    PASSWORD_SCRYPT_N: '1024',
    // Long enough for a daemon that connects once the message is pending to claim it on a loaded
    // machine (the late-daemon case), short enough for the agent-route cases to wait it out.
    DAEMON_PENDING_TTL_SECONDS: '5',
    DAEMON_CLAIM_TTL_SECONDS: '5',
    PLATFORM_A_API_URL: platform.url,
    PLATFORM_B_API_URL: platform.url,
  };
  t = await startTestApp(env, { natsUrl: nats.url });
  const r = await fetch(`${t.base}/api/v1/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: `route-${randomUUID()}@example.com`, password: 'password123' }),
  });
  expect(r.status).toBe(201);
  const b = await json(r);
  const me = await json(await fetch(`${t.base}/api/v1/auth/me`, { headers: { 'X-API-Key': b.api_key } }));
  alice = { key: b.api_key, id: b.user.id, tenantId: me.tenant_id ?? null };
}, 60_000);
afterAll(async () => {
  await t?.stop();
  await platform?.close();
  await nc?.close();
  await nats?.stop();
});

const A_CREDS = { signing_secret: 'a-route-secret', bot_token: 'xoxb-route-token', app_id: 'A1' };
const B_CREDS = { channel_secret: 'b-route-secret', channel_access_token: 'b-route-access' };

async function createChannel(type: 'platform_a' | 'platform_b', config?: Record<string, unknown>): Promise<{ id: string }> {
  const r = await fetch(`${t.base}/api/v1/channels`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'X-API-Key': alice.key },
    body: JSON.stringify({ type, name: `ch-${randomUUID()}`, credentials: type === 'platform_a' ? A_CREDS : B_CREDS, ...(config ? { config } : {}) }),
  });
  expect(r.status).toBe(200);
  return json(r);
}

async function webhookA(app: TestApp, channelId: string, text: string, ts: string, conversation = 'C42'): Promise<void> {
  const body = JSON.stringify({
    type: 'event_callback',
    event_id: `Ev${randomUUID()}`,
    event: { type: 'message', channel: conversation, user: 'U7', ts, text },
  });
  const now = Math.floor(Date.now() / 1000);
  const sig = 'v0=' + createHmac('sha256', A_CREDS.signing_secret).update(`v0:${now}:${body}`).digest('hex');
  const r = await fetch(`${app.base}/api/v1/channels/${channelId}/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'X-PlatformA-Request-Timestamp': String(now), 'X-PlatformA-Signature': sig },
    body,
  });
  expect(await json(r)).toEqual({ status: 'dispatched' });
}

async function webhookB(channelId: string, text: string, userId: string): Promise<void> {
  const body = JSON.stringify({
    events: [
      {
        type: 'message',
        webhookEventId: randomUUID(),
        replyToken: `rt-${randomUUID()}`,
        source: { type: 'user', userId },
        message: { id: '1', type: 'text', text },
      },
    ],
  });
  const r = await fetch(`${t.base}/api/v1/channels/${channelId}/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'X-PlatformB-Signature': createHmac('sha256', B_CREDS.channel_secret).update(body).digest('base64') },
    body,
  });
  expect(await json(r)).toEqual({ status: 'dispatched' });
}

const postsTo = (path: string, pred: (b: any) => boolean) => platform.delivered().filter((c) => c.path === path && pred(c.body));

async function tasksOf(): Promise<any[]> {
  const r = await fetch(`${t.base}/api/v1/tasks?limit=100`, { headers: { 'X-API-Key': alice.key } });
  return (await json(r)).tasks;
}

interface Client {
  ws: WebSocket;
  frames: any[];
  send(f: unknown): void;
}
async function daemon(app: TestApp): Promise<Client> {
  const ws = new WebSocket(`${app.base.replace('http', 'ws')}/v1/ws/messages`, { headers: { 'X-API-Key': alice.key } });
  const c: Client = { ws, frames: [], send: (f) => ws.send(JSON.stringify(f)) };
  ws.on('message', (d) => c.frames.push(JSON.parse(String(d))));
  await new Promise<void>((res, rej) => {
    ws.once('open', () => res());
    ws.once('error', rej);
  });
  await waitFor(async () => c.frames.find((f) => f.type === 'connected'), 5000, 10);
  return c;
}

/** Claims the message with `text` once it arrives, then replies `reply`; resolves to its id. */
async function claimAndReply(c: Client, text: string, reply: string): Promise<string> {
  const m = await waitFor(async () => c.frames.find((f) => f.type === 'message' && f.payload.text === text), 15_000);
  c.send({ type: 'claim', message_id: m.message_id });
  const ack = await waitFor(async () => c.frames.find((f) => f.type === 'claim_ack' && f.message_id === m.message_id));
  expect(ack.payload.granted).toBe(true);
  c.send({ type: 'reply', message_id: m.message_id, payload: { channel: 'platform_a', thread_id: m.payload.thread_id, text: reply, format: 'text' } });
  return m.message_id;
}

/**
 * A barrier: the channel router and sender have nothing left to deliver or to be acknowledged
 * (a post being retried is still waiting for its acknowledgement), and no channel task is
 * waiting for its result to be posted.
 */
async function drained(): Promise<void> {
  await waitFor(
    async () => {
      for (const [stream, consumer] of [
        [STREAMS.channelInbox, CONSUMERS.channelRouter],
        [STREAMS.channelOutbox, CONSUMERS.channelSender],
      ] as const) {
        const i = await jsm.consumers.info(stream, consumer);
        if (i.num_pending || i.num_ack_pending) return false;
      }
      return (await kvSnapshot(js, jsm, BUCKETS.channelTasks)).length === 0;
    },
    30_000,
    50,
  );
}

/** The DAEMON_PENDING entry of the message with `text`, if it is pending. */
async function pendingWith(text: string): Promise<{ offered: boolean } | undefined> {
  return (await kvSnapshot(js, jsm, BUCKETS.daemonPending))
    .map((e) => JSON.parse(new TextDecoder().decode(e.value)) as { msg: { text: string }; offered: boolean })
    .find((p) => p.msg.text === text);
}

describe('channel routing', () => {
  it('no daemon: after the pending TTL the default agent route runs the message and posts the result to the thread (platform_a)', async () => {
    const ch = await createChannel('platform_a');
    const before = new Set((await tasksOf()).map((x) => x.task_id));
    const sent = Date.now();
    await webhookA(t, ch.id, 'What is the capital of France?', '1700000100.000100');
    const post = await waitFor(async () => postsTo('/chat.postMessage', (b) => b.thread_ts === '1700000100.000100')[0], 30_000, 100);
    // Not before the pending-message TTL (5 s): the message waited for a daemon first.
    expect(post.at - sent).toBeGreaterThanOrEqual(5000);
    expect(post.body).toMatchObject({ channel: 'C42', thread_ts: '1700000100.000100', mrkdwn: true });
    expect(post.headers.authorization).toBe(`Bearer ${A_CREDS.bot_token}`);
    // The task ran as the channel's owner, and what was posted is its result.
    const task = (await tasksOf()).find((x) => !before.has(x.task_id) && x.query === 'What is the capital of France?');
    expect(task).toBeDefined();
    const status = await json(await fetch(`${t.base}/api/v1/tasks/${task.task_id}`, { headers: { 'X-API-Key': alice.key } }));
    expect(status.status).toBe('TASK_STATUS_COMPLETED');
    expect(post.body.text).toBe(status.result);
    // Posted once: once nothing is left in flight, nothing more can come.
    await drained();
    expect(postsTo('/chat.postMessage', (b) => b.thread_ts === '1700000100.000100')).toHaveLength(1);
  }, 60_000);

  it('no daemon: platform_b results are pushed to the conversation (the reply token went to the acknowledgement)', async () => {
    const ch = await createChannel('platform_b');
    const user = `Ub${randomUUID().slice(0, 8)}`;
    await webhookB(ch.id, 'Say hello', user);
    const push = await waitFor(async () => postsTo('/v2/bot/message/push', (b) => b.to === user)[0], 30_000, 100);
    expect(push.headers.authorization).toBe(`Bearer ${B_CREDS.channel_access_token}`);
    expect(push.body.messages).toHaveLength(1);
    expect(push.body.messages[0].type).toBe('text');
    expect(push.body.messages[0].text.length).toBeGreaterThan(0);
    expect(platform.delivered().some((c) => c.path === '/v2/bot/message/reply')).toBe(true);
  }, 60_000);

  it('config.agent_name naming no agent: "Agent not found: <name>" is posted to the thread', async () => {
    const ch = await createChannel('platform_a', { agent_name: 'no-such-agent' });
    await webhookA(t, ch.id, 'route me to a missing agent', '1700000200.000100');
    const post = await waitFor(async () => postsTo('/chat.postMessage', (b) => b.thread_ts === '1700000200.000100')[0], 30_000, 100);
    expect(post.body.text).toBe('Agent not found: no-such-agent');
  }, 60_000);

  it('config.agent_name naming a skill: the message runs that skill, and its result is posted', async () => {
    const ch = await createChannel('platform_a', { agent_name: 'code-review' });
    await webhookA(t, ch.id, 'Review this: function add(a, b) { return a - b }', '1700000250.000100');
    const post = await waitFor(async () => postsTo('/chat.postMessage', (b) => b.thread_ts === '1700000250.000100')[0], 30_000, 100);
    const task = (await tasksOf()).find((x) => x.query === 'Review this: function add(a, b) { return a - b }');
    expect(task).toBeDefined();
    const row = await t.app.store.getTask(task.task_id);
    expect(row!.options.skill).toMatchObject({ name: 'code-review' });
    expect(row!.status).toBe('TASK_STATUS_COMPLETED');
    expect(post.body.text).toBe(row!.result);
  }, 60_000);

  it('a daemon connecting while the message waits gets it; its reply is posted and no task runs', async () => {
    const ch = await createChannel('platform_a', { agent_name: 'helper' });
    await webhookA(t, ch.id, 'for the late daemon', '1700000300.000100');
    // The state this test is about: the message waits, pending, offered to no connection.
    await waitFor(async () => (await pendingWith('for the late daemon'))?.offered === false || undefined, 15_000, 20);
    const c = await daemon(t);
    try {
      const id = await claimAndReply(c, 'for the late daemon', 'handled by the daemon');
      expect(c.frames.find((f) => f.message_id === id && f.type === 'message').payload.agent_name).toBe('helper');
      const post = await waitFor(async () => postsTo('/chat.postMessage', (b) => b.thread_ts === '1700000300.000100')[0], 15_000, 50);
      expect(post.body).toMatchObject({ channel: 'C42', text: 'handled by the daemon', mrkdwn: false });
      // The replied message does not also go to the agent route. A sentinel, sent after the reply
      // and claimed by no one, goes there a pending TTL after it arrived; the sweeper passes that
      // routed it saw the first message too (older, so due earlier), had it still been pending.
      await webhookA(t, ch.id, 'sentinel for the late daemon', '1700000300.000200');
      await waitFor(async () => postsTo('/chat.postMessage', (b) => b.thread_ts === '1700000300.000200')[0], 30_000, 50);
      await drained();
      expect(postsTo('/chat.postMessage', (b) => b.thread_ts === '1700000300.000100')).toHaveLength(1);
      expect((await tasksOf()).filter((x) => x.query === 'for the late daemon')).toHaveLength(0);
      expect(await pendingWith('for the late daemon')).toBeUndefined();
    } finally {
      c.ws.close();
    }
  }, 60_000);

  it('the outbox retries 5xx, 429 with Retry-After and "ratelimited", and posts once', async () => {
    const ch = await createChannel('platform_a');
    const c = await daemon(t);
    try {
      platform.script({ status: 500 }, { status: 429, retryAfter: 1 }, { okFalse: 'ratelimited' });
      const callsBefore = platform.calls.length;
      await webhookA(t, ch.id, 'retry me', '1700000400.000100');
      await claimAndReply(c, 'retry me', 'eventually posted');
      const post = await waitFor(async () => postsTo('/chat.postMessage', (b) => b.text === 'eventually posted')[0], 30_000, 100);
      await drained();
      const attempts = platform.calls.slice(callsBefore).filter((x) => x.body?.text === 'eventually posted');
      expect(attempts).toHaveLength(4);
      // The 429's Retry-After (1 s) was honoured before the third attempt.
      expect(attempts[2]!.at - attempts[1]!.at).toBeGreaterThanOrEqual(950);
      expect(post.body.thread_ts).toBe('1700000400.000100');
    } finally {
      c.ws.close();
    }
  }, 60_000);

  it('a final refusal by the platform is not retried', async () => {
    const ch = await createChannel('platform_a');
    const c = await daemon(t);
    try {
      platform.script({ okFalse: 'channel_not_found' });
      await webhookA(t, ch.id, 'refused post', '1700000500.000100');
      await claimAndReply(c, 'refused post', 'nobody will see this');
      await waitFor(async () => platform.calls.find((x) => x.body?.text === 'nobody will see this'), 15_000, 50);
      // A post waiting for a retry stays unacknowledged: drained means it was let go.
      await drained();
      expect(platform.calls.filter((x) => x.body?.text === 'nobody will see this')).toHaveLength(1);
    } finally {
      c.ws.close();
    }
  }, 60_000);

  it('a post still being retried when the gateway that stored it stops is delivered once by the other gateway (graceful stop; kill -9 in daemon-processes)', async () => {
    const ch = await createChannel('platform_a');
    const other = await startTestApp(env, { natsUrl: nats.url });
    const c = await daemon(other);
    try {
      // The first attempts fail (on whichever gateway takes them); the one that stored it stops.
      platform.script({ status: 503 }, { status: 503 });
      await webhookA(other, ch.id, 'survive me', '1700000600.000100');
      await claimAndReply(c, 'survive me', 'still delivered');
      await waitFor(async () => platform.calls.find((x) => x.body?.text === 'still delivered'), 15_000, 50);
      c.ws.close();
      await other.stop();
      const post = await waitFor(async () => postsTo('/chat.postMessage', (b) => b.text === 'still delivered')[0], 30_000, 100);
      expect(post.body.thread_ts).toBe('1700000600.000100');
      await drained();
      expect(postsTo('/chat.postMessage', (b) => b.text === 'still delivered')).toHaveLength(1);
    } finally {
      c.ws.close();
      await other.stop().catch(() => undefined);
    }
  }, 90_000);

  it('a reply whose claim names a workflow is stored for that workflow (DAEMON_SIGNALS), not posted', async () => {
    const c = await daemon(t);
    try {
      const workflowId = randomUUID();
      const m: DaemonMessage = {
        message_id: randomUUID(),
        channel: 'platform_a',
        thread_id: `t-${randomUUID()}`,
        sender: 'workflow',
        text: 'approve the plan?',
        timestamp: new Date().toISOString(),
        workflow_id: workflowId,
        workflow_run_id: 'run-1',
      };
      await t.app.daemon!.dispatch(m, { tenantId: alice.tenantId, userId: alice.id });
      const callsBefore = platform.calls.length;
      await claimAndReply(c, 'approve the plan?', 'approved');
      const r = await waitFor(async () => t.app.daemon!.replyFor(workflowId, m.message_id), 10_000, 50);
      expect(r).toMatchObject({
        message_id: m.message_id,
        text: 'approved',
        thread_id: m.thread_id,
        claim: { workflow_id: workflowId, workflow_run_id: 'run-1' },
      });
      expect(platform.calls.length).toBe(callsBefore);
    } finally {
      c.ws.close();
    }
  }, 30_000);
});
