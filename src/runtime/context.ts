/**
 * The workflow actor's execution context: journaled steps and sequenced events.
 *
 * Guarantees (checked by test/durable-execution.test.ts):
 * - seq of one workflow's events is 1, 2, 3, ... with no gap and no repeat across crashes:
 *   a re-activated actor continues from the last stored event of its subject, and every
 *   publish carries the de-duplication id (workflow, seq), so a retried publish is harmless.
 * - a step whose outcome was journaled is never executed again; a step cut off mid-way runs
 *   again from its start, announced by an ERROR_RECOVERY event naming it.
 * - events and journal entries are published pipelined: no step waits for an ack of its own.
 *   The next step starts while the last one's entry is on its way; a journal entry carries
 *   copies of the events JetStream had not yet acknowledged when it was sent (`events`), and
 *   of the journal entries sent before it and not yet acknowledged (`group`; the journal's
 *   read hands them back as records of their steps). So whatever prefix of the journal a
 *   crash leaves stored, every step it records has its earlier steps recorded too, and its
 *   events: an activation that finds the event stream ending before the journal's highest
 *   `seqAfter` publishes the missing events again from those copies (same de-duplication ids,
 *   in order) before anything else, so a recorded step always has its events. A step cut off
 *   by a crash before its entry was stored runs again, as any step in flight does; so may the
 *   step before it, whose entry was still on its way.
 * - what must not run before the steps before it are stored, waits: `step(..., { stored: true })`
 *   runs only once everything earlier is stored and returns once its own entry is (the marker
 *   before a tool that is not safe to run twice, a workflow's finish); `flush()` waits for
 *   everything sent, and the actor flushes before it acks its message, passivates or hands
 *   the workflow back. Entries carry at most MAX_CARRIED_RECORDS earlier ones: past that a
 *   step waits for them first.
 * - the first entry of a workflow is written only once an event is stored, because an
 *   activation that finds no event takes the workflow for a fresh one without reading the
 *   journal (rehydrate).
 * - through a NATS outage, publishes wait (up to the task's deadline) and are re-sent in
 *   order; if one is lost for good the context stops publishing (BusDesync) so that no
 *   later seq is stored past the missing one.
 */
import type { JetStreamManager } from '@nats-io/jetstream';
import {
  STREAMS,
  decodeEvent,
  encodeEvent,
  msgIdOf,
  streamId,
  subjects,
  type EventType,
  type JournalLog,
  type PipelinedPublisher,
  type WorkflowEvent,
} from '../bus/index.js';
import { AppError, Code, type Logger } from '../kernel/index.js';
import { countEventPublished } from '../metrics/index.js';
import type { WaitStore } from '../tasks/index.js';

export interface JournalEntry<T = unknown> {
  result: T;
  /** Last event seq emitted when the step finished. */
  seqAfter: number;
  at: string;
  /** Copies of the events not yet acknowledged by JetStream when the entry was sent (see the file's head). */
  events?: WorkflowEvent[];
}

/** What `step` promises about storage (see the file's head). */
export interface StepOptions {
  /** Runs the step even after the workflow was aborted (its finish). */
  evenIfAborted?: boolean;
  /** Runs `fn` only once every earlier event and entry is stored; resolves once this step's entry is. */
  stored?: boolean;
}

/**
 * An event or journal entry could not be stored before the workflow's deadline: what is
 * stored may now end before seqs this context has handed out. The actor must stop without
 * acking (as after a crash); the next activation continues from what JetStream holds.
 */
export class BusDesync extends Error {
  override name = 'BusDesync';
}

/** Thrown at a checkpoint when the worker hands the workflow back (shutdown). */
export class HandBack extends Error {
  override name = 'HandBack';
}

/** The least time a publish waits for JetStream, even past the workflow's deadline. */
const PUBLISH_GRACE_MS = 10_000;

/**
 * A journal message carrying more than this (a long answer's LLM_OUTPUT) is not sent with its
 * events: they are awaited first and the entry carries none, keeping it far below NATS's
 * largest message.
 */
const MAX_CARRYING_ENTRY_BYTES = 256 * 1024;

/** Journal entries sent and not yet acknowledged that a new one may carry; past this, the step waits for them. */
const MAX_CARRIED_RECORDS = 16;

/**
 * The events a crash between a journal entry and its events kept from the stream: those after
 * `storedSeq` (the stream's last) up to the journal's highest `seqAfter`, in seq order, from
 * the entries' copies. Every event up to an entry's seqAfter was stored or carried by it when
 * it was sent, so a missing copy means stored events were lost: an Internal error.
 */
