/**
 * The cluster's state file, `<dir>/cluster.json`: the options it was started with, the secrets
 * every service process shares (generated once, kept across restarts: refresh tokens signed
 * with one and channel credentials encrypted with another outlive a restart), and each
 * member's ports, log and process. The CLI's `stop` and `status` read it; whoever starts or
 * restarts a member rewrites it. It holds secrets: mode 0600.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ProcRef } from './process.js';
import type { MemberKind } from './types.js';

export interface ClusterSecrets {
  /** INTERNAL_RPC_TOKEN: gateways to the orchestrator. */
  internalRpcToken: string;
  /** JWT_SECRET: a session signed in by one gateway is valid at the other. */
  jwtSecret: string;
  /** CHANNEL_SECRET_KEY: channel credentials stored by one process are read by another. */
  channelSecretKey: string;
}

export interface MemberState {
  name: string;
  kind: MemberKind;
  ports: Record<string, number>;
  log: string;
  /** The running process; absent while the member is down. */
  proc?: ProcRef;
}

export interface ClusterState {
  version: 1;
  replicas: 1 | 3;
  basePort: number;
  gateways: number;
  workers: number;
  detached: boolean;
  nats: { version: string; syncInterval?: string };
  secrets: ClusterSecrets;
  members: MemberState[];
}

export function statePath(dir: string): string {
  return join(dir, 'cluster.json');
}

export function newSecrets(): ClusterSecrets {
  return {
    internalRpcToken: randomBytes(36).toString('base64url'),
    jwtSecret: randomBytes(48).toString('base64url'),
    channelSecretKey: randomBytes(32).toString('hex'),
  };
}

/** The state file's contents; undefined when there is none (a cluster never started in `dir`). */
export function readState(dir: string): ClusterState | undefined {
  let text: string;
  try {
    text = readFileSync(statePath(dir), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const s = JSON.parse(text) as ClusterState;
  if (s.version !== 1) throw new Error(`${statePath(dir)}: unknown version ${String(s.version)}`);
  return s;
}

/** Replaces the state file in one step (a reader never sees half a file). */
export async function writeState(dir: string, s: ClusterState): Promise<void> {
  const tmp = `${statePath(dir)}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(s, null, 2)}\n`, { mode: 0o600 });
  await rename(tmp, statePath(dir));
}
