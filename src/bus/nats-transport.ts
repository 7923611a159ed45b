/**
 * The NATS connection, with its socket writes gathered per event-loop turn.
 *
 * The client (nats.js) writes its outbound buffer to the socket at the end of every microtask
 * run that added to it, so a busy process (thousands of pipelined publishes, acks and pulls a
 * second, each from its own promise chain) made a write system call for nearly every
 * message, and the server a read for each: about a seventh of a busy service's CPU (issue
 * 18). Here the first write of a turn corks the socket and the turn's check phase
 * (setImmediate) uncorks it, so everything written in one turn of the event loop leaves in one
 * `writev`. A write waits at most for the rest of the turn it was made in.
 *
 * How: the client's transport factory (nats-core's `setTransportFactory`, its extension point
 * for transports) makes the transport-node `NodeTransport` this process would have used, with
 * its `send` corking first. The factory is process-wide and read at every dial, a reconnect's
 * too: a plain `connect()` of transport-node later in the same process (tests, benchmarks)
 * puts the plain transport back for every connection's next dial, and a later `connectNats`
 * corks a plain connection's next dial. Either way only the number of system calls changes,
 * never what is written. nats-transport.test.ts fails if an update of the client changes what
 * this relies on (the factory, `NodeTransport.send`, its `socket`); `@nats-io/nats-core` is a
 * direct dependency pinned to transport-node's version, so the factory set here is the one
 * transport-node's connection reads.
 */
import type { NatsConnection, NodeConnectionOptions } from '@nats-io/transport-node';
import { NatsConnectionImpl, setTransportFactory } from '@nats-io/nats-core/internal';
import { NodeTransport, nodeResolveHost } from '@nats-io/transport-node/lib/node_transport.js';

/** A NodeTransport whose writes of one event-loop turn leave in one system call. */
class TurnCorkedTransport extends NodeTransport {
  private corked = false;

  override send(frame: Uint8Array): void {
    const socket = this.socket;
    if (socket && !this.corked) {
      this.corked = true;
      socket.cork();
      setImmediate(() => {
        this.corked = false;
        socket.uncork();
      });
    }
    super.send(frame);
  }

  /** What this turn wrote leaves before the socket is destroyed (a publish just before a close is not lost). */
  override close(err?: Error): Promise<void> {
    this.release();
    return super.close(err);
  }

  /** The same before a disconnect (a stale connection given up, a forced reconnect). */
  override disconnect(): void {
    this.release();
    super.disconnect();
  }

  private release(): void {
    if (!this.corked) return;
    this.corked = false;
    this.socket?.uncork();
  }
}

/** `connect` of transport-node, with TurnCorkedTransport. */
export function connectNats(opts: NodeConnectionOptions): Promise<NatsConnection> {
  setTransportFactory({ factory: () => new TurnCorkedTransport(), dnsResolveFn: nodeResolveHost });
  return NatsConnectionImpl.connect(opts);
}
