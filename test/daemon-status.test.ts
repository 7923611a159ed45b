/**
 * GET /api/v1/daemon/status with real WebSocket daemons on two gateways (in this process)
 * sharing one NATS: a caller sees its daemons on both gateways whichever one it asks, and
 * nobody else's; a won claim is counted until its lease expires; a closed connection leaves
 * the list; no daemon at all is an empty list; no credentials is 401.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { DaemonMessage } from '../src/daemon/index.js';
import { json, startTestApp, waitFor, type TestApp } from './helpers/app.js';
import { registerUser, type TestUser } from './helpers/users.js';

let a: TestApp;
let b: TestApp;
let u1: TestUser;
let u2: TestUser;

beforeAll(async () => {
  const env = {
    ROLES: 'gateway,orchestrator',
    GATEWAY_SKIP_AUTH: '0',
    PASSWORD_SCRYPT_N: '1024',
    DAEMON_CLAIM_TTL_SECONDS: '1',
    DAEMON_PENDING_TTL_SECONDS: '600',
  };
  a = await startTestApp(env);
  b = await startTestApp(env, { natsUrl: a.natsUrl });
  u1 = await registerUser(a.base, 'status');
  u2 = await registerUser(a.base, 'status');
});
afterAll(async () => {
  await b?.stop();
  await a?.stop();
});

interface Client {
  ws: WebSocket;
  frames: { type: string; message_id?: string; payload?: any }[];
}

async function open(app: TestApp, u: TestUser): Promise<Client> {
  const ws = new WebSocket(`${app.base.replace('http', 'ws')}/v1/ws/messages`, { headers: u.h });
  const c: Client = { ws, frames: [] };
  ws.on('message', (d) => c.frames.push(JSON.parse(String(d))));
  await new Promise<void>((res, rej) => {
    ws.once('open', () => res());
    ws.once('error', rej);
  });
  await waitFor(async () => c.frames.some((f) => f.type === 'connected'), 5000, 10);
  return c;
}

async function status(
  app: TestApp,
  u: TestUser,
): Promise<{ daemons: { connection_id: string; connected_since: string; claims_held: number }[]; count: number }> {
  const r = await fetch(`${app.base}/api/v1/daemon/status`, { headers: u.h });
  expect(r.status).toBe(200);
  return json(r);
}

describe('GET /api/v1/daemon/status', () => {
  it("lists the caller's daemons on every gateway, counts their claims until the lease expires, and drops closed ones", async () => {
    expect(await status(a, u1)).toEqual({ daemons: [], count: 0 });

    const c1 = await open(a, u1);
    const c2 = await open(b, u1);
    const other = await open(b, u2);
    for (const app of [a, b]) {
      const s = await status(app, u1);
      expect(s.count).toBe(2);
      for (const d of s.daemons) {
        expect(d.connection_id).toMatch(/^[0-9a-f-]{36}$/);
        expect(Date.parse(d.connected_since)).toBeGreaterThan(Date.now() - 60_000);
        expect(d.claims_held).toBe(0);
      }
      // Oldest first: c1 connected before c2.
      expect(s.daemons[0]!.connected_since <= s.daemons[1]!.connected_since).toBe(true);
    }
    const mine = (await status(a, u1)).daemons.map((d) => d.connection_id);
    const theirs = await status(a, u2);
    expect(theirs.count).toBe(1);
    expect(mine).not.toContain(theirs.daemons[0]!.connection_id);

    // A message for u1's daemons, claimed on gateway b by c2.
    const msg: DaemonMessage = {
      message_id: randomUUID(),
      channel: 'platform_a',
      thread_id: 't1',
      sender: 'U1',
      text: 'hello',
      timestamp: new Date().toISOString(),
    };
    await a.app.daemon!.dispatch(msg, { tenantId: u1.tenantId, userId: u1.userId });
    await waitFor(async () => c2.frames.some((f) => f.type === 'message' && f.message_id === msg.message_id), 5000, 10);
    c2.ws.send(JSON.stringify({ type: 'claim', message_id: msg.message_id }));
    await waitFor(async () => c2.frames.find((f) => f.type === 'claim_ack' && f.message_id === msg.message_id), 5000, 10).then((f) =>
      expect(f.payload.granted).toBe(true),
    );
    const held = await status(a, u1);
    expect(held.daemons.map((d) => d.claims_held).sort()).toEqual([0, 1]);
    // The lease (DAEMON_CLAIM_TTL_SECONDS=1) runs out without a reply or progress: no longer held.
    await waitFor(async () => (await status(a, u1)).daemons.every((d) => d.claims_held === 0), 10_000, 200);

    c2.ws.close();
    await waitFor(async () => (await status(a, u1)).count === 1, 5000, 50);
    expect((await status(b, u1)).daemons.map((d) => d.connection_id)).toEqual([mine[0]]);
    c1.ws.close();
    other.ws.close();
    await waitFor(async () => (await status(b, u1)).count === 0 && (await status(b, u2)).count === 0, 5000, 50);
  });

  it('needs credentials', async () => {
    expect((await fetch(`${a.base}/api/v1/daemon/status`)).status).toBe(401);
  });
});
