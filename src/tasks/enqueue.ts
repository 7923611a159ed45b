/**
 * Handing a submitted task to the work queue of its priority (TASKS for normal). The task row is committed (QUEUED) first;
 * then its start message is published with the task id as de-duplication id. A submission
 * is either accepted (the message is stored, or its row was already claimed by a worker,
 * or the row could not be withdrawn and the reconciler will publish it) and then it runs,
 * or refused (the row is withdrawn while still QUEUED) and then it never runs: a worker
 * that receives a start message whose row is gone acks it without running anything.
 */
import { subjects, type Bus } from '../bus/index.js';
import { unavailable, type Logger } from '../kernel/index.js';
import type { TaskStart } from './model.js';
import type { TaskStore } from './store.js';

/** How long a submission waits for JetStream to store its start message. */
export const START_PUBLISH_DEADLINE_MS = 3000;
/** Retry-After (seconds) of a refused submission: about one restart of a NATS server. */
export const REFUSED_RETRY_AFTER_SECONDS = 5;

const enc = new TextEncoder();

/** `headers`: the message's own (startHeaders: the trace context). */
export async function enqueueStart(d: { bus: Bus; tasks: TaskStore; log: Logger }, start: TaskStart, headers?: Record<string, string>): Promise<void> {
  const id = start.task_id;
  let cause: unknown = new Error('not connected to NATS');
  if (d.bus.connected) {
    try {
      await d.bus.events.publish(subjects.taskStart(id, start.priority), enc.encode(JSON.stringify(start)), {
        msgId: id,
        deadlineMs: START_PUBLISH_DEADLINE_MS,
        headers,
      });
      return;
    } catch (err) {
      cause = err;
    }
  }
  const withdrawn = await d.tasks.withdrawQueued(id).catch((err) => {
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
