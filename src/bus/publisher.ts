/**
 * Pipelined JetStream publisher for the hot paths (events, journal entries, task starts).
 *
 * js.publish() is a full request per message (its own reply subscription bookkeeping,
 * timers and error objects). Workers emit many events per task, so this publisher sends
 * each message with a core publish carrying the Nats-Msg-Id header and a reply subject
 * under ONE shared inbox subscription, and resolves each promise when JetStream's ack for
 * that message arrives. Resolved = stored (or recognised as a duplicate of a stored message).
 *
 * Outages: a message is kept until JetStream acknowledges it or its deadline passes, never
 * dropped because the connection went away. The NATS client discards what it buffered for
 * a dead socket, and what was written to that socket may or may not have been stored, so
 * while the connection is down nothing is sent, and on reconnect every unacknowledged
 * message is sent again in publish order (the Nats-Msg-Id makes a second copy of a stored
 * message a duplicate that JetStream drops; the duplicate window is 2 minutes). A message
 * whose ack does not come within `ackTimeoutMs`, or that JetStream answers with a
 * retryable error (503, or no responders while a restarted server is still loading its
 * streams), is sent again the same way. Only the deadline, a non-retryable JetStream error
 * or close() rejects.
 *
 * Order: messages go out on one connection in call order, and re-sends go out in call
 * order too, so a subject's messages are stored in publish order except when one is
 * refused with a retryable error while a later one is accepted; readers of the EVENTS
 * stream therefore order by the event's own seq (see SeqOrder in events.ts).
 */
import { createInbox, headers, type MsgHdrs, type NatsConnection, type Subscription } from '@nats-io/transport-node';

export interface PubAck {
  stream: string;
  seq: number;
  duplicate?: boolean;
}

export class PublishError extends Error {
  override name = 'PublishError';
}

export interface PublishOptions {
  /** De-duplication id (Nats-Msg-Id). */
  msgId?: string;
  /** Give up this many ms after the call (default: the publisher's deadlineMs). */
  deadlineMs?: number;
  /** More message headers (e.g. a W3C trace context). */
  headers?: Record<string, string>;
}

export interface PublisherOptions {
  /** Re-send a message whose ack has not arrived after this long (connection up). */
  ackTimeoutMs?: number;
  /** Default time after which an unacknowledged message is rejected. */
  deadlineMs?: number;
}

interface Pending {
  subject: string;
  data: Uint8Array;
  hdrs?: MsgHdrs;
  /** When it was last handed to the connection; 0: not sent since the last failure. */
  sentAt: number;
  deadline: number;
  resolve: (a: PubAck) => void;
  reject: (e: Error) => void;
}

const dec = new TextDecoder();

export class PipelinedPublisher {
  private readonly prefix: string;
  private readonly sub: Subscription;
  private readonly pending = new Map<number, Pending>();
  private next = 0;
  private readonly sweep: NodeJS.Timeout;
  private up = true;
  private closed = false;
  /** A retryable failure is waiting for the sweep: new messages queue behind it, in order. */
  private waitingResend = false;
  private readonly ackTimeoutMs: number;
  private readonly deadlineMs: number;

