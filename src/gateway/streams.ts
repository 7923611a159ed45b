/**
 * Live event fan-out for SSE and WebSocket clients.
 *
 * Delivery: every client of a workflow receives each event once, in seq order, from the
 * position it asked for. A resume point older than what is retained yields an explicit
 * REPLAY_GAP event first, never a silent gap.
 *
 * Concurrency: one Feed per workflow per gateway process holds the only upstream
 * subscription (a core NATS subscription on svc.events.<id>, backed by a JetStream read of
 * the retained history), a ring of pre-encoded frames and the set of its clients. Events are
 * coalesced per event-loop turn: each client gets one corked write per turn carrying every
 * new frame, and clients at the same position share one concatenated buffer.
 *
 * Back-pressure: a client whose socket stops draining is not written to; its backlog stays
 * in the shared ring. A client more than maxBufferedBytes behind, or behind the ring's start,
 * is dropped with a final `event: error` notice. Memory per client is constant.
 *
 * Lifecycle: a Feed is created by its first client and closed a few seconds after its last
 * client leaves; SSE streams close after STREAM_END (`event: done`, `data: [DONE]`) or after
 * the inactivity timeout; heartbeats are comment lines.
 */
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { DeliverPolicy, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { STREAMS, decodeEvent, sseEventName, subjects, type WorkflowEvent } from '../bus/index.js';
import type { Logger } from '../log/index.js';

export interface Encoded {
  seq: number;
  type: string;
  json: string;
  frame: Buffer;
  size: number;
}

export interface Subscriber {
  cursor: number;
  filter?: Set<string>;
  /** Bytes of frames between cursor and the feed's head; kept by the feed. */
  backpressured: boolean;
  closed: boolean;
  /** Write frames (already filtered); returns false if the socket is backpressured. */
  write(events: Encoded[], shared?: Buffer): boolean;
  /** The stream is over (STREAM_END passed). */
  end(): void;
  /** Dropped for being too slow. */
  drop(reason: string): void;
}

export interface StreamOptions {
  ringCapacity: number;
  maxBufferedBytes: number;
  lingerMs?: number;
}

export function encodeEvent(e: WorkflowEvent): Encoded {
  const data: Record<string, unknown> = { ...e };
  if (e.type === 'LLM_PARTIAL') data.delta = e.message;
  const json = JSON.stringify(data);
  const frame = Buffer.from(`id: ${e.stream_id}\nevent: ${sseEventName(e.type)}\ndata: ${json}\n\n`);
  return { seq: e.seq, type: e.type, json, frame, size: frame.length };
}

export function gapFrame(requestedAfter: number, firstAvailable: number): { json: string; frame: Buffer } {
  const data = {
    type: 'REPLAY_GAP',
    message: `Events after seq ${requestedAfter} up to ${firstAvailable - 1} are no longer retained; replay continues from seq ${firstAvailable}`,
    requested_after: requestedAfter,
    first_available_seq: firstAvailable,
    timestamp: new Date().toISOString(),
  };
  const json = JSON.stringify(data);
  return { json, frame: Buffer.from(`event: REPLAY_GAP\ndata: ${json}\n\n`) };
}

const matches = (f: Set<string> | undefined, e: Encoded) => !f || f.has(e.type) || f.has(sseEventName(e.type));

export class Feed {
  ring: Encoded[] = [];
  lastSeq = 0;
  ended = false;
  ready: Promise<void>;
  readonly subscribers = new Set<Subscriber>();
  private sub?: Subscription;
  private early: WorkflowEvent[] = [];
  private loading = true;
  private catchingUp = false;
  private closeTimer?: NodeJS.Timeout;
  closed = false;

  constructor(readonly workflowId: string, private readonly hub: StreamHub) {
    this.sub = hub.nc.subscribe(subjects.events(workflowId), {
      callback: (err, msg) => {
        if (err) return;
        try {
          this.onLive(decodeEvent(msg.data));
        } catch (e) {
          hub.log.warn({ err: e }, 'undecodable event');
        }
      },
    });
    this.ready = this.loadFrom(0).then(() => {
      this.loading = false;
      this.drainEarly();
    });
  }

  get firstRetained(): number {
    return this.ring.length ? this.ring[0].seq : this.lastSeq + 1;
  }

  /** Reads retained events with seq > after from JetStream, appending the contiguous ones. */
  private async loadFrom(after: number): Promise<void> {
    const { jsm, js } = this.hub;
    const last = await jsm.streams.getMessage(STREAMS.events, { last_by_subj: subjects.events(this.workflowId) }).catch(() => null);
    if (!last) return;
    const lastStreamSeq = last.seq;
    const consumer = await js.consumers.get(STREAMS.events, { filter_subjects: subjects.events(this.workflowId), deliver_policy: DeliverPolicy.All });
    const msgs = await consumer.consume({ max_messages: 512 });
    for await (const m of msgs) {
      const e = decodeEvent(m.data);
      if (e.seq > after) this.append(e, true);
      if (m.seq >= lastStreamSeq) break;
    }
    await msgs.close().catch(() => {});
  }

  private drainEarly(): void {
    const early = this.early.sort((a, b) => a.seq - b.seq);
    this.early = [];
    for (const e of early) this.onLive(e);
  }

  private onLive(e: WorkflowEvent): void {
    if (this.loading || this.catchingUp) {
      this.early.push(e);
      return;
    }
    if (e.seq <= this.lastSeq) return;
    if (e.seq === this.lastSeq + 1) {
      this.append(e, false);
      return;
    }
    // A gap on the live path (missed core message): catch up from JetStream.
    this.early.push(e);
    this.catchingUp = true;
    void this.loadFrom(this.lastSeq)
      .catch((err) => this.hub.log.warn({ err, workflow_id: this.workflowId }, 'stream catch-up failed'))
      .finally(() => {
        this.catchingUp = false;
        this.drainEarly();
      });
  }

  private append(e: WorkflowEvent, history: boolean): void {
    if (e.seq <= this.lastSeq) return;
    if (this.ring.length && e.seq !== this.lastSeq + 1 && !history) return;
    // History may start after seq 1 (older events expired); the ring keeps whatever is contiguous from there.
    if (history && this.ring.length && e.seq !== this.lastSeq + 1) {
      this.ring = [];
    }
    const enc = encodeEvent(e);
    this.ring.push(enc);
    this.lastSeq = e.seq;
    if (e.type === 'STREAM_END') this.ended = true;
    if (this.ring.length > this.hub.opts.ringCapacity) this.ring.splice(0, this.ring.length - this.hub.opts.ringCapacity);
    this.hub.markDirty(this);
  }

  /** Events with seq > cursor still in the ring. */
  since(cursor: number): Encoded[] {
    if (!this.ring.length || cursor >= this.lastSeq) return [];
    const start = Math.max(0, cursor + 1 - this.ring[0].seq);
    return this.ring.slice(start);
  }

  add(s: Subscriber): void {
    clearTimeout(this.closeTimer);
    this.subscribers.add(s);
  }

  remove(s: Subscriber): void {
    this.subscribers.delete(s);
    if (!this.subscribers.size && !this.closed) {
      clearTimeout(this.closeTimer);
      this.closeTimer = setTimeout(() => {
        if (!this.subscribers.size) this.hub.closeFeed(this);
      }, this.hub.opts.lingerMs ?? 5000);
      this.closeTimer.unref();
    }
  }

  /** Delivers everything new to every subscriber: one write per subscriber. */
  flush(): void {
    const shared = new Map<number, { events: Encoded[]; buf: Buffer }>();
    for (const s of this.subscribers) this.flushOne(s, shared);
  }

  flushOne(s: Subscriber, shared?: Map<number, { events: Encoded[]; buf: Buffer }>): void {
    if (s.closed || s.backpressured) return;
    if (s.cursor >= this.lastSeq) return;
    if (this.ring.length && s.cursor + 1 < this.ring[0].seq) {
      s.drop('client too slow: events it had not received were discarded');
      return;
    }
    let events: Encoded[];
    let buf: Buffer | undefined;
    if (!s.filter) {
      let e = shared?.get(s.cursor);
      if (!e) {
        const evs = this.since(s.cursor);
        e = { events: evs, buf: evs.length === 1 ? evs[0].frame : Buffer.concat(evs.map((x) => x.frame)) };
        shared?.set(s.cursor, e);
      }
      events = e.events;
      buf = e.buf;
      if (buf.length > this.hub.opts.maxBufferedBytes) {
        s.drop('client too slow: more than the per-connection buffer limit is pending');
        return;
      }
    } else {
      events = this.since(s.cursor).filter((e) => matches(s.filter, e));
    }
    const endSeen = this.ended && this.lastSeq > s.cursor;
    s.cursor = this.lastSeq;
    if (events.length) s.write(events, buf);
    if (endSeen) s.end();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.closeTimer);
    this.sub?.unsubscribe();
  }
}

