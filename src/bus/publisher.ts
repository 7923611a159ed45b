/**
 * Pipelined JetStream publisher for the hot paths (events, journal entries, task starts).
 *
 * js.publish() is a full request per message (its own reply subscription bookkeeping,
 * timers and error objects). Workers emit many events per task, so this publisher sends
 * each message with a core publish carrying the Nats-Msg-Id header and a reply subject
 * under ONE shared inbox subscription, and resolves each promise when JetStream's ack for
 * that message arrives. Same guarantee as js.publish: resolved = stored (or recognised as
 * a duplicate of a stored message); rejected on a JetStream error or after `timeoutMs`.
 * Order: messages go out on one connection in call order, so JetStream stores them in that
 * order.
 */
import { createInbox, headers, type NatsConnection, type Subscription } from '@nats-io/transport-node';

export interface PubAck {
  stream: string;
  seq: number;
  duplicate?: boolean;
}

export class PublishError extends Error {
  override name = 'PublishError';
}

interface Pending {
  resolve: (a: PubAck) => void;
  reject: (e: Error) => void;
  at: number;
}

const dec = new TextDecoder();

export class PipelinedPublisher {
  private readonly prefix: string;
  private readonly sub: Subscription;
  private readonly pending = new Map<number, Pending>();
  private next = 0;
  private readonly sweep: NodeJS.Timeout;

  constructor(private readonly nc: NatsConnection, private readonly timeoutMs = 5000) {
    this.prefix = `${createInbox()}.`;
    this.sub = nc.subscribe(`${this.prefix}*`, {
      callback: (err, msg) => {
        if (err) return;
        const id = Number(msg.subject.slice(this.prefix.length));
        const p = this.pending.get(id);
        if (!p) return; // timed out already
        this.pending.delete(id);
        if (msg.data.length === 0) {
          // No responders (503 status): no stream listens on the subject.
          p.reject(new PublishError('no JetStream stream accepted the message (no responders)'));
          return;
        }
        try {
          const r = JSON.parse(dec.decode(msg.data)) as PubAck & { error?: { code: number; description: string } };
          if (r.error) p.reject(new PublishError(`JetStream publish failed: ${r.error.description} (${r.error.code})`));
          else p.resolve({ stream: r.stream, seq: r.seq, duplicate: r.duplicate });
        } catch (e) {
          p.reject(new PublishError(`undecodable JetStream ack: ${(e as Error).message}`));
        }
      },
    });
    this.sweep = setInterval(() => {
      const limit = Date.now() - this.timeoutMs;
      for (const [id, p] of this.pending) {
        if (p.at > limit) break; // insertion order = age order
        this.pending.delete(id);
        p.reject(new PublishError(`JetStream ack not received within ${this.timeoutMs} ms`));
      }
    }, Math.min(1000, this.timeoutMs));
    this.sweep.unref();
  }

  /** Publishes to a JetStream-captured subject; `msgId` enables de-duplication. */
  publish(subject: string, data: Uint8Array, msgId?: string): Promise<PubAck> {
    const id = ++this.next;
    let h: ReturnType<typeof headers> | undefined;
    if (msgId) {
      h = headers();
      h.set('Nats-Msg-Id', msgId);
    }
    return new Promise<PubAck>((resolve, reject) => {
      this.pending.set(id, { resolve, reject, at: Date.now() });
      try {
        this.nc.publish(subject, data, { reply: `${this.prefix}${id}`, headers: h });
      } catch (e) {
        this.pending.delete(id);
        reject(e as Error);
      }
    });
  }

  close(): void {
    clearInterval(this.sweep);
    this.sub.unsubscribe();
    for (const p of this.pending.values()) p.reject(new PublishError('publisher closed'));
    this.pending.clear();
  }
}
