/**
 * A daemon's `reply`. Only the connection holding a live, unreplied claim may reply; any other
 * gets a `system` frame saying so, and nothing is routed. The reply is stored where it goes
 * (the waiting workflow's signal when the claim names one, else `deliverReply`, the channels'
 * outbox) and only then is the claim ended (marked replied) and the message removed from the
 * pending set. A reply that cannot be stored leaves the claim as it was: the daemon may reply
 * again; unreplied, the claim expires and the message is offered again. A reply whose claim is
 * not found is refused only after the claim was read again (holdersClaim).
 */
import type { Logger } from '../kernel/index.js';
import type { WorkflowSignals } from '../runtime/index.js';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ClaimBoard, ClaimMeta } from './claims.js';
import type { PendingStore } from './pending.js';
import { notHolderFrame, replyFailedFrame, replyOf, type DaemonReply, type DaemonSocket } from './protocol.js';

/** Waits before each further read of a claim its holder's reply did not find (see holdersClaim). */
const RECHECK_MS = [250, 1000];
/**
 * The waits before each further try of a reply whose storing fails: about 10 s in all, longer
 * than an R3 stream takes to elect a leader after its leader's node dies (the fault drill saw
 * `no responders` from the channel outbox for 6 s after a NATS node's kill, when 3 tries over
 * 1 s let 6 of 132 claims expire unreplied and be granted again). A claim that expires
 * meanwhile ends the tries: its reply is then refused as the holder's no longer.
 */
export const REPLY_RETRY_MS: readonly number[] = [500, 1000, 2000, 2000, 2000, 2000];

export class Replies {
  constructor(
    private readonly board: ClaimBoard,
    private readonly pending: PendingStore,
    private readonly signals: WorkflowSignals,
    private readonly deliverReply: ((r: DaemonReply) => Promise<void>) | undefined,
    private readonly log: Logger,
    private readonly retryMs: readonly number[] = REPLY_RETRY_MS,
  ) {}

  /**
   * Handles one reply; true when it was handed on (the claim ended). Every step of it is
   * idempotent (the outbox de-duplicates by message id, the signal is a keyed put, ending and
   * deleting twice is ending and deleting), so a step that fails (a NATS request timing out
   * while the gateway's connection moves off a node that died, a stream without a leader for
   * a few seconds) is tried again after each wait of `retryMs`; before, the daemon got nothing,
   * the claim expired unreplied and the message was granted again (the fault drill: 2 in 1,093
   * messages, each at a NATS node's kill). When every attempt fails the daemon is told so, and
   * may send the reply again while it holds the claim.
   */
  async reply(sock: DaemonSocket, id: string, payload: unknown): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.replyOnce(sock, id, payload);
      } catch (err) {
        const wait = this.retryMs[attempt - 1];
        if (wait === undefined) {
          sock.send(replyFailedFrame(id));
          throw err;
        }
        this.log.warn({ err, message_id: id, attempt }, 'daemon reply not stored; trying again');
        await sleep(wait);
      }
    }
  }

  private async replyOnce(sock: DaemonSocket, id: string, payload: unknown): Promise<boolean> {
    const c = await this.holdersClaim(sock, id);
    if (!c) {
      sock.send(notHolderFrame(id));
      return false;
    }
    const r = replyOf(id, c.meta, sock.owner, payload);
    if (c.meta.workflow_id) {
      await this.signals.put(c.meta.workflow_id, id, r);
    } else if (this.deliverReply) {
      await this.deliverReply(r);
    } else {
      this.log.warn({ message_id: id }, 'daemon reply has nowhere to go (no channel route configured)');
      return false;
    }
    if (!(await this.board.end(id, sock.id, c)))
      this.log.warn({ message_id: id }, 'reply stored, but the claim could not be marked replied (it expired meanwhile)');
    await this.pending.delete(id);
    return true;
  }

  /**
   * The claim `sock` holds on `id`, live and unreplied, read again after RECHECK_MS before the
   * answer is no. The claims bucket is read from its stream leader, but a leader elected a moment
   * ago may not have applied every write its predecessor acknowledged: in the fault drill, a
   * claim granted as its stream's leader was killed read as absent to its holder's immediate
   * reply (1 message in 1,295), which was then refused, and the message was granted again a
   * claim TTL later. A holder's reply is the normal case and answers at the first read; only a
   * refusal waits.
   */
  private async holdersClaim(sock: DaemonSocket, id: string): Promise<{ meta: ClaimMeta; revision: number } | undefined> {
    const holds = (c: { meta: ClaimMeta } | undefined) => !!c && c.meta.conn_id === sock.id && !c.meta.replied;
    let c = await this.board.get(id);
    for (const ms of RECHECK_MS) {
      if (holds(c)) return c;
      await sleep(ms);
      c = await this.board.get(id);
    }
    return holds(c) ? c : undefined;
  }

  /** A daemon's reply to a waiting workflow, if it arrived. */
  replyFor(workflowId: string, messageId: string): Promise<DaemonReply | undefined> {
    return this.signals.get<DaemonReply>(workflowId, messageId);
  }
}
