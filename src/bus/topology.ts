/**
 * The JetStream topology every role relies on: the streams, the shared durable consumers and
 * the KV buckets. `ensureTopology` is idempotent and safe to run from every process at
 * start-up: what is missing is created, and settings that differ from this process's
 * configuration are updated (a retention, a TTL, an ack wait changed in configuration takes
 * effect on the next start). Works with nats-server 2.9.10 (no 2.10+ features are used).
 */
import { AckPolicy, DeliverPolicy, DiscardPolicy, RetentionPolicy, StorageType, jetstream, type JetStreamManager, type StreamConfig } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import { nanos, type NatsConnection } from '@nats-io/transport-node';
import { BlobStore } from './blobs.js';
import { duplicateWindowMs, openBucket, streamInfo } from './buckets.js';
import { upsertConsumer } from './durable-worker.js';
import { BUCKETS, CONSUMERS, STREAMS, TASK_PRIORITIES, subjects, taskStream } from './subjects.js';

/** The settings of the topology that come from configuration. */
export interface TopologySettings {
  replicas: number;
  ackWaitMs: number;
  maxDeliver: number;
  eventsMaxAgeSeconds: number;
  eventsMaxPerWorkflow: number;
  idempotencyTtlSeconds: number;
}

/** The KV buckets every role shares. */
export interface CoreBuckets {
  idempotency: KV;
  control: KV;
  ratelimit: KV;
  leases: KV;
  llmCache: KV;
  /** The BLOBS object store (large tool outputs by owner). */
  blobs: BlobStore;
}

/** How long a swarm mailbox message or agent start message is kept at most. */
export const SWARM_MAILBOX_MAX_AGE_MS = 24 * 60 * 60 * 1000;
/** The de-duplication window of MAILBOXES and SWARM_AGENTS (a re-sent step's messages are dropped within it). */
export const SWARM_DEDUPE_MS = 10 * 60 * 1000;

/** How long an inbound channel message is kept in CHANNEL_INBOX. */
export const CHANNEL_INBOX_MAX_AGE_MS = 24 * 3600 * 1000;
/** De-duplication window of CHANNEL_INBOX (by the platform's event id). */
export const CHANNEL_INBOX_DEDUPE_MS = 3600 * 1000;

/** How long a cached LLM response is kept (LLM_CACHE bucket TTL). */
export const LLM_CACHE_TTL_MS = 24 * 3600 * 1000;

const WEEK_MS = 7 * 24 * 3600 * 1000;

export async function ensureTopology(nc: NatsConnection, jsm: JetStreamManager, o: TopologySettings): Promise<CoreBuckets> {
  await ensureStreams(jsm, o);
  const replicas = o.replicas;
  const [idempotency, control, ratelimit, leases, llmCache] = await Promise.all([
    openBucket(nc, jsm, BUCKETS.idempotency, { replicas, ttlMs: o.idempotencyTtlSeconds * 1000 }),
    openBucket(nc, jsm, BUCKETS.control, { replicas, ttlMs: WEEK_MS }),
    // Windows are at most an hour; counters expire on their own.
    openBucket(nc, jsm, BUCKETS.ratelimit, { replicas, ttlMs: 2 * 3600 * 1000 }),
    // A lease not renewed within one ack wait expires: its worker is gone.
    openBucket(nc, jsm, BUCKETS.leases, { replicas, ttlMs: o.ackWaitMs }),
    // Cached model answers live a day; the per-settings index is rewritten by every new entry.
    openBucket(nc, jsm, BUCKETS.llmCache, { replicas, ttlMs: LLM_CACHE_TTL_MS }),
  ]);
  // Screenshots over 500 KB, a week (bus/blobs.ts).
  const blobs = await BlobStore.open(jetstream(nc), jsm, { replicas });
  return { idempotency, control, ratelimit, leases, llmCache, blobs };
}

/**
 * The replicas the core buckets were given (NATS_REPLICAS of the process that ran
 * `ensureTopology`), for buckets opened where the configuration is not passed; undefined when
 * unknown (no topology yet, or the server did not answer): `openBucket` then leaves an existing
 * bucket's replicas as they are.
 */
