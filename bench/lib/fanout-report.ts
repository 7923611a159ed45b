/**
 * The fan-out benchmark's result shapes, and how a shape's results become ratios, targets and
 * the printed table (bench/fanout.ts measures; this file only reads what it measured).
 */
import type { ProfileSummary } from './cpuprofile.js';
import type { Percentiles } from './hist.js';
import { fmtInt, fmtMs, fmtPct, fmtRatio, table, verdict } from './report.js';

/** Events per write of the references' like-for-like batching. */
export const BURST = 10;
/** The matched ramp's limit: a rate counts as like-for-like while writes stay this small. */
export const RAMP_MAX_EVENTS_PER_WRITE = 12;

export interface FanoutShape {
  name: string;
  workflows: number;
  perWorkflow: number;
  sampleEvery: number;
  /** Flow-control window of the real path's publisher, events per workflow. */
  window: number;
  /** Delivered events/s of the fixed-rate latency phase (the same for every server). */
  latencyRate: number;
}

export interface Phase {
  eventsPerSec: number;
  latencyUs: Percentiles;
  /** Real path only: publish -> a plain core NATS subscriber in the client process. */
  natsHopUs?: Percentiles;
  eventsPerWrite: number;
  cpuPct: Record<string, number>;
  foreignPct: number;
  machineBusyPct: number;
  droppedClients: number;
  /** Events the slowest client got in the window / the average client's. */
  slowestClientShare: number;
  seconds: number;
}

export interface RampStep {
  offeredEventsPerSec: number;
  phase: Phase;
  ok: boolean;
}

export interface ServerResult {
  server: 'gateway' | 'uws' | 'http';
  /** Saturation by batching: for the gateway the key is 'adaptive'. */
  saturation: { batching: string; phase: Phase }[];
  /** Gateway only: highest fixed rate sustained with about 10 events per write. */
  matched?: { offeredEventsPerSec: number; phase: Phase; ramp: RampStep[] };
  fixedRate?: { offeredEventsPerSec: number; phase: Phase };
  connectMs: number;
  serverRssKb?: number;
  publisher?: { published: number; acked: number; failed: number; lastError?: string };
  /** Gateway only: did every client receive exactly the published events? */
  delivery?: string;
  profile?: ProfileSummary;
  error?: string;
}

export interface ShapeResult {
  shape: FanoutShape;
  frameBytes: number;
  results: ServerResult[];
  ratios: Record<string, number | undefined>;
  targets?: { target: string; matched: string; saturation: string; metMatched?: boolean; metSaturation?: boolean }[];
}

export function summarize(shape: FanoutShape, frameBytes: number, results: ServerResult[]): ShapeResult {
  const get = (s: string) => results.find((r) => r.server === s && !r.error);
  const real = get('gateway');
  const sat = (r: ServerResult | undefined, b: string) => r?.saturation.find((x) => x.batching === b)?.phase.eventsPerSec;
  const adaptiveB = real ? String(Math.max(BURST, Math.round(real.saturation[0].phase.eventsPerWrite))) : '';
  const realMatched = real?.matched?.phase.eventsPerSec;
  const realSat = real?.saturation[0]?.phase.eventsPerSec;
  const div = (a?: number, b?: number) => (a !== undefined && b ? a / b : undefined);
  const ratios = {
    matchedVsCeiling: div(realMatched, sat(get('uws'), String(BURST))),
    matchedVsNodeHttp: div(realMatched, sat(get('http'), String(BURST))),
    saturationVsCeilingSameBatch: div(realSat, sat(get('uws'), adaptiveB)),
    saturationVsNodeHttpSameBatch: div(realSat, sat(get('http'), adaptiveB)),
    saturationVsCeiling10: div(realSat, sat(get('uws'), String(BURST))),
    saturationVsNodeHttp10: div(realSat, sat(get('http'), String(BURST))),
  };
  const sr: ShapeResult = { shape, frameBytes, results, ratios };
  if (shape.name === '1x1000' && real) {
    const p99 = real.fixedRate?.phase.latencyUs.p99;
    sr.targets = [
      {
        target: '>= 1,000,000 events/s delivered',
        matched: fmtInt(realMatched),
        saturation: fmtInt(realSat),
        metMatched: realMatched === undefined ? undefined : realMatched >= 1_000_000,
        metSaturation: realSat === undefined ? undefined : realSat >= 1_000_000,
      },
      {
        target: '>= 70% of the bare-uWS ceiling',
        matched: fmtPct(ratios.matchedVsCeiling),
        saturation: fmtPct(ratios.saturationVsCeilingSameBatch),
        metMatched: ratios.matchedVsCeiling === undefined ? undefined : ratios.matchedVsCeiling >= 0.7,
        metSaturation: ratios.saturationVsCeilingSameBatch === undefined ? undefined : ratios.saturationVsCeilingSameBatch >= 0.7,
      },
      {
        target: '>= 1.5x node:http',
        matched: fmtRatio(ratios.matchedVsNodeHttp),
        saturation: fmtRatio(ratios.saturationVsNodeHttpSameBatch),
        metMatched: ratios.matchedVsNodeHttp === undefined ? undefined : ratios.matchedVsNodeHttp >= 1.5,
        metSaturation: ratios.saturationVsNodeHttpSameBatch === undefined ? undefined : ratios.saturationVsNodeHttpSameBatch >= 1.5,
      },
      {
        target: 'p99 publish-to-client < 10 ms (fixed rate)',
        matched: `${fmtMs(p99)} ms at ${fmtInt(real.fixedRate?.offeredEventsPerSec)}/s`,
        saturation: `${fmtMs(real.saturation[0].phase.latencyUs.p99)} ms (closed loop)`,
        metMatched: p99 === undefined ? undefined : p99 < 10_000,
        metSaturation: undefined,
      },
    ];
  }
  return sr;
}

