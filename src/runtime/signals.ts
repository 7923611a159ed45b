/**
 * The runtime's durable-wait store: a signal a workflow waits for (today a daemon's reply to a
 * message whose claim names the workflow), stored under `<workflow_id>.<key>` in the
 * DAEMON_SIGNALS bucket before whatever produced it is let go, so a signal survives the
 * restart of every process. Read by the workflow's wait step; kept a day. No workflow waits
 * yet (plan review and approvals will, together with the durable wake through the work queue).
 */
import type { JetStreamManager } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { BUCKETS, coreReplicas, kvKeys, openBucket } from '../bus/index.js';

const SIGNAL_TTL_MS = 24 * 3600 * 1000;
const enc = new TextEncoder();
const dec = new TextDecoder();

export class WorkflowSignals {
  private constructor(private readonly kv: KV) {}

  static async open(nc: NatsConnection, jsm: JetStreamManager): Promise<WorkflowSignals> {
    // Replicated as the core buckets are (NATS_REPLICAS): a signal must outlive a lost server.
    const replicas = await coreReplicas(jsm);
    return new WorkflowSignals(await openBucket(nc, jsm, BUCKETS.daemonSignals, { ttlMs: SIGNAL_TTL_MS, replicas }));
  }

  /** Stores the signal `key` of a workflow (JSON); resolved once stored durably. */
  async put(workflowId: string, key: string, value: unknown): Promise<void> {
    await this.kv.put(kvKeys.daemonSignal(workflowId, key), enc.encode(JSON.stringify(value)));
  }

  /** The signal `key` of a workflow, if it arrived. */
  async get<T>(workflowId: string, key: string): Promise<T | undefined> {
    const e = await this.kv.get(kvKeys.daemonSignal(workflowId, key));
    if (!e || e.operation !== 'PUT' || !e.value.length) return undefined;
    return JSON.parse(dec.decode(e.value)) as T;
  }
}
