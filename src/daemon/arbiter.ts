/**
 * Arbitration of `claim` frames on this gateway, through the ClaimBoard (claims.ts).
 *
 * - Only the owner's connections may claim, and only what is still pending and not routed away.
 * - Connections of this gateway claiming the same message at once share one attempt on the
 *   board (the first one's): when it wins, or finds the message already taken, the others lose
 *   without a round trip of their own. When it could not decide for them (the message is not
 *   pending for that connection's owner, or the board failed), each of them tries itself.
 * - The message's metadata comes from this gateway's memory of what it offered (bounded, least
 *   recently used out) when the message was dispatched less than a claim TTL (minus a margin)
 *   ago: within that time it cannot have been routed away (that happens a pending TTL after
 *   dispatch, and only without a live claim) and a reply leaves the claim key marked replied
 *   for a claim TTL, so the board alone decides correctly. Otherwise DAEMON_PENDING is read.
 */
import { LRUCache } from 'lru-cache';
import type { Logger } from '../kernel/index.js';
import { countClaimGranted } from '../metrics/index.js';
import type { ClaimBoard, ClaimMeta } from './claims.js';
import type { Dispatcher } from './dispatch.js';
import type { PendingStore } from './pending.js';
import { ownerToken, type DaemonMessage, type DaemonSocket } from './protocol.js';

/** How one claim attempt on the board went. */
type Outcome = 'granted' | 'taken' | 'not-pending';

/** Messages remembered per gateway for claims without a DAEMON_PENDING read. */
const OFFERED_CACHE = 20_000;
/** Remembered metadata is used only this long short of the claim TTL after dispatch. */
const FRESH_MARGIN_MS = 5000;

export class Arbiter {
  /** Messages this gateway offered lately: message id -> the message and its owner token. */
  private readonly offered = new LRUCache<string, { msg: DaemonMessage; owner: string }>({ max: OFFERED_CACHE });
  /** Claims being arbitrated by this gateway: message id -> the first local attempt. */
  private readonly flights = new Map<string, Promise<Outcome>>();
  /** How long after dispatch remembered metadata may stand in for DAEMON_PENDING (ms). */
  private readonly freshMs: number;

  constructor(
    private readonly board: ClaimBoard,
    private readonly pending: PendingStore,
    private readonly dispatcher: Pick<Dispatcher, 'grant'>,
    ttl: { claimTtlSeconds: number; pendingTtlSeconds: number },
    private readonly log: Logger,
  ) {
    this.freshMs = Math.min(ttl.claimTtlSeconds, ttl.pendingTtlSeconds) * 1000 - FRESH_MARGIN_MS;
  }

  /** A message offered by this gateway to a connection of `ownerToken`. */
  remember(msg: DaemonMessage, ownerToken: string): void {
    this.offered.set(msg.message_id, { msg, owner: ownerToken });
  }

  /** A message replied (nothing left to claim). */
  forget(id: string): void {
    this.offered.delete(id);
  }

  /** One `claim` of `id` by `sock`: true when granted. */
  async claim(sock: DaemonSocket, id: string): Promise<boolean> {
    const running = this.flights.get(id);
    if (running) {
      const outcome = await running.catch(() => 'failed' as const);
      if (outcome === 'granted' || outcome === 'taken') return false;
    }
    const attempt = this.attempt(sock, id);
    this.flights.set(id, attempt);
    try {
      return (await attempt) === 'granted';
    } catch (err) {
      this.log.warn({ err, message_id: id }, 'claim not arbitrated (the board failed): refused');
      return false;
    } finally {
      if (this.flights.get(id) === attempt) this.flights.delete(id);
    }
  }

  private async attempt(sock: DaemonSocket, id: string): Promise<Outcome> {
    const mine = ownerToken(sock.owner);
    const local = this.offered.get(id);
    let m: DaemonMessage;
    if (local && local.owner === mine && local.msg.dispatched_at !== undefined && Date.now() - local.msg.dispatched_at < this.freshMs) {
      m = local.msg;
    } else {
      const pe = await this.pending.get(id);
      if (!pe || ownerToken(pe.p.owner) !== mine) return 'not-pending';
      if (pe.p.routedAt) return 'taken';
      m = pe.p.msg;
    }
    const granted = await this.board.claim(id, claimMetaOf(sock.id, m));
    // Affinity is a hint for the thread's next message: told to every gateway, stored nowhere.
    if (granted) this.dispatcher.grant(sock.owner, m.thread_id, sock.id);
    if (granted) countClaimGranted();
    return granted ? 'granted' : 'taken';
  }
}

/** What the claim records: where a reply goes, kept server-side. */
function claimMetaOf(connId: string, m: DaemonMessage): ClaimMeta {
  return {
    conn_id: connId,
    ...(m.channel_id ? { channel_id: m.channel_id } : {}),
    ...(m.channel_type ? { channel_type: m.channel_type } : {}),
    thread_id: m.thread_id,
    ...(m.reply_token ? { reply_token: m.reply_token } : {}),
    ...(m.conversation ? { conversation: m.conversation } : {}),
    timestamp: new Date().toISOString(),
    ...(m.workflow_id ? { workflow_id: m.workflow_id } : {}),
    ...(m.workflow_run_id ? { workflow_run_id: m.workflow_run_id } : {}),
  };
}
