/**
 * Dispatch of a message to its owner's daemons, on any gateway.
 *
 * Thread affinity: the connection that claimed a thread's message last gets that thread's
 * next message alone, while it answers on its actor subject; otherwise the message goes to
 * every connection of the owner. Affinity is a hint: a grant is told to every gateway on
 * `svc.daemon.affinity` and remembered in memory (bounded, least recently used out), not
 * stored; a gateway that restarts, or never heard of a thread, offers the thread's next
 * message to every connection.
 */
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { LRUCache } from 'lru-cache';
import { subjects } from '../bus/index.js';
import type { PendingStore } from './pending.js';
import { ownerToken, threadKey, type DaemonMessage, type Owner } from './protocol.js';

/** Threads whose last connection each gateway remembers. */
const AFFINITY_CACHE = 50_000;
/** How long the connection a thread is bound to has to take its message before the owner's others get it. */
const AFFINITY_TIMEOUT_MS = 500;
/** How long the owner's connections (on every gateway) have to answer that one received it. */
const OWNER_TIMEOUT_MS = 1000;

const enc = new TextEncoder();
const dec = new TextDecoder();

export class Dispatcher {
  /** Thread affinity: owner and thread hash -> the connection that claimed its last message. */
  private readonly affinity = new LRUCache<string, string>({ max: AFFINITY_CACHE });
  private readonly sub: Subscription;

  constructor(
    private readonly nc: NatsConnection,
    private readonly pending: PendingStore,
  ) {
    this.sub = nc.subscribe(subjects.daemonAffinity, {
      callback: (_err, m) => {
        const [key, connId] = dec.decode(m.data).split(' ');
        if (key && connId) this.affinity.set(key, connId);
      },
    });
  }

  /**
   * Offers a message to the owner's daemons: to the connection that handled its thread when it
   * answers, else to every connection of the owner on every gateway. Kept pending until replied
   * or routed elsewhere; resolved once the pending entry is stored.
   */
  async dispatch(message: DaemonMessage, owner: Owner): Promise<void> {
    const now = Date.now();
    const msg = { ...message, dispatched_at: now };
    const p = { msg, owner, dispatchedAt: now, offeredAt: now, offered: true };
    let rev: number;
    try {
      rev = await this.pending.create(p);
    } catch (err) {
      // Dispatched before (a redelivery of the same inbound message): its state stands, and a
      // message that has left (replied, routed elsewhere) is not offered again.
      if (await this.pending.known(msg.message_id)) return;
      throw err;
    }
    if (!(await this.send(msg, owner, this.affinity.get(threadKey(owner, msg.thread_id))))) {
      await this.pending.update(msg.message_id, { ...p, offered: false }, rev);
    }
  }

  /** A claim granted to `connId`: the thread's next message goes to it first, on every gateway. */
  grant(owner: Owner, threadId: string, connId: string): void {
    const key = threadKey(owner, threadId);
    this.affinity.set(key, connId);
    this.nc.publish(subjects.daemonAffinity, enc.encode(`${key} ${connId}`));
  }

  /** True when at least one connection received the message (`connId`: try that one alone first). */
  async send(msg: DaemonMessage, owner: Owner, connId?: string): Promise<boolean> {
    const data = enc.encode(JSON.stringify(msg));
    if (connId) {
      try {
        const r = await this.nc.request(subjects.daemonActor(connId), data, { timeout: AFFINITY_TIMEOUT_MS });
        if (dec.decode(r.data) === 'ok') return true;
      } catch {
        /* that connection is gone: every connection of the owner */
      }
    }
    try {
      await this.nc.request(subjects.daemonOwner(ownerToken(owner)), data, { timeout: OWNER_TIMEOUT_MS });
      return true;
    } catch {
      return false; // no responders: no connection of the owner on any gateway
    }
  }

  stop(): void {
    this.sub.unsubscribe();
  }
}
