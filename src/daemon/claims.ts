/**
 * Claim-once arbitration of daemon messages (DESIGN.md, "Daemon claims"): a dispatched
 * message is offered to every eligible daemon connection, on any gateway process; the first
 * `claim` wins by an atomic create of the message's key in the DAEMON_CLAIMS bucket. The lease
 * is the key's age: the bucket's TTL is the claim TTL (DAEMON_CLAIM_TTL_SECONDS, 60), so a
 * claim not replied in time disappears and the message may be claimed again; `progress`
 * rewrites the key (compare-and-set, only by its owner), which starts its age again. A reply
 * ends the claim: once the reply is handed on, the key is marked replied and left to expire, so
 * a late claim still loses. No gateway keeps claims only in memory: any of them can arbitrate,
 * and a gateway that dies takes no claim with it.
 */
import { jetstreamManager } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { BUCKETS, kvKeys } from '../bus/index.js';
import { openLeaderReadBucket } from './leader-reads.js';

/** What is stored per claimed message (the spec's claim metadata). */
export interface ClaimMeta {
  conn_id: string;
  channel_id?: string;
  channel_type?: string;
  thread_id?: string;
  reply_token?: string;
  /** Where a reply is posted on the platform (its channel, group or user id): kept server-side. */
  conversation?: string;
  timestamp: string;
  workflow_id?: string;
  workflow_run_id?: string;
  /** Set once the claim's reply was handed on. */
  replied?: boolean;
}

const enc = new TextEncoder();
const dec = new TextDecoder();

export class ClaimBoard {
  private constructor(private readonly kv: KV) {}

  /**
   * Opens (creating if missing) the claims bucket with the claim TTL as its TTL. Its reads go to
   * the leader (leader-reads.ts): a holder replying right after its grant must find its claim.
   */
  static async open(nc: NatsConnection, opts: { ttlSeconds: number; replicas?: number; bucket?: string }): Promise<ClaimBoard> {
    // The bucket's TTL is the lease: an existing bucket with another TTL is updated to this one.
    const kv = await openLeaderReadBucket(nc, await jetstreamManager(nc), opts.bucket ?? BUCKETS.daemonClaims, {
      ttlMs: opts.ttlSeconds * 1000,
      replicas: opts.replicas,
    });
    return new ClaimBoard(kv);
  }

  /** The first caller for a message wins (true); every other gets false until the claim expires. */
  async claim(messageId: string, meta: ClaimMeta): Promise<boolean> {
    try {
      await this.kv.create(kvKeys.daemonClaim(messageId), enc.encode(JSON.stringify(meta)));
      return true;
    } catch (err) {
      if (isExists(err)) return false;
      throw err;
    }
  }

  /** The live claim of a message, if any, with its revision. */
  async get(messageId: string): Promise<{ meta: ClaimMeta; revision: number } | undefined> {
    const e = await this.kv.get(kvKeys.daemonClaim(messageId));
    if (!e || e.operation !== 'PUT' || !e.value.length) return undefined;
    return { meta: JSON.parse(dec.decode(e.value)) as ClaimMeta, revision: e.revision };
  }

  /** Extends the lease of `connId`'s claim (rewrites it); false when the claim is not (or no longer) its. */
  async progress(messageId: string, connId: string): Promise<boolean> {
    const c = await this.get(messageId);
    if (!c || c.meta.conn_id !== connId || c.meta.replied) return false;
    try {
      await this.kv.update(kvKeys.daemonClaim(messageId), enc.encode(JSON.stringify({ ...c.meta, timestamp: new Date().toISOString() })), c.revision);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Ends `connId`'s claim once its reply was handed on: the key stays (marked replied) until its
   * TTL, so a late `claim` of the message still finds it taken. A concurrent rewrite (its own
   * `progress`) is retried; false when the claim is no longer `connId`'s. `known`: the claim
   * as the caller last read it (saves a read).
   */
  async end(messageId: string, connId: string, known?: { meta: ClaimMeta; revision: number }): Promise<boolean> {
    for (let attempt = 0; attempt < 5; attempt++) {
      // The caller's copy first (it just read it), then fresh reads after a concurrent rewrite.
      const c = attempt === 0 && known ? known : await this.get(messageId);
      if (!c || c.meta.conn_id !== connId) return false;
      if (c.meta.replied) return true;
      try {
        await this.kv.update(kvKeys.daemonClaim(messageId), enc.encode(JSON.stringify({ ...c.meta, replied: true })), c.revision);
        return true;
      } catch {
        /* rewritten meanwhile: read it again */
      }
    }
    return false;
  }
}

/** A create that found the key already there (JetStream "wrong last sequence"). */
function isExists(err: unknown): boolean {
  const e = err as { code?: unknown; message?: string; api_error?: { err_code?: number } };
  return e?.api_error?.err_code === 10071 || /wrong last sequence|exists/i.test(String(e?.message ?? ''));
}
