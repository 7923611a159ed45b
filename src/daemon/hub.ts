/**
 * Daemon connections of one gateway process, and dispatch across all of them.
 *
 * - Each connection is an actor at `svc.actor.daemon.<conn_id>`, and is reachable by its
 *   owner's subject `svc.daemon.owner.<hash of tenant and user>`: a message dispatched to an
 *   owner reaches every connection of that owner on every gateway.
 * - Thread affinity: the connection that claimed a thread's message last gets that thread's
 *   next message alone, while it answers on its actor subject; otherwise the message goes to
 *   every connection of the owner. Affinity is a hint: a grant is told to every gateway on
 *   `svc.daemon.affinity` and remembered in memory (bounded), not stored; a gateway that
 *   restarts, or never heard of a thread, offers its next message to every connection.
 * - A dispatched message is kept in DAEMON_PENDING until it is replied or routed elsewhere;
 *   `claim` looks its metadata up there and arbitrates through the ClaimBoard. Connections of
 *   one gateway that claim the same message at once make one attempt on the board between them
 *   (the first one's); the others lose at once.
 * - The sweeper (every gateway, every 2 s): a message no connection received (none connected)
 *   is offered again, and at once when a connection of its owner arrives; one whose claim
 *   expired unreplied is offered again a claim TTL after its last offer; one with no live claim
 *   a pending-message TTL (90 s) after it arrived goes to the `unclaimed` route (the channels'
 *   default agent route). Compare-and-set on the pending entry makes one gateway act.
 * - Protocol: `connected` on open; `claim` → `claim_ack {granted}`; `progress` extends the
 *   lease; `reply` is handed on (stored in DAEMON_SIGNALS for the workflow when the claim names
 *   one, else to `deliverReply`, the channels' outbox) and only then ends the claim; a reply
 *   from a connection not holding the claim gets a `system` frame saying so; `disconnect`
 *   closes. Invalid JSON is ignored.
 */
import { createHash, randomUUID } from 'node:crypto';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { BUCKETS, kvKeys, kvSnapshot, openBucket, subjects } from '../bus/index.js';
import type { Logger } from '../kernel/index.js';
import type { ClaimBoard, ClaimMeta } from './claims.js';

/** What is offered to daemons (the `message` payload, with routing fields kept server-side). */
export interface DaemonMessage {
  message_id: string;
  channel: string;
  thread_id: string;
  sender: string;
  text: string;
  agent_name?: string;
  timestamp: string;
  channel_id?: string;
  channel_type?: string;
  reply_token?: string;
  /** The platform's conversation (channel, group or user id) a reply is posted to. */
  conversation?: string;
  workflow_id?: string;
  workflow_run_id?: string;
  /** When it was first dispatched (ms), carried to every gateway offering it. */
  dispatched_at?: number;
}

export interface Owner {
  tenantId: string | null;
  userId: string | null;
}

/** A daemon's `reply`, with the claim it ends (where it goes). */
export interface DaemonReply {
  message_id: string;
  claim: ClaimMeta;
  owner: Owner;
  channel: string;
  thread_id: string;
  text: string;
  format: 'text' | 'markdown';
}

/** One WebSocket as the hub sees it. */
export interface DaemonSocket {
  readonly id: string;
  readonly owner: Owner;
  /** Sends one JSON frame; false when the socket is backed up (the caller may drop it). */
  send(frame: unknown): boolean;
  close(code: number, reason: string): void;
  /** Bytes accepted by `send` and not yet written to the network. */
  buffered?(): number;
}

