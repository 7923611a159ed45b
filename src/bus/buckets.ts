/**
 * KV buckets whose settings come from configuration (a TTL that is a lease, a retention) or
 * from code that may change between versions. Every start makes the bucket what this process
 * was configured with: created when missing, its stream updated when it exists with other
 * settings. `Kvm.create` alone does not do that: on an existing bucket it binds to it as it
 * is, so a TTL changed in configuration was silently ignored until the bucket was deleted
 * (a claim TTL lowered to 5 s stayed 60 s on a store first used with the default).
 */
import type { JetStreamManager, StreamConfig, StreamInfo } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { nanos, type NatsConnection } from '@nats-io/transport-node';

export interface BucketSettings {
  /** How long an entry lives (ms); 0: for ever. */
  ttlMs: number;
  /** Revisions kept per key (default 1). */
  history?: number;
  /**
   * Copies kept in a cluster. Unset: a new bucket gets the server's default (1) and an existing
   * one keeps its own, so a caller that does not know the configured value never shrinks it.
   */
  replicas?: number;
}

/** The server's default de-duplication window, which may not exceed the stream's max age. */
const DUPLICATE_WINDOW_MS = 2 * 60 * 1000;

/**
 * The de-duplication window the server gives a new stream of this max age (ms; 0: none): the
 * default, or the max age when shorter. A stream updated to a shorter max age needs the shorter
 * window too, or the update is refused.
 */
export function duplicateWindowMs(maxAgeMs: number): number {
  return maxAgeMs > 0 ? Math.min(DUPLICATE_WINDOW_MS, maxAgeMs) : DUPLICATE_WINDOW_MS;
}

/** The stream settings a bucket's settings stand for (the ones an update may change). */
function streamSettings(o: BucketSettings): Partial<Pick<StreamConfig, 'max_age' | 'max_msgs_per_subject' | 'num_replicas' | 'duplicate_window'>> {
  const want = { max_age: nanos(o.ttlMs), max_msgs_per_subject: o.history ?? 1, duplicate_window: nanos(duplicateWindowMs(o.ttlMs)) };
  return o.replicas === undefined ? want : { ...want, num_replicas: o.replicas };
}

/** A stream's info, or undefined when there is no such stream (other failures throw). */
export async function streamInfo(jsm: JetStreamManager, name: string): Promise<StreamInfo | undefined> {
  return jsm.streams.info(name).catch((err: unknown) => {
    if ((err as Error).name === 'StreamNotFoundError' || /stream not found/i.test((err as Error).message)) return undefined;
    throw err;
  });
}

export async function openBucket(nc: NatsConnection, jsm: JetStreamManager, name: string, o: BucketSettings): Promise<KV> {
  const stream = `KV_${name}`;
  const info = await streamInfo(jsm, stream);
  if (info) {
    const want = streamSettings(o);
    const cur = info.config as unknown as Record<string, unknown>;
    if (Object.entries(want).some(([k, v]) => cur[k] !== v)) await jsm.streams.update(stream, { ...info.config, ...want });
  }
  // Created when missing (two processes creating it at once with one configuration both succeed).
  return new Kvm(nc).create(name, { history: o.history ?? 1, ttl: o.ttlMs, ...(o.replicas === undefined ? {} : { replicas: o.replicas }) });
}
