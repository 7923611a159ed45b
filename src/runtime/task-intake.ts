/**
 * A worker's intake from the task work queues, one per priority (TASK_PRIORITIES, each a
 * WorkQueue stream with the shared durable consumer `workers`). Every worker process of the
 * fleet pulls from the same consumers, so which waiting task starts next is decided across
 * the fleet, not re-ordered in one process.
 *
 * A worker pulls only when it has free slots, and only as many messages as it can start
 * (`no_wait` pull requests: the server answers at once with what is waiting, nothing is held
 * in a local buffer while another worker could run it). Each fetch looks at one level first,
 * then at the others highest first; which level it looks at first follows FAIRNESS, a cycle
 * of 8 fetches: 4 critical, 2 high, 1 normal, 1 low. With every level backlogged that gives
 * them 50/25/12.5/12.5 % of the fetches; with only high and low waiting, low still gets one
 * fetch in 8.
 *
 * A fetch skips a level that it found drained (its last pull came back short) unless a task
 * was published to it since that pull began: the worker listens on the task subjects (core
 * NATS delivers every JetStream publish to subscribers too), so a trickle of tasks costs one
 * pull each, not a look at every level before and after each task. A drained level is looked
 * at again after IDLE_RESCAN_MS anyway (a message nak'ed with a delay, or redelivered after a
 * crash, comes back without a publish), and once more RECHECK_MS after a pull that a publish
 * prompted came back short (the publish reaches subscribers before the stream has stored it).
 *
 * Deliveries are acked, nak'ed and extended through the JetStream ack protocol on their reply
 * subject (+ACK, -NAK, +WPI, +TERM), as the client library does for its own pulls.
 */
import { CONSUMERS, TASK_PRIORITIES, subjects, taskStream, type TaskPriority } from '../bus/index.js';
import type { Logger } from '../kernel/index.js';
import { createInbox, nanos, type Msg, type MsgHdrs, type NatsConnection, type Subscription } from '@nats-io/transport-node';

/** The first level each fetch of a cycle looks at (the shares of the priorities when all are backlogged). */
export const FAIRNESS: readonly TaskPriority[] = ['critical', 'high', 'critical', 'normal', 'critical', 'high', 'critical', 'low'];
/** Most messages one fetch takes at first (a fetch takes from one level: the shares are per fetch). */
export const FETCH_MAX = 16;
/**
 * Most messages one fetch takes while a level is backlogged: each full pull of a level doubles
 * that level's next pull, up to this (bounded by the free slots), so a worker with hundreds of
 * free slots and a backlog fills them in a few round trips instead of one per 16 tasks (1,000
 * tasks submitted at once waited seconds in the queue of an idle worker otherwise); a pull of
 * that level that is not full goes back to FETCH_MAX. Each level keeps its own size, so one
 * level's trickle does not cut another's ramp, and with every level backlogged at the cap the
 * task shares are the fetch shares again.
 */
export const FETCH_BACKLOG_MAX = 256;
/** How long a drained level goes without a look when nothing is published to it. */
export const IDLE_RESCAN_MS = 500;
/** How soon a level is looked at once more after a pull that a publish prompted came back short. */
export const RECHECK_MS = 5;
/** A pull the server does not answer within this long (NATS unreachable) is given up and tried again. */
const PULL_TIMEOUT_MS = 5000;

/** One task start message delivered to this worker. */
export interface TaskDelivery {
  readonly data: Uint8Array;
  /** Stream sequence, unique within `info.stream`. */
  readonly seq: number;
  readonly info: { readonly stream: string; readonly deliveryCount: number };
  /** The message's headers (the W3C trace context of the task's submission: src/tracing). */
  readonly headers?: MsgHdrs;
  ack(): void;
  /** Redelivered (to any worker) after `delayMs`, or at once. */
  nak(delayMs?: number): void;
  /** Restarts its ack wait. */
  working(): void;
  /** Never delivered again. */
  term(): void;
}

/**
 * The levels fetch number `turn` looks at, in order. With the queues off (`queues` false) new
 * tasks all go to normal: it is looked at first, and the others (tasks queued while the setting
 * was on) first in one fetch of 8 each, so that a worker with one free slot makes one round
 * trip per task, not three, and what is left at the other levels still runs.
 */
