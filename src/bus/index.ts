/**
 * The bus: one NATS connection per process, and the JetStream topology every role relies on.
 *
 * ensureTopology() is idempotent and safe to run from every process at start-up: it creates
 * the streams, the shared durable consumers and the KV buckets if missing, and updates the
 * settings that may change. Works with nats-server 2.9.10 (no 2.10+ features are used).
 */
import { connect, nanos, type NatsConnection } from '@nats-io/transport-node';
import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type JetStreamClient,
  type JetStreamManager,
  type StreamConfig,
} from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { Logger } from '../kernel/index.js';
import { PipelinedPublisher } from './publisher.js';
import { upsertConsumer } from './durable-worker.js';
import { BUCKETS, CONSUMERS, STREAMS, subjects } from './subjects.js';

export * from './subjects.js';
export * from './events.js';
export { PipelinedPublisher, PublishError, type PubAck } from './publisher.js';
export { kvSnapshot, openBucket, type KvSnapshotEntry } from './kv.js';
export { startDurableWorker, upsertConsumer, type DurableWorker, type DurableWorkerOptions } from './durable-worker.js';

export interface BusOptions {
  url: string;
  name: string;
  replicas: number;
  ackWaitMs: number;
  maxDeliver: number;
  eventsMaxAgeSeconds: number;
  eventsMaxPerWorkflow: number;
  idempotencyTtlSeconds: number;
}

export interface Bus {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  kv: { journal: KV; idempotency: KV; control: KV; ratelimit: KV; leases: KV; llmCache: KV };
  /** Pipelined publisher for hot-path JetStream publishes (events). */
  events: PipelinedPublisher;
  /** False between a lost connection and the reconnect (publishes wait, requests fail). */
  readonly connected: boolean;
  /** Called after every reconnect (e.g. to catch up on what core subscriptions missed). */
  onReconnect(fn: () => void): () => void;
  close(): Promise<void>;
}

/** How long an inbound channel message is kept in CHANNEL_INBOX. */
export const CHANNEL_INBOX_MAX_AGE_MS = 24 * 3600 * 1000;
/** De-duplication window of CHANNEL_INBOX (by the platform's event id). */
export const CHANNEL_INBOX_DEDUPE_MS = 3600 * 1000;

/** How long a cached LLM response is kept (LLM_CACHE bucket TTL). */
export const LLM_CACHE_TTL_MS = 24 * 3600 * 1000;

export async function connectBus(opts: BusOptions, log: Logger): Promise<Bus> {
  // noAsyncTraces: no stack captured per request (every JetStream publish/ack is one).
  // reconnectTimeWait: a restarted local server is back within a few hundred ms; the
  // reconnect jitter keeps a fleet from arriving at once.
  const nc = await connect({
    servers: opts.url,
    name: opts.name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    pingInterval: 10_000,
    maxPingOut: 2,
    noAsyncTraces: true,
  });
  const reconnectHooks = new Set<() => void>();
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect' || s.type === 'reconnect' || s.type === 'error') log.warn({ nats: s.type }, 'nats connection status');
      if (s.type === 'reconnect') {
        for (const fn of reconnectHooks) {
          try {
            fn();
          } catch (err) {
            log.warn({ err }, 'reconnect hook failed');
          }
        }
      }
    }
  })();
  const jsm = await jetstreamManager(nc);
  const js = jetstream(nc);
  await ensureStreams(jsm, opts);
  const kvm = new Kvm(js);
  const [journal, idempotency, control, ratelimit, leases, llmCache] = await Promise.all([
    kvm.create(BUCKETS.journal, { history: 1, replicas: opts.replicas, ttl: 7 * 24 * 3600 * 1000 }),
    kvm.create(BUCKETS.idempotency, { history: 1, replicas: opts.replicas, ttl: opts.idempotencyTtlSeconds * 1000 }),
    kvm.create(BUCKETS.control, { history: 1, replicas: opts.replicas, ttl: 7 * 24 * 3600 * 1000 }),
    // Windows are at most an hour; counters expire on their own.
    kvm.create(BUCKETS.ratelimit, { history: 1, replicas: opts.replicas, ttl: 2 * 3600 * 1000 }),
    // A lease not renewed within one ack wait expires: its worker is gone.
    // (created with the first process's ack wait; a later, different setting keeps the existing bucket)
    kvm.create(BUCKETS.leases, { history: 1, replicas: opts.replicas, ttl: opts.ackWaitMs }).catch(() => kvm.open(BUCKETS.leases)),
    // Cached model answers live a day; the per-settings index is rewritten by every new entry.
    kvm.create(BUCKETS.llmCache, { history: 1, replicas: opts.replicas, ttl: LLM_CACHE_TTL_MS }),
  ]);
  const events = new PipelinedPublisher(nc);
  return {
    nc,
    js,
    jsm,
    kv: { journal, idempotency, control, ratelimit, leases, llmCache },
    events,
    // One view of the connection: the publisher's (it must know, to hold messages back).
    get connected() {
      return events.connected;
    },
    onReconnect(fn) {
      reconnectHooks.add(fn);
      return () => reconnectHooks.delete(fn);
    },
    async close() {
      events.close();
      await nc.drain().catch(() => nc.close());
    },
  };
}

