/**
 * Daemon connections of one gateway process, and dispatch across all of them.
 *
 * - Each connection is an actor at `svc.actor.daemon.<conn_id>`, and is reachable by its
 *   owner's subject `svc.daemon.owner.<hash of tenant and user>`: a message dispatched to an
 *   owner reaches every connection of that owner on every gateway.
 * - Thread affinity: the connection that claimed a thread's message last (DAEMON_THREADS) gets
 *   that thread's next message alone, while it answers on its actor subject; otherwise the
 *   message goes to every connection of the owner.
 * - A dispatched message is kept in DAEMON_PENDING (TTL: the pending-message TTL, 90 s) until
 *   it is replied; `claim` looks its metadata up there and arbitrates through the ClaimBoard.
 *   A claim not replied within the claim TTL expires and the sweeper offers the message again.
 * - Protocol: `connected` on open; `claim` → `claim_ack {granted}`; `progress` extends the
 *   lease; `reply` ends the claim and is published on `svc.daemon.replies` with the claim's
 *   metadata (channel, thread, reply token, workflow) for the component that routes it;
 *   `disconnect` closes. Invalid JSON is ignored.
 */
import { createHash, randomUUID } from 'node:crypto';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { BUCKETS, subjects } from '../bus/index.js';
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
  workflow_id?: string;
  workflow_run_id?: string;
}

export interface Owner {
  tenantId: string | null;
  userId: string | null;
}

/** One WebSocket as the hub sees it. */
export interface DaemonSocket {
  readonly id: string;
  readonly owner: Owner;
  /** Sends one JSON frame; false when the socket is backed up (the caller may drop it). */
  send(frame: unknown): boolean;
  close(code: number, reason: string): void;
}

interface Pending {
  msg: DaemonMessage;
  owner: Owner;
  dispatchedAt: number;
  replied?: boolean;
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
  /** How often expired claims are looked for (ms). */
  sweepMs?: number;
}

