/**
 * The cluster's three nats-server nodes: one config file per node (written into the node's
 * folder at every start, so that a changed port plan applies), the command line, and the
 * readiness probe (the monitor port's /healthz answers ok and JetStream has a meta leader).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_MAX_PAYLOAD, NATS_SERVER_NOT_FOUND_MESSAGE, findNatsServerBinary, natsServerVersion, supportsSyncInterval } from '../../src/embedded/index.js';
import type { Command } from './process.js';

export interface NatsNodePorts {
  client: number;
  cluster: number;
  monitor: number;
}

/** The nats-server binary, its version, and the sync_interval this cluster runs with (undefined: the server's default). */
export interface NatsBinary {
  path: string;
  version: string;
  syncInterval: string | undefined;
}

/**
 * Every node runs with `sync_interval: always`: an acknowledged message has been fsynced on a
 * majority of the nodes. Replication alone (the server's default, an fsync every 2 minutes)
 * protects against the loss of one node, not against the loss of all three at once, and the
 * three nodes of this cluster share one machine, one power supply and one disk: a power loss is
 * always coordinated here, which is exactly where Jepsen (NATS 2.12.1) saw acknowledged writes
 * lost under the default. The price is one fsync per acknowledged write on each node. A
 * nats-server older than 2.10 has no sync_interval: the default applies (the table says so).
 */
export function natsBinary(): NatsBinary {
  const path = findNatsServerBinary();
  if (!path) throw new Error(NATS_SERVER_NOT_FOUND_MESSAGE);
  const v = natsServerVersion(path);
  const version = v ? v.join('.') : 'unknown';
  return { path, version, syncInterval: supportsSyncInterval(v) ? 'always' : undefined };
}

function renderConfig(name: string, storeDir: string, ports: NatsNodePorts, routes: number[], syncInterval: string | undefined): string {
  // JSON string literals are valid NATS config strings and take care of quoting paths.
  const q = JSON.stringify;
  return [
    `# Written by deploy/cluster at every start of this node; edits are overwritten.`,
    `server_name: ${q(name)}`,
    `listen: ${q(`127.0.0.1:${ports.client}`)}`,
    `http: ${q(`127.0.0.1:${ports.monitor}`)}`,
    `max_payload: ${DEFAULT_MAX_PAYLOAD}`,
    `jetstream {`,
    `  store_dir: ${q(storeDir)}`,
    ...(syncInterval ? [`  sync_interval: ${q(syncInterval)}`] : []),
    `}`,
    `cluster {`,
    `  name: "taskorch-local"`,
    `  listen: ${q(`127.0.0.1:${ports.cluster}`)}`,
    // Every node's route, its own included (a server skips a route to itself).
    `  routes: [${routes.map((p) => q(`nats-route://127.0.0.1:${p}`)).join(', ')}]`,
    `}`,
    '',
  ].join('\n');
}

/** Writes the node's config into `dir` and returns its command line. */
export async function natsNodeCommand(o: { name: string; dir: string; ports: NatsNodePorts; routes: number[]; binary: NatsBinary }): Promise<Command> {
  const storeDir = join(o.dir, 'jetstream');
  await mkdir(storeDir, { recursive: true });
  const config = join(o.dir, 'nats-server.conf');
  await writeFile(config, renderConfig(o.name, storeDir, o.ports, o.routes, o.binary.syncInterval));
  return { cmd: o.binary.path, args: ['-c', config], env: process.env, cwd: o.dir };
}

async function getJson(url: string): Promise<any> {
  const r = await fetch(url, { signal: AbortSignal.timeout(2000) });
  return r.ok ? r.json() : undefined;
}

/** /healthz answers ok (JetStream current on this node) and the node knows the meta leader. */
export async function natsNodeReady(monitorPort: number): Promise<boolean> {
  try {
    const health = await getJson(`http://127.0.0.1:${monitorPort}/healthz`);
    if (health?.status !== 'ok') return false;
    const jsz = await getJson(`http://127.0.0.1:${monitorPort}/jsz`);
    return typeof jsz?.meta_cluster?.leader === 'string' && jsz.meta_cluster.leader !== '';
  } catch {
    return false;
  }
}