async function upsertStream(jsm: JetStreamManager, cfg: Partial<StreamConfig> & { name: string }): Promise<void> {
  try {
    const info = await jsm.streams.info(cfg.name);
    // Retention can't change on an existing stream; update what may.
    const { retention: _r, storage: _s, ...mutable } = cfg;
    const cur = info.config as unknown as Record<string, unknown>;
    const changed = Object.entries(mutable).some(([k, v]) => JSON.stringify(cur[k]) !== JSON.stringify(v));
    if (changed) await jsm.streams.update(cfg.name, { ...info.config, ...mutable });
  } catch (err) {
    if ((err as Error).name === 'StreamNotFoundError' || /stream not found/i.test((err as Error).message)) {
      await jsm.streams.add(cfg);
    } else throw err;
  }
}

async function ensureStreams(jsm: JetStreamManager, o: BusOptions): Promise<void> {
  await upsertStream(jsm, {
    name: STREAMS.tasks,
    subjects: [subjects.taskStartAll],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    num_replicas: o.replicas,
    duplicate_window: nanos(2 * 60 * 1000),
  });
  await upsertStream(jsm, {
    name: STREAMS.events,
    subjects: [subjects.eventsAll],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    num_replicas: o.replicas,
    max_age: nanos(o.eventsMaxAgeSeconds * 1000),
    max_msgs_per_subject: o.eventsMaxPerWorkflow,
    discard: DiscardPolicy.Old,
    duplicate_window: nanos(2 * 60 * 1000),
    allow_direct: true,
  });
  await upsertStream(jsm, {
    name: STREAMS.channelInbox,
    subjects: [subjects.channelInboxAll],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    num_replicas: o.replicas,
    max_age: nanos(CHANNEL_INBOX_MAX_AGE_MS),
    discard: DiscardPolicy.Old,
    // Platform retries of one event (same event id) within an hour are stored once.
    duplicate_window: nanos(CHANNEL_INBOX_DEDUPE_MS),
  });
  await upsertStream(jsm, {
    name: STREAMS.channelOutbox,
    subjects: [subjects.channelOutboxAll],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    num_replicas: o.replicas,
    max_age: nanos(CHANNEL_INBOX_MAX_AGE_MS),
    duplicate_window: nanos(CHANNEL_INBOX_DEDUPE_MS),
  });
  await upsertConsumer(jsm, STREAMS.tasks, {
    durable_name: CONSUMERS.workers,
    ack_policy: AckPolicy.Explicit,
    ack_wait: nanos(o.ackWaitMs),
    max_deliver: o.maxDeliver,
    max_ack_pending: 20_000,
    deliver_policy: DeliverPolicy.All,
  });
  await upsertConsumer(jsm, STREAMS.events, {
    durable_name: CONSUMERS.archiver,
    ack_policy: AckPolicy.Explicit,
    ack_wait: nanos(30_000),
    max_ack_pending: 50_000,
    deliver_policy: DeliverPolicy.All,
  });
}

export * from './counter.js';
