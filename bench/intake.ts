/**
 * Benchmark 3: task intake and end-to-end completion against a real PostgreSQL server.
 *
 * The service runs as one process with ROLES=all and the offline LLM provider; the HTTP load
 * comes from a separate process (keep-alive, 64 requests in flight, `POST /api/v1/tasks`
 * with `{"query": "...", "mode": "simple"}`); this process counts WORKFLOW_COMPLETED events
 * with a core NATS subscription on `svc.events.>`. Phases:
 * 1. warm-up: 300 tasks, all awaited;
 * 2. latency: 50 tasks/s for 10 s (open loop), submit -> WORKFLOW_COMPLETED per task;
 * 3. throughput: 64 in flight for a few seconds; accepted/s over the window after the first
 *    second; then every accepted task is awaited (bounded): completed/s = tasks / (last
 *    completion - first submission), and the rate of completions while intake ran.
 * Then the same intake load against ROLES=gateway,orchestrator (no worker competing for the
 * CPU) and against the reference: a minimal node:http server doing the same per-request work
 * directly (ref-intake-server.ts).
 */
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { mainProfile, profArgs, profileTables, type ProfileSummary } from './lib/cpuprofile.js';
import { percentilesOf, type Percentiles } from './lib/hist.js';
import { nowUs } from './lib/ipc.js';
import { startService, type Nats, type Pg, type Service } from './lib/infra.js';
import { ROOT, spawnChild, waitUntil } from './lib/proc.js';
import { fmtInt, fmtMs, fmtRatio, table, verdict } from './lib/report.js';
import { LoadWindow, TreeCpuWindow, findPostmaster, waitQuiet } from './lib/sysload.js';

const CONCURRENCY = 64;
const LATENCY_RATE = 50;
const COMPLETED = Buffer.from('"type":"WORKFLOW_COMPLETED"');

interface LoadResult {
  t0Us: number;
  sent: number;
  accepted: [string, number, number][];
  statuses: Record<string, number>;
  errors: string[];
  skipped?: number;
}

export interface IntakeResults {
  latency?: {
    ratePerSec: number;
    tasks: number;
    completed: number;
    submitToCompletedUs: Percentiles;
    submitToAcceptedUs: Percentiles;
    statuses: Record<string, number>;
    foreignPct: number;
  };
  throughputAll?: IntakePhase & {
    completedPerSecOverall: number;
    completedPerSecDuringIntake: number;
    completed: number;
    drainSeconds: number;
  };
  intakeGatewayOnly?: IntakePhase;
  intakeReference?: IntakePhase;
  ratios: { gatewayOnlyVsReference?: number; allRolesVsReference?: number };
  statedReference: string;
  profiles: { all?: ProfileSummary; gatewayOnly?: ProfileSummary };
  errors: string[];
}

interface IntakePhase {
  acceptedPerSec: number;
  accepted: number;
  sent: number;
  seconds: number;
  acceptLatencyUs: Percentiles;
  statuses: Record<string, number>;
  cpuPct: Record<string, number>;
  foreignPct: number;
  errors: string[];
}

/** Accepted/s over the window after the first second (answers received in it). */
function intakePhase(r: LoadResult, cpuPct: Record<string, number>, foreignPct: number): IntakePhase {
  const skip = 1e6;
  const answers = r.accepted.map((a) => a[2]).filter((t) => t >= skip);
  const end = Math.max(skip + 1, ...answers);
  return {
    acceptedPerSec: answers.length / ((end - skip) / 1e6),
    accepted: r.accepted.length,
    sent: r.sent,
    seconds: end / 1e6,
    acceptLatencyUs: percentilesOf(r.accepted.map((a) => a[2] - a[1])),
    statuses: r.statuses,
    cpuPct,
    foreignPct,
    errors: r.errors,
  };
}

