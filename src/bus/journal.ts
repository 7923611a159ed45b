/**
 * The step journal of every workflow: stream JOURNAL, one subject per workflow
 * (`svc.journal.<workflow_id>`), one message per journaled step (`{step, ...entry}`; a step
 * written twice (a replay after a crash mid-write) reads as its last message). An entry may
 * carry copies of its step's last events (`events`, see runtime/context.ts): they are written
 * alongside the events rather than after them, so one wait per step covers both. It may also
 * carry other steps' records (`group`: `[step, entry][]`, before its own): a swarm agent's
 * deferred steps, or a workflow's records sent before it and not yet acknowledged. `read`
 * returns those as records of their own steps (a step's own message, read first, wins).
 *
 * Why a stream with a subject per workflow and not a KV key per step: reading a workflow's
 * whole journal back (every re-activation, e.g. every decision that wakes a waiting task) is
 * then a consumer filtered to one literal subject, which the server creates in constant time
 * (its per-subject index), and one fetch. A KV bucket's keys `<workflow_id>.<step>` can only
 * be read back through a wildcard filter, which nats-server 2.9 resolves by scanning the
 * stream: 8 ms per read with 30,000 entries stored, 57 ms for the whole read, growing with
 * every task in the system.
 */
import { AckPolicy, DeliverPolicy, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { STREAMS, subjects } from './subjects.js';

export interface JournalRecord {
  step: string;
  /** The entry as written (result, seqAfter, at, and events not yet stored when it was written, if any). */
  entry: Record<string, unknown>;
}

const enc = new TextEncoder();
const dec = new TextDecoder();

/** A journal read that delivered fewer entries than the server counted: a timeout, so callers retry it. */
class IncompleteJournalRead extends Error {
  override name = 'TimeoutError';
}

export class JournalLog {
  constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
  ) {}

  /** A workflow's journal subject, or one of its swarm agents' (`agent`). */
  subject(workflowId: string, agent?: string): string {
    return agent === undefined ? subjects.journal(workflowId) : subjects.agentJournal(workflowId, agent);
  }

  /** The bytes of one journal message (for a pipelined publish on `subject(workflowId)`). */
  encode(step: string, entry: object): Uint8Array {
    return enc.encode(JSON.stringify({ step, ...entry }));
  }

  /** Appends one entry (waits for JetStream's ack). */
  async put(workflowId: string, step: string, entry: object): Promise<void> {
    await this.js.publish(this.subject(workflowId), this.encode(step, entry));
  }

  /** Every step journaled by a workflow, in the order written (a later entry of a step replaces an earlier one). */
  async read(workflowId: string, agent?: string): Promise<Map<string, Record<string, unknown>>> {
    const ci = await this.jsm.consumers.add(STREAMS.journal, {
      filter_subject: this.subject(workflowId, agent),
      deliver_policy: DeliverPolicy.All,
      ack_policy: AckPolicy.None,
      mem_storage: true,
      inactive_threshold: nanos(30_000),
    });
    const out = new Map<string, Record<string, unknown>>();
    try {
      let left = ci.num_pending;
      if (!left) return out;
      const consumer = await this.js.consumers.get(STREAMS.journal, ci.name);
      while (left > 0) {
        let got = 0;
        for await (const m of await consumer.fetch({ max_messages: Math.min(left, 1000), expires: 2000 })) {
          got++;
          left--;
          try {
            const { step, group, ...entry } = JSON.parse(dec.decode(m.data)) as { step?: unknown; group?: unknown } & Record<string, unknown>;
            if (typeof step !== 'string') continue;
            // Records carried by this one (written with it, or sent before it and not yet acknowledged
            // then): each counts as its step's record unless the step's own message was read first.
            if (Array.isArray(group))
              for (const g of group as [string, Record<string, unknown>][])
                if (Array.isArray(g) && typeof g[0] === 'string' && !out.has(g[0])) out.set(g[0], g[1]);
            out.set(step, entry);
          } catch {
            /* not a journal message */
          }
          if (m.info.pending === 0) left = 0;
        }
        if (!got) break;
      }
      // Fewer entries than counted must never pass for a whole journal (recorded steps would run again).
      if (left > 0) throw new IncompleteJournalRead(`journal of ${workflowId}: ${left} entries not delivered in time`);
    } finally {
      void this.jsm.consumers.delete(STREAMS.journal, ci.name).catch(() => undefined);
    }
    return out;
  }

  /** Removes a workflow's journal (what its expiry does after a week). */
  async purge(workflowId: string): Promise<void> {
    await this.jsm.streams.purge(STREAMS.journal, { filter: this.subject(workflowId) });
  }
}
