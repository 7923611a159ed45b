/**
 * What a client sees while a dependency is down: a 503 with Retry-After and the spec's
 * `{error}` body, never a 500, a hang or a transport message (the fault drill's defect 3).
 * One gateway-only app whose ORCHESTRATOR_URL names a dead port, on its own nats-server:
 * - submit, status and list answer 503 + Retry-After without the connection error's text;
 *   an HTTP/2 stream the peer cancels is 503 too, while a peer's own answer keeps its code;
 * - a pending Idempotency-Key mark whose holder died stops blocking retries after its lease,
 *   while a live holder's mark is renewed and keeps the key;
 * - with the nats-server frozen (SIGSTOP), the client leaves it within a few seconds and the
 *   channel webhook answers 503 + Retry-After instead of 500, then works again after SIGCONT.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { createServer as createH2Server, constants as h2, type Http2Server, type ServerHttp2Session } from 'node:http2';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { OrchestratorService } from '../src/gen/svc/v1/orchestrator_pb.js';
import { Code, createLogger, notFound, toAppError, toConnectError } from '../src/kernel/index.js';
import { Idempotency, PENDING_LEASE_MS } from '../src/gateway/admission.js';
import { json, startTestApp, type TestApp } from './helpers/app.js';
import { startTestNats, type TestNats } from './harness/nats.js';

let nats: TestNats;
let t: TestApp;
let deadUrl: string;

/** A loopback port nothing listens on (bound, then released). */
async function deadPort(): Promise<number> {
  const s = createNetServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

beforeAll(async () => {
  nats = await startTestNats();
  deadUrl = `http://127.0.0.1:${await deadPort()}`;
  t = await startTestApp({ ROLES: 'gateway', ORCHESTRATOR_URL: deadUrl, CHANNEL_SECRET_KEY: 'ab'.repeat(32) }, { natsUrl: nats.url });
}, 60_000);

afterAll(async () => {
  if (nats?.pid) process.kill(nats.pid, 'SIGCONT');
  await t?.stop();
  await nats?.stop();
});

const expectUnavailable = async (r: Response, what: string) => {
  const text = await r.text();
  expect(r.status, `${what}: ${text}`).toBe(503);
  expect(r.headers.get('retry-after'), what).toMatch(/^[1-9]\d*$/);
  expect(Object.keys(JSON.parse(text)), what).toEqual(['error']);
  expect(text, what).not.toMatch(/ECONN|http\/2|127\.0\.0\.1/);
};

describe('the orchestrator down', () => {
  it('answers submit, status and list with 503 + Retry-After and no transport text', async () => {
    const submit = await fetch(`${t.base}/api/v1/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'Idempotency-Key': randomUUID() },
      body: JSON.stringify({ query: 'hello', mode: 'simple' }),
    });
    await expectUnavailable(submit, 'submit');
    await expectUnavailable(await fetch(`${t.base}/api/v1/tasks/${randomUUID()}`), 'status');
    await expectUnavailable(await fetch(`${t.base}/api/v1/tasks`), 'list');
  });

  it('maps a stream the peer cancels to Unavailable, and keeps the code of an answer', async () => {
    // An HTTP/2 peer that resets the first stream with CANCEL (a process going down
    // mid-call) and answers the second with a gRPC NotFound.
    let calls = 0;
    const server: Http2Server = createH2Server((req, res) => {
      if (++calls === 1) return req.stream.close(h2.NGHTTP2_CANCEL);
      res.stream.respond(
        { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': String(Code.NotFound), 'grpc-message': 'no such task' },
        { endStream: true },
      );
    });
    const sessions = new Set<ServerHttp2Session>();
    server.on('session', (s: ServerHttp2Session) => sessions.add(s));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const client = createClient(OrchestratorService, createGrpcTransport({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }));
      const failed = await client.getTaskStatus({ taskId: 'x' }).catch((e: unknown) => e);
      const cancelled = toAppError(failed);
      expect(cancelled.code).toBe(Code.Unavailable);
      expect(cancelled.retryAfter).toBeGreaterThan(0);
      expect(cancelled.message).not.toMatch(/http\/2|CANCEL/);
      const answered = toAppError(await client.getTaskStatus({ taskId: 'x' }).catch((e: unknown) => e));
      expect([answered.code, answered.message]).toEqual([Code.NotFound, 'no such task']);
    } finally {
      // The client keeps its HTTP/2 session open; close() waits for it.
      for (const s of sessions) s.destroy();
      await new Promise((r) => server.close(r));
    }
    // An in-process implementation's error (no trailers, made by toConnectError) keeps its code too.
    expect(toAppError(toConnectError(notFound('gone'))).code).toBe(Code.NotFound);
  });
});

describe('Idempotency-Key marks', () => {
  it("a dead holder's mark lapses after its lease; a live holder's is renewed; a released one is 503 to its waiter", async () => {
    const log = createLogger({ level: 'silent' });
    const kv = t.app.bus.kv.idempotency;
    const holder = new Idempotency(t.app.bus, log);
    const retry = new Idempotency(t.app.bus, log);
    const deadKey = `dead-${randomUUID()}`;
    const liveKey = `live-${randomUUID()}`;
    // The mark a killed gateway leaves: written once, never renewed.
    await kv.create(deadKey, new TextEncoder().encode('"__pending__"'));
    expect(await holder.claim(liveKey, 1)).toBe(true);
    expect(await retry.claim(deadKey, 1)).toBe(false);

    await sleep(PENDING_LEASE_MS + 500);
    // The dead mark lapsed: no reply to wait for, and the retry takes the key over, once.
    expect(await retry.cachedReply(deadKey)).toBeUndefined();
    expect(await retry.claim(deadKey, 1)).toBe(true);
    expect(await holder.claim(deadKey, 1)).toBe(false);
    // The live mark was renewed all along: still held, then its reply is what a retry gets.
    expect(Date.now() - (await kv.get(liveKey))!.created.getTime()).toBeLessThan(PENDING_LEASE_MS);
    expect(await retry.claim(liveKey, 1)).toBe(false);
    await holder.store(liveKey, { status: 200, body: { task_id: 't1' } });
    expect(await retry.cachedReply(liveKey)).toMatchObject({ status: 200, body: { task_id: 't1' }, headers: { 'Idempotency-Replayed': 'true' } });

    // A waiter whose holder fails (releases) is told to retry with 503, not 409.
    const waiting = holder.awaitReply(deadKey).catch((e: unknown) => toAppError(e));
    await retry.release(deadKey);
    const told = await waiting;
    expect(told).toMatchObject({ code: Code.Unavailable });
    expect((told as { retryAfter?: number }).retryAfter).toBeGreaterThan(0);
  }, 30_000);
});

describe('a frozen nats-server', () => {
  it('is left within seconds, and the channel webhook answers 503 + Retry-After until it is back', async () => {
    const created = await fetch(`${t.base}/api/v1/channels`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'platform_a', name: `ch-${randomUUID()}`, credentials: { signing_secret: 'sig', bot_token: 'bot', app_id: 'A1' } }),
    });
    expect(created.status).toBe(200);
    const channel = await json(created);
    const hook = () => {
      const body = JSON.stringify({
        type: 'event_callback',
        event_id: randomUUID(),
        event: { type: 'message', channel: 'C1', user: 'U1', ts: '1700000000.000100', text: 'hello' },
      });
      const ts = Math.floor(Date.now() / 1000);
      const sig = 'v0=' + createHmac('sha256', 'sig').update(`v0:${ts}:${body}`).digest('hex');
      return fetch(`${t.base}/api/v1/channels/${channel.id}/webhook`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'X-PlatformA-Request-Timestamp': String(ts), 'X-PlatformA-Signature': sig },
        body,
        signal: AbortSignal.timeout(15_000),
      });
    };
    expect(await json(await hook())).toEqual({ status: 'dispatched' });

    const left = (async () => {
      for await (const s of t.app.bus.nc.status()) if (s.type === 'staleConnection' || s.type === 'disconnect') return Date.now();
    })();
    const frozenAt = Date.now();
    process.kill(nats.pid, 'SIGSTOP');
    try {
      await expectUnavailable(await hook(), 'webhook');
      // pingInterval 2 s, maxPingOut 2: the third unanswered tick leaves the server (4-6 s).
      expect((await left)! - frozenAt).toBeLessThan(7_000);
    } finally {
      process.kill(nats.pid, 'SIGCONT');
    }
    // Back: the platform's retry is stored.
    await t.app.bus.nc.flush();
    expect(await json(await hook())).toEqual({ status: 'dispatched' });
  }, 40_000);
});
