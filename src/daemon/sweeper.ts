/**
 * The sweeper of pending messages (every gateway, every 2 s by default):
 * - a message no connection received (none connected) is offered again, and at once when a
 *   connection of its owner arrives (`kick`);
 * - one whose claim expired unreplied is offered again, to every connection, a claim TTL after
 *   its last offer (the claim TTL of this process's configuration; the claims bucket's TTL is
 *   updated to it at start);
 * - one with no live claim a pending-message TTL after it arrived goes to the `unclaimed`
 *   route (the channels' default agent route), by winning the board like a daemon would, so
 *   a daemon's late claim and the agent route cannot both have it; a hand-off that did not
 *   finish is tried again after ROUTE_RETRY_MS.
 * Compare-and-set on the pending entry makes one gateway act on each message.
 */
import pLimit from 'p-limit';
import type { Logger } from '../kernel/index.js';
import type { ClaimBoard } from './claims.js';
import type { Dispatcher } from './dispatch.js';
import type { Pending, PendingStore } from './pending.js';
import type { DaemonMessage, Owner } from './protocol.js';

export interface SweeperOptions {
  claimTtlSeconds: number;
  pendingTtlSeconds: number;
  /** How often the sweeper runs (ms; default 2000). */
  sweepMs?: number;
  /** See HubOptions.unclaimed. */
  unclaimed?: (m: DaemonMessage, owner: Owner) => Promise<void>;
}

/** The claim the sweeper makes for a message it routes to the agent route. */
const AGENT_ROUTE = 'agent-route';
/** Pending messages the sweeper works on at once. */
const SWEEP_PARALLEL = 16;
/** Retry of an `unclaimed` hand-off that did not finish (the gateway died or it failed). */
const ROUTE_RETRY_MS = 30_000;
/** A kick waits this long, so that connections arriving together cost one pass. */
const KICK_MS = 50;

export class Sweeper {
  private readonly timer: NodeJS.Timeout;
  private sweeping?: Promise<number>;
  private kicked?: NodeJS.Timeout;

  constructor(
    private readonly pending: PendingStore,
    private readonly board: ClaimBoard,
    private readonly dispatcher: Pick<Dispatcher, 'send'>,
    private readonly opts: SweeperOptions,
    private readonly log: Logger,
  ) {
    this.timer = setInterval(() => this.run(), opts.sweepMs ?? 2000);
    this.timer.unref();
  }

  /** A pass soon that also offers what no connection received (a connection arrived). */
  kick(): void {
    if (this.kicked) return;
    this.kicked = setTimeout(() => {
      this.kicked = undefined;
      if (this.sweeping)
        this.kick(); // after the pass under way
      else this.run(true);
    }, KICK_MS);
    this.kicked.unref();
  }

  private run(offerUnoffered = false): void {
    if (this.sweeping) return;
    this.sweeping = this.sweep(Date.now(), offerUnoffered)
      .catch((err: unknown) => {
        this.log.warn({ err }, 'daemon sweep failed');
        return 0;
      })
      .finally(() => (this.sweeping = undefined));
  }

  /** One pass over the pending messages; how many were offered again or routed. */
  async sweep(now = Date.now(), offerUnoffered = false): Promise<number> {
    const claimTtlMs = this.opts.claimTtlSeconds * 1000;
    const pendingTtlMs = this.opts.pendingTtlSeconds * 1000;
    const due = (await this.pending.list()).filter(({ p }) =>
      p.routedAt
        ? now - p.routedAt >= ROUTE_RETRY_MS
        : (offerUnoffered && !p.offered) || now - p.offeredAt >= claimTtlMs || now - p.dispatchedAt >= pendingTtlMs,
    );
    // A few at a time: a backlog is worked through in parallel, not one round trip after another.
    const limit = pLimit(SWEEP_PARALLEL);
    const acted = await Promise.all(due.map((e) => limit(() => this.sweepOne(e.id, e.p, e.revision, now))));
    return acted.filter(Boolean).length;
  }

  /** One due pending message: offered again, or routed to the agent route. True when acted on. */
  private async sweepOne(id: string, p: Pending, revision: number, now: number): Promise<boolean> {
    if (p.routedAt) {
      // A hand-off that did not finish (this or another gateway died, or it failed): again.
      const rev = await this.pending.update(id, { ...p, routedAt: now }, revision);
      if (rev) await this.routeUnclaimed(p);
      return rev > 0;
    }
    const claim = await this.board.get(id);
    if (claim && !claim.meta.replied) return false; // claimed, lease still running
    if (claim?.meta.replied) {
      await this.pending.delete(id);
      return false;
    }
    if (now - p.dispatchedAt >= this.opts.pendingTtlSeconds * 1000) {
      const won = await this.board.claim(id, {
        conn_id: AGENT_ROUTE,
        ...(p.msg.thread_id ? { thread_id: p.msg.thread_id } : {}),
        timestamp: new Date(now).toISOString(),
      });
      if (!won) return false;
      if (!(await this.pending.update(id, { ...p, routedAt: now }, revision))) {
        this.log.warn({ message_id: id }, 'pending message changed while being routed to the agent route; left for the next sweep');
        return false;
      }
      await this.routeUnclaimed(p);
      return true;
    }
    const next: Pending = { ...p, offeredAt: now };
    const rev = await this.pending.update(id, next, revision);
    if (!rev) return false;
    // Offered to every connection again: the one that let the claim expire may be stuck.
    const offered = await this.dispatcher.send(p.msg, p.owner);
    if (offered !== next.offered) await this.pending.update(id, { ...next, offered }, rev);
    return true;
  }

  private async routeUnclaimed(p: Pending): Promise<void> {
    const id = p.msg.message_id;
    if (!this.opts.unclaimed) {
      this.log.warn({ message_id: id }, 'no daemon claimed the message within the pending-message TTL and no agent route is configured: dropped');
    } else {
      try {
        await this.opts.unclaimed(p.msg, p.owner);
      } catch (err) {
        this.log.warn({ err, message_id: id }, 'unclaimed message not handed to the agent route; retried');
        return;
      }
    }
    await this.pending.delete(id);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    clearTimeout(this.kicked);
    await this.sweeping;
  }
}