export function scanOrder(turn: number, queues = true): TaskPriority[] {
  const first = queues || turn % FAIRNESS.length === FAIRNESS.length - 1 ? FAIRNESS[turn % FAIRNESS.length]! : 'normal';
  return [first, ...TASK_PRIORITIES.filter((p) => p !== first)];
}

const enc = new TextEncoder();

class Delivery implements TaskDelivery {
  private ended = false;

  constructor(
    private readonly m: Msg,
    readonly seq: number,
    readonly info: { stream: string; deliveryCount: number },
  ) {}

  get data(): Uint8Array {
    return this.m.data;
  }

  get headers(): MsgHdrs | undefined {
    return this.m.headers;
  }

  ack(): void {
    this.end('+ACK');
  }

  nak(delayMs?: number): void {
    this.end(delayMs ? `-NAK ${JSON.stringify({ delay: nanos(delayMs) })}` : '-NAK');
  }

  term(): void {
    this.end('+TERM');
  }

  working(): void {
    if (!this.ended) this.m.respond(enc.encode('+WPI'));
  }

  private end(reply: string): void {
    if (this.ended) return;
    this.ended = true;
    this.m.respond(enc.encode(reply));
  }
}

/**
 * Delivery count and stream sequence from a JetStream reply subject:
 * `$JS.ACK.<stream>.<consumer>.<delivered>.<sseq>...` or, with a domain and account hash,
 * `$JS.ACK.<domain>.<hash>.<stream>.<consumer>.<delivered>.<sseq>...`.
 */
function ackInfo(reply: string | undefined): { deliveryCount: number; seq: number } | undefined {
  const t = reply?.split('.') ?? [];
  if (t[0] !== '$JS' || t[1] !== 'ACK') return undefined;
  const at = t.length === 9 ? 4 : t.length >= 11 ? 6 : -1;
  const deliveryCount = Number(t[at]);
  const seq = Number(t[at + 1]);
  return at > 0 && Number.isInteger(deliveryCount) && Number.isInteger(seq) ? { deliveryCount, seq } : undefined;
}

/** What a worker knows of one level between its pulls. */
interface Level {
  /** A task was published to it since its last pull began. */
  published: boolean;
  /** When its last pull came back short (performance.now(): a clock that never steps back; 0: not drained, look at it). */
  drainedAt: number;
  /** That pull was prompted by a publish: look once more RECHECK_MS after it. */
  recheck: boolean;
}

const levelOfSubject = (subject: string): TaskPriority | undefined => {
  const t = subject.split('.')[2];
  return t === 'start' ? 'normal' : TASK_PRIORITIES.find((p) => p === t);
};

export class TaskIntake {
  private turn = 0;
  /** Each level's next pull size (FETCH_MAX, doubled after each full pull of it up to FETCH_BACKLOG_MAX). */
  private readonly batch = Object.fromEntries(TASK_PRIORITIES.map((p) => [p, FETCH_MAX])) as Record<TaskPriority, number>;
  private readonly levels = Object.fromEntries(TASK_PRIORITIES.map((p) => [p, { published: false, drainedAt: 0, recheck: false }])) as Record<
    TaskPriority,
    Level
  >;
  private readonly closed = new AbortController();
  private publishes?: Subscription;
  /** Resolves a `take` waiting for a publish. */
  private wake?: () => void;

  constructor(
    private readonly nc: NatsConnection,
    private readonly log: Logger,
    /** PRIORITY_QUEUES: whether the levels are in use (scanOrder). */
    private readonly queues = true,
  ) {}

  /**
   * Up to `max` waiting task start messages (at least one), from one level chosen as the
   * header says; waits while nothing is waiting. Empty once closed.
   */
  async take(max: number): Promise<TaskDelivery[]> {
    if (this.closed.signal.aborted) return [];
    // Listening before the first look: a publish after a level's pull began is never missed.
    this.publishes ??= this.nc.subscribe(subjects.taskStartAny, {
      callback: (err, m) => {
        // Refused (permissions): without publishes to go by, drained levels are looked at every IDLE_RESCAN_MS.
        if (err) this.log.warn({ err }, 'task queue listener failed; looking at drained levels every 500 ms');
        else this.published(m.subject);
      },
    });
    while (!this.closed.signal.aborted) {
      const got = await this.fetch(Math.max(1, max));
      if (got.length) return got;
      const wait = this.untilNextLook(performance.now());
      if (wait > 0) await this.pause(wait);
    }
    return [];
  }

