/**
 * DAEMON_PENDING: the messages offered to daemons and not yet replied or routed elsewhere,
 * one entry per message (key: its id). Every gateway reads and writes it with
 * compare-and-set, so of several gateways acting on one entry, one wins. Entries leave
 * explicitly (replied, routed); the bucket's day-long TTL only bounds a leak.
 */
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { BUCKETS, coreReplicas, kvKeys, kvSnapshot } from '../bus/index.js';
import { openLeaderReadBucket } from './leader-reads.js';
import type { DaemonMessage, Owner } from './protocol.js';

export interface Pending {
  msg: DaemonMessage;
  owner: Owner;
  /** When the message arrived (ms): the pending-message TTL counts from here. */
  dispatchedAt: number;
  /** When it was last offered (ms): an expired claim is offered again a claim TTL after. */
  offeredAt: number;
  /** False when no connection of the owner received the last offer. */
  offered: boolean;
  /** Set when the message was handed to the `unclaimed` route (retried until it is gone). */
  routedAt?: number;
}

export interface PendingEntry {
  p: Pending;
  revision: number;
}

const LEAK_BOUND_MS = 24 * 3600 * 1000;
const enc = new TextEncoder();
const dec = new TextDecoder();
const encode = (p: Pending) => enc.encode(JSON.stringify(p));

export class PendingStore {
  private constructor(
    private readonly kv: KV,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
  ) {}

  static async open(nc: NatsConnection, js: JetStreamClient, jsm: JetStreamManager): Promise<PendingStore> {
    // Replicated as the core buckets are (NATS_REPLICAS): the hub is not given the bus options.
    // Read from the leader (leader-reads.ts): an entry just written or deleted reads as such.
    const replicas = await coreReplicas(jsm);
    return new PendingStore(await openLeaderReadBucket(nc, jsm, BUCKETS.daemonPending, { ttlMs: LEAK_BOUND_MS, replicas }), js, jsm);
  }

  /**
   * Stores a new entry; its revision. Throws when the message is pending already, and also when
   * it was pending once and has left (replied, or routed elsewhere): its key's delete marker
   * stays for the bucket's TTL, and the write expects no entry at all under the key (`create`
   * of the KV client would write over a delete marker). A redelivered inbound message is then
   * not offered again after its reply (seen in the fault drill: a gateway killed while routing
   * a message, the message granted and answered, then redelivered and granted again).
   */
  create(p: Pending): Promise<number> {
    return this.kv.put(kvKeys.daemonPending(p.msg.message_id), encode(p), { previousSeq: 0 });
  }

  /** Whether the message is pending, or was and has left (a delete marker under its key). */
  async known(id: string): Promise<boolean> {
    return !!(await this.kv.get(kvKeys.daemonPending(id)));
  }

  async get(id: string): Promise<PendingEntry | undefined> {
    const e = await this.kv.get(kvKeys.daemonPending(id)).catch(() => null);
    if (!e || e.operation !== 'PUT' || !e.value.length) return undefined;
    return { p: JSON.parse(dec.decode(e.value)) as Pending, revision: e.revision };
  }

  /** Compare-and-set; the new revision, or 0 when the entry changed (or left) meanwhile. */
  update(id: string, p: Pending, revision: number): Promise<number> {
    return this.kv.update(kvKeys.daemonPending(id), encode(p), revision).catch(() => 0);
  }

  /** Rewritten as it is: a claimed message's entry lives as long as the claim (`progress`). */
  async touch(id: string): Promise<void> {
    const pe = await this.get(id);
    if (pe) await this.update(id, pe.p, pe.revision);
  }

  async delete(id: string): Promise<void> {
    await this.kv.delete(kvKeys.daemonPending(id)).catch(() => undefined);
  }

  /** Every pending entry (key = message id). */
  async list(): Promise<(PendingEntry & { id: string })[]> {
    return (await kvSnapshot(this.js, this.jsm, BUCKETS.daemonPending)).map((e) => ({
      id: e.key,
      revision: e.revision,
      p: JSON.parse(dec.decode(e.value)) as Pending,
    }));
  }
}