  constructor(
    private readonly nc: NatsConnection,
    opts: PublisherOptions = {},
  ) {
    this.ackTimeoutMs = opts.ackTimeoutMs ?? 2000;
    this.deadlineMs = opts.deadlineMs ?? 5000;
    this.prefix = `${createInbox()}.`;
    this.sub = nc.subscribe(`${this.prefix}*`, {
      callback: (err, msg) => {
        if (!err) this.onAck(Number(msg.subject.slice(this.prefix.length)), msg.data, msg.headers);
      },
    });
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type === 'disconnect') this.up = false;
        else if (s.type === 'reconnect') {
          this.up = true;
          for (const p of this.pending.values()) p.sentAt = 0;
          this.resend();
        }
      }
    })().catch(() => {});
    this.sweep = setInterval(() => this.resend(), Math.min(250, this.ackTimeoutMs));
    this.sweep.unref();
  }

  /** Whether the connection is believed usable (false between a disconnect and the reconnect). */
  get connected(): boolean {
    return this.up && !this.closed && !this.nc.isClosed();
  }

  /** Publishes to a JetStream-captured subject; a string third argument is the msgId. */
  publish(subject: string, data: Uint8Array, opts?: string | PublishOptions): Promise<PubAck> {
    const o: PublishOptions = typeof opts === 'string' ? { msgId: opts } : (opts ?? {});
    if (this.closed) return Promise.reject(new PublishError('publisher closed'));
    const id = ++this.next;
    let hdrs: MsgHdrs | undefined;
    if (o.msgId || o.headers) {
      hdrs = headers();
      if (o.msgId) hdrs.set('Nats-Msg-Id', o.msgId);
      for (const [k, v] of Object.entries(o.headers ?? {})) hdrs.set(k, v);
    }
    return new Promise<PubAck>((resolve, reject) => {
      const p: Pending = { subject, data, hdrs, sentAt: 0, deadline: Date.now() + (o.deadlineMs ?? this.deadlineMs), resolve, reject };
      this.pending.set(id, p);
      // Behind an earlier message waiting to be re-sent: keep the order, the sweep sends both.
      if (this.up && !this.waitingResend) this.send(id, p);
    });
  }

  private send(id: number, p: Pending): void {
    p.sentAt = Date.now();
    try {
      this.nc.publish(p.subject, p.data, { reply: `${this.prefix}${id}`, headers: p.hdrs });
    } catch (e) {
      // Closed or draining connection: nothing will ever be sent.
      if (this.nc.isClosed()) this.fail(id, p, new PublishError(`publish failed: ${(e as Error).message}`));
      else p.sentAt = 0;
    }
  }

  private fail(id: number, p: Pending, e: Error): void {
    this.pending.delete(id);
    p.reject(e);
  }

  private onAck(id: number, data: Uint8Array, hdrs?: MsgHdrs): void {
    const p = this.pending.get(id);
    if (!p) return; // already acknowledged (a re-sent copy) or given up
    if (data.length === 0) {
      // A status message: 503 no responders, i.e. no stream listens (yet: a restarted server
      // loads its streams after it accepts connections). Retried until the deadline.
      p.sentAt = 0;
      this.waitingResend = true;
      if (hdrs?.code && hdrs.code !== 503) this.fail(id, p, new PublishError(`JetStream publish failed: ${hdrs.code} ${hdrs.description}`));
      return;
    }
    try {
      const r = JSON.parse(dec.decode(data)) as PubAck & { error?: { code: number; err_code?: number; description: string } };
      if (r.error) {
        if (r.error.code === 503 || r.error.code === 408) {
          p.sentAt = 0;
          this.waitingResend = true;
          return;
        }
        this.fail(id, p, new PublishError(`JetStream publish failed: ${r.error.description} (${r.error.code})`));
        return;
      }
      this.pending.delete(id);
      p.resolve({ stream: r.stream, seq: r.seq, duplicate: r.duplicate });
    } catch (e) {
      this.fail(id, p, new PublishError(`undecodable JetStream ack: ${(e as Error).message}`));
    }
  }

  /** Rejects what is past its deadline; (re-)sends, in publish order, what needs sending. */
  private resend(): void {
    const now = Date.now();
    let waiting = false;
    // A subject whose message is given up: its later messages are given up too, so that
    // what is stored of a subject is always a prefix of what was published to it.
    let lost: Set<string> | undefined;
    for (const [id, p] of this.pending) {
      if (now > p.deadline || lost?.has(p.subject)) {
        (lost ??= new Set()).add(p.subject);
        this.fail(
          id,
          p,
          new PublishError(
            this.up ? 'JetStream did not acknowledge the message before its deadline' : 'NATS connection lost; the message was not stored before its deadline',
          ),
        );
        continue;
      }
      if (!this.up) continue;
      if (p.sentAt === 0 || now - p.sentAt > this.ackTimeoutMs) {
        this.send(id, p);
        waiting ||= p.sentAt === 0;
      }
    }
    this.waitingResend = waiting;
  }

  close(): void {
    this.closed = true;
    clearInterval(this.sweep);
    this.sub.unsubscribe();
    for (const p of this.pending.values()) p.reject(new PublishError('publisher closed'));
    this.pending.clear();
  }
}
