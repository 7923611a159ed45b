/**
 * Benchmark: what another process buys, on the cluster of `npm run cluster` (deploy/cluster/:
 * 3 nats-servers, PostgreSQL, 2 gateways, the orchestrator, 3 workers), once with every stream
 * and bucket on one replica and once on three, so that the cost of replication is a column.
 *
 * 1. Workers: completed tasks/s with 1, 2 and 3 workers. The model has a fixed latency (the
 *    paced model server answering every call, streamed or not, after 200 ms: two calculator
 *    calls, then the answer, so 3 model turns a standard task) and each worker runs at most
 *    WORKER_CONCURRENCY=2 tasks at once, so that a worker's slots, not the CPU, are the unit: a
 *    worker can finish about 2 / (3 x 200 ms) = 3.3 tasks a second. Load: a closed loop keeping
 *    3 x 3 x 2 standard tasks outstanding through both gateways (the queue
 *    never runs dry), completions read from PostgreSQL. Target: >= 1.8x at 2 workers, >= 2.5x
 *    at 3. The machine's CPU use is in the table: where it nears 100% the CPU, not the design,
 *    is what stops the next worker.
 * 2. SSE fan-out through 2 gateways against 1 at the same load: 10 workflows x 100 clients
 *    (procs/sse-clients.ts), events published to JetStream as workers do (procs/publisher.ts),
 *    closed loop (the publisher stays a bounded window ahead of the slowest client): delivered
 *    events/s and the publish-to-client p99, all clients on gateway 1, then half on each.
 * 3. Daemon claims through 2 gateways against 1: 10 daemons on `/v1/ws/messages` (all on
 *    gateway 1, then 5 on each), signed platform_a webhooks through the same gateways with 16
 *    messages kept between webhook and grant (lib/daemon-load.ts); every daemon claims every
 *    message, the one granted replies. Messages granted/s, claim answers/s, webhook-to-grant
 *    p99, and that no message was granted twice.
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { startCluster, type Cluster } from '../deploy/cluster/index.js';
import { CpuWindow, sleep, spawnChild, waitUntil, type ChildProc } from './lib/proc.js';
import { fmtInt, fmtMs, fmtRatio, table, verdict } from './lib/report.js';
import { TaskLoad } from './lib/task-load.js';
import { DaemonLoad } from './lib/daemon-load.js';
import { daemonEnv, startPlatform } from '../deploy/drill/daemons.js';
import type { Percentiles } from './lib/hist.js';

const MODEL_MS = 200;
const TICK_MS = 20;
const WORKER_CONCURRENCY = 2;
/** Model turns a task: two calculator calls, then the answer. */
const TURNS = 3;
const OUTSTANDING = 3 * 3 * WORKER_CONCURRENCY;
const FANOUT = { workflows: 10, perWorkflow: 100, burst: 10, window: 200 };
const SSE_PATH = '/api/v1/stream/sse?workflow_id=';
const CLAIMS = { daemons: 10, inflight: 16 };

export interface WorkerStep {
  workers: number;
  tasksPerSec: number;
  failed: number;
  modelCallsPerTask: number;
  machineBusyPct: number;
  cpuPct: Record<string, number>;
  errors: Record<string, number>;
}

export interface FanoutStep {
  gateways: number;
  eventsPerSec: number;
  latencyUs: Percentiles;
  droppedClients: number;
  machineBusyPct: number;
  cpuPct: Record<string, number>;
}

export interface ClaimsStep {
  gateways: number;
  messagesPerSec: number;
  claimAnswersPerSec: number;
  latencyUs: Percentiles;
  grantedTwice: number;
  errors: Record<string, number>;
  machineBusyPct: number;
  cpuPct: Record<string, number>;
}

export interface ScaleRun {
  replicas: 1 | 3;
  workers: WorkerStep[];
  fanout: FanoutStep[];
  claims: ClaimsStep[];
}

export interface ScaleResults {
  modelMs: number;
  workerConcurrency: number;
  outstanding: number;
  runs: ScaleRun[];
  targets: { twoWorkers: boolean; threeWorkers: boolean };
}

/** Each service process's pid by member name, for the CPU columns. */
function pids(c: Cluster): Record<string, number | undefined> {
  return Object.fromEntries(c.members.map((m) => [m.name, m.pid]));
}

