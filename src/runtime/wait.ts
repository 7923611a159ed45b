/**
 * The durable wait: how a workflow waits for a person (plan review, an approval) without
 * holding anything while it waits.
 *
 * `waitFor` opens the wait in a journaled step (the row in task_waits, and the caller's
 * request events), then looks for a decision. With none yet it throws `Passivate`: the worker
 * flushes the events, marks the task PAUSED, acks its work-queue message and lets the lease
 * go, so the waiting workflow holds no worker slot, no lease and no timer in memory. The
 * decision's wake message re-activates it on any worker; the replay reaches the same
 * `waitFor`, finds the decision and journals it (step `wait-<key>`), so from then on the
 * workflow reads the decision from its journal and a second decision or wake changes nothing.
 */
import type { WaitRow, WaitStore } from '../tasks/index.js';
import type { WorkflowContext } from './context.js';

/** Thrown by `waitFor` while no decision exists: the worker passivates the workflow. */
export class Passivate extends Error {
  override name = 'Passivate';
  /** Seen by code that must not import the runtime (agents' parallel groups): a wait, not a failure. */
  readonly passivates = true;
  constructor(readonly key: string) {
    super(`waiting for ${key}`);
  }
}

export interface WaitSpec {
  /** The workflow's name for the wait (unique within the workflow). */
  key: string;
  kind: string;
  /** Public id of the wait (e.g. an approval_id); a new UUID when absent. */
  id?: string;
  /** When the durable timer decides the wait as timed out. */
  timeoutMs: number;
  request: Record<string, unknown>;
  owner: { userId?: string | null; tenantId?: string | null; sessionId?: string | null };
  /** Emits the events that announce the wait; runs inside the step that opens it. */
  onOpen?: (row: WaitRow) => void;
  /** Emits the events that announce the decision; runs inside the step that records it. */
  onDecided?: (d: WaitDecision) => void;
}

export interface WaitDecision<T = Record<string, unknown>> {
  waitId: string;
  decision: T;
  timedOut: boolean;
  decidedBy?: string;
  decidedAt: string;
  /** Milliseconds between the wait's opening and its decision. */
  waitedMs: number;
}

function storeOf(ctx: WorkflowContext): WaitStore {
  const s = ctx.waits;
  if (!s) throw new Error('this worker has no wait store: a workflow cannot wait for a person here');
  return s;
}

/** Waits for the decision of `spec.key`: returns it, or passivates the workflow until it exists. */
export async function waitFor<T = Record<string, unknown>>(ctx: WorkflowContext, spec: WaitSpec): Promise<WaitDecision<T>> {
  // Step names are one token of the journal's KV keys: letters, digits, - and _ only.
  if (!/^[-\w]+$/.test(spec.key)) throw new Error(`invalid wait key ${JSON.stringify(spec.key)}`);
  const done = `wait-${spec.key}`;
  const store = storeOf(ctx);
  // Decided and journaled on an earlier activation (`take` set the task RUNNING before the record).
  if (ctx.isRecorded(done)) return ctx.step<WaitDecision<T>>(done, () => Promise.reject(new Error('unreachable')));
  const opened = await ctx.step(`wait-open-${spec.key}`, async () => {
    const row = await store.open({
      id: spec.id,
      taskId: ctx.workflowId,
      key: spec.key,
      kind: spec.kind,
      userId: spec.owner.userId,
      tenantId: spec.owner.tenantId,
      sessionId: spec.owner.sessionId,
      request: spec.request,
      dueAt: new Date(Date.now() + spec.timeoutMs),
    });
    spec.onOpen?.(row);
    return { id: row.id, opened_at: row.created_at instanceof Date ? row.created_at.toISOString() : String(row.created_at) };
  });
  // A cancel that woke the workflow ends it here rather than waiting on.
  ctx.checkpoint();
  // Read by this live actor (one statement): when decided, consumed (the timers stop waking
  // it; a pause gate before the record may hold it a while) and the task RUNNING again.
  const row = await store.take(ctx.workflowId, spec.key);
  if (!row || row.status === 'pending') throw new Passivate(spec.key);
  const result = await ctx.step(done, async () => {
    const decidedAt = row.decided_at ? new Date(row.decided_at) : new Date();
    const d: WaitDecision<T> = {
      waitId: opened.id,
      decision: (row.decision ?? {}) as T,
      timedOut: row.timed_out,
      ...(row.decided_by ? { decidedBy: row.decided_by } : {}),
      decidedAt: decidedAt.toISOString(),
      waitedMs: Math.max(0, decidedAt.getTime() - Date.parse(opened.opened_at)),
    };
    spec.onDecided?.(d as WaitDecision);
    return d;
  });
  return result;
}