export async function runIntake(o: {
  nats: Nats;
  pg: Pg;
  quick: boolean;
  profile: boolean;
  log: (s: string) => void;
}): Promise<{ results: IntakeResults; report: string }> {
  const profileDir = o.profile ? join(ROOT, 'bench', 'results', 'profiles') : undefined;
  const results: IntakeResults = {
    ratios: {},
    statedReference: 'Temporal: about 100 ms per workflow (published floor; stated, not measured here)',
    profiles: {},
    errors: [],
  };
  const intakeMs = o.quick ? 2500 : 4000;
  const latencyMs = o.quick ? 5000 : 10_000;
  const db = await o.pg.database('bench_intake');
  const postmaster = findPostmaster();

  const nc = await connect({ servers: o.nats.url, name: 'bench-runner', noAsyncTraces: true });
  const done = new Map<string, number>();
  nc.subscribe('svc.events.>', {
    callback: (_err, m) => {
      if (Buffer.from(m.data.buffer, m.data.byteOffset, m.data.byteLength).indexOf(COMPLETED) >= 0) done.set(m.subject.slice('svc.events.'.length), nowUs());
    },
  });
  await nc.flush();

  const load = spawnChild({ name: 'http-load', script: 'bench/procs/http-load.ts', ipc: true });
  const waitDone = async (ids: string[], timeoutMs: number) => {
    await waitUntil(() => ids.every((id) => done.has(id)), timeoutMs, 50, `${ids.length} tasks to complete`).catch(() => {});
    return ids.filter((id) => done.has(id)).length;
  };
  const closedLoad = async (
    ms: number,
    roots: Record<string, number | undefined>,
  ): Promise<{ r: LoadResult; cpu: Record<string, number>; foreign: number }> => {
    const cpu = new TreeCpuWindow(roots);
    const lw = new LoadWindow();
    const r: LoadResult = await load.call('closed', { concurrency: CONCURRENCY, durationMs: ms }, ms + 60_000);
    return { r, cpu: cpu.stop(), foreign: lw.stop().foreignPct };
  };

  /** Intake-only windows are cheap to repeat: again (twice at most) if others used > 30% of a core. */
  const closedLoadQuiet = async (ms: number, roots: Record<string, number | undefined>) => {
    let best: Awaited<ReturnType<typeof closedLoad>> | undefined;
    for (let i = 0; i < 3 && (!best || best.foreign > 30); i++) {
      if (best) o.log(`  other processes used ${best.foreign}% of a core during the window; measuring again`);
      await waitQuiet(15, 8_000, o.log);
      const r = await closedLoad(ms, roots);
      if (!best || r.foreign < best.foreign) best = r;
    }
    return best!;
  };

  let svc: Service | undefined;
  try {
    // --- ROLES=all: latency and end-to-end throughput ------------------------------------------
    svc = await startService({
      roles: 'all',
      natsUrl: o.nats.url,
      dbUrl: db,
      name: 'service',
      env: { LLM_PROVIDER: 'offline' },
      nodeArgs: profArgs(profileDir, 'service-intake-all'),
    });
    await load.call('init', { host: '127.0.0.1', port: svc.port, path: '/api/v1/tasks', conns: CONCURRENCY });
    const roots = { service: svc.proc.pid, postgres: postmaster, nats: o.nats.pid, load: load.pid };

    o.log('intake: warm-up (300 tasks)');
    const warm: LoadResult = await load.call('closed', { concurrency: CONCURRENCY, count: 300 }, 60_000);
    if (!warm.accepted.length) throw new Error(`no task accepted during warm-up: ${warm.errors.join('; ')}`);
    const warmDone = await waitDone(
      warm.accepted.map((a) => a[0]),
      30_000,
    );
    if (warmDone < warm.accepted.length) o.log(`  only ${warmDone} of ${warm.accepted.length} warm-up tasks completed within 30 s`);

    o.log(`intake: latency at ${LATENCY_RATE} tasks/s for ${latencyMs / 1000} s`);
    // Measured again once if other processes used more than 30% of a core meanwhile.
    for (let attempt = 0; attempt < 2; attempt++) {
      await waitQuiet(15, 8_000, o.log);
      const lw = new LoadWindow();
      const lat: LoadResult = await load.call('rate', { rate: LATENCY_RATE, durationMs: latencyMs }, latencyMs + 60_000);
      const latIds = lat.accepted.map((a) => a[0]);
      const latDone = await waitDone(latIds, 20_000);
      const foreignPct = lw.stop().foreignPct;
      const m = {
        ratePerSec: LATENCY_RATE,
        tasks: lat.accepted.length,
        completed: latDone,
        submitToCompletedUs: percentilesOf(lat.accepted.filter((a) => done.has(a[0])).map((a) => done.get(a[0])! - (lat.t0Us + a[1]))),
        submitToAcceptedUs: percentilesOf(lat.accepted.map((a) => a[2] - a[1])),
        statuses: lat.statuses,
        foreignPct,
      };
      if (!results.latency || m.foreignPct < results.latency.foreignPct) results.latency = m;
      if (results.latency.foreignPct <= 30) break;
      o.log(`  other processes used ${foreignPct}% of a core during the latency phase; measuring again`);
    }

    o.log(`intake: throughput, ${CONCURRENCY} in flight for ${intakeMs / 1000} s (ROLES=all)`);
    await waitQuiet(15, 8_000, o.log);
    const t = await closedLoad(intakeMs, roots);
    const ids = t.r.accepted.map((a) => a[0]);
    const drainStart = Date.now();
    const completed = await waitDone(ids, 60_000);
    const doneTimes = ids.filter((id) => done.has(id)).map((id) => done.get(id)! - t.r.t0Us);
    const lastDone = Math.max(...doneTimes);
    const intakeEnd = Math.max(...t.r.accepted.map((a) => a[2]));
    results.throughputAll = {
      ...intakePhase(t.r, t.cpu, t.foreign),
      completed,
      completedPerSecOverall: completed / (lastDone / 1e6),
      completedPerSecDuringIntake: doneTimes.filter((d) => d >= 1e6 && d <= intakeEnd).length / ((intakeEnd - 1e6) / 1e6),
      drainSeconds: (Date.now() - drainStart) / 1000,
    };
    if (completed < ids.length) o.log(`  only ${completed} of ${ids.length} tasks completed within 60 s`);
    await svc.stop();
    svc = undefined;
    results.profiles.all = mainProfile(profileDir, 'service-intake-all');

    // --- ROLES=gateway,orchestrator: intake alone ---------------------------------------------
    o.log('intake: gateway+orchestrator only (no worker)');
    svc = await startService({
      roles: 'gateway,orchestrator',
      natsUrl: o.nats.url,
      dbUrl: db,
      name: 'gateway',
      nodeArgs: profArgs(profileDir, 'service-intake-gateway'),
    });
    await load.call('init', { host: '127.0.0.1', port: svc.port, path: '/api/v1/tasks', conns: CONCURRENCY });
    await load.call('closed', { concurrency: CONCURRENCY, count: 500 }, 60_000); // warm-up
    const g = await closedLoadQuiet(intakeMs, { service: svc.proc.pid, postgres: postmaster, nats: o.nats.pid, load: load.pid });
    results.intakeGatewayOnly = intakePhase(g.r, g.cpu, g.foreign);
    await svc.stop();
    svc = undefined;
    results.profiles.gatewayOnly = mainProfile(profileDir, 'service-intake-gateway');

    // --- reference: minimal node:http doing the same work per request ---------------------------
    o.log('intake: reference (node:http, one INSERT + js.publish per request)');
    const ref = spawnChild({ name: 'ref-intake', script: 'bench/procs/ref-intake-server.ts', ipc: true });
    try {
      const port: number = await ref.call('listen', { natsUrl: o.nats.url, dbUrl: db });
      await load.call('init', { host: '127.0.0.1', port, path: '/api/v1/tasks', conns: CONCURRENCY });
      await load.call('closed', { concurrency: CONCURRENCY, count: 500 }, 60_000); // warm-up
      const rr = await closedLoadQuiet(intakeMs, { service: ref.pid, postgres: postmaster, nats: o.nats.pid, load: load.pid });
      results.intakeReference = intakePhase(rr.r, rr.cpu, rr.foreign);
    } finally {
      await ref.stop();
    }
  } catch (err) {
    results.errors.push((err as Error).message);
    o.log(`intake: FAILED: ${(err as Error).message}`);
  } finally {
    await svc?.stop();
    await load.stop();
    await nc.close();
  }
  const refRate = results.intakeReference?.acceptedPerSec;
  results.ratios = {
    gatewayOnlyVsReference: refRate && results.intakeGatewayOnly ? results.intakeGatewayOnly.acceptedPerSec / refRate : undefined,
    allRolesVsReference: refRate && results.throughputAll ? results.throughputAll.acceptedPerSec / refRate : undefined,
  };
  return { results, report: format(results, intakeMs) };
}

