/**
 * Benchmark: a thousand live streams.
 *
 * 1,000 concurrent standard tasks whose model streams 50 tokens/s, one SSE client per task,
 * every piece in its own process: the paced model server (procs/paced-model.ts, OpenAI-
 * compatible), the service (`ROLES=all`, one process as a newcomer runs it, on CPU 0) and the
 * clients (procs/live-clients.ts, on CPU 1). Submissions are spread over 1.5 s; each task's
 * model call streams long enough (250 tokens, 5 s) for all of them to overlap. Measured:
 * submission latency while streams run, every token delivered in order, the delay from a
 * token's production to the client reading it, delta events/s, how many streams ran at once
 * (clients) and how many completions streamed at once (model), exact resumes with
 * Last-Event-ID (every 20th stream drops and reconnects), CPU of each process.
 * Reference, same run, same client process: a node:http server (procs/ref-live-server.ts,
 * on CPU 0) producing the same token streams itself with the same 50 ms coalescing.
 * Floor, same run: a node:http relay (procs/ref-relay-server.ts, on CPU 0) reading each stream
 * from the same paced model and writing it with the same coalescing, and nothing else: what
 * the two ends of the service's hot path cost by themselves on one core.
 *
 * WORKER_CONCURRENCY is the service's default unless `workerConcurrency` is given (then the
 * report says so): whether the default lets 1,000 tasks run at once is part of the measure.
 */
import type { LiveRun } from './procs/live-clients.js';
import { startService, type Nats, type Pg, type Service } from './lib/infra.js';
import { ROOT, spawnChild } from './lib/proc.js';
import { join } from 'node:path';
import { mainProfile, profArgs, profileTables, type ProfileSummary } from './lib/cpuprofile.js';
import { fmtInt, fmtRatio, table, verdict } from './lib/report.js';
import { LoadWindow, TreeCpuWindow, findPostmaster, waitQuiet } from './lib/sysload.js';

const SPREAD_MS = 1500;
const RESUME_EVERY = 20;
const RESUME_AT = 0.4;
const NOFILE = 20_000;

export interface LiveResults {
  streams: number;
  tokensPerStream: number;
  workerConcurrency: string;
  service: LiveRun;
  reference: LiveRun;
  floor: LiveRun;
  model: { started: number; finished: number; peakOpen: number; maxTickLagMs: number; paths: Record<string, number> };
  cpuPct: { service: Record<string, number>; reference: Record<string, number>; floor: Record<string, number> };
  foreignPct: { service: number; reference: number; floor: number };
  profile?: ProfileSummary;
  targets: { submitP99: boolean; deltaP99: boolean; eventsRatio: boolean; allDelivered: boolean; allAtOnce: boolean; resumesExact: boolean };
}

