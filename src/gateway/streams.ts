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
 * in the shared ring. A stalled client to which more than maxBufferedBytes of new events have
 * arrived since it stalled, or which is behind the ring's start, is dropped with a final
 * `event: error` notice. A draining client (replay included) is written in pieces of at most
 * maxBufferedBytes until its socket pushes back. Memory per client is constant.
 *
 * Lifecycle: a Feed is created by its first client and closed a few seconds after its last
 * client leaves; SSE streams close after STREAM_END (`event: done`, `data: [DONE]`) or after
 * the inactivity timeout; heartbeats are comment lines.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { DeliverPolicy, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { STREAMS, SeqOrder, replayGap, sseEventName, subjects, type WorkflowEvent } from '../bus/index.js';
import type { HttpResponse } from 'uWebSockets.js';
import { backoffDelay, type Backoff, type Logger } from '../kernel/index.js';
import { countSlowClientDropped } from '../metrics/index.js';
import { within } from './within.js';

/**
 * An event as the feed's ring keeps it: its SSE frame only. The JSON text (the frame's data
 * line) is decoded from the frame when a WebSocket, /v1 or /mcp client asks for it, and kept
 * from then on. Holding both for every retained event (1,000 per workflow) doubled the ring's
 * heap, and the collector's pauses with it (a synthetic churn of 100 workflows x 1,000 events
 * at 30,000 events/s: longest pause 21 ms with the text kept, 8 ms without), which every
 * stream waited behind.
 */
export class Encoded {
  private text?: string;
  constructor(
    readonly seq: number,
    readonly type: string,
    readonly frame: Buffer,
    /** Where the data line's JSON starts in `frame`. */
    private readonly dataAt: number,
  ) {}

  get size(): number {
    return this.frame.length;
  }

  get json(): string {
    return (this.text ??= this.frame.toString('utf8', this.dataAt, this.frame.length - 2));
  }
}

export interface Subscriber {
  cursor: number;
  filter?: ReadonlySet<string>;
  /** The socket is not draining (set by write(), cleared when it becomes writable). */
  backpressured: boolean;
  /** The feed's head when the subscriber last stalled; kept by the feed. */
  stalledAt?: number;
  closed: boolean;
  /** The feed it reads from, set by FeedHub.attach once it has joined (for its close handler to leave). */
  feed?: Feed;
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

/** The JSON text an event arrived as (live or from the history), so that it is not serialised again. */
const arrivedAs = new WeakMap<WorkflowEvent, string>();

/** Decodes an event from its NATS message, remembering its JSON text for encodeEvent. */
export function decodeArrived(data: Uint8Array): WorkflowEvent {
  const text = utf8.decode(data);
  const e = JSON.parse(text) as WorkflowEvent;
  arrivedAs.set(e, text);
  return e;
}

const utf8 = new TextDecoder();

/**
 * The event's SSE frame; its data is the event's JSON with, for LLM_PARTIAL, `delta` (the
 * text) added last. An event that arrived as JSON text reuses that text (the same fields in
 * the same order: it is what JSON.stringify of the decoded event gives).
 */
export function encodeEvent(e: WorkflowEvent): Encoded {
  const text = arrivedAs.get(e);
  let json: string;
  if (text !== undefined && !('delta' in e)) {
    json = e.type === 'LLM_PARTIAL' ? `${text.slice(0, text.lastIndexOf('}'))},"delta":${JSON.stringify(e.message)}}` : text;
  } else {
    const data: Record<string, unknown> = { ...e };
    if (e.type === 'LLM_PARTIAL') data.delta = e.message;
    json = JSON.stringify(data);
  }
  const head = `id: ${e.stream_id}\nevent: ${sseEventName(e.type)}\ndata: `;
  return new Encoded(e.seq, e.type, Buffer.from(`${head}${json}\n\n`), Buffer.byteLength(head));
}

export function gapFrame(requestedAfter: number, firstAvailable: number): { json: string; frame: Buffer } {
  const json = JSON.stringify(replayGap(requestedAfter, firstAvailable));
  return { json, frame: Buffer.from(`event: REPLAY_GAP\ndata: ${json}\n\n`) };
}

/** A history read that has made no progress for this long is abandoned (and retried). */
const LOAD_STALL_MS = 5000;

/** How long a new feed keeps retrying its first history read (e.g. through a NATS restart). */
const INITIAL_LOAD_PATIENCE_MS = 30_000;
/** Between those retries: 250 ms doubling to 2 s; no jitter, one reader per workflow and gateway. */
const INITIAL_LOAD_BACKOFF: Backoff = { baseMs: 250, capMs: 2000, jitter: 'none' };

/**
 * The tail check of a feed that is not ended: the live path can miss its newest events without
 * any later event showing the gap (in a NATS cluster a new core subscription reaches the other
 * servers a moment after it is made, and the history read may end just before the event that
 * was published meanwhile; a frozen server or a reconnect can do the same). A quiet feed asks
 * JetStream for the workflow's last stored event and catches up when it is newer: first
 * TAIL_CHECK_FIRST_MS after the history load and after live events stop, then doubling up to
 * TAIL_CHECK_MAX_MS while nothing arrives (one direct get per quiet feed and interval).
 */
const TAIL_CHECK_FIRST_MS = 1000;
const TAIL_CHECK_MAX_MS = 30_000;

interface Batch {
  events: Encoded[];
  buf?: Buffer;
  /** Seq of the last ring event the batch covers (filtered-out ones included). */
  last: number;
}

const matches = (f: ReadonlySet<string> | undefined, e: Encoded) => !f || f.has(e.type) || f.has(sseEventName(e.type));

export class Feed {
  ring: Encoded[] = [];
  ended = false;
  /** Settles when the retained history is loaded (never rejects; see `failed`). */
  ready: Promise<void>;
  failed?: Error;
  readonly subscribers = new Set<Subscriber>();
  /** Attaches waiting for the history load: they keep the feed open without receiving. */
  private attaching = 0;
  private sub?: Subscription;
  /** Live and loaded events in, each seq once and in order out. */
  private readonly order = new SeqOrder<WorkflowEvent>();
  private loading = true;
  private early: WorkflowEvent[] = [];
  private catchUp?: Promise<void>;
  /** A catch-up was asked for while a read was under way. */
  private again = false;
  private catchUpTimer?: NodeJS.Timeout;
  private closeTimer?: NodeJS.Timeout;
  /** lastSeq at the last flush of every subscriber. */
  private flushedSeq = 0;
  closed = false;
  private tailTimer?: NodeJS.Timeout;
  private tailDelay = TAIL_CHECK_FIRST_MS;
  /** Live events since the last tail check (none: the feed is quiet, ask JetStream). */
  private liveSince = 0;

  constructor(
    readonly workflowId: string,
    private readonly hub: StreamHub,
  ) {
    this.sub = hub.nc.subscribe(subjects.events(workflowId), {
      callback: (err, msg) => {
        if (err) return;
        try {
          this.onLive(decodeArrived(msg.data));
        } catch (e) {
          hub.log.warn({ err: e }, 'undecodable event');
        }
      },
    });
    this.ready = this.initialLoad().then(
      (events) => {
        // Retention may have dropped the oldest events: the history starts at its lowest seq.
        const lowest = events.reduce((m, e) => Math.min(m, e.seq), Number.POSITIVE_INFINITY);
        if (lowest > 1 && lowest !== Number.POSITIVE_INFINITY) this.order.last = lowest - 1;
        const all = events.concat(this.early).sort((a, b) => a.seq - b.seq);
        this.early = [];
        this.loading = false;
        for (const e of all) this.accept(e);
        if (this.order.waiting || this.again) this.scheduleCatchUp();
        this.armTailCheck();
      },
      (err: Error) => {
        this.failed = err;
        hub.log.warn({ err, workflow_id: workflowId }, 'stream history load failed');
        hub.closeFeed(this);
      },
    );
  }

  /**
   * The first read of the history, retried through a short NATS outage (clients wait rather
   * than being dropped); gives up after INITIAL_LOAD_PATIENCE_MS or once nobody waits.
   */
  private async initialLoad(): Promise<WorkflowEvent[]> {
    const giveUp = Date.now() + INITIAL_LOAD_PATIENCE_MS;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.load(0);
      } catch (err) {
        if (Date.now() > giveUp || this.closed || (!this.attaching && !this.subscribers.size)) throw err;
        this.hub.log.warn({ err, workflow_id: this.workflowId }, 'stream history load failed; retrying');
        await sleep(backoffDelay(INITIAL_LOAD_BACKOFF, attempt));
      }
    }
  }

  /** Seq of the newest event in the ring (what flushes hand out up to). */
  lastSeq = 0;

  get firstRetained(): number {
    return this.ring.length ? this.ring[0].seq : this.lastSeq + 1;
  }

  /**
   * Retained events with seq > after, in seq order. Reads the subject from JetStream up to
   * the message that was last when the read began (later ones arrive on the live path).
   */
  private async load(after: number): Promise<WorkflowEvent[]> {
    const { jsm, js } = this.hub;
    const out: WorkflowEvent[] = [];
    const last = await jsm.streams.getMessage(STREAMS.events, { last_by_subj: subjects.events(this.workflowId) }).catch((err: Error) => {
      if (/no message found|not found/i.test(err.message)) return null;
      throw err;
    });
    if (!last) return out;
    // Creating the ordered consumer can wait without end while its stream has no leader (a
    // NATS node just killed or frozen): bounded like the read itself, so that the attach fails
    // over to a retry instead of holding its client on heartbeats.
    const consumer = await within(
      js.consumers.get(STREAMS.events, { filter_subjects: subjects.events(this.workflowId), deliver_policy: DeliverPolicy.All }),
      `opening the history of ${this.workflowId}`,
      LOAD_STALL_MS,
    );
    const msgs = await within(consumer.consume({ max_messages: 512 }), `opening the history of ${this.workflowId}`, LOAD_STALL_MS, (late) => void late.close());
    // An ordered consumer cut off by a lost connection can wait a long time before it resets
    // itself: a read that makes no progress for LOAD_STALL_MS is abandoned (and retried by the
    // caller). Each wait for the next message is bounded itself, and the consumer is closed
    // without waiting for the close: a close that hangs must not hold the read (and with it
    // every later catch-up of the feed) for ever.
    const it = msgs[Symbol.asyncIterator]();
    try {
      for (;;) {
        const r = await within(it.next(), `reading the history of ${this.workflowId}`, LOAD_STALL_MS);
        if (r.done) break;
        const e = decodeArrived(r.value.data);
        if (e.seq > after) out.push(e);
        if (r.value.seq >= last.seq) break;
      }
    } finally {
      void msgs.close().catch(() => {});
    }
    return out.sort((a, b) => a.seq - b.seq);
  }

  private onLive(e: WorkflowEvent): void {
    if (this.closed) return;
    this.liveSince++;
    if (this.loading) {
      this.early.push(e);
      return;
    }
    this.accept(e);
    // A gap on the live path (a core message missed, or a publish retried after a later
    // one): fetch what is missing from JetStream.
    if (this.order.waiting) this.scheduleCatchUp();
  }

  private accept(e: WorkflowEvent): void {
    for (const x of this.order.push(e)) this.append(x);
  }

  /**
   * Reads what is missing from JetStream; repeated every second while a gap remains (the
   * missing event may not be stored yet: its publisher re-sends it after an outage).
   * Also run for every feed after the NATS connection comes back.
   */
  scheduleCatchUp(): void {
    if (this.closed) return;
    if (this.loading || this.catchUp) {
      // A read under way may have started before what this request is about: read again after.
      this.again = true;
      return;
    }
    this.again = false;
    clearTimeout(this.catchUpTimer);
    this.catchUpTimer = undefined;
    let failed = false;
    this.catchUp = this.load(this.order.last)
      .then((events) => events.forEach((e) => this.accept(e)))
      .catch((err) => {
        // E.g. JetStream still loading its streams after a server restart: try again.
        failed = true;
        this.hub.log.warn({ err, workflow_id: this.workflowId }, 'stream catch-up failed; retrying');
      })
      .finally(() => {
        this.catchUp = undefined;
        if (this.closed) return;
        if (this.again) this.scheduleCatchUp();
        else if (failed || this.order.waiting) {
          this.catchUpTimer = setTimeout(() => this.scheduleCatchUp(), 1000);
          this.catchUpTimer.unref();
        }
      });
  }

  private armTailCheck(): void {
    if (this.closed || this.ended) return;
    this.tailTimer = setTimeout(() => void this.tailCheck(), this.tailDelay);
    this.tailTimer.unref();
  }

  private async tailCheck(): Promise<void> {
    if (this.closed || this.ended) return;
    if (this.liveSince > 0) {
      // Events are arriving: look again soon after they stop.
      this.liveSince = 0;
      this.tailDelay = TAIL_CHECK_FIRST_MS;
    } else {
      try {
        const last = await this.hub.jsm.streams.getMessage(STREAMS.events, { last_by_subj: subjects.events(this.workflowId) });
        if (last && decodeArrived(last.data).seq > this.order.last) this.scheduleCatchUp();
      } catch {
        // Nothing stored yet, or NATS unreachable (a reconnect catches every feed up): next time.
      }
      this.tailDelay = Math.min(this.tailDelay * 2, TAIL_CHECK_MAX_MS);
    }
    this.armTailCheck();
  }

  private append(e: WorkflowEvent): void {
    const enc = encodeEvent(e);
    // A burst larger than the ring within one turn would discard events no flush has handed
    // out yet: deliver them to every writable subscriber first, so only stalled ones fall behind.
    if (this.ring.length >= this.hub.opts.ringCapacity && this.ring[0].seq > this.flushedSeq) this.flush();
    this.ring.push(enc);
    this.lastSeq = e.seq;
    if (e.type === 'STREAM_END') this.ended = true;
    // shift() is O(1) in V8 here; splice(0, n) would copy the whole ring on every event.
    while (this.ring.length > this.hub.opts.ringCapacity) this.ring.shift();
    this.hub.markDirty(this);
  }

  /** An attach is waiting for the history load: keep the feed open meanwhile. */
  hold(): void {
    clearTimeout(this.closeTimer);
    this.attaching++;
  }

  unhold(): void {
    this.attaching--;
    this.lingerIfIdle();
  }

  add(s: Subscriber): void {
    clearTimeout(this.closeTimer);
    this.subscribers.add(s);
  }

  remove(s: Subscriber): void {
    this.subscribers.delete(s);
    this.lingerIfIdle();
  }

  private lingerIfIdle(): void {
    if (this.subscribers.size || this.attaching || this.closed) return;
    clearTimeout(this.closeTimer);
    this.closeTimer = setTimeout(() => {
      if (!this.subscribers.size && !this.attaching) this.hub.closeFeed(this);
    }, this.hub.opts.lingerMs ?? 5000);
    this.closeTimer.unref();
  }

  /** Delivers everything new to every subscriber (one write each, unless over maxBufferedBytes). */
  flush(): void {
    const shared = new Map<number, Batch>();
    this.flushedSeq = this.lastSeq;
    for (const s of this.subscribers) this.flushOne(s, shared);
  }

  /**
   * Writes what `s` has not received, in pieces of at most maxBufferedBytes, until its socket
   * pushes back. A stalled subscriber is only checked: dropped when it is behind the ring's
   * start or when more than maxBufferedBytes of new events arrived since it stalled.
   */
  flushOne(s: Subscriber, shared?: Map<number, Batch>): void {
    const max = this.hub.opts.maxBufferedBytes;
    while (!s.closed && s.cursor < this.lastSeq) {
      if (s.cursor + 1 < this.ring[0].seq) {
        s.drop('client too slow: events it had not received were discarded');
        countSlowClientDropped();
        return;
      }
      if (s.backpressured) {
        if (this.bytesAfter(Math.max(s.cursor, s.stalledAt ?? s.cursor), s.filter, max) > max) {
          s.drop('client too slow: more than the per-connection buffer limit is pending');
          countSlowClientDropped();
        }
        return;
      }
      let b = s.filter ? undefined : shared?.get(s.cursor);
      if (!b) {
        b = this.batch(s.cursor, s.filter, max);
        if (!s.filter) shared?.set(s.cursor, b);
      }
      if (b.last === s.cursor) return; // nothing in the ring past the cursor (never expected)
      s.cursor = b.last;
      if (b.events.length && !s.write(b.events, b.buf)) s.stalledAt = this.lastSeq;
    }
    if (!s.closed && this.ended && s.cursor >= this.lastSeq) s.end();
  }

  /** The frames after `cursor` that pass `filter`, about `limit` bytes at most (at least one). */
  private batch(cursor: number, filter: ReadonlySet<string> | undefined, limit: number): Batch {
    const events: Encoded[] = [];
    let bytes = 0;
    let last = cursor;
    for (let i = Math.max(0, cursor + 1 - this.ring[0].seq); i < this.ring.length; i++) {
      const e = this.ring[i];
      if (matches(filter, e)) {
        if (events.length && bytes + e.size > limit) break;
        events.push(e);
        bytes += e.size;
      }
      last = e.seq;
    }
    const buf =
      events.length === 1
        ? events[0].frame
        : events.length
          ? Buffer.concat(
              events.map((x) => x.frame),
              bytes,
            )
          : undefined;
    return { events, buf, last };
  }

  /** Bytes of frames after `cursor` that pass `filter`, counted up to just past `limit`. */
  private bytesAfter(cursor: number, filter: ReadonlySet<string> | undefined, limit: number): number {
    let n = 0;
    for (let i = this.ring.length - 1; i >= 0 && this.ring[i].seq > cursor && n <= limit; i--) {
      if (matches(filter, this.ring[i])) n += this.ring[i].size;
    }
    return n;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.closeTimer);
    clearTimeout(this.catchUpTimer);
    clearTimeout(this.tailTimer);
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
    // The subscriber joins only once the history is loaded and its cursor is set: a flush
    // during the load must not write to it from a cursor it does not have yet.
    f.hold();
    try {
      await f.ready;
    } finally {
      f.unhold();
    }
    if (f.failed) throw f.failed;
    if (s.closed) return f;
    const first = f.firstRetained;
    // From the start (after = 0) too: events 1..first-1 are gone, so say so.
    if (after + 1 < first && f.lastSeq > 0) onGap(after, first);
    s.cursor = Math.max(after, first - 1);
    if (after > f.lastSeq) s.cursor = after;
    f.add(s);
    // Set at once: a subscriber closing from here on finds its feed and leaves it.
    s.feed = f;
    f.flushOne(s);
    return f;
  }

  /** After a NATS reconnect: core subscriptions missed what was published meanwhile. */
  catchUpAll(): void {
    for (const f of this.feeds.values()) f.scheduleCatchUp();
  }

  close(): void {
    for (const f of this.feeds.values()) f.close();
    this.feeds.clear();
  }
}

/**
 * Writes to a streaming HTTP response (SSE, OpenAI chunks) of a feed subscriber. When the
 * socket backs up the subscriber is marked backpressured; once writable, its feed resumes it.
 * `over`: the response has ended (nothing more may be written).
 */
export function writeStreaming(res: HttpResponse, sub: Subscriber, buf: Buffer | string, over: () => boolean): boolean {
  if (over()) return false;
  let ok = true;
  res.cork(() => {
    ok = res.write(buf);
  });
  if (!ok) {
    sub.backpressured = true;
    res.onWritable(() => {
      sub.backpressured = false;
      sub.feed?.flushOne(sub);
      // While an onWritable handler is registered uWS drains its own buffer only on a write;
      // with nothing new to send, an empty cork/uncork does it (else the tail would wait for the next event).
      if (!over() && !sub.backpressured) res.cork(() => {});
      return true;
    });
  }
  return ok;
}
