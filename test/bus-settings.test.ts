/**
 * Settings that come from configuration take effect on the next start, on a store first used
 * with other settings: every stream, consumer and bucket of the topology whose settings come
 * from configuration is opened with one setting, then again (as a restarted process would)
 * with another, and the server's own view of it is read. `Kvm.create` alone binds to an
 * existing bucket as it is; this is what once kept a lowered claim TTL at the first start's 60 s.
 */
import { randomUUID } from 'node:crypto';
import { connect, nanos, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BUCKETS, CONSUMERS, STREAMS, connectBus, coreReplicas, openBucket, type BusOptions } from '../src/bus/index.js';
import { createLogger } from '../src/kernel/index.js';
import { startTestNats, type TestNats } from './harness/nats.js';
import { testBusOptions } from './harness/bus.js';

let nats: TestNats;
let nc: NatsConnection;
let jsm: JetStreamManager;
const log = createLogger({ level: 'silent' });

beforeAll(async () => {
  // A server of its own: the topology's settings are changed here, which other files must not see.
  nats = await startTestNats();
  nc = await connect({ servers: nats.url });
  jsm = await jetstreamManager(nc);
});
afterAll(async () => {
  await nc?.close();
  await nats?.stop();
});

const opts = (o: Partial<BusOptions>): BusOptions => testBusOptions(nats.url, 'bus-settings', o);

const s = (ms: number) => nanos(ms);

describe('topology settings on restart', () => {
  it('streams, the workers consumer and the buckets take the configuration of the latest start', async () => {
    const first = await connectBus(opts({}), log);
    await first.close();
    const before = {
      events: (await jsm.streams.info(STREAMS.events)).config,
      workers: (await jsm.consumers.info(STREAMS.tasks, CONSUMERS.workers)).config,
      leases: (await jsm.streams.info(`KV_${BUCKETS.leases}`)).config,
      idempotency: (await jsm.streams.info(`KV_${BUCKETS.idempotency}`)).config,
    };
    // A positive control: the first start's settings are there.
    expect(before.events.max_age).toBe(s(86_400_000));
    expect(before.events.max_msgs_per_subject).toBe(10_000);
    expect(before.workers.ack_wait).toBe(s(30_000));
    expect(before.workers.max_deliver).toBe(5);
    expect(before.leases.max_age).toBe(s(30_000));
    expect(before.idempotency.max_age).toBe(s(86_400_000));

    const second = await connectBus(
      opts({ ackWaitMs: 10_000, maxDeliver: 3, eventsMaxAgeSeconds: 3600, eventsMaxPerWorkflow: 500, idempotencyTtlSeconds: 600 }),
      log,
    );
    try {
      const events = (await jsm.streams.info(STREAMS.events)).config;
      expect(events.max_age).toBe(s(3_600_000));
      expect(events.max_msgs_per_subject).toBe(500);
      const workers = (await jsm.consumers.info(STREAMS.tasks, CONSUMERS.workers)).config;
      expect(workers.ack_wait).toBe(s(10_000));
      expect(workers.max_deliver).toBe(3);
      // The lease is one ack wait: the bucket's TTL follows it.
      expect((await jsm.streams.info(`KV_${BUCKETS.leases}`)).config.max_age).toBe(s(10_000));
      expect((await jsm.streams.info(`KV_${BUCKETS.idempotency}`)).config.max_age).toBe(s(600_000));
      // The buckets still work as buckets after the update.
      await second.kv.leases.put('w1', new TextEncoder().encode('me'));
      expect(new TextDecoder().decode((await second.kv.leases.get('w1'))!.value)).toBe('me');
    } finally {
      await second.close();
    }
  });

  it('EVENTS with a max age under the 2-minute de-duplication window: created, then updated', async () => {
    // A server of the suite's own would already have EVENTS: delete it, so the short age is also a create.
    await jsm.streams.delete(STREAMS.events).catch(() => undefined);
    const first = await connectBus(opts({ eventsMaxAgeSeconds: 30 }), log);
    await first.close();
    const created = (await jsm.streams.info(STREAMS.events)).config;
    expect(created.max_age).toBe(s(30_000));
    expect(created.duplicate_window).toBe(s(30_000));
    // From a day down to 1 s (the least EVENTS_MAX_AGE_SECONDS allows) on an existing stream, and back.
    await (await connectBus(opts({ eventsMaxAgeSeconds: 86_400 }), log)).close();
    expect((await jsm.streams.info(STREAMS.events)).config.duplicate_window).toBe(s(120_000));
    await (await connectBus(opts({ eventsMaxAgeSeconds: 1 }), log)).close();
    const updated = (await jsm.streams.info(STREAMS.events)).config;
    expect(updated.max_age).toBe(s(1000));
    expect(updated.duplicate_window).toBe(s(1000));
    await (await connectBus(opts({}), log)).close();
    expect((await jsm.streams.info(STREAMS.events)).config.duplicate_window).toBe(s(120_000));
  });

  it('openBucket: replicas are set when given, and an existing bucket keeps its own when not', async () => {
    const name = `REPLICAS_${randomUUID().replace(/-/g, '').slice(0, 8)}`;
    await openBucket(nc, jsm, name, { ttlMs: 60_000 });
    // A single server holds one replica only: a bucket of three is seen through a view of its info.
    const update = vi.fn(() => Promise.resolve());
    const three = {
      streams: {
        info: async (stream: string) => {
          const info = await jsm.streams.info(stream);
          return { ...info, config: { ...info.config, num_replicas: 3 } };
        },
        update,
      },
    } as unknown as JetStreamManager;
    await openBucket(nc, three, name, { ttlMs: 60_000 });
    expect(update).not.toHaveBeenCalled();
    await openBucket(nc, three, name, { ttlMs: 60_000, replicas: 1 });
    expect(update).toHaveBeenCalledWith(`KV_${name}`, expect.objectContaining({ num_replicas: 1 }));
    // Buckets opened outside the topology take its replicas.
    expect(await coreReplicas(jsm)).toBe(1);
  });

  it('openBucket: a bucket first opened with one TTL gets another, and entries expire by the new one', async () => {
    const name = `SETTINGS_${randomUUID().replace(/-/g, '').slice(0, 8)}`;
    await openBucket(nc, jsm, name, { ttlMs: 60_000 });
    expect((await jsm.streams.info(`KV_${name}`)).config.max_age).toBe(s(60_000));
    // Shorter than the server's default de-duplication window (2 min): that window follows.
    const kv = await openBucket(nc, jsm, name, { ttlMs: 1000 });
    const cfg = (await jsm.streams.info(`KV_${name}`)).config;
    expect(cfg.max_age).toBe(s(1000));
    expect(cfg.duplicate_window).toBe(s(1000));
    await kv.put('k', new TextEncoder().encode('v'));
    expect(await kv.get('k')).toMatchObject({ operation: 'PUT' });
    // Waits for the state (the entry gone), with a bound far above the TTL: at 60 s it would still be there.
    const t0 = Date.now();
    while ((await kv.get('k'))?.operation === 'PUT') {
      expect(Date.now() - t0).toBeLessThan(20_000);
      await new Promise((r) => setTimeout(r, 100));
    }
    // A longer TTL again: the de-duplication window is back at the default.
    await openBucket(nc, jsm, name, { ttlMs: 300_000 });
    const longer = (await jsm.streams.info(`KV_${name}`)).config;
    expect(longer.max_age).toBe(s(300_000));
    expect(longer.duplicate_window).toBe(s(120_000));
  }, 30_000);
});
