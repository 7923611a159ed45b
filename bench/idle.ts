/**
 * Benchmark 2: idle SSE connections held by one gateway process, and what they cost.
 *
 * The service (ROLES=gateway,orchestrator, pinned to CPU 0) gets 10,000 concurrent SSE
 * connections from the client process (CPU 1), in two shapes: one workflow per connection
 * (10,000 feeds, each with its own upstream NATS subscription: the per-viewer case) and
 * 10,000 connections on one workflow (the connection alone). The references (bare uWS and
 * node:http, the same response headers and opening comment) hold the same 10,000
 * connections. RSS is read from /proc (median of 5 samples) after a warm-up of 200
 * connections, and again 2 s after the last connection answered; KB per connection is the
 * difference divided by the number of connections.
 */
import { randomUUID } from 'node:crypto';
import { startService, type Nats, type Pg } from './lib/infra.js';
import { nofileLimit, rssKb, sleep, spawnChild, type ChildProc } from './lib/proc.js';
import { fmtInt, table, verdict } from './lib/report.js';
import { LoadWindow, waitQuiet } from './lib/sysload.js';

const SSE_PATH = '/api/v1/stream/sse?workflow_id=';
const TARGET_CONNS = 10_000;
const TARGET_KB = 10;

export interface IdleResult {
  server: 'gateway' | 'uws' | 'http';
  shape: string;
  connections: number;
  rssBeforeKb: number;
  rssAfterKb: number;
  kbPerConnection: number;
  connectSeconds: number;
  foreignPct: number;
  note?: string;
  error?: string;
}

async function medianRss(pid: number): Promise<number> {
  const v: number[] = [];
  for (let i = 0; i < 5; i++) {
    v.push(rssKb(pid));
    await sleep(200);
  }
  return v.sort((a, b) => a - b)[2];
}

async function holdConnections(
  clients: ChildProc,
  pid: number,
  port: number,
  n: number,
  oneWorkflow: boolean,
  log: (s: string) => void,
): Promise<Omit<IdleResult, 'server' | 'shape'>> {
  // Warm-up: exercise the code paths once so lazily compiled code is not counted.
  const warm = Array.from({ length: 200 }, () => randomUUID());
  const w = await clients.call(
    'open',
    { host: '127.0.0.1', port, path: SSE_PATH, workflows: warm, perWorkflow: 1, sampleEvery: 0, concurrency: 100, timeoutMs: 10_000 },
    60_000,
  );
  if (w.failed) throw new Error(`warm-up connections failed: ${w.errors.join('; ')}`);
  await clients.call('closeAll');
  await sleep(1000);
  await waitQuiet(15, 5_000, log);
  const before = await medianRss(pid);
  const load = new LoadWindow();
  const workflows = oneWorkflow ? [randomUUID()] : Array.from({ length: n }, () => randomUUID());
  const r = await clients.call(
    'open',
    { host: '127.0.0.1', port, path: SSE_PATH, workflows, perWorkflow: oneWorkflow ? n : 1, sampleEvery: 0, concurrency: 256, timeoutMs: 20_000 },
    120_000,
  );
  if (r.failed) throw new Error(`${r.failed} of ${n} connections failed: ${r.errors.join('; ')}`);
  await sleep(2000);
  const snap = await clients.call('snapshot');
  const open = snap.conns - snap.closed;
  const after = await medianRss(pid);
  const foreign = load.stop().foreignPct;
  await clients.call('closeAll');
  return {
    connections: open,
    rssBeforeKb: before,
    rssAfterKb: after,
    kbPerConnection: (after - before) / open,
    connectSeconds: r.ms / 1000,
    foreignPct: foreign,
    note: open !== n ? `${n - open} connections closed by the server` : undefined,
  };
}