export function missingEvents(workflowId: string, entries: Iterable<JournalEntry>, storedSeq: number): WorkflowEvent[] {
  const copies = new Map<number, WorkflowEvent>();
  let journaledSeq = storedSeq;
  for (const entry of entries) {
    journaledSeq = Math.max(journaledSeq, entry.seqAfter);
    for (const ev of entry.events ?? []) if (ev.seq > storedSeq) copies.set(ev.seq, ev);
  }
  const missing: WorkflowEvent[] = [];
  for (let seq = storedSeq + 1; seq <= journaledSeq; seq++) {
    const ev = copies.get(seq);
    if (!ev)
      throw new AppError(
        Code.Internal,
        `workflow ${workflowId}: the journal records events up to seq ${journaledSeq}, the stream ends at ${storedSeq} and no copy of seq ${seq} was journaled`,
      );
    missing.push(ev);
  }
  return missing;
}

export class WorkflowContext {
  private seq = 0;
  /** Highest seq JetStream is known to hold (acknowledged, or found at rehydration). */
  private storedSeq = 0;
  private pending: Promise<unknown>[] = [];
  /** Published events whose ack has not come yet, in seq order: what a journal entry carries. */
  private readonly unacked = new Map<number, WorkflowEvent>();
  /** Journal entries sent whose ack has not come yet, in order: what the next entry carries (`group`). */
  private readonly unackedEntries = new Map<number, [string, JournalEntry]>();
  private entriesSent = 0;
  private journal = new Map<string, JournalEntry>();
  private recoveredAfterCrash = false;
  private lastJournaledSeq = 0;
  readonly abort = new AbortController();

  /** Awaited before every step (pause gate); may throw to stop the workflow. */
  beforeStep?: () => Promise<void>;

  private desync?: Error;

  /**
   * `deadline` (epoch ms): until when publishes wait for JetStream through an outage (the
   * task's time limit); never less than PUBLISH_GRACE_MS from the publish.
   */
  constructor(
    readonly workflowId: string,
    private readonly deps: { publisher: PipelinedPublisher; journalLog: JournalLog; jsm: JetStreamManager; log: Logger; deadline?: number; waits?: WaitStore },
  ) {}

  private publishOptions(msgId?: string) {
    const now = Date.now();
    return { msgId, deadlineMs: Math.max(PUBLISH_GRACE_MS, (this.deps.deadline ?? now) - now) };
  }

  private published(p: Promise<unknown>): Promise<unknown> {
    return p.catch((err: Error) => {
      this.desync ??= new BusDesync(`workflow ${this.workflowId}: ${err.message}`);
      throw this.desync;
    });
  }

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  /** Where the workflow's waits for people are kept (runtime/wait.ts); absent where nothing may wait. */
  get waits(): WaitStore | undefined {
    return this.deps.waits;
  }

  get lastSeq(): number {
    return this.seq;
  }

  /**
   * Rehydrates from the event stream and the journal. One direct read of the last event
   * decides: no event means a fresh workflow (its first journal entry follows a stored
   * event). `expectJournal` (a wake) reads the journal alongside. Events of journaled steps
   * that a crash kept from the stream are published first (restore). Returns whether there
   * was anything to rehydrate.
   */
  async rehydrate(o: { expectJournal?: boolean } = {}): Promise<boolean> {
    const { jsm } = this.deps;
    const readJournal = () => this.deps.journalLog.read(this.workflowId);
    // A wake re-activates a workflow that surely has a journal: both reads at once.
    const early = o.expectJournal ? readJournal() : undefined;
    early?.catch(() => {});
    const last = await jsm.streams.getMessage(STREAMS.events, { last_by_subj: subjects.events(this.workflowId) });
    if (!last) return false;
    this.seq = this.storedSeq = decodeEvent(last.data).seq;
    const entries = (await (early ?? readJournal())) as unknown as Map<string, JournalEntry>;
    const missing = missingEvents(this.workflowId, entries.values(), this.seq);
    for (const [step, { events: _copies, ...entry }] of entries) {
      this.journal.set(step, entry);
      this.lastJournaledSeq = Math.max(this.lastJournaledSeq, entry.seqAfter);
    }
    if (missing.length) await this.restore(missing);
    // Events beyond the last journaled step mean a step was cut off mid-way.
    this.recoveredAfterCrash = this.seq > this.lastJournaledSeq;
    return true;
  }

