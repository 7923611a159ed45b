/**
 * The turn-corked NATS transport: what one event-loop turn writes leaves in one system call,
 * in order, and nothing is held back (a close, a reconnect). The same counts on a plain
 * transport-node connection show the behaviour this exists for; a client update that changes
 * the factory, `NodeTransport.send` or its `socket` fails here.
 */
import type { Socket } from 'node:net';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestNats, type TestNats } from '../../test/harness/nats.js';
import { connectNats } from './nats-transport.js';

let nats: TestNats;
beforeAll(async () => {
  nats = await startTestNats();
});
afterAll(async () => {
  await nats?.stop();
});

/** The connection's current socket (the transport's, an internal of the client). */
const socketOf = (nc: NatsConnection): Socket => (nc as unknown as { protocol: { transport: { socket: Socket } } }).protocol.transport.socket;

/** Counts the socket's system-level writes (one `_write` or `_writev` each) while `fn` runs. */
async function writesDuring(nc: NatsConnection, fn: () => Promise<void>): Promise<number> {
  const s = socketOf(nc) as Socket & { _write: (...a: unknown[]) => void; _writev?: (...a: unknown[]) => void };
  let n = 0;
  const w = s._write;
  const wv = s._writev;
  s._write = function (this: Socket, ...a: unknown[]) {
    n++;
    return w.apply(this, a);
  };
  if (wv)
    s._writev = function (this: Socket, ...a: unknown[]) {
      n++;
      return wv.apply(this, a);
    };
  try {
    await fn();
    await new Promise((r) => setImmediate(r));
    await nc.flush();
  } finally {
    s._write = w;
    if (wv) s._writev = wv;
  }
  return n;
}

/** A plain connection collecting what arrives on `subject` (subscribed and flushed). */
async function collector(subject: string): Promise<{ nc: NatsConnection; got: string[] }> {
  const nc = await connect({ servers: nats.url });
  const got: string[] = [];
  nc.subscribe(subject, {
    callback: (_e, m) => {
      got.push(m.string());
    },
  });
  await nc.flush();
  return { nc, got };
}

/** Resolves at `nc`'s next reconnect. */
async function reconnected(nc: NatsConnection): Promise<void> {
  for await (const s of nc.status()) if (s.type === 'reconnect') return;
}

/** 200 publishes in one macrotask, each after its own microtask hop (as independent promise chains make them). */
async function hoppingPublishes(nc: NatsConnection, subject: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    nc.publish(subject, new TextEncoder().encode(String(i)));
    await Promise.resolve();
    await Promise.resolve();
  }
}

describe('turn-corked NATS transport', () => {
  it('writes one turn of publishes in one system call, where the plain transport writes nearly each one', async () => {
    const plain = await connect({ servers: nats.url });
    const corked = await connectNats({ servers: nats.url });
    try {
      const plainWrites = await writesDuring(plain, () => hoppingPublishes(plain, 't.plain'));
      const corkedWrites = await writesDuring(corked, () => hoppingPublishes(corked, 't.corked'));
      expect(plainWrites).toBeGreaterThan(50);
      // The turn's publishes, then the flush's PING in a later turn.
      expect(corkedWrites).toBeLessThanOrEqual(3);
    } finally {
      await plain.close();
      await corked.close();
    }
  });

  it('delivers every message in order, answers requests and JetStream publishes', async () => {
    const nc = await connectNats({ servers: nats.url });
    const other = await connect({ servers: nats.url });
    try {
      const got: string[] = [];
      const all = new Promise<void>((resolve) => {
        other.subscribe('t.order', {
          callback: (_e, m) => {
            got.push(m.string());
            if (got.length === 1000) resolve();
          },
        });
      });
      other.subscribe('t.echo', {
        callback: (_e, m) => {
          m.respond(m.data);
        },
      });
      await other.flush();
      for (let i = 0; i < 1000; i++) {
        nc.publish('t.order', String(i));
        if (i % 7 === 0) await Promise.resolve();
        if (i % 101 === 0) await new Promise((r) => setImmediate(r));
      }
      await all;
      expect(got).toEqual(Array.from({ length: 1000 }, (_, i) => String(i)));
      const r = await nc.request('t.echo', 'ping', { timeout: 2000 });
      expect(r.string()).toBe('ping');

      const jsm = await jetstreamManager(nc);
      await jsm.streams.add({ name: 'CORKED', subjects: ['corked.>'] });
      const js = jetstream(nc);
      const acks = await Promise.all(Array.from({ length: 100 }, (_, i) => js.publish('corked.x', String(i))));
      expect(acks.map((a) => a.seq)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    } finally {
      await nc.close();
      await other.close();
    }
  });

  it('sends what the client handed over before a close or a disconnect, and keeps corking after a reconnect', async () => {
    const closing = await collector('t.close');
    const nc = await connectNats({ servers: nats.url, reconnectTimeWait: 100, maxReconnectAttempts: -1 });
    for (let i = 0; i < 50; i++) nc.publish('t.close', String(i));
    // The client hands its buffer to the transport at the end of the microtask run; a close
    // after that (in the same turn) must not lose it, as it would not on a plain connection.
    await Promise.resolve();
    await Promise.resolve();
    await nc.close();
    await closing.nc.flush();
    await new Promise((r) => setTimeout(r, 100));
    expect(closing.got).toHaveLength(50);
    await closing.nc.close();

    // A disconnect (a stale connection given up) writes what was handed over before the socket goes.
    const disconnecting = await collector('t.disconnect');
    const dropped = await connectNats({ servers: nats.url, reconnectTimeWait: 100, maxReconnectAttempts: -1 });
    const back = reconnected(dropped);
    for (let i = 0; i < 50; i++) dropped.publish('t.disconnect', String(i));
    await Promise.resolve();
    await Promise.resolve();
    (dropped as unknown as { protocol: { transport: { disconnect(): void } } }).protocol.transport.disconnect();
    await back;
    await disconnecting.nc.flush();
    await new Promise((r) => setTimeout(r, 100));
    expect(disconnecting.got).toHaveLength(50);
    await dropped.close();
    await disconnecting.nc.close();

    const again = await connectNats({ servers: nats.url, reconnectTimeWait: 100, maxReconnectAttempts: -1 });
    try {
      const back = reconnected(again);
      await nats.killAndRestart(200);
      await back;
      expect(await writesDuring(again, () => hoppingPublishes(again, 't.after'))).toBeLessThanOrEqual(3);
    } finally {
      await again.close();
    }
  });
});