export async function runIdle(o: {
  nats: Nats;
  pg: Pg;
  pin: boolean;
  quick: boolean;
  log: (s: string) => void;
}): Promise<{ results: IdleResult[]; report: string }> {
  const clients = spawnChild({ name: 'sse-clients', script: 'bench/procs/sse-clients.ts', ipc: true, cpu: o.pin ? 1 : undefined, nofile: 65_536 });
  const results: IdleResult[] = [];
  try {
    await clients.call('snapshot');
    const limit = nofileLimit(clients.pid);
    const n = Math.min(TARGET_CONNS, limit - 300);
    if (n < TARGET_CONNS) o.log(`idle: the client process may open only ${limit} files; holding ${n} connections`);
    const runs: { server: 'gateway' | 'uws' | 'http'; oneWorkflow: boolean; shape: string }[] = [
      { server: 'gateway', oneWorkflow: false, shape: `${fmtInt(n)} workflows x 1` },
      { server: 'gateway', oneWorkflow: true, shape: `1 workflow x ${fmtInt(n)}` },
      { server: 'uws', oneWorkflow: false, shape: `${fmtInt(n)} channels x 1` },
      { server: 'http', oneWorkflow: false, shape: `${fmtInt(n)} channels x 1` },
    ];
    for (const run of runs) {
      const t0 = Date.now();
      try {
        let r: Omit<IdleResult, 'server' | 'shape'>;
        if (run.server === 'gateway') {
          const svc = await startService({
            roles: 'gateway,orchestrator',
            natsUrl: o.nats.url,
            dbUrl: await o.pg.database('bench_idle'),
            cpu: o.pin ? 0 : undefined,
            nofile: 65_536,
            name: 'gateway',
          });
          try {
            const lim = nofileLimit(svc.proc.pid);
            if (lim < n + 200) o.log(`idle: the gateway may open only ${lim} files`);
            r = await holdConnections(clients, svc.proc.pid, svc.port, n, run.oneWorkflow, o.log);
          } finally {
            await svc.stop();
          }
        } else {
          const srv = spawnChild({
            name: `ref-${run.server}`,
            script: 'bench/procs/ref-sse-server.ts',
            args: [run.server],
            ipc: true,
            cpu: o.pin ? 0 : undefined,
            nofile: 65_536,
          });
          try {
            const port: number = await srv.call('listen');
            r = await holdConnections(clients, srv.pid, port, n, run.oneWorkflow, o.log);
          } finally {
            await srv.stop();
          }
        }
        results.push({ server: run.server, shape: run.shape, ...r });
        o.log(`idle ${run.server} (${run.shape}): ${r.kbPerConnection.toFixed(2)} KB per connection (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
      } catch (err) {
        o.log(`idle ${run.server} (${run.shape}): FAILED: ${(err as Error).message}`);
        results.push({
          server: run.server,
          shape: run.shape,
          connections: 0,
          rssBeforeKb: NaN,
          rssAfterKb: NaN,
          kbPerConnection: NaN,
          connectSeconds: NaN,
          foreignPct: NaN,
          error: (err as Error).message,
        });
      }
    }
  } finally {
    await clients.stop();
  }
  const names = { gateway: 'gateway (service)', uws: 'bare uWS', http: 'node:http' };
  const mb = (kb: number) => (Number.isFinite(kb) ? (kb / 1024).toFixed(1) : 'n/a');
  const report =
    table(
      `Idle SSE connections (measured)`,
      ['server', 'connections', 'RSS before MB', 'RSS after MB', 'KB / connection', `target < ${TARGET_KB} KB`, 'connect s', 'other %'],
      results.map((r) =>
        r.error
          ? [names[r.server], r.shape, 'FAILED', r.error.split('\n')[0].slice(0, 60), '', '', '', '']
          : [
              names[r.server],
              r.shape,
              mb(r.rssBeforeKb),
              mb(r.rssAfterKb),
              r.kbPerConnection.toFixed(2),
              r.server === 'gateway' ? verdict(r.kbPerConnection < TARGET_KB) : 'reference',
              r.connectSeconds.toFixed(1),
              String(r.foreignPct),
            ],
      ),
      [
        `RSS of the server process from /proc (median of 5 samples): after a warm-up of 200 connections, and 2 s after the last of the connections answered.`,
        `gateway = the service with ROLES=gateway,orchestrator; "workflows x 1" = one SSE stream per workflow (one upstream NATS subscription and feed each).`,
        `RSS includes heap and allocator slack: a process that already holds free heap (the service after start-up) absorbs part of the growth, so differences of ~1 KB per connection are within noise; kernel socket buffers are not in RSS.`,
        ...results.filter((r) => r.note).map((r) => `${names[r.server]} (${r.shape}): ${r.note}`),
      ],
    ) + '\n';
  return { results, report };
}