export async function runLive(o: {
  nats: Nats;
  pg: Pg;
  pin: boolean;
  quick: boolean;
  workerConcurrency?: number;
  /** Streams at once (default 1,000, the target's). */
  streams?: number;
  profile: boolean;
  log: (s: string) => void;
}): Promise<{ results: LiveResults; report: string }> {
  const profileDir = o.profile ? join(ROOT, 'bench', 'results', 'profiles') : undefined;
  const n = o.streams ?? 1000;
  const tokens = o.quick ? 100 : 250;
  const timeoutMs = SPREAD_MS + tokens * 20 + 60_000;
  const args = { host: '127.0.0.1', n, spreadMs: SPREAD_MS, tokens, resumeEvery: RESUME_EVERY, resumeAt: RESUME_AT, timeoutMs };
  const postmaster = findPostmaster();

  const model = spawnChild({ name: 'paced-model', script: 'bench/procs/paced-model.ts', ipc: true, nofile: NOFILE });
  const clients = spawnChild({ name: 'live-clients', script: 'bench/procs/live-clients.ts', ipc: true, cpu: o.pin ? 1 : undefined, nofile: NOFILE });
  clients.on('progress', (p: { ended: number; live: number; peakLive: number; tokens: number; submitted: number }) =>
    o.log(`  ${p.submitted} submitted, ${p.live} streams live (peak ${p.peakLive}), ${p.ended} ended, ${fmtInt(p.tokens)} tokens`),
  );
  let svc: Service | undefined;
  try {
    const modelPort: number = await model.call('listen', { tokens });
    const env: Record<string, string> = { LLM_BASE_URL: `http://127.0.0.1:${modelPort}/v1`, LLM_API_KEY: 'bench' };
    if (o.workerConcurrency) env.WORKER_CONCURRENCY = String(o.workerConcurrency);
    svc = await startService({
      roles: 'all',
      natsUrl: o.nats.url,
      dbUrl: await o.pg.database('bench_live'),
      cpu: o.pin ? 0 : undefined,
      nofile: NOFILE,
      env,
      nodeArgs: profArgs(profileDir, 'service-live'),
    });

    o.log('live: warm-up (20 streams)');
    const warm: LiveRun = await clients.call('run', { ...args, port: svc.port, mode: 'service', n: 20, spreadMs: 200, resumeEvery: 0 }, timeoutMs + 10_000);
    if (warm.completed < warm.n)
      o.log(`  warm-up: ${warm.completed}/${warm.n} streams completed; ${[...Object.keys(warm.submitErrors), ...warm.errors].slice(0, 3).join('; ')}`);
    await model.call('reset');

    o.log(`live: ${n} standard tasks over ${SPREAD_MS / 1000} s, ${tokens} tokens each at 50 tokens/s`);
    await waitQuiet(15, 8_000, o.log);
    let lw = new LoadWindow();
    let cpu = new TreeCpuWindow({ service: svc.proc.pid, clients: clients.pid, model: model.pid, nats: o.nats.pid, postgres: postmaster });
    const service: LiveRun = await clients.call('run', { ...args, port: svc.port, mode: 'service' }, timeoutMs + 10_000);
    const svcCpu = cpu.stop();
    const svcForeign = lw.stop().foreignPct;
    const modelStats: LiveResults['model'] = await model.call('stats');
    o.log(`  service: ${service.completed}/${n} streams completed, ${service.lost} lost`);
    await svc.stop();
    svc = undefined;
    const profile = mainProfile(profileDir, 'service-live');

    o.log('live: floor (node:http relaying the same model streams)');
    await model.call('reset');
    const relay = spawnChild({ name: 'ref-relay', script: 'bench/procs/ref-relay-server.ts', ipc: true, cpu: o.pin ? 0 : undefined, nofile: NOFILE });
    const relayPort: number = await relay.call('listen', { modelPort });
    await waitQuiet(15, 8_000, o.log);
    lw = new LoadWindow();
    cpu = new TreeCpuWindow({ relay: relay.pid, clients: clients.pid, model: model.pid });
    let floor: LiveRun;
    let floorCpu: Record<string, number>;
    try {
      floor = await clients.call('run', { ...args, port: relayPort, mode: 'ref', resumeEvery: 0 }, timeoutMs + 10_000);
      floorCpu = cpu.stop();
    } finally {
      await relay.stop();
    }
    const floorForeign = lw.stop().foreignPct;
    await model.stop();

    o.log('live: reference (node:http writing the same streams)');
    const ref = spawnChild({ name: 'ref-live', script: 'bench/procs/ref-live-server.ts', ipc: true, cpu: o.pin ? 0 : undefined, nofile: NOFILE });
    const refPort: number = await ref.call('listen', { tokens });
    await waitQuiet(15, 8_000, o.log);
    lw = new LoadWindow();
    cpu = new TreeCpuWindow({ server: ref.pid, clients: clients.pid });
    const reference: LiveRun = await clients.call('run', { ...args, port: refPort, mode: 'ref', resumeEvery: 0 }, timeoutMs + 10_000);
    const refCpu = cpu.stop();
    const refForeign = lw.stop().foreignPct;
    await ref.stop();

    const sl = service.deltaLatencyUs;
    const targets = {
      submitP99: (service.submitLatencyUs?.p99 ?? Infinity) < 100_000,
      deltaP99: sl.p99 < 250_000,
      eventsRatio: service.eventsPerSecond / reference.eventsPerSecond >= 0.9,
      allDelivered: service.tokensDelivered === service.tokensExpected && service.orderViolations === 0,
      allAtOnce: service.peakLive >= n && modelStats.peakOpen >= n,
      resumesExact: service.resumes.attempted > 0 && service.resumes.exact === service.resumes.attempted,
    };
    const results: LiveResults = {
      streams: n,
      tokensPerStream: tokens,
      workerConcurrency: o.workerConcurrency ? `${o.workerConcurrency} (set by --worker-concurrency)` : 'service default',
      service,
      reference,
      floor,
      model: modelStats,
      cpuPct: { service: svcCpu, reference: refCpu, floor: floorCpu },
      foreignPct: { service: svcForeign, reference: refForeign, floor: floorForeign },
      targets,
      ...(profile ? { profile } : {}),
    };
    return { results, report: report(results) + (profile ? profileTables('live streams, ROLES=all', profile) : '') };
  } finally {
    await svc?.stop();
    await model.stop();
    await clients.stop();
  }
}

const ms = (us: number | undefined) => (us === undefined || !Number.isFinite(us) ? 'n/a' : (us / 1000).toFixed(1));

