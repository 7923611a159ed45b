/**
 * `npm run bench [-- <benchmark>... ] [--profile] [--no-pin] [--quick] [--latency-rate=N] [--worker-concurrency=N]`
 *
 * Benchmarks: fanout (fanout:1x1000, fanout:100x10), idle, intake, agents, live, openai, claims, waits, swarm, rss, console, scale.
 * Default: all of them but scale, which runs only when named (it starts two clusters; its figures
 * also go to bench/results/scale.json); console measures its page loads only where a headless
 * Chromium is found (otherwise it measures the bundle and prints a skip line).
 * Prints a table per benchmark (measured figures, the references measured in the same run,
 * ratios, and stated references clearly labelled) and writes everything as JSON to
 * bench/results/latest.json. Traffic goes to 127.0.0.1 only; every phase is bounded in time
 * and the whole run is stopped by a watchdog. See bench/README.md.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { SHAPES, runFanout } from './fanout.js';
import { runIdle } from './idle.js';
import { runIntake } from './intake.js';
import { runAgents } from './agents.js';
import { runLive } from './live.js';
import { runClaims } from './claims.js';
import { runOpenAi } from './openai.js';
import { runWaits } from './waits.js';
import { runSwarm } from './swarm.js';
import { runRss } from './rss.js';
import { runConsole } from './console.js';
import { runScale } from './scale.js';
import { startNats, startPg, type Pg } from './lib/infra.js';
import { ROOT, TASKSET, killAll, killAllSync } from './lib/proc.js';

const WATCHDOG_MS = 15 * 60 * 1000;

interface Args {
  fanoutShapes: string[];
  idle: boolean;
  intake: boolean;
  agents: boolean;
  live: boolean;
  openai: boolean;
  claims: boolean;
  waits: boolean;
  swarm: boolean;
  rss: boolean;
  /** Page loads skipped (with a line saying so) where no headless Chromium is found. */
  console: boolean;
  /** Only when named: it starts two clusters of its own. */
  scale: boolean;
  profile: boolean;
  pin: boolean;
  quick: boolean;
  latencyRate?: number;
  /** live only: WORKER_CONCURRENCY for the service (default: the service's own). */
  workerConcurrency?: number;
  /** live only: streams at once (default 1,000). */
  liveStreams?: number;
  servers: ('gateway' | 'uws' | 'http')[];
  rawPublish: boolean;
}

function parseArgs(argv: string[]): Args {
  const names = argv.filter((a) => !a.startsWith('--'));
  const flags = argv.filter((a) => a.startsWith('--'));
  const known = [
    'fanout',
    'idle',
    'intake',
    'agents',
    'live',
    'openai',
    'claims',
    'waits',
    'swarm',
    'rss',
    'console',
    'scale',
    ...SHAPES.map((s) => `fanout:${s.name}`),
  ];
  for (const n of names) if (!known.includes(n)) throw new Error(`unknown benchmark ${JSON.stringify(n)}; known: ${known.join(', ')}`);
  const all = names.length === 0;
  const fanoutShapes = all || names.includes('fanout') ? SHAPES.map((s) => s.name) : names.filter((n) => n.startsWith('fanout:')).map((n) => n.slice(7));
  const a: Args = {
    fanoutShapes,
    idle: all || names.includes('idle'),
    intake: all || names.includes('intake'),
    agents: all || names.includes('agents'),
    live: all || names.includes('live'),
    claims: all || names.includes('claims'),
    waits: all || names.includes('waits'),
    swarm: all || names.includes('swarm'),
    rss: all || names.includes('rss'),
    console: all || names.includes('console'),
    openai: all || names.includes('openai'),
    scale: names.includes('scale'),
    profile: false,
    pin: true,
    quick: false,
    servers: ['gateway', 'uws', 'http'],
    rawPublish: false,
  };
  for (const f of flags) {
    const [k, v] = f.split('=');
    if (k === '--profile') a.profile = true;
    else if (k === '--no-pin') a.pin = false;
    else if (k === '--quick') a.quick = true;
    else if (k === '--latency-rate') a.latencyRate = Number(v);
    else if (k === '--worker-concurrency') a.workerConcurrency = Number(v);
    else if (k === '--streams') a.liveStreams = Number(v);
    else if (k === '--servers') a.servers = v.split(',') as Args['servers'];
    else if (k === '--publish') {
      if (v !== 'raw' && v !== 'js') throw new Error('--publish must be js or raw');
      a.rawPublish = v === 'raw';
    } else
      throw new Error(
        `unknown flag ${f}; known: --profile --no-pin --quick --latency-rate=<events/s> --worker-concurrency=<n> --streams=<n> --servers=gateway,uws,http --publish=js|raw`,
      );
  }
  return a;
}

function sh(cmd: string, args: string[]): string {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  } catch {
    return 'unknown';
  }
}

const log = (s: string) => process.stderr.write(`[bench] ${s}\n`);

/** Throwaway servers (nats-server, PostgreSQL) to stop however the run ends. */
const servers = new Set<{ stop(): Promise<void> }>();

async function emergencyStop(code: number): Promise<never> {
  killAllSync();
  await Promise.race([Promise.all([...servers].map((s) => s.stop().catch(() => {}))), new Promise((r) => setTimeout(r, 8000))]);
  process.exit(code);
}