interface Pending {
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

const enc = new TextEncoder();
const dec = new TextDecoder();

export const ownerToken = (o: Owner) =>
  createHash('sha256')
    .update(`${o.tenantId ?? ''}|${o.userId ?? ''}`)
    .digest('hex')
    .slice(0, 32);
const threadKey = (o: Owner, threadId: string) => `${ownerToken(o)}.${createHash('sha256').update(threadId).digest('hex').slice(0, 32)}`;

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

/** How one claim attempt on the board went. */
type Outcome = 'granted' | 'taken' | 'not-pending';

/** Threads whose last connection each gateway remembers. */
const AFFINITY_CACHE = 50_000;
/** Messages remembered per gateway for claims without a DAEMON_PENDING read. */
const OFFERED_CACHE = 20_000;
/** Remembered metadata is used only this long short of the claim TTL after dispatch. */
const FRESH_MARGIN_MS = 5000;

/** The claim the sweeper makes for a message it routes to the agent route. */
const AGENT_ROUTE = 'agent-route';
/** Frames of one connection handled at once before it is closed. */
export const FRAMES_IN_FLIGHT = 1024;
/** Pending messages the sweeper works on at once. */
const SWEEP_PARALLEL = 16;

/** Retry of an `unclaimed` hand-off that did not finish (the gateway died or it failed). */
const ROUTE_RETRY_MS = 30_000;

export class DaemonHub {
  private readonly sockets = new Map<string, { sock: DaemonSocket; sub: Subscription }>();
  private readonly owners = new Map<string, { sub: Subscription; conns: Set<string> }>();
  /**
   * Messages this gateway offered lately (message id -> message, owner): a claim of one within
   * the claim TTL of its dispatch needs no read of DAEMON_PENDING (see `attempt`). Bounded.
   */
  private readonly offered = new Map<string, { msg: DaemonMessage; owner: string }>();
  /** Frames being handled per connection. */
  private readonly inFlight = new Map<string, number>();
  /** Claims being arbitrated by this gateway: message id -> the first local attempt. */
  private readonly flights = new Map<string, Promise<Outcome>>();
  /** Thread affinity (owner and thread hash -> the connection that claimed its last message), shared by broadcast. */
  private readonly affinity = new Map<string, string>();
  private affinitySub?: Subscription;
  private sweeper?: NodeJS.Timeout;
  private sweeping?: Promise<number>;
  private kicked?: NodeJS.Timeout;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly board: ClaimBoard,
    private readonly pending: KV,
    private readonly signals: KV,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly opts: HubOptions,
    private readonly log: Logger,
  ) {}

  static async start(nc: NatsConnection, board: ClaimBoard, opts: HubOptions, log: Logger): Promise<DaemonHub> {
    const jsm = await jetstreamManager(nc);
    // Entries leave DAEMON_PENDING explicitly (replied, routed); the day-long TTL only bounds a leak.
    const pending = await openBucket(nc, jsm, BUCKETS.daemonPending, { ttlMs: 24 * 3600 * 1000 });
    const signals = await openBucket(nc, jsm, BUCKETS.daemonSignals, { ttlMs: 24 * 3600 * 1000 });
    const hub = new DaemonHub(nc, board, pending, signals, jetstream(nc), jsm, opts, log);
    hub.affinitySub = nc.subscribe(subjects.daemonAffinity, {
      callback: (_err, m) => {
        const [key, connId] = dec.decode(m.data).split(' ');
        if (key && connId) hub.noteAffinity(key, connId);
      },
    });
    hub.sweeper = setInterval(() => hub.runSweep(), opts.sweepMs ?? 2000);
    hub.sweeper.unref();
    return hub;
  }

  get connections(): number {
    return this.sockets.size;
  }

  /** Registers a connection (actor subject, owner subject) and greets it. */
  connect(sock: DaemonSocket): void {
    const sub = this.nc.subscribe(subjects.daemonActor(sock.id), {
      callback: (_err, m) => {
        const msg = parseMessage(m.data);
        if (msg) this.remember(msg, ownerToken(sock.owner));
        const ok = msg ? this.offer(sock, msg) : false;
        if (m.reply) m.respond(enc.encode(ok ? 'ok' : 'busy'));
      },
    });
    this.sockets.set(sock.id, { sock, sub });
    const ot = ownerToken(sock.owner);
    let o = this.owners.get(ot);
    if (!o) {
      o = {
        conns: new Set(),
        sub: this.nc.subscribe(subjects.daemonOwner(ot), {
          callback: (_err, m) => {
            const msg = parseMessage(m.data);
            if (!msg) return;
            this.remember(msg, ot);
            let any = false;
            for (const id of this.owners.get(ot)?.conns ?? []) {
              const s = this.sockets.get(id);
              if (s && this.offer(s.sock, msg)) any = true;
            }
            // Only a gateway that offered it answers: no answer at all means nobody received it.
            if (any && m.reply) m.respond(enc.encode('ok'));
          },
        }),
      };
      this.owners.set(ot, o);
    }
    o.conns.add(sock.id);
    sock.send({ type: 'connected', payload: {} });
    // Messages that waited for a connection of this owner are offered now, not at the next sweep.
    this.kick();
  }

