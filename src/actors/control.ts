/**
 * Control state of a workflow (pause, cancel), kept durably in the CONTROL bucket so a command
 * sent while no worker holds the actor is not lost: the actor reads it when it activates and
 * re-reads it whenever a nudge arrives on its mailbox subject (svc.actor.workflow.<id>).
 * Writers (the orchestrator) update it with compare-and-set, then nudge.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import type { KV } from '@nats-io/kv';
import { kvKeys, subjects } from '../bus/index.js';

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