async function measureWorkers(c: Cluster, model: ChildProc, n: number, quick: boolean, log: (s: string) => void): Promise<WorkerStep> {
  const sql = postgres(c.databaseUrl, { max: 2, onnotice: () => {} });
  const load = new TaskLoad(sql, c.gateways, (i) => ({ query: `scale ${randomUUID()} ${i}: summarise the plan`, mode: 'standard' }));
  try {
    load.start(OUTSTANDING);
    await sleep(quick ? 3000 : 5000);
    await model.call('reset');
    const cpu = new CpuWindow(pids(c));
    const w = await load.window(0, quick ? 8000 : 15000);
    const used = cpu.stop();
    const stats: { paths: Record<string, number> } = await model.call('stats');
    const calls = stats.paths['POST /v1/chat/completions'] ?? 0;
    const step: WorkerStep = {
      workers: n,
      tasksPerSec: w.completed / w.seconds,
      failed: w.failed,
      modelCallsPerTask: w.completed ? calls / w.completed : NaN,
      machineBusyPct: used.machineBusyPct,
      cpuPct: used.perProcess,
      errors: w.errors,
    };
    log(
      `  ${n} worker(s): ${step.tasksPerSec.toFixed(1)} tasks/s, ${step.modelCallsPerTask.toFixed(1)} model calls a task, machine ${step.machineBusyPct}% busy`,
    );
    return step;
  } finally {
    await load.stop();
    await sql.end({ timeout: 2 });
  }
}

async function measureFanout(
  c: Cluster,
  clients: ChildProc,
  publisher: ChildProc,
  gateways: number,
  quick: boolean,
  log: (s: string) => void,
): Promise<FanoutStep> {
  const workflows = Array.from({ length: FANOUT.workflows }, () => randomUUID());
  await publisher.call('setup', { workflows, burst: FANOUT.burst, window: FANOUT.window });
  const ports = c.gateways.slice(0, gateways).map((g) => Number(new URL(g).port));
  const r = await clients.call(
    'open',
    {
      host: '127.0.0.1',
      port: ports[0],
      ports,
      path: SSE_PATH,
      workflows,
      perWorkflow: FANOUT.perWorkflow,
      sampleEvery: 10,
      concurrency: 200,
      timeoutMs: 10_000,
    },
    60_000,
  );
  if (r.failed) throw new Error(`${r.failed} SSE connections failed: ${r.errors.join('; ')}`);
  try {
    await sleep(300);
    await clients.call('progress', { on: true, intervalMs: 5 });
    await publisher.call('saturate');
    await sleep(quick ? 1000 : 1500);
    const a = await clients.call('snapshot');
    await clients.call('histReset');
    const cpu = new CpuWindow({ ...pids(c), clients: clients.pid, publisher: publisher.pid });
    await sleep(quick ? 2000 : 4000);
    const b = await clients.call('snapshot');
    const latencyUs: Percentiles = await clients.call('histGet');
    const used = cpu.stop();
    await clients.call('progress', { on: false });
    await publisher.call('stop');
    const step: FanoutStep = {
      gateways,
      eventsPerSec: (b.totalFrames - a.totalFrames) / ((b.tUs - a.tUs) / 1e6),
      latencyUs,
      droppedClients: b.ended,
      machineBusyPct: used.machineBusyPct,
      cpuPct: used.perProcess,
    };
    log(`  ${gateways} gateway(s): ${fmtInt(step.eventsPerSec)} events/s delivered, p99 ${fmtMs(latencyUs.p99)} ms, machine ${step.machineBusyPct}% busy`);
    return step;
  } finally {
    await clients.call('closeAll').catch(() => {});
  }
}

async function measureClaims(c: Cluster, gateways: number, quick: boolean, log: (s: string) => void): Promise<ClaimsStep> {
  const load = new DaemonLoad(c.gateways.slice(0, gateways), CLAIMS.daemons);
  try {
    await load.open();
    load.start(CLAIMS.inflight);
    const cpu = new CpuWindow(pids(c));
    const w = await load.window(quick ? 1000 : 2000, quick ? 3000 : 6000);
    const used = cpu.stop();
    const step: ClaimsStep = {
      gateways,
      messagesPerSec: w.messagesPerSec,
      claimAnswersPerSec: w.claimAnswersPerSec,
      latencyUs: w.latencyUs,
      grantedTwice: w.grantedTwice,
      errors: w.errors,
      machineBusyPct: used.machineBusyPct,
      cpuPct: used.perProcess,
    };
    log(
      `  ${gateways} gateway(s): ${fmtInt(step.messagesPerSec)} messages granted/s, ${fmtInt(step.claimAnswersPerSec)} claim answers/s, p99 ${fmtMs(w.latencyUs.p99)} ms, machine ${step.machineBusyPct}% busy`,
    );
    return step;
  } finally {
    await load.stop();
  }
}

