/**
 * Control state of a workflow (pause, cancel), kept durably in the CONTROL bucket so a command
 * sent while no worker holds the actor is not lost: the actor reads it when it activates and
 * re-reads it whenever a nudge arrives on its mailbox subject (svc.actor.workflow.<id>).
 * Writers update it with compare-and-set, then nudge. The commands (cancel, pause, resume)
 * and their rules live here, so every entry point applies the same ones.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import type { KV } from '@nats-io/kv';
import { kvKeys, subjects, type Bus } from '../bus/index.js';
import { AppError, Code, TERMINAL_STATUSES } from '../kernel/index.js';
import type { TaskRow } from './model.js';
import type { TaskStore } from './store.js';
import { WaitStore } from './waits.js';

export interface ControlState {
  paused: boolean;
  paused_at?: string;
  pause_reason?: string;
  paused_by?: string;
  cancel_requested: boolean;
  cancel_reason?: string;
  cancelled_by?: string;
  updated_at: string;
}

const enc = new TextEncoder();
const dec = new TextDecoder();
export const EMPTY_CONTROL: ControlState = { paused: false, cancel_requested: false, updated_at: new Date(0).toISOString() };

export async function readControl(kv: KV, workflowId: string): Promise<{ state: ControlState; revision: number }> {
  const e = await kv.get(kvKeys.control(workflowId));
  if (!e || e.operation !== 'PUT' || !e.value.length) return { state: EMPTY_CONTROL, revision: 0 };
  return { state: JSON.parse(dec.decode(e.value)) as ControlState, revision: e.revision };
}

/** Applies `change` with compare-and-set (retrying on a concurrent write), then nudges the actor. */
export async function updateControl(kv: KV, nc: NatsConnection, workflowId: string, change: (s: ControlState) => ControlState): Promise<ControlState> {
  for (let attempt = 0; attempt < 10; attempt++) {
    const { state, revision } = await readControl(kv, workflowId);
    const next = { ...change(state), updated_at: new Date().toISOString() };
    const data = enc.encode(JSON.stringify(next));
    const ok =
      revision === 0
        ? await kv.create(kvKeys.control(workflowId), data).then(
            () => true,
            () => false,
          )
        : await kv.update(kvKeys.control(workflowId), data, revision).then(
            () => true,
            () => false,
          );
    if (ok) {
      nc.publish(subjects.workflowActor(workflowId), enc.encode(JSON.stringify({ control: next })));
      return next;
    }
  }
  throw new Error('control state is being changed concurrently; try again');
}

const TERMINAL = new Set<string>(TERMINAL_STATUSES);
const refuse = (what: string, row: TaskRow) => {
  if (TERMINAL.has(row.status)) throw new AppError(Code.Aborted, `Task cannot be ${what}: it is ${row.status}`);
};

/**
 * Cancels a task. A queued task has no actor yet: its terminal state is written now; the
 * actor, when it activates, sees the cancel and emits WORKFLOW_CANCELLING / WORKFLOW_CANCELLED.
 * A task waiting for a person is woken, and its actor does the same at once.
 */
export async function cancelTask(d: { bus: Bus; tasks: TaskStore }, row: TaskRow, reason: string | undefined, by: string | undefined): Promise<void> {
  refuse('cancelled', row);
  const why = reason || 'cancelled by request';
  await updateControl(d.bus.kv.control, d.bus.nc, row.id, (s) => ({ ...s, cancel_requested: true, cancel_reason: why, cancelled_by: by }));
  if (row.status === 'TASK_STATUS_QUEUED') await d.tasks.finishTask(row.id, { status: 'TASK_STATUS_CANCELLED', error: `cancelled: ${why}` }, new Date());
  // A workflow waiting for a person holds no actor to nudge: wake it, so it ends CANCELLED now.
  // Whatever status was read: it may have passivated since (the cancel is written by now, so a
  // wait opened later is seen by the actor's own check before it passivates).
  else await new WaitStore(d.tasks.sql, d.tasks, d.bus).wakeIfWaiting(row.id);
}

/** Asks a running task to pause at its next checkpoint. */
export async function pauseTask(d: { bus: Bus }, row: TaskRow, reason: string | undefined, by: string | undefined): Promise<void> {
  refuse('paused', row);
  const { state } = await readControl(d.bus.kv.control, row.id);
  if (state.cancel_requested) throw new AppError(Code.Aborted, 'Task is being cancelled');
  if (state.paused) throw new AppError(Code.Aborted, 'Task is already paused');
  await updateControl(d.bus.kv.control, d.bus.nc, row.id, (s) => ({
    ...s,
    paused: true,
    paused_at: new Date().toISOString(),
    pause_reason: reason || undefined,
    paused_by: by,
  }));
}

export async function resumeTask(d: { bus: Bus }, row: TaskRow): Promise<void> {
  refuse('resumed', row);
  const { state } = await readControl(d.bus.kv.control, row.id);
  if (!state.paused) throw new AppError(Code.Aborted, 'Task is not paused');
  await updateControl(d.bus.kv.control, d.bus.nc, row.id, (s) => ({
    ...s,
    paused: false,
    paused_at: undefined,
    pause_reason: undefined,
    paused_by: undefined,
  }));
}
