/**
 * A swarm agent's AgentContext: its steps are journaled on its own journal subject
 * (`svc.journal.<workflow_id>.<name>`), and its events go to the lead's mailbox instead of the
 * workflow's event subject (the lead is the one publisher of the workflow's seq and emits them).
 *
 * Guarantees: a step whose result was journaled never runs again; everything a step sends
 * (events, messages) is stored in the mailboxes before the step is journaled, with ids derived
 * from (agent, step, n), so a step cut off by a crash and run again sends nothing twice. The
 * messages an agent sent with `send_message` are counted in the journal (each entry's `mail`),
 * so the max_messages_per_agent count survives a re-activation.
 */
import type { AgentContext, ModelCall } from '../agents/index.js';
import type { EventType, JournalLog, PipelinedPublisher } from '../bus/index.js';
import { LEAD, type Mail, type Mailboxes, type MailEvent } from './mailbox.js';

/** Agent events the lead emits for the agent (the spec's swarm producers: AGENT_STARTED, PROGRESS, AGENT_COMPLETED). */
const FORWARDED = new Set<EventType>(['AGENT_STARTED', 'AGENT_COMPLETED', 'PROGRESS']);

/** How long a journal write or mailbox send may wait through a NATS outage. */
const SEND_DEADLINE_MS = 30_000;

interface Frame {
  name: string;
  n: number;
  sent: number;
  pending: Promise<unknown>[];
}

interface Entry {
  result: unknown;
  mail?: number;
}

export interface SwarmAgentContextDeps {
  workflowId: string;
  name: string;
  journal: JournalLog;
  publisher: PipelinedPublisher;
  mail: Mailboxes;
}

export class SwarmAgentContext implements AgentContext {
  readonly abort = new AbortController();
  /** Awaited before every step that runs (the workflow's pause gate); may throw. */
  beforeStep?: () => Promise<void>;
  /** Called right after AGENT_STARTED is sent (the first iteration's PROGRESS follows it). */
  afterStarted?: () => void;
  private readonly journal = new Map<string, Entry>();
  private readonly frames: Frame[] = [];
  private sentTotal = 0;
  private readonly turns = new Map<string, ModelCall>();

  constructor(private readonly d: SwarmAgentContextDeps) {}

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  get name(): string {
    return this.d.name;
  }

  /** Reads the agent's journal (a re-activation continues after its last recorded step). Returns how many steps it holds. */
  async rehydrate(): Promise<number> {
    for (const [step, e] of await this.d.journal.read(this.d.workflowId, this.d.name)) {
      const entry = e as unknown as Entry;
      this.journal.set(step, entry);
      this.sentTotal += entry.mail ?? 0;
    }
    return this.journal.size;
  }

  /** The results of every recorded step (e.g. to find the mailbox position it last read). */
  recordedResults(): unknown[] {
    return [...this.journal.values()].map((e) => e.result);
  }

  isRecorded(step: string): boolean {
    return this.journal.has(step);
  }

  checkpoint(): void {
    if (this.signal.aborted) throw this.signal.reason instanceof Error ? this.signal.reason : new Error('agent stopped');
  }

  /** Messages sent with send_message so far (recorded steps included). */
  get messagesSent(): number {
    return this.sentTotal;
  }

  /** The model calls of the agent's turns so far (recorded and new), for its report and the limits. */
  get calls(): ModelCall[] {
    return [...this.turns.values()];
  }

  async step<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const recorded = this.journal.get(name);
    if (recorded) {
      this.track(name, recorded.result);
      return recorded.result as T;
    }
    this.checkpoint();
    if (this.beforeStep) {
      await this.beforeStep();
      this.checkpoint();
    }
    const frame: Frame = { name, n: 0, sent: 0, pending: [] };
    this.frames.push(frame);
    let result: T;
    try {
      result = await fn();
      while (frame.pending.length) await Promise.all(frame.pending.splice(0));
    } finally {
      this.frames.splice(this.frames.indexOf(frame), 1);
    }
    const entry: Entry = { result, ...(frame.sent ? { mail: frame.sent } : {}) };
    const j = this.d.journal;
    await this.d.publisher.publish(j.subject(this.d.workflowId, this.d.name), j.encode(name, entry), { deadlineMs: SEND_DEADLINE_MS });
    this.journal.set(name, entry);
    this.sentTotal += frame.sent;
    this.track(name, result);
    return result;
  }

  /** Forwards the spec's agent events to the lead (inside a step); others (partials, tool events) stay local. */
  emit(type: EventType, _agentId: string, message: string, payload?: Record<string, unknown>): void {
    if (!FORWARDED.has(type)) return;
    const event: MailEvent = { type: type as MailEvent['type'], message, ...(payload ? { payload } : {}) };
    this.send(LEAD, { kind: 'event', from: this.d.name, event });
    if (type === 'AGENT_STARTED') this.afterStarted?.();
  }

  /**
   * Sends `mail` to `to` as part of the running step (stored before the step is journaled).
   * `counted`: a send_message of the agent's (max_messages_per_agent).
   */
  send(to: string, mail: Mail, counted = false): Promise<void> {
    const frame = this.frames.at(-1);
    if (!frame) throw new Error(`swarm agent ${this.d.name}: a message may only be sent inside a step`);
    const id = `${this.d.workflowId}:${this.d.name}:${frame.name}:${frame.n++}`;
    if (counted) frame.sent++;
    const p = this.d.mail.send(this.d.workflowId, to, mail, id, SEND_DEADLINE_MS);
    p.catch(() => undefined); // awaited by the step
    frame.pending.push(p);
    return p;
  }

  /** Sends counted in the running step so far (for the limit check inside the step). */
  get sentInStep(): number {
    return this.frames.at(-1)?.sent ?? 0;
  }

  private track(step: string, result: unknown): void {
    if (!/-turn-\d+$/.test(step)) return;
    const t = result as { model?: string; provider?: string; usage?: ModelCall['usage']; tier?: ModelCall['tier'] } | undefined;
    if (!t?.usage || !t.model) return;
    this.turns.set(step, { agentId: this.d.name, step, model: t.model, provider: t.provider ?? '', usage: t.usage, ...(t.tier ? { tier: t.tier } : {}) });
  }
}
