/**
 * `npm run drill`: the fault drill on a throwaway cluster (deploy/cluster). Under steady mixed
 * load (task submissions, SSE and WebSocket followers resuming at random points, daemons
 * claiming and replying, an every-minute schedule) it kills members and brings them back as a
 * supervisor would, then checks that nothing acknowledged was lost (report.ts).
 *
 *   npm run drill                    long form: >= 10 kills of each kind, a 30 s NATS freeze, a PostgreSQL restart
 *   npm run drill -- --short         CI form: 2 kills of each kind, a 10 s freeze, a PostgreSQL restart (about 5 minutes)
 *   npm run drill -- --soak=10       the same load for 10 minutes without faults: RSS and p99 per minute
 *   npm run drill -- --replicas=1    streams and buckets R1 instead of R3
 *
 * Exit code 0 when every must-be-zero count is zero, 1 when one is not, 2 on a start-up
 * failure, 3 when the watchdog ended the run, 130 on Ctrl-C (143 on SIGTERM). Every member dies with the drill
 * (the cluster is started attached); the cluster's folder is removed unless the drill failed.
 */
import { rmSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { startCluster, type Cluster } from '../cluster/index.js';
import { ErrorBook } from './checks.js';
import { Daemons, daemonEnv, startPlatform } from './daemons.js';
import { faultPlan, Supervisor, type FaultRecord } from './faults.js';
import { Gateways } from './http.js';
import { mustBeZero, render, writeJson, type DrillFacts } from './report.js';
import { MinuteSchedule } from './schedule.js';
import { SoakSampler } from './soak.js';
import { Followers } from './streams.js';
import { Submitter } from './tasks.js';

const ROOT = resolve(fileURLToPath(import.meta.url), '..', '..', '..');

/** The load: light enough for 10 server processes on 2 cores. */
const RATES = {
  submissionsPerSecond: 2,
  /** Of the acknowledged tasks, this share is followed over SSE, and this over the WebSocket stream. */
  followedSse: 0.4,
  followedWs: 0.2,
  daemonMessagesPerSecond: 1,
  daemonsPerGateway: 2,
  /** The offline model streams word by word with this pause (a task's events span a few seconds). */
  offlineChunkDelayMs: 40,
};
/** An attempt with no complete answer within this is a hang. */
const HANG_MS = 20_000;

interface Args {
  form: 'short' | 'long' | 'soak';
  soakMinutes: number;
  replicas: 1 | 3;
}

function parseArgs(argv: string[]): Args {
  const a: Args = { form: 'long', soakMinutes: 0, replicas: 3 };
  for (const arg of argv) {
    const [k, v] = arg.split('=', 2);
    if (k === '--short') a.form = 'short';
    else if (k === '--soak') {
      a.form = 'soak';
      a.soakMinutes = Number(v ?? 10);
      if (!(a.soakMinutes > 0)) throw new Error(`--soak=<minutes>: a positive number, got ${v}`);
    } else if (k === '--replicas') {
      if (v !== '1' && v !== '3') throw new Error(`--replicas: 1 or 3, got ${v}`);
      a.replicas = Number(v) as 1 | 3;
    } else throw new Error(`unknown argument ${arg} (--short, --soak=<minutes>, --replicas=1|3)`);
  }
  return a;
}

const FORMS = {
  short: { killsEach: 2, freezeMs: 10_000, gapMs: 3_000, warmupMs: 10_000, watchdogMs: 9 * 60_000 },
  long: { killsEach: 10, freezeMs: 30_000, gapMs: 15_000, warmupMs: 30_000, watchdogMs: 75 * 60_000 },
};

const log = (s: string) => process.stderr.write(`[drill ${new Date().toISOString().slice(11, 19)}] ${s}\n`);

/** A cluster on a free block of ports (another cluster or benchmark may hold the default one). */
async function clusterOnFreePorts(dir: string, replicas: 1 | 3, env: Record<string, string>): Promise<Cluster> {
  for (let i = 0; ; i++) {
    // Below Linux's ephemeral range (32768-60999), where any outgoing connection may take a member's port.
    const basePort = 20_000 + 100 * Math.floor(Math.random() * 120);
    try {
      return await startCluster({ dir, replicas, env, basePort, detached: false });
    } catch (err) {
      if (i < 5 && /ports already in use/.test((err as Error).message)) continue;
      throw err;
    }
  }
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  const form = args.form === 'soak' ? FORMS.short : FORMS[args.form];
  const watchdogMs = args.form === 'soak' ? (args.soakMinutes + 8) * 60_000 : form.watchdogMs;
  const dir = await mkdtemp(join(tmpdir(), 'taskorch-drill-'));
  // PostgreSQL runs as its own user when the drill runs as root: it must reach its folder inside.
  await chmod(dir, 0o755);
  const errors = new ErrorBook();
  const probeErrors = new ErrorBook();
  const platform = await startPlatform();
  let cluster: Cluster | undefined;
  let sup: Supervisor | undefined;
  let followers: Followers | undefined;
  let daemons: Daemons | undefined;
  let gws: Gateways[] = [];
  let finished = false;

  // Everything the drill started ends here, whatever ends the drill.
  const teardown = async () => {
    sup?.release();
    followers?.abort();
    daemons?.abort();
    gws.forEach((g) => (g.stopping = true));
    await cluster?.stop().catch((err: Error) => log(`stopping the cluster: ${err.message}`));
    await platform.close();
  };
  const bail = (code: number, why: string) => {
    if (finished) return;
    finished = true;
    log(why);
    // A last resort if a clean stop hangs: the members are attached and die with us.
    setTimeout(() => process.exit(code), 60_000).unref();
    void teardown().finally(() => process.exit(code));
  };
  process.once('SIGINT', () => {
    // Ctrl-C leaves nothing behind, the cluster's folder included.
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    bail(130, 'interrupted: stopping the cluster');
  });
  process.once('SIGTERM', () => bail(143, 'terminated: stopping the cluster'));
  const watchdog = setTimeout(() => bail(3, `WATCHDOG: the drill ran past ${watchdogMs / 60_000} minutes; stopping (cluster folder ${dir})`), watchdogMs);

  const t0 = Date.now();
  const load = { start: loadavg()[0]!, end: 0, max: loadavg()[0]! };
  const loadTimer = setInterval(() => (load.max = Math.max(load.max, loadavg()[0]!)), 5000);
  loadTimer.unref();
  log(`starting a cluster (R${args.replicas}) in ${dir}`);
  try {
    cluster = await clusterOnFreePorts(dir, args.replicas, {
      ...daemonEnv(platform.url),
      OFFLINE_LLM_CHUNK_DELAY_MS: String(RATES.offlineChunkDelayMs),
      SCHEDULE_MIN_INTERVAL_MINS: '1',
      RATE_LIMIT_REQUESTS: '1000000',
      PASSWORD_SCRYPT_N: '1024',
      LOG_LEVEL: 'warn',
    });
  } catch (err) {
    log(`the cluster did not start: ${(err as Error).message}\n(its folder, with any logs: ${dir})`);
    await platform.close();
    return 2;
  }
  process.stderr.write(cluster.table() + '\n');

  try {
    const gw = new Gateways(cluster.gateways, errors, HANG_MS);
    const probeGw = new Gateways(cluster.gateways, probeErrors, HANG_MS);
    gws = [gw, probeGw];
    const reg = await gw.request('/api/v1/auth/register', {
      method: 'POST',
      body: { email: `drill-${Date.now()}@example.com`, password: 'drill-password-1' },
      what: 'register',
    });
    if (reg?.status !== 201) throw new Error(`registering the drill's user: ${reg?.status} ${JSON.stringify(reg?.body)}`);
    const headers = { 'X-API-Key': String(reg.body.api_key) };

    followers = new Followers(gw, headers);
    const f = followers;
    const submitter = new Submitter(gw, headers, RATES.submissionsPerSecond, (id) => {
      const r = Math.random();
      if (r < RATES.followedSse) f.follow(id, 'sse');
      else if (r < RATES.followedSse + RATES.followedWs) f.follow(id, 'ws');
    });
    sup = new Supervisor(cluster, new Submitter(probeGw, headers, 1, () => {}), form.freezeMs, log);
    daemons = new Daemons(gw, headers, platform.posts, RATES.daemonMessagesPerSecond, RATES.daemonsPerGateway);
    const schedule = new MinuteSchedule(gw, headers);
    await schedule.create();
    await daemons.start();
    submitter.start();
    log(`load running: ${JSON.stringify(RATES)}`);

    const faults: FaultRecord[] = [];
    let sampler: SoakSampler | undefined;
    if (args.form === 'soak') {
      sampler = new SoakSampler(cluster);
      sampler.start();
      await sleep(args.soakMinutes * 60_000 + 1000);
      sampler.stop();
    } else {
      await sleep(form.warmupMs);
      const plan = faultPlan(form.killsEach);
      for (const [i, kind] of plan.entries()) {
        if (finished) break;
        log(`${i + 1}/${plan.length}`);
        faults.push(await sup.inject(kind));
        await sleep(form.gapMs);
      }
    }

    log('load stopping; waiting for the streams, the daemons and the tasks to finish');
    await submitter.stop();
    log('submissions stopped; the streams and the daemons finishing');
    await Promise.all([followers.finish(90_000), daemons.finish(60_000)]);
    log(`reading ${submitter.acked.length} acknowledged tasks back`);
    const tasks = await submitter.verify(120_000);
    log('reading the schedule runs');
    const scheduleTally = await schedule.verdict();
    load.end = loadavg()[0]!;
    const facts: DrillFacts = {
      form: args.form,
      replicas: args.replicas,
      startedAt: new Date(t0).toISOString(),
      seconds: (Date.now() - t0) / 1000,
      rates: { ...RATES, hangSeconds: HANG_MS / 1000 },
      load,
      tasks,
      sse: followers.tally('sse'),
      ws: followers.tally('ws'),
      daemons: daemons.tally(),
      schedule: scheduleTally,
      faults,
      errors,
      probeErrors,
      soak: sampler?.verdict(submitter.latencyByMinute),
    };
    if (finished) return 3;
    finished = true;
    clearTimeout(watchdog);
    process.stdout.write(render(facts));
    const out = join(ROOT, 'bench', 'results', args.form === 'soak' ? 'drill-soak.json' : args.form === 'short' ? 'drill-short.json' : 'drill.json');
    writeJson(out, facts);
    const passed = mustBeZero(facts).every(([, v]) => v === 0);
    log(`report in ${out}; stopping the cluster`);
    await teardown();
    if (passed) await rm(dir, { recursive: true, force: true });
    else log(`the cluster's logs are kept in ${join(dir, 'logs')}`);
    return passed ? 0 : 1;
  } catch (err) {
    if (finished) return 3;
    finished = true;
    log(`drill error: ${(err as Error).stack ?? (err as Error).message}`);
    await teardown();
    log(`the cluster's logs are kept in ${join(dir, 'logs')}`);
    return 2;
  }
}

main().then(
  (code) => process.exit(code),
  (err: Error) => {
    log(`drill error: ${err.stack ?? err.message}`);
    process.exit(2);
  },
);
