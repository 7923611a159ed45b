/**
 * The daemon hub of one gateway process: its connections (connections.ts), dispatch across
 * every gateway (dispatch.ts), claim arbitration (arbiter.ts), replies (replies.ts), the
 * sweeper (sweeper.ts) and the owners' status across gateways (presence.ts), wired together, and the frame loop of each connection. A connection
 * with more than FRAMES_IN_FLIGHT frames still being handled is closed: its work is bounded.
 */
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Logger } from '../kernel/index.js';
import { WorkflowSignals } from '../runtime/index.js';
import { Arbiter } from './arbiter.js';
import type { ClaimBoard } from './claims.js';
import { Connections } from './connections.js';
import { Dispatcher } from './dispatch.js';
import { PendingStore } from './pending.js';
import { Presence, type DaemonStatus } from './presence.js';
import { claimAckFrame, parseFrame, type DaemonMessage, type DaemonReply, type DaemonSocket, type Owner } from './protocol.js';
import { Replies } from './replies.js';
import { Sweeper } from './sweeper.js';

export interface HubOptions {
  claimTtlSeconds: number;
  pendingTtlSeconds: number;
  /** How often the sweeper runs (ms; default 2000). */
  sweepMs?: number;
  /**
   * Where a reply whose claim names no workflow goes (the channels' outbox). Resolved means
   * stored durably: only then is the claim ended. Unset: such replies are refused (logged).
   */
  deliverReply?: (r: DaemonReply) => Promise<void>;
  /**
   * A message no daemon claimed within the pending-message TTL (the channels' default agent
   * route). Resolved means stored durably; it must be idempotent (it may be called again after
   * a crash). Unset: such messages are dropped (logged).
   */
  unclaimed?: (m: DaemonMessage, owner: Owner) => Promise<void>;
}

/** Frames of one connection handled at once before it is closed. */
export const FRAMES_IN_FLIGHT = 1024;

export class DaemonHub {
  /** Frames being handled per connection. */
  private readonly inFlight = new Map<string, number>();

  private constructor(
    private readonly conns: Connections,
    private readonly board: ClaimBoard,
    private readonly pending: PendingStore,
    private readonly dispatcher: Dispatcher,
    private readonly arbiter: Arbiter,
    private readonly replies: Replies,
    private readonly sweeper: Sweeper,
    private readonly presence: Presence,
  ) {}

  static async start(nc: NatsConnection, board: ClaimBoard, opts: HubOptions, log: Logger): Promise<DaemonHub> {
    const jsm = await jetstreamManager(nc);
    const pending = await PendingStore.open(nc, jetstream(nc), jsm);
    const signals = await WorkflowSignals.open(nc, jsm);
    const dispatcher = new Dispatcher(nc, pending);
    const arbiter = new Arbiter(board, pending, dispatcher, opts, log);
    const conns = new Connections(nc, (msg, owner) => arbiter.remember(msg, owner));
    const replies = new Replies(board, pending, signals, opts.deliverReply, log);
    const sweeper = new Sweeper(pending, board, dispatcher, opts, log);
    const presence = new Presence(nc, board, opts.claimTtlSeconds * 1000);
    return new DaemonHub(conns, board, pending, dispatcher, arbiter, replies, sweeper, presence);
  }

  get connections(): number {
    return this.conns.size;
  }

  /** Registers a connection and greets it; messages waiting for its owner are offered now. */
  connect(sock: DaemonSocket): void {
    this.conns.add(sock);
    this.presence.add(sock);
    this.sweeper.kick();
  }

  disconnect(connId: string): void {
    this.conns.remove(connId);
    this.presence.remove(connId);
  }

  /** The owner's connected daemons on every gateway (connection, since when, claims held). */
  status(owner: Owner): Promise<DaemonStatus[]> {
    return this.presence.ofOwner(owner);
  }

  /** Offers a message to its owner's daemons (see Dispatcher.dispatch). */
  dispatch(message: DaemonMessage, owner: Owner): Promise<void> {
    return this.dispatcher.dispatch(message, owner);
  }

  /** One frame from a connection. Invalid JSON and unknown types are ignored. */
  async handle(connId: string, raw: string): Promise<void> {
    const sock = this.conns.get(connId);
    if (!sock) return;
    const n = (this.inFlight.get(connId) ?? 0) + 1;
    if (n > FRAMES_IN_FLIGHT) {
      sock.close(1008, 'too many frames in flight');
      return;
    }
    this.inFlight.set(connId, n);
    try {
      await this.frame(sock, raw);
    } finally {
      const left = (this.inFlight.get(connId) ?? 1) - 1;
      if (left > 0) this.inFlight.set(connId, left);
      else this.inFlight.delete(connId);
    }
  }

  private async frame(sock: DaemonSocket, raw: string): Promise<void> {
    const f = parseFrame(raw);
    if (!f) return;
    const id = f.message_id;
    switch (f.type) {
      case 'claim': {
        const granted = id ? await this.arbiter.claim(sock, id) : false;
        if (granted) this.presence.claimed(sock.id, id);
        sock.send(claimAckFrame(id, granted));
        return;
      }
      case 'progress':
        if (id && (await this.board.progress(id, sock.id))) {
          this.presence.claimed(sock.id, id);
          await this.pending.touch(id);
        }
        return;
      case 'reply':
        if (id && (await this.replies.reply(sock, id, f.payload))) {
          this.arbiter.forget(id);
          this.presence.released(sock.id, id);
        }
        return;
      case 'disconnect':
        sock.close(1000, 'disconnect');
        return;
      default:
        return;
    }
  }

  /** A daemon's reply to a waiting workflow, if it arrived. */
  replyFor(workflowId: string, messageId: string): Promise<DaemonReply | undefined> {
    return this.replies.replyFor(workflowId, messageId);
  }

  /** One sweeper pass (see sweeper.ts); how many messages were offered again or routed. */
  sweep(now = Date.now(), offerUnoffered = false): Promise<number> {
    return this.sweeper.sweep(now, offerUnoffered);
  }

  async stop(): Promise<void> {
    this.dispatcher.stop();
    for (const id of this.conns.ids()) this.conns.remove(id);
    this.presence.stop();
    await this.sweeper.stop();
  }
}
