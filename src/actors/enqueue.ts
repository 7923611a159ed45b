/**
 * Handing a submitted task to the work queue. The task row is committed (QUEUED) first;
 * then its start message is published with the task id as de-duplication id. A submission
 * is either accepted (the message is stored, or its row was already claimed by a worker,
 * or the row could not be withdrawn and the reconciler will publish it) and then it runs,
 * or refused (the row is withdrawn while still QUEUED) and then it never runs: a worker
 * that receives a start message whose row is gone acks it without running anything.
 */
import { subjects, type Bus } from '../bus/index.js';
import { MODE_BY_EXECUTION, unavailable, type Logger, type Mode, type Tier } from '../kernel/index.js';
import type { Store } from '../store/index.js';
import type { TaskStart } from './workflows.js';

/** How long a submission waits for JetStream to store its start message. */
export const START_PUBLISH_DEADLINE_MS = 3000;
/** Retry-After (seconds) of a refused submission: about one restart of a NATS server. */
export const REFUSED_RETRY_AFTER_SECONDS = 5;

const enc = new TextEncoder();

/** A task as it is stored (the tasks row): everything its start message is built from. */
export interface QueuedTask {
  id: string;
  session_id: string;
  user_id: string | null;
  tenant_id: string | null;
  query: string;
  context: Record<string, unknown> | null;
  /** What was asked at submission: mode (when named), model_tier, model_override, max_concurrent_agents, new_session. */
  options: Record<string, unknown> | null;
  /** The execution mode name stored with the task (EXECUTION_MODE_*). */
  mode: string;
  trace_id: string | null;
  created_at: Date;
}

/**
 * The start message of a stored task, built here only: at submission and when the
 * reconciler publishes it again, so both carry the same fields.
 */
export function startMessage(t: QueuedTask): TaskStart {
  const o = t.options ?? {};
  return {
    task_id: t.id,
    session_id: t.session_id,
    user_id: t.user_id ?? undefined,
    tenant_id: t.tenant_id ?? undefined,
    query: t.query,
    context: t.context ?? {},
    mode: (o.mode as Mode | undefined) ?? MODE_BY_EXECUTION.get(t.mode) ?? 'simple',
    model_tier: (o.model_tier as Tier | undefined) ?? 'small',
    model_override: (o.model_override as string | undefined) || undefined,
    max_concurrent_agents: (o.max_concurrent_agents as number | undefined) || undefined,
    trace_id: t.trace_id ?? undefined,
    submitted_at: t.created_at.toISOString(),
    ...(o.new_session ? { new_session: true } : {}),
  };
}

export async function enqueueStart(d: { bus: Bus; store: Store; log: Logger }, start: TaskStart): Promise<void> {
  const id = start.task_id;
  let cause: unknown = new Error('not connected to NATS');
  if (d.bus.connected) {
    try {
      await d.bus.events.publish(subjects.taskStart(id), enc.encode(JSON.stringify(start)), { msgId: id, deadlineMs: START_PUBLISH_DEADLINE_MS });
      return;
    } catch (err) {
      cause = err;
    }
  }
  const withdrawn = await d.store.withdrawQueued(id).catch((err) => {
    d.log.warn({ err, workflow_id: id }, 'could not withdraw an unpublished submission; the reconciler will publish it');
    return false;
  });
  if (!withdrawn) return;
  d.log.warn({ err: cause, workflow_id: id }, 'submission refused: the task queue is unreachable');
  throw queueUnavailable(cause);
}

/** The refusal of a submission that could not be queued (503 with Retry-After); it never runs. */
export const queueUnavailable = (cause?: unknown) =>
  unavailable('Service temporarily unavailable: the task queue is unreachable, so the task was not accepted; retry later', cause, REFUSED_RETRY_AFTER_SECONDS);