async function runOne(replicas: 1 | 3, quick: boolean, log: (s: string) => void): Promise<ScaleRun> {
  const dir = await mkdtemp(join(tmpdir(), `bench-cluster-r${replicas}-`));
  await chmod(dir, 0o755); // PostgreSQL runs as its own user when this is root: it must reach its folder
  const model = spawnChild({ name: 'fixed-model', script: 'bench/procs/paced-model.ts', ipc: true, nofile: 20_000 });
  const clients = spawnChild({ name: 'sse-clients', script: 'bench/procs/sse-clients.ts', ipc: true, nofile: 20_000 });
  const publisher = spawnChild({ name: 'publisher', script: 'bench/procs/publisher.ts', ipc: true });
  const platform = await startPlatform();
  clients.on('progress', (mins) => publisher.send('progress', mins));
  let cluster: Cluster | undefined;
  try {
    const modelPort: number = await model.call('listen', { tokens: MODEL_MS / TICK_MS, paceAll: true, toolTurns: TURNS - 1 });
    log(`scale: starting the cluster with ${replicas} replica(s)`);
    cluster = await startCluster({
      dir,
      replicas,
      gateways: 2,
      workers: 3,
      // Away from `npm run cluster`'s default block, so that a cluster someone runs does not collide.
      basePort: 24200,
      env: {
        LLM_BASE_URL: `http://127.0.0.1:${modelPort}/v1`,
        LLM_API_KEY: 'bench',
        WORKER_CONCURRENCY: String(WORKER_CONCURRENCY),
        GATEWAY_SKIP_AUTH: '1',
        ENABLE_CACHE: '0',
        RATE_LIMIT_REQUESTS: '100000000',
        MAX_TOKENS_PER_REQUEST: '0',
        MAX_COST_PER_REQUEST: '0',
        LOG_LEVEL: 'warn',
        ...daemonEnv(platform.url),
      },
    });
    const c = cluster;
    await publisher.call('connect', { url: c.natsUrl });

    // Workers: 1, then 2, then 3.
    const spare = c.members.filter((m) => m.kind === 'worker').slice(1);
    await Promise.all(spare.map((m) => m.stop()));
    const workers: WorkerStep[] = [];
    workers.push(await measureWorkers(c, model, 1, quick, log));
    for (const [i, m] of spare.entries()) {
      await m.start();
      workers.push(await measureWorkers(c, model, i + 2, quick, log));
    }
    await waitUntil(async () => (await Promise.all(c.members.map((m) => m.ready()))).every(Boolean), 30_000, 200, 'every member ready');

    const fanout = [await measureFanout(c, clients, publisher, 1, quick, log), await measureFanout(c, clients, publisher, 2, quick, log)];
    const claims = [await measureClaims(c, 1, quick, log), await measureClaims(c, 2, quick, log)];
    return { replicas, workers, fanout, claims };
  } finally {
    await cluster?.stop();
    await Promise.all([model.stop(), clients.stop(), publisher.stop(), platform.close()]);
    await rm(dir, { recursive: true, force: true });
  }
}

export async function runScale(o: { quick: boolean; log: (s: string) => void }): Promise<{ results: ScaleResults; report: string }> {
  const runs: ScaleRun[] = [];
  for (const replicas of [1, 3] as const) runs.push(await runOne(replicas, o.quick, o.log));
  const r3 = runs.find((r) => r.replicas === 3)!;
  const ratio = (run: ScaleRun, n: number) => run.workers[n - 1].tasksPerSec / run.workers[0].tasksPerSec;
  const results: ScaleResults = {
    modelMs: MODEL_MS,
    workerConcurrency: WORKER_CONCURRENCY,
    outstanding: OUTSTANDING,
    runs,
    targets: { twoWorkers: ratio(r3, 2) >= 1.8, threeWorkers: ratio(r3, 3) >= 2.5 },
  };
  return { results, report: report(results) };
}

