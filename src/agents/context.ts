/**
 * The contexts an agent runs in: what the loop needs of one (journaled steps, events,
 * cancellation), a scoped child for a group of parallel work, and an in-memory one for agents
 * outside a workflow.
 */
import type { EventType } from '../bus/index.js';

/**
 * What the agent loop needs of its context: journaled steps, events, cancellation. A
 * workflow's WorkflowContext is one (durable); AgentService runs agents on an ephemeral one.
 */
export interface AgentContext {
  /**
   * Runs `fn` once (a recorded result is returned). `stored`: only once every earlier step is
   * durably recorded, and returns once this one is (a durable context may otherwise start the
   * next step while this one's record is on its way; see runtime/context.ts).
   */
  step<T>(name: string, fn: () => Promise<T>, o?: { stored?: boolean }): Promise<T>;
  isRecorded(step: string): boolean;
  emit(type: EventType, agentId: string, message: string, payload?: Record<string, unknown>): unknown;
  checkpoint(): void;
  readonly signal: AbortSignal;
}

/**
 * A context for one group of parallel work (a plan's subtasks, one turn's tool calls) that can
 * be stopped on its own: when one member fails, the others are aborted (their model calls and
 * tools cancelled, no new step started, nothing more emitted) instead of running on while the
 * workflow fails or is retried.
 */
export function scopedContext(parent: AgentContext): { ctx: AgentContext; abort(reason: unknown): void } {
  const ac = new AbortController();
  const signal = AbortSignal.any([parent.signal, ac.signal]);
  const stopped = () => {
    if (ac.signal.aborted) throw ac.signal.reason instanceof Error ? ac.signal.reason : new Error('stopped: a parallel step failed');
  };
  const ctx: AgentContext = {
    step: (name, fn, o) => {
      stopped();
      return parent.step(name, fn, o);
    },
    isRecorded: (name) => parent.isRecorded(name),
    emit: (type, agentId, message, payload) => (ac.signal.aborted ? undefined : parent.emit(type, agentId, message, payload)),
    checkpoint: () => {
      parent.checkpoint();
      stopped();
    },
    signal,
  };
  return { ctx, abort: (reason) => ac.abort(reason) };
}

/** Runs steps once each, in memory: for agents outside a workflow (AgentService). */
export class EphemeralContext implements AgentContext {
  private readonly done = new Map<string, unknown>();
  readonly abort = new AbortController();
  constructor(private readonly onEvent: (type: EventType, agentId: string, message: string, payload?: Record<string, unknown>) => void = () => {}) {}
  get signal(): AbortSignal {
    return this.abort.signal;
  }
  async step<T>(name: string, fn: () => Promise<T>): Promise<T> {
    if (this.done.has(name)) return this.done.get(name) as T;
    this.checkpoint();
    const r = await fn();
    this.done.set(name, r);
    return r;
  }
  isRecorded(step: string): boolean {
    return this.done.has(step);
  }
  emit(type: EventType, agentId: string, message: string, payload?: Record<string, unknown>): void {
    this.onEvent(type, agentId, message, payload);
  }
  checkpoint(): void {
    if (this.signal.aborted) throw this.signal.reason instanceof Error ? this.signal.reason : new Error('aborted');
  }
}
