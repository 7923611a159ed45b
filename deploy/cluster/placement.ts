/**
 * Whether the NATS nodes can place a replicated stream, checked with the real operation: a
 * throwaway memory stream with the cluster's replica count is created and deleted. Every node
 * answering its health probe and knowing the meta leader is not enough: a fresh three-node
 * cluster normally places its first R3 stream within a second of that, but once (2026-11-26,
 * nats-server 2.10.27, a loaded 2-core machine) the meta leader answered "no suitable peers for
 * placement" for the whole two minutes the orchestrator tried, so no service process could
 * start. Restarting the nodes one at a time makes each one announce itself to the meta group
 * again; the launcher does that when placement has not worked for PLACEMENT_WAIT_MS.
 */
import { connect } from '@nats-io/transport-node';
import { jetstreamManager, StorageType } from '@nats-io/jetstream';
import type { Member } from './types.js';

const PROBE_STREAM = 'CLUSTER_PLACEMENT_PROBE';
/** How long placement may fail on a started cluster before its nodes are restarted. */
export const PLACEMENT_WAIT_MS = 30_000;
/** Rolling restarts before the start is given up. */
export const RESTART_ROUNDS = 2;
const RETRY_MS = 250;

/** Tries for `ms` to create and delete the probe stream; the last error when it never worked. */
async function placeOnce(servers: string[], replicas: number, ms: number): Promise<string | undefined> {
  const nc = await connect({ servers, name: 'cluster-placement-probe', timeout: 3000 });
  try {
    const jsm = await jetstreamManager(nc, { timeout: 5000 });
    const end = Date.now() + ms;
    let last = 'not tried';
    while (Date.now() < end) {
      try {
        await jsm.streams.add({ name: PROBE_STREAM, subjects: ['cluster.placement.probe'], num_replicas: replicas, storage: StorageType.Memory });
        await jsm.streams.delete(PROBE_STREAM);
        return undefined;
      } catch (err) {
        last = (err as Error).message;
        await new Promise((r) => setTimeout(r, RETRY_MS));
      }
    }
    return last;
  } finally {
    await nc.close();
  }
}

/**
 * Resolves once the NATS nodes place a stream with `replicas` replicas; restarts them one at a
 * time (each waits for its readiness probe) when that has not worked for PLACEMENT_WAIT_MS, up
 * to RESTART_ROUNDS times, then rejects with the server's last answer.
 */
export async function settlePlacement(
  nodes: readonly Pick<Member, 'name' | 'ports' | 'start' | 'stop'>[],
  replicas: number,
  log: (s: string) => void,
  waitMs = PLACEMENT_WAIT_MS,
): Promise<void> {
  const servers = nodes.map((m) => `127.0.0.1:${m.ports.client}`);
  for (let round = 0; ; round++) {
    const err = await placeOnce(servers, replicas, waitMs);
    if (err === undefined) return;
    if (round === RESTART_ROUNDS) {
      throw new Error(`the NATS nodes could not place a stream with ${replicas} replicas (${err}), even after ${RESTART_ROUNDS} rolling restarts`);
    }
    log(`NATS could not place a stream with ${replicas} replicas for ${waitMs / 1000} s (${err}): restarting the nodes one at a time`);
    for (const m of nodes) {
      await m.stop();
      await m.start();
    }
  }
}
