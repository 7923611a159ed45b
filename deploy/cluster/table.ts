/**
 * The one table a newcomer reads: member, kind, pid, where it listens, its log; with `status`,
 * whether it is up. Below it, what an acknowledged write means here, and where the data is.
 */
import { relative } from 'node:path';
import type { Member } from './types.js';

/** Where a member listens, as something to paste: a URL where there is one. */
export function address(m: Pick<Member, 'kind' | 'ports'>): string {
  const p = m.ports;
  switch (m.kind) {
    case 'nats':
      return `nats://127.0.0.1:${p.client} (cluster ${p.cluster}, monitor http://127.0.0.1:${p.monitor})`;
    case 'postgres':
      return `postgres://postgres@127.0.0.1:${p.sql}/postgres`;
    case 'gateway':
      return `http://127.0.0.1:${p.http}`;
    case 'orchestrator':
      return `grpc http://127.0.0.1:${p.grpc}, health http://127.0.0.1:${p.health}`;
    case 'worker':
      return `health http://127.0.0.1:${p.health}`;
  }
}

/** A path as short as it can be read from the current folder. */
function shown(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith('..') ? rel : path;
}

export function renderTable(members: readonly Member[], up?: readonly boolean[]): string {
  const head = ['member', 'kind', 'pid', ...(up ? ['state'] : []), 'listens on', 'log'];
  const rows = members.map((m, i) => [
    m.name,
    m.kind,
    m.pid === undefined ? '-' : String(m.pid),
    ...(up ? [up[i] ? 'up' : 'down'] : []),
    address(m),
    shown(m.log),
  ]);
  const widths = head.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c].length)));
  const line = (r: string[]) =>
    r
      .map((cell, c) => cell.padEnd(widths[c]))
      .join('  ')
      .trimEnd();
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** The lines under the table: durability and the data folder. */
export function footer(o: { dir: string; replicas: number; natsVersion: string; syncInterval?: string }): string {
  const fsync = o.syncInterval
    ? `fsync before every ack (sync_interval ${o.syncInterval})`
    : 'fsync every 2 minutes (no sync_interval before nats-server 2.10)';
  return [
    `nats-server ${o.natsVersion}, 3 nodes; streams and buckets R${o.replicas}; ${fsync}`,
    `data and logs: ${shown(o.dir)} (PostgreSQL in ${shown(`${o.dir}/postgres`)}, JetStream in ${shown(`${o.dir}/nats-*/jetstream`)})`,
  ].join('\n');
}