  /** Stops a `take` waiting for work. */
  close(): void {
    this.closed.abort();
    this.publishes?.unsubscribe();
    this.publishes = undefined;
  }

  private published(subject: string): void {
    const p = levelOfSubject(subject);
    if (!p) return;
    this.levels[p].published = true;
    this.wake?.();
  }

  /** Whether a fetch now should pull from this level. */
  private worthALook(l: Level, now: number): boolean {
    return l.published || !l.drainedAt || now - l.drainedAt >= (l.recheck ? RECHECK_MS : IDLE_RESCAN_MS);
  }

  /** How long until some level is worth a look without a publish (0: now). */
  private untilNextLook(now: number): number {
    let wait = IDLE_RESCAN_MS;
    for (const l of Object.values(this.levels)) {
      if (this.worthALook(l, now)) return 0;
      wait = Math.min(wait, l.drainedAt + (l.recheck ? RECHECK_MS : IDLE_RESCAN_MS) - now);
    }
    return Math.max(1, wait);
  }

  /** One fetch of at most `max`: the levels in this turn's order worth a look, the first that has anything. */
  private async fetch(max: number): Promise<TaskDelivery[]> {
    for (const p of scanOrder(this.turn++, this.queues)) {
      const l = this.levels[p];
      if (!this.worthALook(l, performance.now())) continue;
      const prompted = l.published;
      l.published = false;
      const n = Math.min(max, this.batch[p]);
      const got = await this.pull(p, n).catch((err: unknown) => {
        this.log.warn({ err, priority: p }, 'task queue pull failed; looking again shortly');
        return [];
      });
      // Full: more may wait (grow, unless the free slots were the bound); short: back to the start.
      if (got.length < n) this.batch[p] = FETCH_MAX;
      else if (n >= this.batch[p]) this.batch[p] = Math.min(this.batch[p] * 2, FETCH_BACKLOG_MAX);
      // Short: drained when the pull was answered. A publish reaches subscribers before the
      // stream has stored it, so a pull a publish prompted may have come too early for that
      // message (or for one published with it): one more look soon.
      l.drainedAt = got.length < n ? performance.now() : 0;
      l.recheck = prompted && got.length < n;
      if (got.length) return got;
    }
    return [];
  }

  /** A no_wait pull of up to `n` messages of one level: what is waiting now, nothing later. */
  private async pull(p: TaskPriority, n: number): Promise<TaskDelivery[]> {
    if (this.nc.isClosed()) return [];
    const stream = taskStream(p);
    const inbox = createInbox();
    const sub = this.nc.subscribe(inbox, { max: n + 1, timeout: PULL_TIMEOUT_MS });
    this.nc.publish(`$JS.API.CONSUMER.MSG.NEXT.${stream}.${CONSUMERS.workers}`, enc.encode(JSON.stringify({ batch: n, no_wait: true })), {
      reply: inbox,
    });
    const out: TaskDelivery[] = [];
    try {
      for await (const m of sub) {
        // A status (404 nothing waiting, 408 fewer than asked, 409 ...) ends the answer.
        if ((m.headers?.code ?? 0) > 0) break;
        const info = ackInfo(m.reply);
        if (!info) continue;
        out.push(new Delivery(m, info.seq, { stream, deliveryCount: info.deliveryCount }));
        if (out.length >= n) break;
      }
    } catch (err) {
      // Timed out: what did arrive is kept; the rest of the answer would reach no one.
      if (!out.length) throw err;
    } finally {
      sub.unsubscribe();
    }
    return out;
  }

  /** Until `ms` have passed, a task is published, or the intake is closed. */
  private pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const signal = this.closed.signal;
      const done = () => {
        clearTimeout(t);
        signal.removeEventListener('abort', done);
        this.wake = undefined;
        resolve();
      };
      const t = setTimeout(done, ms);
      this.wake = done;
      signal.addEventListener('abort', done, { once: true });
    });
  }
}
