/**
 * The service processes of the cluster (`node dist/main.js`, one role set each): their
 * environment and their readiness probe. Every one reaches all three NATS nodes, the one
 * PostgreSQL, shares the cluster's secrets and workspace folder, and keeps its own DATA_DIR.
 * Gateways find the orchestrator at ORCHESTRATOR_URL (its Connect/gRPC port); the processes
 * without a gateway answer probes on HEALTH_PORT.
 */
import { spawnSync } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PlannedMember } from './layout.js';
import type { Command } from './process.js';
import type { ClusterSecrets } from './state.js';

/** The repository: the service runs from here (its config/ paths are relative to it). */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

const ROLES: Record<'gateway' | 'orchestrator' | 'worker', string> = {
  gateway: 'gateway',
  orchestrator: 'orchestrator,scheduler',
  worker: 'worker,archiver',
};

/** Compiles dist/ unless it is newer than its sources (scripts/build-if-stale.mjs). */
export function buildIfStale(): void {
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build-if-stale.mjs')], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) throw new Error(`building dist/ failed (exit ${r.status ?? r.signal})`);
}

export interface ServiceContext {
  dir: string;
  replicas: 1 | 3;
  natsUrl: string;
  databaseUrl: string;
  secrets: ClusterSecrets;
  /** The orchestrator's Connect/gRPC port, for the gateways' ORCHESTRATOR_URL. */
  orchestratorPort: number;
  /** ClusterOptions.env: applied last. */
  extra: Record<string, string>;
}

function ownPorts(m: PlannedMember, c: ServiceContext): Record<string, string> {
  if (m.kind === 'gateway') return { GATEWAY_PORT: String(m.ports.http), ORCHESTRATOR_URL: `http://127.0.0.1:${c.orchestratorPort}` };
  if (m.kind === 'orchestrator') return { ORCHESTRATOR_GRPC_PORT: String(m.ports.grpc), HEALTH_PORT: String(m.ports.health) };
  return { HEALTH_PORT: String(m.ports.health) };
}

/** Settings the cluster decides per process: never taken from the caller's environment. */
const OWN = ['ROLES', 'PORT', 'GATEWAY_PORT', 'GATEWAY_HEALTH_PORT', 'HEALTH_PORT', 'ORCHESTRATOR_URL', 'ORCHESTRATOR_GRPC_PORT', 'NATS_SYNC_INTERVAL'];

function inherited(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of OWN) delete env[k];
  return env;
}

export async function serviceCommand(m: PlannedMember, c: ServiceContext): Promise<Command> {
  const dataDir = join(c.dir, m.name);
  await mkdir(dataDir, { recursive: true });
  const env: NodeJS.ProcessEnv = {
    ...inherited(),
    ROLES: ROLES[m.kind as keyof typeof ROLES],
    INSTANCE_ID: m.name,
    DATA_DIR: dataDir,
    // One folder for every process, as a shared volume would be across machines: a worker
    // writes a session's files and a gateway serves them.
    WORKSPACE_ROOT: join(c.dir, 'workspaces'),
    NATS_URL: c.natsUrl,
    NATS_REPLICAS: String(c.replicas),
    DATABASE_URL: c.databaseUrl,
    INTERNAL_RPC_TOKEN: c.secrets.internalRpcToken,
    JWT_SECRET: c.secrets.jwtSecret,
    CHANNEL_SECRET_KEY: c.secrets.channelSecretKey,
    GATEWAY_HOST: '127.0.0.1',
    GRPC_HOST: '127.0.0.1',
    // A fleet authenticates: an API key or a session from one gateway is good at every other.
    GATEWAY_SKIP_AUTH: '0',
    LOG_FORMAT: 'json',
    ...ownPorts(m, c),
    ...c.extra,
  };
  return { cmd: process.execPath, args: [join(ROOT, 'dist', 'main.js')], env, cwd: ROOT };
}

/** GET /readiness on the gateway's port, or on HEALTH_PORT, answers 200. */
export async function serviceReady(m: PlannedMember): Promise<boolean> {
  const port = m.kind === 'gateway' ? m.ports.http : m.ports.health;
  try {
    const r = await fetch(`http://127.0.0.1:${port}/readiness`, { signal: AbortSignal.timeout(2000) });
    await r.arrayBuffer();
    return r.status === 200;
  } catch {
    return false;
  }
}