  disconnect(connId: string): void {
    const s = this.sockets.get(connId);
    if (!s) return;
    this.sockets.delete(connId);
    s.sub.unsubscribe();
    const ot = ownerToken(s.sock.owner);
    const o = this.owners.get(ot);
    if (o) {
      o.conns.delete(connId);
      if (!o.conns.size) {
        o.sub.unsubscribe();
        this.owners.delete(ot);
      }
    }
  }

  private remember(msg: DaemonMessage, owner: string): void {
    this.offered.delete(msg.message_id);
    this.offered.set(msg.message_id, { msg, owner });
    // Oldest first out (a Map iterates in insertion order).
    if (this.offered.size > OFFERED_CACHE) for (const k of this.offered.keys()) if (this.offered.delete(k) && this.offered.size <= OFFERED_CACHE) break;
  }

  /** Sends a message frame; a connection too far behind is closed (never allowed to grow memory). */
  private offer(sock: DaemonSocket, m: DaemonMessage): boolean {
    const frame = {
      type: 'message',
      message_id: m.message_id,
      payload: { channel: m.channel, thread_id: m.thread_id, sender: m.sender, text: m.text, agent_name: m.agent_name ?? '', timestamp: m.timestamp },
    };
    if (!sock.send(frame)) {
      sock.close(1013, 'daemon too slow: send buffer full');
      return false;
    }
    return true;
  }

  /**
   * Offers a message to the owner's daemons: to the connection that handled its thread when it
   * answers, else to every connection of the owner on every gateway. Kept pending until replied
   * or routed elsewhere; resolved once the pending entry is stored.
   */
  async dispatch(message: DaemonMessage, owner: Owner): Promise<void> {
    const now = Date.now();
    const msg = { ...message, dispatched_at: now };
    const p: Pending = { msg, owner, dispatchedAt: now, offeredAt: now, offered: true };
    let rev: number;
    try {
      rev = await this.pending.create(kvKeys.daemonPending(msg.message_id), enc.encode(JSON.stringify(p)));
    } catch (err) {
      // Dispatched before (a redelivery of the same inbound message): its state stands.
      if (await this.pendingOf(msg.message_id)) return;
      throw err;
    }
    if (!(await this.send(msg, owner, this.affinityOf(owner, msg.thread_id)))) {
      await this.pending.update(kvKeys.daemonPending(msg.message_id), enc.encode(JSON.stringify({ ...p, offered: false })), rev).catch(() => undefined);
    }
  }

  /** The connection that handled the thread last, if this gateway heard of one. */
  private affinityOf(owner: Owner, threadId: string): string | undefined {
    return this.affinity.get(threadKey(owner, threadId));
  }

  private noteAffinity(key: string, connId: string): void {
    this.affinity.delete(key);
    this.affinity.set(key, connId);
    if (this.affinity.size > AFFINITY_CACHE) for (const k of this.affinity.keys()) if (this.affinity.delete(k) && this.affinity.size <= AFFINITY_CACHE) break;
  }

  /** True when at least one connection received the message (`connId`: try that one alone first). */
  private async send(msg: DaemonMessage, owner: Owner, connId?: string): Promise<boolean> {
    const data = enc.encode(JSON.stringify(msg));
    if (connId) {
      try {
        const r = await this.nc.request(subjects.daemonActor(connId), data, { timeout: 500 });
        if (dec.decode(r.data) === 'ok') return true;
      } catch {
        /* that connection is gone: every connection of the owner */
      }
    }
    try {
      await this.nc.request(subjects.daemonOwner(ownerToken(owner)), data, { timeout: 1000 });
      return true;
    } catch {
      return false; // no responders: no connection of the owner on any gateway
    }
  }

