/**
 * The workflow actor's execution context: journaled steps and sequenced events.
 *
 * Guarantees (checked by test/durable-execution.test.ts):
 * - seq of one workflow's events is 1, 2, 3, ... with no gap and no repeat across crashes:
 *   a re-activated actor continues from the last stored event of its subject, and every
 *   publish carries the de-duplication id (workflow, seq), so a retried publish is harmless.
 * - a step whose outcome was journaled is never executed again; a step cut off mid-way runs
 *   again from its start, announced by an ERROR_RECOVERY event naming it.
 * - events are published pipelined (no round trip per event); a step counts as done only
 *   after all its events are acknowledged by JetStream and its outcome is journaled.
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
import type { Logger } from '../kernel/index.js';
import type { WaitStore } from '../tasks/index.js';

export interface JournalEntry<T = unknown> {
  result: T;
  /** Last event seq emitted when the step finished. */
  seqAfter: number;
  at: string;
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

export class WorkflowContext {
  private seq = 0;
  private pending: Promise<unknown>[] = [];
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
   * decides: no event means a fresh workflow (steps journal only after emitting events).
   * `expectJournal` (a wake) reads the journal alongside. Returns whether there was anything
   * to rehydrate.
   */
  async rehydrate(o: { expectJournal?: boolean } = {}): Promise<boolean> {
    const { jsm } = this.deps;
    const readJournal = () => this.deps.journalLog.read(this.workflowId);
    // A wake re-activates a workflow that surely has a journal: both reads at once.
    const early = o.expectJournal ? readJournal() : undefined;
    early?.catch(() => {});
    const last = await jsm.streams.getMessage(STREAMS.events, { last_by_subj: subjects.events(this.workflowId) });
    if (!last) return false;
    this.seq = decodeEvent(last.data).seq;
    for (const [step, e] of await (early ?? readJournal())) {
      const entry = e as unknown as JournalEntry;
      this.journal.set(step, entry);
      this.lastJournaledSeq = Math.max(this.lastJournaledSeq, entry.seqAfter);
    }
    // Events beyond the last journaled step mean a step was cut off mid-way.
    this.recoveredAfterCrash = this.seq > this.lastJournaledSeq;
    return true;
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
    // After a lost publish, later ones would be stored past a missing seq: send nothing more.
    if (this.desync) return ev;
    const p = this.published(
      this.deps.publisher.publish(subjects.events(this.workflowId), encodeEvent(ev), this.publishOptions(msgIdOf(this.workflowId, seq))),
    );
    p.catch(() => {}); // surfaced by flush()
    this.pending.push(p);
    return ev;
  }

  /** Waits until JetStream has stored every event emitted so far. */
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
  async step<T>(name: string, fn: () => Promise<T>, opts: { evenIfAborted?: boolean } = {}): Promise<T> {
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
    const result = await fn();
    await this.flush();
    const entry: JournalEntry<T> = { result, seqAfter: this.seq, at: new Date().toISOString() };
    // A KV put is a publish to the bucket's subject; the pipelined publisher avoids a full
    // request round-trip object per put on this hot path.
    const log = this.deps.journalLog;
    await this.published(this.deps.publisher.publish(log.subject(this.workflowId), log.encode(name, entry), this.publishOptions()));
    this.journal.set(name, entry);
    return result;
  }
}