export class DaemonHub {
  private readonly sockets = new Map<string, { sock: DaemonSocket; sub: Subscription }>();
  private readonly owners = new Map<string, { sub: Subscription; conns: Set<string> }>();
  private sweeper?: NodeJS.Timeout;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly board: ClaimBoard,
    private readonly pending: KV,
    private readonly threads: KV,
    private readonly opts: HubOptions,
    private readonly log: Logger,
  ) {}

  static async start(nc: NatsConnection, board: ClaimBoard, opts: HubOptions, log: Logger): Promise<DaemonHub> {
    const kvm = new Kvm(nc);
    const pending = await kvm.create(BUCKETS.daemonPending, { history: 1, ttl: opts.pendingTtlSeconds * 1000 }).catch(() => kvm.open(BUCKETS.daemonPending));
    const threads = await kvm.create(BUCKETS.daemonThreads, { history: 1, ttl: 10 * 60 * 1000 }).catch(() => kvm.open(BUCKETS.daemonThreads));
    const hub = new DaemonHub(nc, board, pending, threads, opts, log);
    hub.sweeper = setInterval(() => void hub.sweep().catch((err: unknown) => log.warn({ err }, 'daemon sweep failed')), opts.sweepMs ?? 2000);
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
        const ok = this.offer(sock, JSON.parse(dec.decode(m.data)) as DaemonMessage);
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
            const msg = JSON.parse(dec.decode(m.data)) as DaemonMessage;
            for (const id of this.owners.get(ot)?.conns ?? []) {
              const s = this.sockets.get(id);
              if (s) this.offer(s.sock, msg);
            }
          },
        }),
      };
      this.owners.set(ot, o);
    }
    o.conns.add(sock.id);
    sock.send({ type: 'connected', payload: {} });
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
   * answers, else to every connection of the owner on every gateway. Kept pending until replied.
   */
  async dispatch(msg: DaemonMessage, owner: Owner): Promise<void> {
    const p: Pending = { msg, owner, dispatchedAt: Date.now() };
    await this.pending.put(msg.message_id, enc.encode(JSON.stringify(p)));
    await this.send(msg, owner);
  }

  private async send(msg: DaemonMessage, owner: Owner, affinity = true): Promise<void> {
    const t = affinity ? await this.threads.get(threadKey(owner, msg.thread_id)).catch(() => null) : null;
    if (t && t.operation === 'PUT' && t.value.length) {
      const connId = dec.decode(t.value);
      try {
        const r = await this.nc.request(subjects.daemonActor(connId), enc.encode(JSON.stringify(msg)), { timeout: 500 });
        if (dec.decode(r.data) === 'ok') return;
      } catch {
        /* that connection is gone: every connection of the owner */
      }
    }
    this.nc.publish(subjects.daemonOwner(ownerToken(owner)), enc.encode(JSON.stringify(msg)));
  }

  /** One frame from a connection. Invalid JSON and unknown types are ignored. */
  async handle(connId: string, raw: string): Promise<void> {
    const s = this.sockets.get(connId);
    if (!s) return;
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
        if (id) await this.board.progress(id, connId);
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
    const e = await this.pending.get(id).catch(() => null);
    if (!e || e.operation !== 'PUT' || !e.value.length) return undefined;
    return { p: JSON.parse(dec.decode(e.value)) as Pending, revision: e.revision };
  }

  private async claim(sock: DaemonSocket, id: string): Promise<boolean> {
    const pe = await this.pendingOf(id);
    // Only the owner's connections may claim, and only what is still pending.
    if (!pe || pe.p.replied || ownerToken(pe.p.owner) !== ownerToken(sock.owner)) return false;
    const m = pe.p.msg;
    const meta: ClaimMeta = {
      conn_id: sock.id,
      ...(m.channel_id ? { channel_id: m.channel_id } : {}),
      ...(m.channel_type ? { channel_type: m.channel_type } : {}),
      thread_id: m.thread_id,
      ...(m.reply_token ? { reply_token: m.reply_token } : {}),
      timestamp: new Date().toISOString(),
      ...(m.workflow_id ? { workflow_id: m.workflow_id } : {}),
      ...(m.workflow_run_id ? { workflow_run_id: m.workflow_run_id } : {}),
    };
    const granted = await this.board.claim(id, meta);
    if (granted) await this.threads.put(threadKey(sock.owner, m.thread_id), enc.encode(sock.id)).catch(() => {});
    return granted;
  }

  private async reply(sock: DaemonSocket, id: string, payload: unknown): Promise<void> {
    const meta = await this.board.complete(id, sock.id);
    if (!meta) return; // not this connection's claim (or expired): nothing to route
    const pe = await this.pendingOf(id);
    if (pe) await this.pending.update(id, enc.encode(JSON.stringify({ ...pe.p, replied: true })), pe.revision).catch(() => {});
    const p = (payload && typeof payload === 'object' ? payload : {}) as Record<string, unknown>;
    this.nc.publish(
      subjects.daemonReplies,
      enc.encode(
        JSON.stringify({
          message_id: id,
          claim: meta,
          owner: sock.owner,
          channel: typeof p.channel === 'string' ? p.channel : (pe?.p.msg.channel ?? ''),
          thread_id: typeof p.thread_id === 'string' ? p.thread_id : meta.thread_id,
          text: typeof p.text === 'string' ? p.text : '',
          format: p.format === 'markdown' ? 'markdown' : 'text',
        }),
      ),
    );
  }

  /**
   * Offers again every pending message whose claim expired without a reply (or that nobody
   * claimed) once a claim TTL has passed since it was last offered. Any gateway may sweep; the
   * compare-and-set on the pending entry makes one of them do it.
   */
  async sweep(now = Date.now()): Promise<number> {
    let n = 0;
    const keys: string[] = [];
    for await (const k of await this.pending.keys()) keys.push(k);
    for (const k of keys) {
      const pe = await this.pendingOf(k);
      if (!pe || pe.p.replied || now - pe.p.dispatchedAt < this.opts.claimTtlSeconds * 1000) continue;
      if (await this.board.get(k)) continue; // claimed, lease still running
      const next = { ...pe.p, dispatchedAt: now };
      const ok = await this.pending.update(k, enc.encode(JSON.stringify(next)), pe.revision).then(
        () => true,
        () => false,
      );
      if (!ok) continue;
      // Offered to every connection again: the one that let the claim expire may be stuck.
      await this.send(pe.p.msg, pe.p.owner, false);
      n++;
    }
    return n;
  }

  stop(): void {
    clearInterval(this.sweeper);
    for (const id of [...this.sockets.keys()]) this.disconnect(id);
  }
}

export const newConnId = () => randomUUID();
