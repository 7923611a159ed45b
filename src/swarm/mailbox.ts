/**
 * Swarm mailboxes: stream MAILBOXES, one subject per actor of a swarm
 * (`svc.actor.agent.<workflow_id>.<name>`, the lead's name is `lead`).
 *
 * Delivery guarantee: a send is stored by JetStream before the sender's step counts as done;
 * it carries a de-duplication id derived from the sender and its journaled step
 * (`<sender>:<step>:<n>`), so a step run again after a crash sends nothing twice (within the
 * stream's 10-minute window). A reader consumes its own subject in stream order from the
 * sequence after the last one it journaled, and records what it read in a journaled step
 * (`Received.seq` included): a replay sees the same messages, none is acted on twice or lost.
 * Lifecycle: the lead purges the swarm's mailboxes when the swarm ends; a day's age bounds the rest.
 */
import { DeliverPolicy, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { STREAMS, subjects, token, type PipelinedPublisher } from '../bus/index.js';

/** The lead's mailbox name (reserved: no agent is called so). */
export const LEAD = 'lead';

/** An agent event the lead emits for it on the workflow's event subject (the one publisher of its seq). */
export interface MailEvent {
  type: 'AGENT_STARTED' | 'AGENT_COMPLETED' | 'PROGRESS';
  message: string;
  payload?: Record<string, unknown>;
}

/** What an agent tells the lead when it has finished (or failed) its task. */
export interface AgentReport {
  taskId: string;
  success: boolean;
  text: string;
  error?: string;
  /** Its model calls (agentId, step, model, provider, usage) for usage and model_breakdown. */
  calls: {
    agentId: string;
    step: string;
    model: string;
    provider: string;
    usage: { inputTokens: number; outputTokens: number; totalTokens: number; costUsd: number };
  }[];
  toolCalls: number;
}

export type Mail =
  /** A message between actors (agent to agent, agent to lead). */
  | { kind: 'text'; from: string; text: string }
  /** A person's message to the lead (POST /api/v1/swarm/{id}/message). */
  | { kind: 'person'; from: 'person'; id: string; text: string }
  /** An agent's event, emitted by the lead. */
  | { kind: 'event'; from: string; event: MailEvent }
  /** An agent's result. */
  | { kind: 'result'; from: string; report: AgentReport }
  /** The lead stops an agent (a swarm limit was reached, the swarm ends). */
  | { kind: 'stop'; from: string; reason: string }
  /** Several of one step's mails to one actor, stored as one (read as its parts, each with the batch's stream position). */
  | { kind: 'batch'; from: string; mails: SingleMail[] };

/** A mail other than a batch. */
export type SingleMail = Exclude<Mail, { kind: 'batch' }>;

/** A message as read: its stream sequence (the reader's position) with it. */
export type Received = SingleMail & { seq: number };

const enc = new TextEncoder();
const dec = new TextDecoder();

export class Mailboxes {
  constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly publisher: PipelinedPublisher,
  ) {}

  /**
   * Sends `mail` to `to`'s mailbox; resolves once JetStream stored it (or dropped it as a
   * duplicate of `msgId`). `deadlineMs`: how long it may wait through an outage.
   */
  async send(workflowId: string, to: string, mail: Mail, msgId: string, deadlineMs = 30_000): Promise<void> {
    await this.publisher.publish(subjects.agentActor(workflowId, to), enc.encode(JSON.stringify(mail)), { msgId, deadlineMs });
  }

  /** A reader of `name`'s mailbox from the message after stream sequence `afterSeq` (0: the first). */
  async reader(workflowId: string, name: string, afterSeq: number): Promise<MailReader> {
    const consumer = await this.js.consumers.get(STREAMS.mailboxes, {
      filter_subjects: subjects.agentActor(workflowId, name),
      ...(afterSeq > 0 ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: afterSeq + 1 } : { deliver_policy: DeliverPolicy.All }),
    });
    const r = new MailReader();
    r.start(await consumer.consume());
    return r;
  }

  /**
   * Removes every message of the swarm's mailboxes and the start messages of its agents still
   * queued on SWARM_AGENTS (`svc.swarm.start.<workflow_id>.*`): the swarm ended.
   */
  async purge(workflowId: string): Promise<void> {
    const starts = `${subjects.swarmStartAll.slice(0, -1)}${token(workflowId, 'workflow id')}.*`;
    await Promise.all([
      this.jsm.streams.purge(STREAMS.mailboxes, { filter: subjects.agentActorsOf(workflowId) }),
      this.jsm.streams.purge(STREAMS.swarmAgents, { filter: starts }),
    ]);
  }
}

interface Messages extends AsyncIterable<{ seq: number; data: Uint8Array }> {
  close(): Promise<void | Error>;
}

/** Buffers what arrives on one mailbox; the owner takes it in journaled steps. */
export class MailReader {
  /** Stream messages as stored (a batch still whole, so `take` never splits one). */
  private buf: (Mail & { seq: number })[] = [];
  private wake?: () => void;
  private messages?: Messages;

  start(messages: Messages): void {
    this.messages = messages;
    void (async () => {
      for await (const m of messages) {
        try {
          this.buf.push({ ...(JSON.parse(dec.decode(m.data)) as Mail), seq: m.seq });
        } catch {
          continue; // not a mailbox message
        }
        this.wake?.();
      }
    })().catch(() => undefined);
  }

  /** Everything buffered so far (at most `max` stream messages; a batch read as its parts), in stream order. */
  take(max = Number.POSITIVE_INFINITY): Received[] {
    return this.buf.splice(0, Math.min(max, this.buf.length)).flatMap((m) => (m.kind === 'batch' ? m.mails.map((x) => ({ ...x, seq: m.seq })) : [m]));
  }

  get available(): number {
    return this.buf.length;
  }

  /** Resolves when a message is buffered, `ms` passed or `signal` aborted. */
  async wait(ms: number, signal?: AbortSignal): Promise<void> {
    if (this.buf.length || signal?.aborted) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      signal?.addEventListener('abort', done, { once: true });
      this.wake = done;
    });
  }

  close(): void {
    void this.messages?.close().catch(() => undefined);
  }
}