/** The R1 then R3 cells of a gateways row: the rate, its ratio to the 1-gateway row, the p99. */
function rateCells<T extends { latencyUs: Percentiles }>(steps: [T, T], firsts: [T, T], rate: (s: T) => number): string[] {
  return steps.flatMap((s, i) => [fmtInt(rate(s)), fmtRatio(rate(s) / rate(firsts[i]!)), fmtMs(s.latencyUs.p99)]);
}

function report(r: ScaleResults): string {
  const [r1, r3] = [r.runs.find((x) => x.replicas === 1)!, r.runs.find((x) => x.replicas === 3)!];
  const workerRows = r1.workers.map((w1, i) => {
    const w3 = r3.workers[i];
    const target = i === 1 ? 1.8 : i === 2 ? 2.5 : undefined;
    const x3 = w3.tasksPerSec / r3.workers[0].tasksPerSec;
    return [
      String(w1.workers),
      w1.tasksPerSec.toFixed(1),
      fmtRatio(w1.tasksPerSec / r1.workers[0].tasksPerSec),
      w3.tasksPerSec.toFixed(1),
      fmtRatio(x3),
      fmtRatio(w3.tasksPerSec / w1.tasksPerSec),
      `${w1.machineBusyPct}% / ${w3.machineBusyPct}%`,
      target ? `>= ${target}x ${verdict(x3 >= target)}` : '',
    ];
  });
  const fanRows = r1.fanout.map((f1, i) => {
    const f3 = r3.fanout[i];
    return [String(f1.gateways), ...rateCells([f1, f3], [r1.fanout[0], r3.fanout[0]], (f) => f.eventsPerSec), `${f1.machineBusyPct}% / ${f3.machineBusyPct}%`];
  });
  const claimRows = r1.claims.map((k1, i) => {
    const k3 = r3.claims[i];
    return [
      String(k1.gateways),
      ...rateCells([k1, k3], [r1.claims[0], r3.claims[0]], (k) => k.messagesPerSec),
      `${k1.grantedTwice} / ${k3.grantedTwice}`,
      `${k1.machineBusyPct}% / ${k3.machineBusyPct}%`,
    ];
  });
  const claimErrors = r.runs.flatMap((x) => x.claims.flatMap((k) => Object.entries(k.errors).map(([e, n]) => `R${x.replicas} ${k.gateways} gw: ${n} x ${e}`)));
  const calls = r3.workers.map((w) => w.modelCallsPerTask.toFixed(1)).join(', ');
  const failed = r.runs.flatMap((x) => x.workers).reduce((a, w) => a + w.failed, 0);
  return (
    table(
      `Scale: completed tasks/s by workers (model ${r.modelMs} ms a call, WORKER_CONCURRENCY=${r.workerConcurrency}, ${r.outstanding} tasks outstanding, standard mode)`,
      ['workers', 'R1 tasks/s', 'R1 vs 1', 'R3 tasks/s', 'R3 vs 1', 'R3 / R1', 'machine busy R1 / R3', 'target (R3)'],
      workerRows,
      [
        `model calls a task (R3): ${calls}; tasks failed in the windows: ${failed}`,
        `a worker holds ${r.workerConcurrency} tasks at once: the ideal is ${r.workerConcurrency} / (calls x ${r.modelMs} ms) tasks/s a worker; the machine has 2 cores for 3 nats-servers, PostgreSQL, 6 service processes and the load`,
      ],
    ) +
    table(
      `Scale: SSE fan-out, ${FANOUT.workflows} workflows x ${FANOUT.perWorkflow} clients, closed loop`,
      ['gateways', 'R1 events/s', 'R1 vs 1', 'R1 p99 ms', 'R3 events/s', 'R3 vs 1', 'R3 p99 ms', 'machine busy R1 / R3'],
      fanRows,
      ['the same clients, publisher and cluster; with 2 gateways half of the clients are on each'],
    ) +
    table(
      `Scale: daemon claims, ${CLAIMS.daemons} daemons each claiming every message, ${CLAIMS.inflight} messages between webhook and grant`,
      ['gateways', 'R1 messages/s', 'R1 vs 1', 'R1 p99 ms', 'R3 messages/s', 'R3 vs 1', 'R3 p99 ms', 'granted twice R1 / R3', 'machine busy R1 / R3'],
      claimRows,
      [
        'p99: webhook sent to the grant at the winning daemon; with 2 gateways half of the daemons and of the webhooks are on each',
        ...(claimErrors.length ? [`webhooks not dispatched: ${claimErrors.join('; ')}`] : []),
      ],
    )
  );
}