  /**
   * One frame from a connection. Invalid JSON and unknown types are ignored. A connection with
   * more than FRAMES_IN_FLIGHT frames still being handled is closed: its work is bounded.
   */
  async handle(connId: string, raw: string): Promise<void> {
    const s = this.sockets.get(connId);
    if (!s) return;
    const n = (this.inFlight.get(connId) ?? 0) + 1;
    if (n > FRAMES_IN_FLIGHT) {
      s.sock.close(1008, 'too many frames in flight');
      return;
    }
    this.inFlight.set(connId, n);
    try {
      await this.frame(s, connId, raw);
    } finally {
      const left = (this.inFlight.get(connId) ?? 1) - 1;
      if (left > 0) this.inFlight.set(connId, left);
      else this.inFlight.delete(connId);
    }
  }

  private async frame(s: { sock: DaemonSocket }, connId: string, raw: string): Promise<void> {
    let f: { type?: unknown; message_id?: unknown; payload?: unknown };
    try {
      f = JSON.parse(raw) as typeof f;
    } catch {
      return;
    }
    if (!f || typeof f !== 'object') return;
    const id = typeof f.message_id === 'string' ? f.message_id : '';
    switch (f.type) {
      case 'claim': {
        const granted = id ? await this.claim(s.sock, id) : false;
        s.sock.send({ type: 'claim_ack', message_id: id, payload: { granted } });
        return;
      }
      case 'progress':
        if (id && (await this.board.progress(id, connId))) await this.touch(id);
        return;
      case 'reply':
        if (id) await this.reply(s.sock, id, f.payload);
        return;
      case 'disconnect':
        s.sock.close(1000, 'disconnect');
        return;
      default:
        return;
    }
  }

  private async pendingOf(id: string): Promise<{ p: Pending; revision: number } | undefined> {
    const e = await this.pending.get(kvKeys.daemonPending(id)).catch(() => null);
    if (!e || e.operation !== 'PUT' || !e.value.length) return undefined;
    return { p: JSON.parse(dec.decode(e.value)) as Pending, revision: e.revision };
  }

  /** A claimed message's pending entry is rewritten on progress: it lives as long as the claim. */
  private async touch(id: string): Promise<void> {
    const pe = await this.pendingOf(id);
    if (pe) await this.pending.update(kvKeys.daemonPending(id), enc.encode(JSON.stringify(pe.p)), pe.revision).catch(() => undefined);
  }

