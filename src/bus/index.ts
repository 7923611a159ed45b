/**
 * The bus: one NATS connection per process, and the JetStream topology every role relies on.
 *
 * - connectBus() ensures the topology from every process at start-up (idempotent): streams,
 *   shared durable consumers and KV buckets are created if missing, and settings that differ
 *   from this process's configuration are updated, so a setting changed in configuration
 *   takes effect on the next start. Works with nats-server 2.9.10 (no 2.10+ features).
 * - Every subject, stream, consumer, bucket and key name is built in subjects.ts; client ids
 *   are validated as subject tokens, so none can widen a subscription.
 * - openBucket() is the one way to open a bucket with settings (same guarantee as above);
 *   buckets opened outside the topology take its replicas from coreReplicas(), and a bucket
 *   opened without replicas keeps the ones it has. kvSnapshot() lists a bucket in one bounded pass.
 */
export { connectBus, type Bus, type BusOptions } from './connect.js';
export {
  CHANNEL_INBOX_DEDUPE_MS,
  CHANNEL_INBOX_MAX_AGE_MS,
  LLM_CACHE_TTL_MS,
  coreReplicas,
  ensureTopology,
  type CoreBuckets,
  type TopologySettings,
} from './topology.js';
export { BUCKETS, CONSUMERS, STREAMS, TASK_PRIORITIES, kvKeys, subjects, taskStream, token, type TaskPriority } from './subjects.js';
export {
  EVENT_TYPES,
  SSE_EVENT_NAME,
  SeqOrder,
  decodeEvent,
  encodeEvent,
  msgIdOf,
  parseResumePoint,
  replayGap,
  sseEventName,
  streamId,
  type EventType,
  type WorkflowEvent,
} from './events.js';
export { PipelinedPublisher, PublishError, type PubAck } from './publisher.js';
export { openBucket, type BucketSettings } from './buckets.js';
export { BLOB_TTL_MS, BlobStore, isBlobKey, type BlobContent, type BlobOwner, type StoredBlob } from './blobs.js';
export { kvSnapshot, type KvSnapshotEntry } from './kv-snapshot.js';
export { JournalLog, type JournalRecord } from './journal.js';
export { startDurableWorker, upsertConsumer, type DurableWorker, type DurableWorkerOptions } from './durable-worker.js';
export { countInWindow, type WindowCount } from './counter.js';
