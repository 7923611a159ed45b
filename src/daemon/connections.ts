/**
 * The daemon connections of this gateway process. Each is an actor at
 * `svc.actor.daemon.<conn_id>`, and reachable by its owner's subject `svc.daemon.owner.<owner
 * token>`: a message dispatched to an owner reaches every connection of that owner on every
 * gateway. A gateway answers an owner-subject request only when it offered the message to
 * at least one connection, so no answer at all means nobody received it.
 */
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { subjects } from '../bus/index.js';
import { connectedFrame, messageFrame, ownerToken, parseMessage, type DaemonMessage, type DaemonSocket } from './protocol.js';

const enc = new TextEncoder();

/** Sends a message frame; a connection too far behind is closed (never allowed to grow memory). */
function offer(sock: DaemonSocket, m: DaemonMessage): boolean {
  if (!sock.send(messageFrame(m))) {
    sock.close(1013, 'daemon too slow: send buffer full');
    return false;
  }
  return true;
}

export class Connections {
  private readonly sockets = new Map<string, { sock: DaemonSocket; sub: Subscription }>();
  private readonly owners = new Map<string, { sub: Subscription; conns: Set<string> }>();

  /** `offered`: told of every message offered here (and to which owner token). */
  constructor(
    private readonly nc: NatsConnection,
    private readonly offered: (msg: DaemonMessage, ownerToken: string) => void,
  ) {}

  get size(): number {
    return this.sockets.size;
  }

  get(connId: string): DaemonSocket | undefined {
    return this.sockets.get(connId)?.sock;
  }

  ids(): string[] {
    return [...this.sockets.keys()];
  }

  /** Registers a connection (actor subject, owner subject) and greets it. */
  add(sock: DaemonSocket): void {
    const sub = this.nc.subscribe(subjects.daemonActor(sock.id), {
      callback: (_err, m) => {
        const msg = parseMessage(m.data);
        if (msg) this.offered(msg, ownerToken(sock.owner));
        const ok = msg ? offer(sock, msg) : false;
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
            this.offered(msg, ot);
            let any = false;
            for (const id of this.owners.get(ot)?.conns ?? []) {
              const s = this.sockets.get(id);
              if (s && offer(s.sock, msg)) any = true;
            }
            if (any && m.reply) m.respond(enc.encode('ok'));
          },
        }),
      };
      this.owners.set(ot, o);
    }
    o.conns.add(sock.id);
    sock.send(connectedFrame());
  }

  remove(connId: string): void {
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
}