async function withNats<T>(fn: (nats: Awaited<ReturnType<typeof startNats>>) => Promise<T>): Promise<T> {
  const nats = await startNats();
  servers.add(nats);
  try {
    return await fn(nats);
  } finally {
    await nats.stop();
    servers.delete(nats);
  }
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const started = Date.now();
  const watchdog = setTimeout(() => {
    log(`watchdog: the run took longer than ${WATCHDOG_MS / 60000} minutes; stopping everything`);
    void emergencyStop(3);
  }, WATCHDOG_MS);
  watchdog.unref();
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.on(sig, () => {
      log(`${sig}: stopping child processes`);
      void emergencyStop(130);
    });
  }

  const pin = args.pin && !!TASKSET && cpus().length >= 2;
  if (args.pin && !pin) log('not pinning processes to CPUs (taskset missing or fewer than 2 CPUs)');
  const warmMs = args.quick ? 700 : 1500;
  const measureMs = args.quick ? 1500 : 3000;

  const meta = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: `${cpus().length} x ${cpus()[0]?.model ?? 'unknown'}`,
    memoryGiB: +(totalmem() / 2 ** 30).toFixed(1),
    natsServer: sh('nats-server', ['--version']).replace(/^nats-server:\s*/, '') || 'unknown',
    postgres: '',
    commit: sh('git', ['-C', ROOT, 'rev-parse', '--short', 'HEAD']),
    dirty: sh('git', ['-C', ROOT, 'status', '--porcelain', '--', 'src']) !== '',
    args: process.argv.slice(2),
    pinned: pin ? 'server under test on CPU 0, SSE client process on CPU 1 (taskset); nats-server, publisher and runner unpinned' : 'no',
    clock: 'latencies use CLOCK_MONOTONIC (process.hrtime), shared by all processes on the machine',
    warmMs,
    measureMs,
  };
  const results: Record<string, unknown> = { meta };

  let pg: Pg | undefined;
  try {
    log('starting PostgreSQL (throwaway server)');
    pg = await startPg();
    servers.add(pg);
    meta.postgres = pg.version;

    const db = pg;
    if (args.fanoutShapes.length) {
      const r = await withNats((nats) =>
        runFanout({
          nats,
          pg: db,
          pin,
          profile: args.profile,
          warmMs,
          measureMs,
          latencyRate: args.latencyRate,
          shapes: args.fanoutShapes,
          servers: args.servers,
          rawPublish: args.rawPublish,
          log,
        }),
      );
      results.fanout = r.shapes;
      process.stdout.write(r.report);
    }
    if (args.idle) {
      const r = await withNats((nats) => runIdle({ nats, pg: db, pin, quick: args.quick, log }));
      results.idle = r.results;
      process.stdout.write(r.report);
    }
    if (args.intake) {
      const r = await withNats((nats) => runIntake({ nats, pg: db, quick: args.quick, profile: args.profile, log }));
      results.intake = r.results;
      process.stdout.write(r.report);
    }
    if (args.agents) {
      const r = await withNats((nats) => runAgents({ nats, pg: db, quick: args.quick, log }));
      results.agents = r.results;
      process.stdout.write(r.report);
    }
    if (args.live) {
      const r = await withNats((nats) =>
        runLive({ nats, pg: db, pin, quick: args.quick, workerConcurrency: args.workerConcurrency, streams: args.liveStreams, profile: args.profile, log }),
      );
      results.live = r.results;
      process.stdout.write(r.report);
    }
    if (args.openai) {
      const r = await withNats((nats) => runOpenAi({ nats, pg: db, quick: args.quick, log }));
      results.openai = r.results;
      process.stdout.write(r.report);
    }
    if (args.claims) {
      const r = await withNats((nats) => runClaims({ nats, pg: db, quick: args.quick, log }));
      results.claims = r.results;
      process.stdout.write(r.report);
    }
    if (args.waits) {
      const r = await withNats((nats) => runWaits({ nats, pg: db, quick: args.quick, log }));
      results.waits = r.results;
      process.stdout.write(r.report);
    }
    if (args.swarm) {
      const r = await withNats((nats) => runSwarm({ nats, pg: db, quick: args.quick, log }));
      results.swarm = r.results;
      process.stdout.write(r.report);
    }
    if (args.rss) {
      // The embedded defaults bring their own nats-server and database.
      const r = await runRss({ quick: args.quick, log });
      results.rss = r.results;
      process.stdout.write(r.report);
    }
    if (args.console) {
      // The embedded defaults again, and a headless Chromium.
      const r = await runConsole({ quick: args.quick, log });
      results.console = r.results;
      process.stdout.write(r.report);
    }
    if (args.scale) {
      // Its own clusters (3 nats-servers, PostgreSQL, 6 service processes each), R1 then R3.
      const r = await runScale({ quick: args.quick, log });
      results.scale = r.results;
      writeFileSync(join(ROOT, 'bench', 'results', 'scale.json'), JSON.stringify({ meta, scale: r.results }, null, 2) + '\n');
      process.stdout.write(r.report);
    }
  } finally {
    await killAll();
    await pg?.stop().catch(() => {});
    if (pg) servers.delete(pg);
    (meta as Record<string, unknown>).totalSeconds = +((Date.now() - started) / 1000).toFixed(1);
    const dir = join(ROOT, 'bench', 'results');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'latest.json'), JSON.stringify(results, null, 2) + '\n');
    log(`done in ${((Date.now() - started) / 1000).toFixed(0)} s; results: bench/results/latest.json`);
    clearTimeout(watchdog);
  }
}

main().catch(async (err) => {
  log(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  await emergencyStop(1);
});