  /**
   * A crash came between a journal entry's write and its events' (see the file's head): the
   * missing events are published again from the entries' copies, in order, under their own
   * de-duplication ids.
   */
  private async restore(missing: WorkflowEvent[]): Promise<void> {
    const from = this.seq + 1;
    for (const ev of missing) {
      this.send(ev);
      this.seq = ev.seq;
    }
    await this.flush();
    this.deps.log.warn(
      { workflow_id: this.workflowId, from_seq: from, to_seq: this.seq },
      'events of journaled steps were missing after a crash; published them again from the journal',
    );
  }

  isRecorded(step: string): boolean {
    return this.journal.has(step);
  }

  /** Publishes an event without waiting for its ack (awaited at the end of the step). */
  emit(type: EventType, agentId: string, message: string, payload?: Record<string, unknown>): WorkflowEvent {
    const seq = ++this.seq;
    const now = Date.now();
    const ev: WorkflowEvent = {
      workflow_id: this.workflowId,
      seq,
      stream_id: streamId(now, seq),
      type,
      agent_id: agentId,
      message,
      timestamp: new Date(now).toISOString(),
      ...(payload ? { payload } : {}),
    };
    this.send(ev);
    return ev;
  }

  private send(ev: WorkflowEvent): void {
    // After a lost publish, later ones would be stored past a missing seq: send nothing more.
    if (this.desync) return;
    const { seq } = ev;
    this.unacked.set(seq, ev);
    const p = this.published(
      this.deps.publisher.publish(subjects.events(this.workflowId), encodeEvent(ev), this.publishOptions(msgIdOf(this.workflowId, seq))),
    ).then(() => {
      this.unacked.delete(seq);
      if (seq > this.storedSeq) this.storedSeq = seq;
      countEventPublished(ev.type);
    });
    p.catch(() => {}); // surfaced by flush()
    this.pending.push(p);
  }

  /** Waits until JetStream has stored every event emitted and every journal entry sent so far. */
  async flush(): Promise<void> {
    while (this.pending.length) {
      const batch = this.pending;
      this.pending = [];
      await Promise.all(batch);
    }
    if (this.desync) throw this.desync;
  }

  checkpoint(): void {
    if (this.signal.aborted) throw this.signal.reason instanceof Error ? this.signal.reason : new HandBack('handed back');
  }

  /**
   * Runs `fn` once per workflow: a recorded outcome is returned without running it again.
   * A step cut off by a crash runs again from its start, announced with ERROR_RECOVERY.
   */
  async step<T>(name: string, fn: () => Promise<T>, opts: StepOptions = {}): Promise<T> {
    const recorded = this.journal.get(name);
    if (recorded) return recorded.result as T;
    if (!opts.evenIfAborted) {
      this.checkpoint();
      if (this.beforeStep) {
        await this.beforeStep();
        this.checkpoint();
      }
    }
    if (this.recoveredAfterCrash) {
      this.recoveredAfterCrash = false;
      this.emit('ERROR_RECOVERY', 'orchestrator', `Recovering workflow: step "${name}" was interrupted and is being retried from its start`, {
        step: name,
        resumed_after_seq: this.seq,
      });
    }
    if (opts.stored) await this.flush();
    const result = await fn();
    await this.record(name, result);
    if (opts.stored) await this.flush();
    return result;
  }

  /**
   * Sends a step's journal entry with copies of the events and entries not yet acknowledged
   * (see the file's head); its ack is awaited by a later flush, not here.
   */
  private async record(name: string, result: unknown): Promise<void> {
    if (this.desync) throw this.desync;
    // An activation that finds no event does not read the journal: the first entry follows a stored event.
    if (!this.storedSeq || this.unackedEntries.size >= MAX_CARRIED_RECORDS) await this.flush();
    const entry: JournalEntry = { result, seqAfter: this.seq, at: new Date().toISOString() };
    const log = this.deps.journalLog;
    const carrying = this.unacked.size || this.unackedEntries.size;
    let data = carrying
      ? log.encode(name, {
          ...entry,
          ...(this.unacked.size ? { events: [...this.unacked.values()] } : {}),
          ...(this.unackedEntries.size ? { group: [...this.unackedEntries.values()] } : {}),
        })
      : undefined;
    if (data && data.length > MAX_CARRYING_ENTRY_BYTES) {
      await this.flush();
      data = undefined;
    }
    const n = ++this.entriesSent;
    this.unackedEntries.set(n, [name, entry]);
    // The pipelined publisher avoids a full request round-trip object per write on this hot path.
    const p = this.published(this.deps.publisher.publish(log.subject(this.workflowId), data ?? log.encode(name, entry), this.publishOptions())).then(() => {
      this.unackedEntries.delete(n);
    });
    p.catch(() => {}); // surfaced by flush()
    this.pending.push(p);
    this.journal.set(name, entry);
  }
}
