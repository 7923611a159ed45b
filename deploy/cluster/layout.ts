/**
 * Who runs in the cluster and on which ports: a fixed plan from the first port of the block,
 * so that a member keeps its ports across restarts and a newcomer can tell them apart at a
 * glance (nats from +0, PostgreSQL +9, the orchestrator +10, gateways from +20, workers from +40).
 */
import type { MemberKind } from './types.js';

export interface PlannedMember {
  name: string;
  kind: MemberKind;
  ports: Record<string, number>;
}

export const DEFAULT_BASE_PORT = 14200;
export const NATS_NODES = 3;
const MAX_GATEWAYS = 20;
const MAX_WORKERS = 60;
/** Ports the plan may take from the base: the block every cluster reserves. */
export const PORT_BLOCK = 40 + MAX_WORKERS;

export function planMembers(o: { basePort: number; gateways: number; workers: number }): PlannedMember[] {
  if (!Number.isInteger(o.gateways) || o.gateways < 1 || o.gateways > MAX_GATEWAYS) throw new Error(`gateways: 1 to ${MAX_GATEWAYS}, got ${o.gateways}`);
  if (!Number.isInteger(o.workers) || o.workers < 0 || o.workers > MAX_WORKERS) throw new Error(`workers: 0 to ${MAX_WORKERS}, got ${o.workers}`);
  if (!Number.isInteger(o.basePort) || o.basePort < 1024 || o.basePort + PORT_BLOCK > 65535) {
    throw new Error(`base port: 1024 to ${65535 - PORT_BLOCK}, got ${o.basePort}`);
  }
  const b = o.basePort;
  const members: PlannedMember[] = [];
  for (let i = 0; i < NATS_NODES; i++) {
    members.push({ name: `nats-${i + 1}`, kind: 'nats', ports: { client: b + 3 * i, cluster: b + 3 * i + 1, monitor: b + 3 * i + 2 } });
  }
  members.push({ name: 'postgres', kind: 'postgres', ports: { sql: b + 9 } });
  members.push({ name: 'orchestrator', kind: 'orchestrator', ports: { grpc: b + 10, health: b + 11 } });
  for (let i = 0; i < o.gateways; i++) members.push({ name: `gateway-${i + 1}`, kind: 'gateway', ports: { http: b + 20 + i } });
  for (let i = 0; i < o.workers; i++) members.push({ name: `worker-${i + 1}`, kind: 'worker', ports: { health: b + 40 + i } });
  return members;
}