function report(r: LiveResults): string {
  const s = r.service;
  const f = r.reference;
  const t = r.targets;
  const sl = s.deltaLatencyUs;
  const fl = f.deltaLatencyUs;
  const cpu = (c: Record<string, number>) =>
    Object.entries(c)
      .map(([k, v]) => `${k} ${v}%`)
      .join(', ');
  const r3 = r.floor;
  const l3 = r3.deltaLatencyUs;
  const p5099 = (h: LiveRun['openLatencyUs'] | undefined) => `${ms(h?.p50)} / ${ms(h?.p99)}`;
  const rows: (string | number)[][] = [
    ['tasks accepted / submitted', `${fmtInt(s.submitted)} / ${fmtInt(s.n)}`, '', '', '', ''],
    ['streams completed (every token, then event: done)', fmtInt(s.completed), fmtInt(f.completed), fmtInt(r3.completed), '', ''],
    ['streams lost (not ended in time, errors)', fmtInt(s.lost), fmtInt(f.lost), fmtInt(r3.lost), '', ''],
    [
      'tokens delivered / expected',
      `${fmtInt(s.tokensDelivered)} / ${fmtInt(s.tokensExpected)}`,
      `${fmtInt(f.tokensDelivered)} / ${fmtInt(f.tokensExpected)}`,
      `${fmtInt(r3.tokensDelivered)} / ${fmtInt(r3.tokensExpected)}`,
      '',
      `all: ${verdict(t.allDelivered)}`,
    ],
    ['order violations (gap or repeat)', fmtInt(s.orderViolations), fmtInt(f.orderViolations), fmtInt(r3.orderViolations), '', ''],
    ['peak streams live at once (clients)', fmtInt(s.peakLive), fmtInt(f.peakLive), fmtInt(r3.peakLive), '', `${fmtInt(r.streams)}: ${verdict(t.allAtOnce)}`],
    ['peak completions streaming at once (model)', fmtInt(r.model.peakOpen), '', '', '', ''],
    ['submission latency p50 / p99 (ms)', p5099(s.submitLatencyUs), '', '', '', `p99 < 100: ${verdict(t.submitP99)}`],
    ['stream open: request to headers p50 / p99 (ms)', p5099(s.openLatencyUs), p5099(f.openLatencyUs), p5099(r3.openLatencyUs), '', ''],
    ['delta latency p50 (ms)', ms(sl.p50), ms(fl.p50), ms(l3.p50), fmtRatio(sl.p50 / fl.p50), ''],
    ['delta latency p99 (ms)', ms(sl.p99), ms(fl.p99), ms(l3.p99), fmtRatio(sl.p99 / fl.p99), `< 250: ${verdict(t.deltaP99)}`],
    ['delta latency max (ms)', ms(sl.max), ms(fl.max), ms(l3.max), fmtRatio(sl.max / fl.max), ''],
    [
      'delta events/s',
      fmtInt(s.eventsPerSecond),
      fmtInt(f.eventsPerSecond),
      `${fmtInt(r3.eventsPerSecond)} (${fmtRatio(r3.eventsPerSecond / f.eventsPerSecond)})`,
      fmtRatio(s.eventsPerSecond / f.eventsPerSecond),
      `>= 0.9x: ${verdict(t.eventsRatio)}`,
    ],
    ['resumes exact / attempted', `${s.resumes.exact} / ${s.resumes.attempted}`, '', '', '', `all: ${verdict(t.resumesExact)}`],
    ['resume failures (gap, repeat or lost after reconnecting)', fmtInt(s.resumes.attempted - s.resumes.exact), '', '', '', ''],
    ['CPU % of one core', cpu(r.cpuPct.service), cpu(r.cpuPct.reference), cpu(r.cpuPct.floor), '', ''],
  ];
  const notes = [
    `WORKER_CONCURRENCY: ${r.workerConcurrency}. Model: ${r.model.started} completions started, ${r.model.finished} finished; its 20 ms ticker ran up to ${r.model.maxTickLagMs} ms late; requests: ${Object.entries(
      r.model.paths,
    )
      .map(([k, v]) => `${k} x${v}`)
      .join(', ')}.`,
    'delta latency: from the model producing a token (its text carries the time) to the client reading the event with it, oldest token of each event; replayed deltas after a resume are not timed.',
    `events/s: delta events over the time from the first submission (reference, floor: first connection) to the last stream end. Other processes used ${r.foreignPct.service}% / ${r.foreignPct.reference}% / ${r.foreignPct.floor}% of a core meanwhile.`,
    'floor: a node:http relay reading each stream from the same paced model and writing it with the same 50 ms coalescing (no NATS, database or runtime), on the same core as the service: what reading and writing the streams cost by themselves. Its ratio is to the reference.',
    "stream open: the client's GET of the stream to its response headers (service: after the submission was answered).",
  ];
  for (const [e, k] of Object.entries(s.submitErrors)) notes.push(`service rejected ${k} submissions: ${e}`);
  for (const e of s.errors.slice(0, 5)) notes.push(`service failure: ${e}`);
  for (const v of s.violationSamples.slice(0, 3)) notes.push(`order violation: ${v}`);
  for (const e of f.errors.slice(0, 3)) notes.push(`reference failure: ${e}`);
  for (const e of r3.errors.slice(0, 3)) notes.push(`floor failure: ${e}`);
  return (
    table(
      `${fmtInt(r.streams)} live streams: standard tasks, model at 50 tokens/s (${r.tokensPerStream} tokens each), one SSE client per task`,
      ['measure', 'service (ROLES=all)', 'node:http (reference)', 'node:http relay (floor)', 'ratio', 'target'],
      rows,
      notes,
    ) + '\n'
  );
}
