/**
 * A daemon's `reply`. Only the connection holding a live, unreplied claim may reply; any other
 * gets a `system` frame saying so, and nothing is routed. The reply is stored where it goes
 * (the waiting workflow's signal when the claim names one, else `deliverReply`, the channels'
 * outbox) and only then is the claim ended (marked replied) and the message removed from the
 * pending set. A reply that cannot be stored leaves the claim as it was: the daemon may reply
 * again; unreplied, the claim expires and the message is offered again.
 */
import type { Logger } from '../kernel/index.js';
import type { WorkflowSignals } from '../runtime/index.js';
import type { ClaimBoard } from './claims.js';
import type { PendingStore } from './pending.js';
import { notHolderFrame, replyOf, type DaemonReply, type DaemonSocket } from './protocol.js';

export class Replies {
  constructor(
    private readonly board: ClaimBoard,
    private readonly pending: PendingStore,
    private readonly signals: WorkflowSignals,
    private readonly deliverReply: ((r: DaemonReply) => Promise<void>) | undefined,
    private readonly log: Logger,
  ) {}

  /** Handles one reply; true when it was handed on (the claim ended). */
  async reply(sock: DaemonSocket, id: string, payload: unknown): Promise<boolean> {
    const c = await this.board.get(id);
    if (!c || c.meta.conn_id !== sock.id || c.meta.replied) {
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

  /** A daemon's reply to a waiting workflow, if it arrived. */
  replyFor(workflowId: string, messageId: string): Promise<DaemonReply | undefined> {
    return this.signals.get<DaemonReply>(workflowId, messageId);
  }
}