  /**
   * Arbitration of one `claim`. Connections of this gateway claiming the same message at once
   * share one attempt on the board (the first one's): when it wins, or finds the message
   * already taken, the others lose without a round trip of their own. When it could not decide
   * for them (the message is not pending for that connection's owner, or the board failed),
   * each of them tries itself.
   */
  private async claim(sock: DaemonSocket, id: string): Promise<boolean> {
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

  /**
   * One attempt on the board. The message's metadata comes from this gateway's memory of what
   * it offered when the message was dispatched less than a claim TTL (minus a margin) ago:
   * within that time it cannot have been routed away (that happens a pending TTL after
   * dispatch, and only without a live claim) and a reply leaves the claim key marked replied
   * for a claim TTL, so the board alone decides correctly. Otherwise DAEMON_PENDING is read.
   */
  private async attempt(sock: DaemonSocket, id: string): Promise<Outcome> {
    const mine = ownerToken(sock.owner);
    const local = this.offered.get(id);
    const fresh = Math.min(this.opts.claimTtlSeconds, this.opts.pendingTtlSeconds) * 1000 - FRESH_MARGIN_MS;
    let m: DaemonMessage;
    if (local && local.owner === mine && local.msg.dispatched_at !== undefined && Date.now() - local.msg.dispatched_at < fresh) {
      m = local.msg;
    } else {
      const pe = await this.pendingOf(id);
      // Only the owner's connections may claim, and only what is still pending and not routed away.
      if (!pe || ownerToken(pe.p.owner) !== mine) return 'not-pending';
      if (pe.p.routedAt) return 'taken';
      m = pe.p.msg;
    }
    const meta: ClaimMeta = {
      conn_id: sock.id,
      ...(m.channel_id ? { channel_id: m.channel_id } : {}),
      ...(m.channel_type ? { channel_type: m.channel_type } : {}),
      thread_id: m.thread_id,
      ...(m.reply_token ? { reply_token: m.reply_token } : {}),
      ...(m.conversation ? { conversation: m.conversation } : {}),
      timestamp: new Date().toISOString(),
      ...(m.workflow_id ? { workflow_id: m.workflow_id } : {}),
      ...(m.workflow_run_id ? { workflow_run_id: m.workflow_run_id } : {}),
    };
    const granted = await this.board.claim(id, meta);
    // Affinity is a hint for the thread's next message: told to every gateway, stored nowhere.
    if (granted) {
      const key = threadKey(sock.owner, m.thread_id);
      this.noteAffinity(key, sock.id);
      this.nc.publish(subjects.daemonAffinity, enc.encode(`${key} ${sock.id}`));
    }
    return granted ? 'granted' : 'taken';
  }

  /**
   * A reply from the connection holding the claim: stored where it goes (the waiting
   * workflow's signal, else `deliverReply`), then the claim is ended and the message leaves
   * the pending set. A reply that cannot be stored leaves the claim as it was (the daemon may
   * reply again; unreplied, the claim expires and the message is offered again).
   */
  private async reply(sock: DaemonSocket, id: string, payload: unknown): Promise<void> {
    const c = await this.board.get(id);
    if (!c || c.meta.conn_id !== sock.id || c.meta.replied) {
      // Not this connection's claim (never granted, expired, or already replied): said, not routed.
      sock.send({
        type: 'system',
        message_id: id,
        payload: { text: 'reply not delivered: this connection does not hold the claim (not granted, expired, or already replied)' },
      });
      return;
    }
    const p = (payload && typeof payload === 'object' ? payload : {}) as Record<string, unknown>;
    const r: DaemonReply = {
      message_id: id,
      claim: c.meta,
      owner: sock.owner,
      channel: typeof p.channel === 'string' ? p.channel : (c.meta.channel_type ?? ''),
      thread_id: typeof p.thread_id === 'string' && p.thread_id ? p.thread_id : (c.meta.thread_id ?? ''),
      text: typeof p.text === 'string' ? p.text : '',
      format: p.format === 'markdown' ? 'markdown' : 'text',
    };
    if (c.meta.workflow_id) {
      // Stored durably for the workflow's wait step to read. No workflow dispatches daemon
      // messages yet (that comes with the waits of plan review and approvals, which will also
      // bring the durable wake through the work queue): nothing reads it today.
      await this.signals.put(kvKeys.daemonSignal(c.meta.workflow_id, id), enc.encode(JSON.stringify(r)));
    } else if (this.opts.deliverReply) {
      await this.opts.deliverReply(r);
    } else {
      this.log.warn({ message_id: id }, 'daemon reply has nowhere to go (no channel route configured)');
      return;
    }
    if (!(await this.board.end(id, sock.id, c)))
      this.log.warn({ message_id: id }, 'reply stored, but the claim could not be marked replied (it expired meanwhile)');
    this.offered.delete(id);
    await this.pending.delete(kvKeys.daemonPending(id)).catch(() => undefined);
  }

  /** A daemon's reply to a waiting workflow (DAEMON_SIGNALS), if it arrived. */
  async replyFor(workflowId: string, messageId: string): Promise<DaemonReply | undefined> {
    const e = await this.signals.get(kvKeys.daemonSignal(workflowId, messageId));
    if (!e || e.operation !== 'PUT' || !e.value.length) return undefined;
    return JSON.parse(dec.decode(e.value)) as DaemonReply;
  }

  private kick(): void {
    if (this.kicked) return;
    this.kicked = setTimeout(() => {
      this.kicked = undefined;
      if (this.sweeping)
        this.kick(); // after the pass under way
      else this.runSweep(true);
    }, 50);
    this.kicked.unref();
  }

  private runSweep(offerUnoffered = false): void {
    if (this.sweeping) return;
    this.sweeping = this.sweep(Date.now(), offerUnoffered)
      .catch((err: unknown) => {
        this.log.warn({ err }, 'daemon sweep failed');
        return 0;
      })
      .finally(() => (this.sweeping = undefined));
  }

  /**
   * One pass over the pending messages (see the file's comment for the rules). Returns how
   * many were offered again or routed. Any gateway may sweep; the compare-and-set on the
   * pending entry makes one of them act on each message.
   */
  async sweep(now = Date.now(), offerUnoffered = false): Promise<number> {
    let n = 0;
    const due = (await kvSnapshot(this.js, this.jsm, BUCKETS.daemonPending))
      .map((e) => ({ k: e.key, revision: e.revision, p: JSON.parse(dec.decode(e.value)) as Pending }))
      .filter(({ p }) =>
        p.routedAt
          ? now - p.routedAt >= ROUTE_RETRY_MS
          : (offerUnoffered && !p.offered) ||
            now - p.offeredAt >= this.opts.claimTtlSeconds * 1000 ||
            now - p.dispatchedAt >= this.opts.pendingTtlSeconds * 1000,
      );
    // A few at a time: a backlog is worked through in parallel, not one round trip after another.
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(SWEEP_PARALLEL, due.length) }, async () => {
        while (next < due.length) {
          const e = due[next++]!;
          if (await this.sweepOne(e.k, e.p, e.revision, now)) n++;
        }
      }),
    );
    return n;
  }

  /** One due pending message: offered again, or routed to the agent route. True when acted on. */
  private async sweepOne(k: string, p: Pending, revision: number, now: number): Promise<boolean> {
    if (p.routedAt) {
      // A hand-off that did not finish (this or another gateway died, or it failed): again.
      const rev = await this.pending.update(kvKeys.daemonPending(k), enc.encode(JSON.stringify({ ...p, routedAt: now })), revision).catch(() => 0);
      if (rev) await this.routeUnclaimed(p);
      return rev > 0;
    }
    const claim = await this.board.get(k);
    if (claim && !claim.meta.replied) return false; // claimed, lease still running
    if (claim?.meta.replied) {
      await this.pending.delete(kvKeys.daemonPending(k)).catch(() => undefined);
      return false;
    }
    if (now - p.dispatchedAt >= this.opts.pendingTtlSeconds * 1000) {
      // Routed away only by winning the board like a daemon would: a daemon's late claim and
      // the agent route cannot both have the message.
      if (
        !(await this.board.claim(k, {
          conn_id: AGENT_ROUTE,
          ...(p.msg.thread_id ? { thread_id: p.msg.thread_id } : {}),
          timestamp: new Date(now).toISOString(),
        }))
      ) {
        return false;
      }
      const rev = await this.pending.update(kvKeys.daemonPending(k), enc.encode(JSON.stringify({ ...p, routedAt: now })), revision).catch(() => 0);
      if (!rev) {
        this.log.warn({ message_id: k }, 'pending message changed while being routed to the agent route; left for the next sweep');
        return false;
      }
      await this.routeUnclaimed(p);
      return true;
    }
    const next: Pending = { ...p, offeredAt: now };
    const rev = await this.pending.update(kvKeys.daemonPending(k), enc.encode(JSON.stringify(next)), revision).catch(() => 0);
    if (!rev) return false;
    // Offered to every connection again: the one that let the claim expire may be stuck.
    const offered = await this.send(p.msg, p.owner);
    if (offered !== next.offered)
      await this.pending.update(kvKeys.daemonPending(k), enc.encode(JSON.stringify({ ...next, offered })), rev).catch(() => undefined);
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
    await this.pending.delete(kvKeys.daemonPending(id)).catch(() => undefined);
  }

  async stop(): Promise<void> {
    clearInterval(this.sweeper);
    clearTimeout(this.kicked);
    this.affinitySub?.unsubscribe();
    for (const id of [...this.sockets.keys()]) this.disconnect(id);
    await this.sweeping;
  }
}

export const newConnId = () => randomUUID();

/** A dispatched message off the bus; undefined (ignored) when it is not one. */
function parseMessage(data: Uint8Array): DaemonMessage | undefined {
  try {
    const m = JSON.parse(dec.decode(data)) as DaemonMessage;
    return m && typeof m === 'object' && typeof m.message_id === 'string' ? m : undefined;
  } catch {
    return undefined;
  }
}