export async function coreReplicas(jsm: JetStreamManager): Promise<number | undefined> {
  const info = await jsm.streams.info(`KV_${BUCKETS.control}`).catch(() => undefined);
  return info?.config.num_replicas || undefined;
}

/** Creates a stream, or updates the settings of an existing one that differ. */
async function upsertStream(jsm: JetStreamManager, cfg: Partial<StreamConfig> & { name: string }): Promise<void> {
  const info = await streamInfo(jsm, cfg.name);
  if (!info) {
    await jsm.streams.add(cfg);
    return;
  }
  // Retention can't change on an existing stream; update what may.
  const { retention: _r, storage: _s, ...mutable } = cfg;
  const cur = info.config as unknown as Record<string, unknown>;
  const changed = Object.entries(mutable).some(([k, v]) => JSON.stringify(cur[k]) !== JSON.stringify(v));
  if (changed) await jsm.streams.update(cfg.name, { ...info.config, ...mutable });
}

async function ensureStreams(jsm: JetStreamManager, o: TopologySettings): Promise<void> {
  // One work queue per priority, whatever PRIORITY_QUEUES says: it only chooses where new
  // tasks go, and workers drain every level, so turning it off strands nothing.
  for (const p of TASK_PRIORITIES) {
    await upsertStream(jsm, {
      name: taskStream(p),
      subjects: [subjects.taskStartLevel(p)],
      retention: RetentionPolicy.Workqueue,
      storage: StorageType.File,
      num_replicas: o.replicas,
      duplicate_window: nanos(2 * 60 * 1000),
    });
  }
  await upsertStream(jsm, {
    name: STREAMS.events,
    subjects: [subjects.eventsAll],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    num_replicas: o.replicas,
    max_age: nanos(o.eventsMaxAgeSeconds * 1000),
    max_msgs_per_subject: o.eventsMaxPerWorkflow,
    discard: DiscardPolicy.Old,
    // The server refuses a window longer than the max age (EVENTS_MAX_AGE_SECONDS may be 1).
    duplicate_window: nanos(duplicateWindowMs(o.eventsMaxAgeSeconds * 1000)),
    allow_direct: true,
  });
  await upsertStream(jsm, {
    name: STREAMS.journal,
    subjects: [subjects.journalAll],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    num_replicas: o.replicas,
    max_age: nanos(WEEK_MS),
    discard: DiscardPolicy.Old,
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
  // Swarm mailboxes: a day at most (a swarm purges its own when it ends); a step re-run after a
  // crash sends again with the same id, dropped within the 10-minute window (swarm/mailbox.ts).
  await upsertStream(jsm, {
    name: STREAMS.mailboxes,
    subjects: [subjects.agentActorAll],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    num_replicas: o.replicas,
    max_age: nanos(SWARM_MAILBOX_MAX_AGE_MS),
    discard: DiscardPolicy.Old,
    duplicate_window: nanos(SWARM_DEDUPE_MS),
  });
  await upsertStream(jsm, {
    name: STREAMS.swarmAgents,
    subjects: [subjects.swarmStartAll],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    num_replicas: o.replicas,
    max_age: nanos(SWARM_MAILBOX_MAX_AGE_MS),
    duplicate_window: nanos(SWARM_DEDUPE_MS),
  });
  for (const p of TASK_PRIORITIES) {
    await upsertConsumer(jsm, taskStream(p), {
      durable_name: CONSUMERS.workers,
      ack_policy: AckPolicy.Explicit,
      ack_wait: nanos(o.ackWaitMs),
      max_deliver: o.maxDeliver,
      max_ack_pending: 20_000,
      deliver_policy: DeliverPolicy.All,
    });
  }
  await upsertConsumer(jsm, STREAMS.events, {
    durable_name: CONSUMERS.archiver,
    ack_policy: AckPolicy.Explicit,
    ack_wait: nanos(30_000),
    max_ack_pending: 50_000,
    deliver_policy: DeliverPolicy.All,
  });
}