export class StreamHub {
  readonly feeds = new Map<string, Feed>();
  private dirty = new Set<Feed>();
  private scheduled = false;

  constructor(
    readonly nc: NatsConnection,
    readonly js: JetStreamClient,
    readonly jsm: JetStreamManager,
    readonly opts: StreamOptions,
    readonly log: Logger,
  ) {}

  feed(workflowId: string): Feed {
    let f = this.feeds.get(workflowId);
    if (!f || f.closed) {
      f = new Feed(workflowId, this);
      this.feeds.set(workflowId, f);
    }
    return f;
  }

  closeFeed(f: Feed): void {
    f.close();
    if (this.feeds.get(f.workflowId) === f) this.feeds.delete(f.workflowId);
  }

  markDirty(f: Feed): void {
    this.dirty.add(f);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flushAll());
    }
  }

  private flushAll(): void {
    this.scheduled = false;
    const feeds = this.dirty;
    this.dirty = new Set();
    for (const f of feeds) f.flush();
  }

  /**
   * Attaches a subscriber that has seen events up to `after`. Sends a REPLAY_GAP first when
   * `after` is older than the retained window. Returns the feed.
   */
  async attach(workflowId: string, s: Subscriber, after: number, onGap: (after: number, first: number) => void): Promise<Feed> {
    const f = this.feed(workflowId);
    f.add(s);
    await f.ready;
    if (s.closed) {
      f.remove(s);
      return f;
    }
    const first = f.firstRetained;
    if (after > 0 && after + 1 < first && f.lastSeq > 0) onGap(after, first);
    s.cursor = Math.max(after, first - 1);
    if (after > f.lastSeq) s.cursor = after;
    f.flushOne(s);
    return f;
  }

  close(): void {
    for (const f of this.feeds.values()) f.close();
    this.feeds.clear();
  }
}
