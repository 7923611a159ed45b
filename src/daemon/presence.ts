/**
 * Which daemons an owner has connected, across every gateway (GET /api/v1/daemon/status).
 *
 * Each gateway knows its own connections (when they connected, which claims they won); a
 * gateway with at least one connection of an owner answers requests on that owner's status
 * subject, `svc.daemon.status.<owner token>`. Asking is one NATS request answered by every
 * such gateway, collected until STATUS_STALL_MS pass without a further answer (at most
 * STATUS_MAX_WAIT_MS). Chosen over a presence record per connection in a KV bucket: the
 * answers come from the gateways' live memory, so a crashed gateway's daemons are not listed
 * (a record would outlive it until its TTL), and connecting or claiming writes nothing. The
 * price: a gateway that answers later than the stall window is left out of that answer.
 *
 * Claims held are the claims a connection won that are still its own on the claim board (not
 * replied, not expired): each is checked there when asked, so an expired lease is not counted.
 */
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { subjects } from '../bus/index.js';
import type { ClaimBoard } from './claims.js';
import { ownerToken, type DaemonSocket, type Owner } from './protocol.js';

/** One connected daemon as the status route shows it. */
export interface DaemonStatus {
  connection_id: string;
  /** When it connected (ISO 8601). */
  connected_since: string;
  /** Claims it holds now: won, not replied, lease not expired. */
  claims_held: number;
}

/** How long after the last answer the collection of answers ends. */
export const STATUS_STALL_MS = 250;
/** The longest a status request waits, answers or not. */
export const STATUS_MAX_WAIT_MS = 2000;

const enc = new TextEncoder();
const dec = new TextDecoder();

export class Presence {
  /** Connections of this gateway; `claims`: message id -> when the claim was won or its lease last extended (ms). */
  private readonly conns = new Map<string, { owner: string; since: Date; claims: Map<string, number> }>();
  private readonly owners = new Map<string, { sub: Subscription; conns: number }>();

  /** `claimTtlMs`: a claim not extended for this long has expired, so it is forgotten unasked (bounded memory). */
  constructor(
    private readonly nc: NatsConnection,
    private readonly board: Pick<ClaimBoard, 'get'>,
    private readonly claimTtlMs: number,
  ) {}

  add(sock: DaemonSocket): void {
    const ot = ownerToken(sock.owner);
    this.conns.set(sock.id, { owner: ot, since: new Date(), claims: new Map() });
    const o = this.owners.get(ot);
    if (o) {
      o.conns++;
      return;
    }
    const sub = this.nc.subscribe(subjects.daemonStatus(ot), {
      callback: (_err, m) => {
        void this.local(ot).then(
          (list) => m.respond(enc.encode(JSON.stringify(list))),
          () => {}, // the board is unreachable: no answer rather than a wrong one
        );
      },
    });
    this.owners.set(ot, { sub, conns: 1 });
  }

  remove(connId: string): void {
    const c = this.conns.get(connId);
    if (!c) return;
    this.conns.delete(connId);
    const o = this.owners.get(c.owner);
    if (o && --o.conns === 0) {
      o.sub.unsubscribe();
      this.owners.delete(c.owner);
    }
  }

  /** `connId` won the claim of `messageId`, or extended its lease (progress). */
  claimed(connId: string, messageId: string): void {
    const claims = this.conns.get(connId)?.claims;
    if (!claims) return;
    const now = Date.now();
    // Kept oldest first (re-inserted when extended): expired ones are at the front.
    for (const [id, at] of claims) {
      if (now - at <= this.claimTtlMs) break;
      claims.delete(id);
    }
    claims.delete(messageId);
    claims.set(messageId, now);
  }

  /** `connId`'s claim of `messageId` ended (its reply was handed on). */
  released(connId: string, messageId: string): void {
    this.conns.get(connId)?.claims.delete(messageId);
  }

  /** The owner's connections on every gateway, oldest first. */
  async ofOwner(owner: Owner): Promise<DaemonStatus[]> {
    const byId = new Map<string, DaemonStatus>();
    try {
      const answers = await this.nc.requestMany(subjects.daemonStatus(ownerToken(owner)), undefined, {
        strategy: 'stall',
        stall: STATUS_STALL_MS,
        maxWait: STATUS_MAX_WAIT_MS,
      });
      for await (const m of answers) {
        if (!m.data.length) continue; // a status message (no responders): nobody has one
        for (const d of JSON.parse(dec.decode(m.data)) as DaemonStatus[]) byId.set(d.connection_id, d);
      }
    } catch (err) {
      // No gateway holds a connection of this owner.
      if ((err as Error).name !== 'NoResponders') throw err;
    }
    return [...byId.values()].sort((a, b) => a.connected_since.localeCompare(b.connected_since) || a.connection_id.localeCompare(b.connection_id));
  }

  /** This gateway's connections of one owner, their claims checked on the board. */
  private async local(ot: string): Promise<DaemonStatus[]> {
    const out: DaemonStatus[] = [];
    for (const [id, c] of this.conns) {
      if (c.owner !== ot) continue;
      let held = 0;
      for (const messageId of [...c.claims.keys()]) {
        const claim = await this.board.get(messageId);
        if (claim && claim.meta.conn_id === id && !claim.meta.replied) held++;
        else c.claims.delete(messageId); // expired or ended: not held any more
      }
      out.push({ connection_id: id, connected_since: c.since.toISOString(), claims_held: held });
    }
    return out;
  }

  stop(): void {
    for (const o of this.owners.values()) o.sub.unsubscribe();
    this.owners.clear();
    this.conns.clear();
  }
}