function format(r: IntakeResults, intakeMs: number): string {
  const cpu = (c?: Record<string, number>) => (c ? `${c.service ?? '?'}/${c.postgres ?? '?'}/${c.nats ?? '?'}/${c.load ?? '?'}` : '');
  const rows: (string | number)[][] = [];
  const t = r.throughputAll;
  if (t) {
    rows.push([
      'service, ROLES=all',
      'accepted / s',
      fmtInt(t.acceptedPerSec),
      '>= 1,000 / s',
      verdict(t.acceptedPerSec >= 1000),
      `${fmtMs(t.acceptLatencyUs.p50)}/${fmtMs(t.acceptLatencyUs.p99)}`,
      cpu(t.cpuPct),
      `${t.foreignPct}`,
    ]);
    rows.push([
      'service, ROLES=all',
      'completed / s (end to end)',
      fmtInt(t.completedPerSecOverall),
      '>= 300 / s',
      verdict(t.completedPerSecOverall >= 300),
      '',
      '',
      '',
    ]);
    rows.push(['service, ROLES=all', 'completed / s while intake ran', fmtInt(t.completedPerSecDuringIntake), '', '', '', '', '']);
  }
  const g = r.intakeGatewayOnly;
  if (g)
    rows.push([
      'service, ROLES=gateway,orchestrator',
      'accepted / s',
      fmtInt(g.acceptedPerSec),
      '>= 1,000 / s',
      verdict(g.acceptedPerSec >= 1000),
      `${fmtMs(g.acceptLatencyUs.p50)}/${fmtMs(g.acceptLatencyUs.p99)}`,
      cpu(g.cpuPct),
      `${g.foreignPct}`,
    ]);
  const f = r.intakeReference;
  if (f)
    rows.push([
      'reference: node:http, INSERT + js.publish',
      'accepted / s',
      fmtInt(f.acceptedPerSec),
      'reference',
      '',
      `${fmtMs(f.acceptLatencyUs.p50)}/${fmtMs(f.acceptLatencyUs.p99)}`,
      cpu(f.cpuPct),
      `${f.foreignPct}`,
    ]);
  const statusNote = (name: string, p?: IntakePhase) => {
    if (!p) return [];
    const bad = Object.entries(p.statuses).filter(([s]) => s !== '200' && s !== '201');
    return bad.length
      ? [`${name}: non-2xx answers ${bad.map(([s, n]) => `${s}: ${n}`).join(', ')}${p.errors.length ? ` (${p.errors[0].slice(0, 120)})` : ''}`]
      : [];
  };
  let s = table(
    'Task intake and completion, real PostgreSQL (measured)',
    ['server', 'figure', 'measured', 'target', 'verdict', 'accept p50/p99 ms', 'CPU % svc/pg/nats/load', 'other %'],
    rows,
    [
      `${CONCURRENCY} keep-alive connections, one request in flight each, for ${intakeMs / 1000} s; accepted/s counts answers after the first second. Processes are not pinned.`,
      `completed / s (end to end) = tasks accepted in that window / (last WORKFLOW_COMPLETED - first submission); every task is awaited (60 s bound).`,
      `ratio accepted/s, service (gateway+orchestrator) / reference: ${fmtRatio(r.ratios.gatewayOnlyVsReference)}; service (ROLES=all, workers running) / reference: ${fmtRatio(r.ratios.allRolesVsReference)}.`,
      ...(t && t.completed < t.accepted ? [`only ${t.completed} of ${t.accepted} accepted tasks completed within the bound.`] : []),
      ...statusNote('ROLES=all', t),
      ...statusNote('gateway+orchestrator', g),
      ...statusNote('reference', f),
      ...r.errors.map((e) => `error: ${e.split('\n')[0]}`),
    ],
  );
  const l = r.latency;
  if (l) {
    s += table(
      `Task latency at a fixed ${l.ratePerSec} tasks/s, submit -> WORKFLOW_COMPLETED (ROLES=all, offline provider)`,
      ['figure', 'p50 ms', 'p99 ms', 'max ms', 'target', 'verdict'],
      [
        [
          'submit -> WORKFLOW_COMPLETED (measured)',
          fmtMs(l.submitToCompletedUs.p50),
          fmtMs(l.submitToCompletedUs.p99),
          fmtMs(l.submitToCompletedUs.max),
          'p50 < 15 ms, p99 < 50 ms',
          verdict(l.submitToCompletedUs.p50 < 15_000 && l.submitToCompletedUs.p99 < 50_000),
        ],
        ['submit -> HTTP answer (measured)', fmtMs(l.submitToAcceptedUs.p50), fmtMs(l.submitToAcceptedUs.p99), fmtMs(l.submitToAcceptedUs.max), '', ''],
        ['Temporal, per workflow (stated, NOT measured here)', '~100', '', '', 'reference', ''],
      ],
      [
        `${l.tasks} tasks submitted over ${l.tasks / l.ratePerSec} s, ${l.completed} completed; time from just before the request is written (load process) to the event's arrival at this process (core NATS subscription), CLOCK_MONOTONIC.`,
        `other processes on the machine used ${l.foreignPct}% of a core meanwhile.`,
        `Temporal figure: its published floor of about 100 ms per workflow, quoted for scale only.`,
      ],
    );
  }
  for (const [name, p] of [
    ['ROLES=all, whole run (warm-up, latency, throughput)', r.profiles.all],
    ['ROLES=gateway,orchestrator, intake', r.profiles.gatewayOnly],
  ] as const) {
    if (p) s += profileTables(name, p);
  }
  return s + '\n';
}