const NAMES: Record<string, string> = { gateway: 'real path (NATS -> gateway)', uws: 'ceiling: bare uWS', http: 'node:http' };

export function formatShape(sr: ShapeResult): string {
  const { shape } = sr;
  const real = sr.results.find((r) => r.server === 'gateway' && !r.error);
  const thr: (string | number)[][] = [];
  const serverCpu = (p: Phase) => p.cpuPct.gateway ?? p.cpuPct.server;
  const perCore = (p: Phase) => p.eventsPerSec / Math.max(0.01, serverCpu(p) / 100);
  const extra = (p: Phase) => (p.cpuPct.publisher !== undefined ? ` (pub ${p.cpuPct.publisher}, nats ${p.cpuPct.nats})` : '');
  const row = (name: string, how: string, p: Phase, base?: Phase, label = '') =>
    thr.push([
      name,
      how,
      `${fmtInt(p.eventsPerSec)}${p.cpuPct.clients >= 90 ? ' (c)' : ''}`,
      p.eventsPerWrite.toFixed(1),
      `${serverCpu(p)}`,
      fmtInt(perCore(p)),
      `${p.cpuPct.clients}${extra(p)}`,
      base ? `${fmtRatio(base.eventsPerSec / p.eventsPerSec)} ${label}` : '',
      base ? fmtRatio(perCore(base) / perCore(p)) : '',
      `${fmtMs(p.latencyUs.p50)}/${fmtMs(p.latencyUs.p99)}`,
      `${p.foreignPct}`,
      String(p.droppedClients),
    ]);
  for (const r of sr.results) {
    if (r.error) {
      thr.push([NAMES[r.server], 'FAILED', r.error.split('\n')[0].slice(0, 60), '', '', '', '', '', '', '', '', '']);
      continue;
    }
    if (r.server === 'gateway') {
      row(NAMES.gateway, 'saturation (closed loop)', r.saturation[0].phase);
      if (r.matched) row(NAMES.gateway, `fixed ${fmtInt(r.matched.offeredEventsPerSec)}/s`, r.matched.phase);
      else thr.push([NAMES.gateway, `no ramp rate at <= ${RAMP_MAX_EVENTS_PER_WRITE} ev/write`, '', '', '', '', '', '', '', '', '', '']);
    } else {
      for (const s of r.saturation) {
        const ten = s.batching === String(BURST);
        const base = ten ? real?.matched?.phase : real?.saturation[0].phase;
        row(NAMES[r.server], `saturation, ${s.batching} ev/write`, s.phase, base, ten ? '(m)' : '(s)');
      }
    }
  }
  let s = table(
    `Fan-out ${shape.name}: ${shape.workflows} workflow(s) x ${shape.perWorkflow} SSE clients — throughput (measured)`,
    [
      'server',
      'load',
      'events/s',
      'ev/write',
      'server CPU %',
      'ev/s per server core',
      'client CPU %',
      'real / this',
      'per core',
      'p50/p99 ms',
      'other %',
      'drops',
    ],
    thr,
    [
      `events/s = SSE event frames received by all clients per second; frame = ${sr.frameBytes} bytes (an LLM_PARTIAL event as the gateway encodes it).`,
      `real path, saturation: closed loop, the publisher stays <= ${shape.window} events per workflow ahead of the slowest client; the gateway coalesces what arrives in one event-loop turn.`,
      `real path, fixed: the highest rate of a ramp (x1.25 steps) at which the gateway still wrote <= ${RAMP_MAX_EVENTS_PER_WRITE} events per write with >= 95% delivered (publisher: bursts of ${BURST} per workflow).`,
      `references: one write of N pre-encoded frames per client per event-loop turn while the client drains; N = ${BURST}, and N = the real path's saturation batching.`,
      `real / this: (s) real saturation row / this row, same batching; (m) real fixed row / this row at ${BURST} ev/write. "per core" compares events/s per server CPU core instead.`,
      `CPU % of one core over the window; the server under test is pinned to CPU 0, the clients to CPU 1; publisher (pub) and nats-server are unpinned and take CPU from both.`,
      `(c) = the client process used >= 90% of its core: the figure is (close to) the clients' limit, a lower bound for the server; compare "per core" then.`,
      `ev/write = event frames per HTTP chunk on sampled connections; other % = CPU used meanwhile by processes outside this benchmark.`,
    ],
  );
  const lat = sr.results
    .filter((r) => !r.error && r.fixedRate)
    .flatMap((r) => {
      const p = r.fixedRate!.phase;
      const rows = [
        [
          NAMES[r.server],
          fmtInt(r.fixedRate!.offeredEventsPerSec),
          fmtInt(p.eventsPerSec),
          p.eventsPerWrite.toFixed(1),
          fmtMs(p.latencyUs.p50),
          fmtMs(p.latencyUs.p99),
          fmtMs(p.latencyUs.max),
          fmtInt(p.latencyUs.count),
          `${p.foreignPct}`,
        ],
      ];
      const h = p.natsHopUs;
      if (h) rows.push(['  of which: NATS hop alone (core sub)', '', '', '', fmtMs(h.p50), fmtMs(h.p99), fmtMs(h.max), fmtInt(h.count), '']);
      return rows;
    });
  s += table(
    `Fan-out ${shape.name} — publish-to-client latency at a fixed rate (measured)`,
    ['server', 'offered ev/s', 'delivered ev/s', 'ev/write', 'p50 ms', 'p99 ms', 'max ms', 'samples', 'other %'],
    lat,
    [
      `the same moderate offered rate for every server (${fmtInt(shape.latencyRate)} events/s for this shape unless --latency-rate); real path: the publisher publishes bursts of ${BURST} per workflow; references write ${BURST} frames per write.`,
      `latency = client receive time - publish time (real: before js.publish; references: before the write), CLOCK_MONOTONIC, every ${shape.sampleEvery}th connection.`,
      `NATS hop alone = the same events received by a plain core NATS subscription (svc.events.>) in the (idle) bench runner: the part of the real path before the gateway.`,
    ],
  );
  if (real?.matched) {
    s += table(
      `Fan-out ${shape.name} — real path rate ramp`,
      ['offered ev/s', 'delivered ev/s', 'ev/write', 'p50 ms', 'p99 ms', 'gateway CPU %', 'other %', 'sustained'],
      real.matched.ramp.map((st) => [
        fmtInt(st.offeredEventsPerSec),
        fmtInt(st.phase.eventsPerSec),
        st.phase.eventsPerWrite.toFixed(1),
        fmtMs(st.phase.latencyUs.p50),
        fmtMs(st.phase.latencyUs.p99),
        `${st.phase.cpuPct.gateway}`,
        `${st.phase.foreignPct}`,
        st.ok ? 'yes' : 'no',
      ]),
    );
  }
  if (sr.targets) {
    s += table(
      `Targets, fan-out ${shape.name} (real path)`,
      ['target', 'like-for-like (10 ev/write)', 'verdict', 'saturation (adaptive batching)', 'verdict'],
      sr.targets.map((t) => [t.target, t.matched, verdict(t.metMatched), t.saturation, verdict(t.metSaturation)]),
    );
  }
  if (real) {
    const p = real.saturation[0].phase;
    if ((p.cpuPct.gateway ?? 0) < 70) {
      s += `\n  note: at saturation the gateway used only ${p.cpuPct.gateway}% of its core; the limit was elsewhere (publisher ${p.cpuPct.publisher}%, nats-server ${p.cpuPct.nats}%, clients ${p.cpuPct.clients}% of a core; machine ${p.machineBusyPct}% busy).`;
      if (shape.perWorkflow < 100)
        s += `\n  Each published event reaches only ${shape.perWorkflow} clients here, so publishing (js.publish) and JetStream do most of the work per delivered event.`;
    }
  }
  if (real?.delivery) s += `\n  delivery check (real path, whole run): ${real.delivery}.`;
  if (real?.publisher?.failed) s += `\n  publisher: ${real.publisher.failed} publishes failed (${real.publisher.lastError}).`;
  if (real?.profile) {
    s += table(
      `Gateway CPU profile, fan-out ${shape.name} (self time over the process's life; figures above include profiler overhead)`,
      ['area', 'self ms', '% of busy'],
      real.profile.byArea.slice(0, 10).map((a) => [a.area, fmtInt(a.selfMs), `${a.pctOfBusy}%`]),
      [`profile: ${real.profile.file}`],
    );
    s += table(
      `Gateway hottest functions, fan-out ${shape.name}`,
      ['function', 'where', 'self ms', '% of busy'],
      real.profile.topFunctions.map((f) => [f.fn, f.where || f.area, fmtInt(f.selfMs), `${f.pctOfBusy}%`]),
    );
  }
  return s + '\n';
}
