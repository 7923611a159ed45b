/**
 * KV buckets whose settings come from configuration (a TTL that is a lease, a retention) or
 * from code that may change between versions. Every start makes the bucket what this process
 * was configured with: created when missing, its stream updated when it exists with other
 * settings. `Kvm.create` alone does not do that: on an existing bucket it binds to it as it
 * is, so a TTL changed in configuration was silently ignored until the bucket was deleted
 * (a claim TTL lowered to 5 s stayed 60 s on a store first used with the default).
 */
import type { JetStreamManager, StreamConfig } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { nanos, type NatsConnection } from '@nats-io/transport-node';

export interface BucketSettings {
  /** How long an entry lives (ms); 0: for ever. */
  ttlMs: number;
  /** Revisions kept per key (default 1). */
  history?: number;
  replicas?: number;
}

/** The server's default de-duplication window, which may not exceed the stream's max age. */
const DUPLICATE_WINDOW_MS = 2 * 60 * 1000;

/**
 * The stream settings a bucket's settings stand for (the ones an update may change). The
 * de-duplication window is what the server gives a new stream of that max age: a shorter TTL
 * must shorten it too, or the update is refused.
 */
function streamSettings(o: BucketSettings): Pick<StreamConfig, 'max_age' | 'max_msgs_per_subject' | 'num_replicas' | 'duplicate_window'> {
  const dup = o.ttlMs > 0 ? Math.min(DUPLICATE_WINDOW_MS, o.ttlMs) : DUPLICATE_WINDOW_MS;
  return { max_age: nanos(o.ttlMs), max_msgs_per_subject: o.history ?? 1, num_replicas: o.replicas ?? 1, duplicate_window: nanos(dup) };
}

export async function openBucket(nc: NatsConnection, jsm: JetStreamManager, name: string, o: BucketSettings): Promise<KV> {
  const stream = `KV_${name}`;
  const info = await jsm.streams.info(stream).catch((err: unknown) => {
    if ((err as Error).name === 'StreamNotFoundError' || /stream not found/i.test((err as Error).message)) return undefined;
    throw err;
  });
  if (info) {
    const want = streamSettings(o);
    const cur = info.config as unknown as Record<string, unknown>;
    if (Object.entries(want).some(([k, v]) => cur[k] !== v)) await jsm.streams.update(stream, { ...info.config, ...want });
  }
  // Created when missing (two processes creating it at once with one configuration both succeed).
  return new Kvm(nc).create(name, { history: o.history ?? 1, replicas: o.replicas ?? 1, ttl: o.ttlMs });
}
