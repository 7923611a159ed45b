/**
 * The daemon buckets (DAEMON_CLAIMS, DAEMON_PENDING), read from their stream leader.
 *
 * A KV bucket answers `get` with a direct get, which any replica of a replicated bucket may
 * serve, and a replica may not yet hold a write acknowledged a moment ago (nats-server before
 * 2.12 has no read-after-write for direct gets). On the daemon path that read decides: a claim
 * granted a millisecond earlier read as absent, so its holder's immediate reply was refused,
 * the claim expired unreplied and the sweeper granted the message again a claim TTL later
 * (the fault drill's "granted twice"). The leader answers the stream's message get only after
 * applying every acknowledged write, so every read of these buckets goes there; the price is
 * that the replicas share no read load.
 */
import type { JetStreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { openBucket, type BucketSettings } from '../bus/index.js';

/** Makes the bucket what `settings` say (see openBucket), then binds a handle whose reads go to the leader. */
export async function openLeaderReadBucket(nc: NatsConnection, jsm: JetStreamManager, name: string, settings: BucketSettings): Promise<KV> {
  await openBucket(nc, jsm, name, settings);
  return new Kvm(nc).open(name, { allow_direct: false });
}
