/**
 * Events for a workflow that no actor runs right now (it waits for a person, passivated):
 * a plan review's feedback happens while the workflow holds no worker, so nobody owns its seq.
 *
 * Guarantees, the same as the actor's (context.ts):
 * - seq stays 1, 2, 3, ... with no gap and no repeat: the appender takes the workflow's lease
 *   (the one a worker takes to run it, so no actor can start meanwhile), continues from the
 *   last stored event of the subject, publishes with the de-duplication id (workflow, seq) and
 *   JetStream's expected-last-subject-sequence, so a concurrent writer cannot interleave.
 * - the actor's next activation does not take them for a step cut off by a crash: a journal
 *   entry `external-<seq>` records the last appended seq as its `seqAfter`.
 * - events the journal records and the stream lacks (a crash between a step's two writes) are
 *   published from the journal's copies before anything is appended, as the actor's next
 *   activation would.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { STREAMS, decodeEvent, encodeEvent, kvKeys, msgIdOf, streamId, subjects, type Bus, type EventType, type WorkflowEvent } from '../bus/index.js';
import { AppError, Code, backoffDelay } from '../kernel/index.js';
import { missingEvents, type JournalEntry } from './context.js';

export interface ExternalEvent {
  type: EventType;
  agentId: string;
  message: string;
  payload?: Record<string, unknown>;
}

/** How long an append waits for a live actor to let the workflow go (e.g. while it passivates). */
const LEASE_WAIT_MS = 10_000;
const LEASE_BACKOFF = { baseMs: 50, capMs: 500 } as const;

const enc = new TextEncoder();
const dec = new TextDecoder();

/** The workflow is held by a live actor longer than an append may wait. */
export class WorkflowBusy extends AppError {
  override name = 'WorkflowBusy';
  constructor(workflowId: string) {
    super(Code.Unavailable, `workflow ${workflowId} is running; its events cannot be appended from outside`, { retryable: true });
  }
}

async function takeLease(bus: Bus, workflowId: string, owner: string, waitMs: number): Promise<void> {
  const end = Date.now() + waitMs;
  for (let attempt = 1; ; attempt++) {
    try {
      await bus.kv.leases.create(kvKeys.lease(workflowId), enc.encode(owner));
      return;
    } catch {
      if (Date.now() >= end) throw new WorkflowBusy(workflowId);
      await sleep(backoffDelay(LEASE_BACKOFF, attempt));
    }
  }
}

/**
 * Appends `events` to the stream of a workflow no actor runs (waiting up to `leaseWaitMs` for
 * one that still runs to let go); returns them as stored. The workflow must have events already.
 */
export async function appendExternalEvents(bus: Bus, workflowId: string, events: ExternalEvent[], o: { leaseWaitMs?: number } = {}): Promise<WorkflowEvent[]> {
  if (!events.length) return [];
  const owner = `external-${randomUUID()}`;
  await takeLease(bus, workflowId, owner, o.leaseWaitMs ?? LEASE_WAIT_MS);
  try {
    const subject = subjects.events(workflowId);
    const last = await bus.jsm.streams.getMessage(STREAMS.events, { last_by_subj: subject });
    if (!last) throw new AppError(Code.FailedPrecondition, `workflow ${workflowId} has no events to continue`);
    let seq = decodeEvent(last.data).seq;
    let streamSeq = last.seq;
    // A worker that died between a step's journal entry and its events (context.ts) left the
    // stream behind the journal; the entries carry copies of those events. Holding the lease,
    // the appender publishes them first (as the actor's next activation would), so appended
    // events never take their seqs.
    const journal = (await bus.journal.read(workflowId)) as unknown as Map<string, JournalEntry>;
    for (const ev of missingEvents(workflowId, journal.values(), seq)) {
      streamSeq = (await bus.js.publish(subject, encodeEvent(ev), { msgID: msgIdOf(workflowId, ev.seq), expect: { lastSubjectSequence: streamSeq } })).seq;
      seq = ev.seq;
    }
    const stored: WorkflowEvent[] = [];
    for (const e of events) {
      seq++;
      const now = Date.now();
      const ev: WorkflowEvent = {
        workflow_id: workflowId,
        seq,
        stream_id: streamId(now, seq),
        type: e.type,
        agent_id: e.agentId,
        message: e.message,
        timestamp: new Date(now).toISOString(),
        ...(e.payload ? { payload: e.payload } : {}),
      };
      const ack = await bus.js.publish(subject, encodeEvent(ev), { msgID: msgIdOf(workflowId, seq), expect: { lastSubjectSequence: streamSeq } });
      streamSeq = ack.seq;
      stored.push(ev);
    }
    const entry: JournalEntry<{ events: EventType[] }> = { result: { events: events.map((e) => e.type) }, seqAfter: seq, at: new Date().toISOString() };
    await bus.journal.put(workflowId, `external-${seq}`, entry);
    return stored;
  } finally {
    // Only our own lease is let go: the revision check keeps a worker's newer lease.
    const key = kvKeys.lease(workflowId);
    const e = await bus.kv.leases.get(key).catch(() => null);
    if (e && e.operation === 'PUT' && dec.decode(e.value) === owner) await bus.kv.leases.delete(key, { previousSeq: e.revision }).catch(() => {});
  }
}
