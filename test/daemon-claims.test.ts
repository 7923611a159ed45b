/**
 * Claim-once arbitration (ClaimBoard) on a real nats-server: ten competing connections, each
 * with its own NATS connection (as ten gateway processes would be), over 1,000 messages:
 * exactly one grant per message; a claim expires with the bucket TTL and the message can be
 * claimed again; progress extends the lease and only for its owner; end() marks it replied.
 */
import { randomUUID } from 'node:crypto';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClaimBoard } from '../src/daemon/index.js';
import { startTestNats, type TestNats } from './harness/nats.js';

let nats: TestNats;
const conns: NatsConnection[] = [];

beforeAll(async () => {
  nats = await startTestNats();
  for (let i = 0; i < 10; i++) conns.push(await connect({ servers: nats.url }));
});
afterAll(async () => {
  await Promise.all(conns.map((c) => c.close()));
  await nats?.stop();
});

const meta = (conn: string) => ({ conn_id: conn, channel_id: 'c1', channel_type: 'platform_a', thread_id: 't1', timestamp: new Date().toISOString() });

describe('ClaimBoard', () => {
  it('ten competing connections over 1,000 messages: exactly one grant each', async () => {
    const boards = await Promise.all(conns.map((nc) => ClaimBoard.open(nc, { ttlSeconds: 60 })));
    const ids = Array.from({ length: 1000 }, () => randomUUID());
    const grants = new Map<string, string[]>();
    await Promise.all(
      ids.map(async (id) => {
        const results = await Promise.all(boards.map((b, i) => b.claim(id, meta(`conn-${i}`)).then((g) => (g ? `conn-${i}` : undefined))));
        grants.set(
          id,
          results.filter((x): x is string => !!x),
        );
      }),
    );
    for (const id of ids) expect(grants.get(id), id).toHaveLength(1);
    // The stored claim names the winner.
    const id = ids[0]!;
    expect((await boards[0]!.get(id))!.meta.conn_id).toBe(grants.get(id)![0]);
  }, 60_000);

  it('a claim expires with the TTL and the message can be claimed again; progress extends it for its owner only', async () => {
    const bucket = `DAEMON_CLAIMS_T${randomUUID().replace(/-/g, '').slice(0, 8)}`;
    const a = await ClaimBoard.open(conns[0]!, { ttlSeconds: 2, bucket });
    const b = await ClaimBoard.open(conns[1]!, { ttlSeconds: 2, bucket });
    const id = randomUUID();
    expect(await a.claim(id, meta('a'))).toBe(true);
    expect(await b.claim(id, meta('b'))).toBe(false);
    // Progress by a stranger does nothing; by the owner it restarts the lease.
    await new Promise((r) => setTimeout(r, 1200));
    expect(await b.progress(id, 'b')).toBe(false);
    expect(await a.progress(id, 'a')).toBe(true);
    await new Promise((r) => setTimeout(r, 1300)); // 2.5 s after the claim, 1.3 s after progress
    expect(await b.claim(id, meta('b'))).toBe(false);
    // Without progress the lease ends: the message is claimable again.
    await new Promise((r) => setTimeout(r, 2500));
    expect(await b.claim(id, meta('b'))).toBe(true);
    expect(await a.progress(id, 'a')).toBe(false);
    // end(): the claim is marked replied and stays taken (a late claim loses) until it expires.
    const held = (await b.get(id))!;
    expect(held.meta).toMatchObject({ conn_id: 'b', thread_id: 't1' });
    expect(await a.end(id, 'a')).toBe(false); // not a's claim
    expect(await b.progress(id, 'b')).toBe(true); // a rewrite in between does not stop the end
    expect(await b.end(id, 'b')).toBe(true);
    expect(await b.end(id, 'b')).toBe(true); // already ended
    expect((await a.get(id))!.meta.replied).toBe(true);
    expect(await a.claim(id, meta('a'))).toBe(false);
    expect(await b.progress(id, 'b')).toBe(false);
  }, 30_000);
});
