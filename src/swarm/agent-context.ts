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
 *
 * Cost per step (the swarm's hot path): a step may run `deferred` (the agent's workspace and
 * mailbox reads before a model turn): its record is held in memory and written with the next
 * step's (the model turn), in one journal message (`group`: the deferred records before the
 * step's own), so a turn with its mailbox read is one journal write. A deferred step sends only
 * what the recorded steps before it fix (its PROGRESS), at once; a crash before the write runs
 * it again from the mailbox position last recorded, sending the same mail under the same ids
 * (dropped as duplicates), as if it never ran. Event mails emitted together (AGENT_STARTED and
 * the first PROGRESS; a failure's AGENT_COMPLETED and the result) go out as one mail per
 * recipient (`batch`) at the end of the tick. Every send is pipelined and stored before the
 * record of its step is written.
 */
import type { AgentContext, ModelCall } from '../agents/index.js';
import type { EventType, JournalLog, PipelinedPublisher } from '../bus/index.js';
import { LEAD, type Mail, type Mailboxes, type MailEvent, type SingleMail } from './mailbox.js';

/** Agent events the lead emits for the agent (the spec's swarm producers: AGENT_STARTED, PROGRESS, AGENT_COMPLETED). */
const FORWARDED = new Set<EventType>(['AGENT_STARTED', 'AGENT_COMPLETED', 'PROGRESS']);

/** How long a journal write or mailbox send may wait through a NATS outage. */
const SEND_DEADLINE_MS = 30_000;

interface Frame {
  name: string;
  n: number;
  sent: number;
  /** Sends not yet acknowledged by JetStream (awaited before the step's record is written). */
  pending: Promise<unknown>[];
  /** Event mails emitted in the current tick, sent together at its end (one per recipient). */
  held: { to: string; mail: SingleMail }[];
  /** Batches sent so far (the next batch's id). */
  batches: number;
}

interface Entry {
  result: unknown;
  mail?: number;
  /** Records of deferred steps written in this message, before this step's (in order). */
  group?: [string, Entry][];
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
  /**
   * The running steps, latest last. No AsyncLocalStorage on purpose: on Node 20 it turns on
   * promise hooks for the whole process, which made every promise (the whole service) slower.
   */
  private readonly frames: Frame[] = [];
  /**
   * The step of each tool call, by its arguments object: a tool step opens with TOOL_INVOKED
   * (emitted synchronously as its code starts, so its frame is the newest then), and the tool
   * is run with that same object, so `send_message` finds its own step even with other tool
   * steps open beside it (TOOL_PARALLELISM > 1). No AsyncLocalStorage: on Node 20 it turns on
   * promise hooks for the whole process.
   */
  private readonly callFrames = new WeakMap<object, Frame>();
  private sentTotal = 0;
  private readonly turns = new Map<string, ModelCall>();
  /** Deferred steps run since the last journal write: their records and their sends not yet acknowledged. */
  private unwritten: { name: string; entry: Entry; pending: Promise<unknown>[] }[] = [];

  constructor(private readonly d: SwarmAgentContextDeps) {}

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  get name(): string {
    return this.d.name;
  }

  /** Reads the agent's journal (a re-activation continues after its last recorded step). Returns how many steps it holds. */
  async rehydrate(): Promise<number> {
    // The read hands a message's `group` back as records of their own steps, in order.
    for (const [step, e] of await this.d.journal.read(this.d.workflowId, this.d.name)) this.record(step, e as unknown as Entry);
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

  /**
   * Runs `fn` once per agent (a recorded result is returned without running it). `deferred`:
   * its record is written with the next step's (see the file's head); only for a step whose
   * sends are fixed by the steps recorded before it. A step that is not deferred returns once
   * its record is stored, with the deferred ones before it: what `stored` asks for is how
   * every such step runs here.
   */
  async step<T>(name: string, fn: () => Promise<T>, o: { deferred?: boolean; stored?: boolean } = {}): Promise<T> {
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
    const frame: Frame = { name, n: 0, sent: 0, pending: [], held: [], batches: 0 };
    let result: T;
    this.frames.push(frame);
    try {
      result = await fn();
    } finally {
      this.frames.splice(this.frames.indexOf(frame), 1);
      this.flush(frame);
    }
    const entry: Entry = { result, ...(frame.sent ? { mail: frame.sent } : {}) };
    if (o.deferred) this.unwritten.push({ name, entry, pending: frame.pending });
    else await this.commit(frame, name, entry);
    this.journal.set(name, entry);
    this.sentTotal += frame.sent;
    this.track(name, result);
    return result;
  }

  /** Every send of the step and of the deferred steps before it stored, then one journal message with their records and its own. */
  private async commit(frame: Frame, name: string, entry: Entry): Promise<void> {
    const group = this.unwritten;
    this.unwritten = [];
    // A failed send leaves the agent to be handed back or to fail: nothing of this write is recorded.
    for (const u of group) await Promise.all(u.pending);
    while (frame.pending.length) await Promise.all(frame.pending.splice(0));
    const full: Entry = group.length ? { ...entry, group: group.map((u) => [u.name, u.entry]) } : entry;
    const j = this.d.journal;
    await this.d.publisher.publish(j.subject(this.d.workflowId, this.d.name), j.encode(name, full), { deadlineMs: SEND_DEADLINE_MS });
  }

  private record(step: string, entry: Entry): void {
    this.journal.set(step, entry);
    this.sentTotal += entry.mail ?? 0;
  }

  /** Forwards the spec's agent events to the lead (inside a step); others (partials, tool events) stay local. */
  emit(type: EventType, _agentId: string, message: string, payload?: Record<string, unknown>): void {
    const call = payload?.arguments;
    if (type === 'TOOL_INVOKED' && call && typeof call === 'object' && this.frames.length) this.callFrames.set(call, this.frames.at(-1)!);
    if (!FORWARDED.has(type)) return;
    const event: MailEvent = { type: type as MailEvent['type'], message, ...(payload ? { payload } : {}) };
    this.hold(LEAD, { kind: 'event', from: this.d.name, event });
    if (type === 'AGENT_STARTED') this.afterStarted?.();
  }

  /**
   * Mails `mail` to `to` at the end of the current tick, with the step's other mails of the tick
   * to `to` as one (`batch`); stored before the step's record is written. Not delayed past the
   * tick: an event reaches the lead when it happens.
   */
  hold(to: string, mail: SingleMail): void {
    const frame = this.frames.at(-1);
    if (!frame) throw new Error(`swarm agent ${this.d.name}: a message may only be sent inside a step`);
    if (!frame.held.length) queueMicrotask(() => this.flush(frame));
    frame.held.push({ to, mail });
  }

  private flush(frame: Frame): void {
    if (!frame.held.length) return;
    const byTo = new Map<string, SingleMail[]>();
    for (const h of frame.held.splice(0)) byTo.set(h.to, [...(byTo.get(h.to) ?? []), h.mail]);
    const k = frame.batches++;
    for (const [to, mails] of byTo) {
      const mail: Mail = mails.length === 1 ? mails[0]! : { kind: 'batch', from: this.d.name, mails };
      // Named by the step and the batch's place in it: a step run again after a crash sends the same ids.
      const p = this.d.mail.send(this.d.workflowId, to, mail, `${this.d.workflowId}:${this.d.name}:${frame.name}:b${k}:${to}`, SEND_DEADLINE_MS);
      p.catch(() => undefined); // awaited before the step's record is written
      frame.pending.push(p);
    }
  }

  /**
   * Sends `mail` to `to` as part of the running step (stored before the step is journaled).
   * `counted`: a send_message of the agent's (max_messages_per_agent). `call`: the arguments
   * object of the tool call sending it (its step; else the newest step open).
   */
  send(to: string, mail: SingleMail, counted = false, call?: object): Promise<void> {
    const frame = this.frameOf(call);
    if (!frame) throw new Error(`swarm agent ${this.d.name}: a message may only be sent inside a step`);
    const id = `${this.d.workflowId}:${this.d.name}:${frame.name}:${frame.n++}`;
    if (counted) frame.sent++;
    const p = this.d.mail.send(this.d.workflowId, to, mail, id, SEND_DEADLINE_MS);
    p.catch(() => undefined); // awaited by the step
    frame.pending.push(p);
    return p;
  }

  /** Sends counted in the running step (of tool call `call`) so far, for the limit check inside the step. */
  sentInStep(call?: object): number {
    return this.frameOf(call)?.sent ?? 0;
  }

  /** The step of tool call `call` while it is open, else the newest step open. */
  private frameOf(call?: object): Frame | undefined {
    const f = call ? this.callFrames.get(call) : undefined;
    return f && this.frames.includes(f) ? f : this.frames.at(-1);
  }

  private track(step: string, result: unknown): void {
    if (!/-turn-\d+$/.test(step)) return;
    const t = result as { model?: string; provider?: string; usage?: ModelCall['usage']; tier?: ModelCall['tier'] } | undefined;
    if (!t?.usage || !t.model) return;
    this.turns.set(step, { agentId: this.d.name, step, model: t.model, provider: t.provider ?? '', usage: t.usage, ...(t.tier ? { tier: t.tier } : {}) });
  }
}
