/**
 * The drill's report: the counts that must be zero (any one not zero fails the drill, so that
 * CI fails on a loss), the time from each kind of fault to full service, the client-visible
 * errors by kind, and for a soak the per-minute RSS and latency; as tables on stdout and as
 * JSON (bench/results/drill.json; drill-short.json for --short, drill-soak.json for a soak).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { table } from '../../bench/lib/report.js';
import { allowedError, quantile, type ErrorBook } from './checks.js';
import type { DaemonTally } from './daemons.js';
import type { FaultKind, FaultRecord } from './faults.js';
import type { ScheduleTally } from './schedule.js';
import type { SoakVerdict } from './soak.js';
import type { StreamTally } from './streams.js';
import type { TaskVerdict } from './tasks.js';

export interface DrillFacts {
  form: 'short' | 'long' | 'soak';
  replicas: 1 | 3;
  startedAt: string;
  seconds: number;
  rates: Record<string, number | string>;
  /** 1-minute load average at the start, at the end and the highest seen. */
  load: { start: number; end: number; max: number };
  tasks: TaskVerdict;
  sse: StreamTally;
  ws: StreamTally;
  daemons: DaemonTally;
  schedule: ScheduleTally;
  faults: FaultRecord[];
  errors: ErrorBook;
  probeErrors: ErrorBook;
  soak?: SoakVerdict;
  /** Set when the watchdog ended the run early. */
  watchdog?: string;
}

const s1 = (ms: number | undefined) => (ms === undefined || !Number.isFinite(ms) ? 'n/a' : (ms / 1000).toFixed(1));

export function mustBeZero(f: DrillFacts): [string, number][] {
  return [
    ['tasks acknowledged but not completed', f.tasks.acknowledged - f.tasks.completed],
    ['tasks failed (terminal, not COMPLETED)', f.tasks.failed.length],
    ['SSE follows with a gap', f.sse.followsWithGap],
    ['SSE follows with a duplicate', f.sse.followsWithDuplicate],
    ['WebSocket follows with a gap', f.ws.followsWithGap],
    ['WebSocket follows with a duplicate', f.ws.followsWithDuplicate],
    ['streams that never reached STREAM_END', f.sse.unended.length + f.ws.unended.length],
    ['daemon claims granted twice', f.daemons.doubleGrants],
    ['daemon messages never answered', f.daemons.unanswered],
    ['schedule minutes fired twice', f.schedule.twice],
    ['schedule minutes missed', f.schedule.missed],
    ['schedule runs failed', f.schedule.failed],
    ['client errors other than 503 + Retry-After (500s, hangs, ...)', f.errors.bad()],
    ['faults without full service again', f.faults.filter((r) => r.toFullServiceMs === undefined).length],
    ['drill ended by its watchdog', f.watchdog ? 1 : 0],
  ];
}

function faultRows(records: FaultRecord[]): (string | number)[][] {
  const kinds = [...new Set(records.map((r) => r.kind))] as FaultKind[];
  const row = (label: string, rs: FaultRecord[]) => {
    const ms = rs.map((r) => r.toFullServiceMs).filter((x): x is number => x !== undefined);
    const restart = rs.map((r) => r.restartMs).filter((x): x is number => x !== undefined);
    return [label, rs.length, s1(quantile(ms, 0.5)), s1(quantile(ms, 0.99)), s1(Math.max(...ms)), s1(quantile(restart, 0.5)), rs.length - ms.length];
  };
  return [
    ...kinds.map((k) =>
      row(
        k,
        records.filter((r) => r.kind === k),
      ),
    ),
    row('all', records),
  ];
}

export function render(f: DrillFacts): string {
  const zero = mustBeZero(f);
  const out: string[] = [];
  out.push(
    table(
      `Fault drill (${f.form}, R${f.replicas}): ${Math.round(f.seconds)} s, load average ${f.load.start.toFixed(1)} at the start, ${f.load.end.toFixed(1)} at the end, max ${f.load.max.toFixed(1)}`,
      ['count', 'value', 'must be'],
      [
        ['tasks acknowledged', f.tasks.acknowledged, ''],
        ['tasks completed', f.tasks.completed, `${f.tasks.acknowledged}`],
        ['submissions given up unacknowledged', f.tasks.abandoned, ''],
        ['SSE follows / ended / resumes', `${f.sse.follows} / ${f.sse.ended} / ${f.sse.resumes}`, ''],
        ['WebSocket follows / ended / resumes', `${f.ws.follows} / ${f.ws.ended} / ${f.ws.resumes}`, ''],
        ['daemon messages dispatched / answered', `${f.daemons.dispatched} / ${f.daemons.answered}`, ''],
        ['daemon re-grants after the holder lost its gateway', f.daemons.regrantsAfterLostHolder, ''],
        ['daemon replies posted twice (posting is at least once)', f.daemons.answeredTwice, ''],
        ['schedule minutes judged / runs', `${f.schedule.boundaries} / ${f.schedule.runs}`, ''],
        ...zero.map(([k, v]) => [k, v, '0']),
      ],
      [
        ...f.daemons.doubleGrantExamples.map((x) => `double grant: ${x}`),
        ...f.sse.unended.slice(0, 10).map((x) => `SSE follow never ended: ${x}`),
        ...f.ws.unended.slice(0, 10).map((x) => `WebSocket follow never ended: ${x}`),
        ...f.tasks.failed.slice(0, 10).map((x) => `task failed: ${x.id} ${x.status} ${x.error}`),
        ...f.tasks.unfinished.slice(0, 10).map((x) => `task not finished: ${x}`),
        ...f.schedule.missedAt.map((x) => `schedule minute missed: ${x}`),
        `rates: ${Object.entries(f.rates)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}`,
      ],
    ),
  );
  if (f.faults.length)
    out.push(
      table(
        'Time from a fault to full service (s): every member ready and a probe task through each gateway completed',
        ['fault', 'n', 'p50', 'p99', 'max', 'restart p50', 'not back'],
        faultRows(f.faults),
        [
          "Counted from the kill (for the freeze: from the release); includes the supervisor's 1-2 s before the restart.",
          ...f.faults
            .filter((r) => r.servedWhileFrozenMs !== undefined || r.kind === 'freeze nats')
            .map(
              (r) =>
                `freeze of ${r.member}: both gateways served a probe task ${r.servedWhileFrozenMs !== undefined ? `${s1(r.servedWhileFrozenMs)} s after the SIGSTOP` : 'NOT during the freeze'}`,
            ),
        ],
      ),
    );
  const errRows = [...f.errors.counts]
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => [k, v, allowedError(k) ? 'allowed' : 'NOT allowed', (f.errors.examples.get(k) ?? [])[0] ?? '']);
  out.push(
    table('Client-visible errors by kind', ['kind', 'count', 'verdict', 'first example'], errRows.length ? errRows : [['none', 0, '', '']], [
      '`refused`: nothing listened (a load balancer fails over; the drill does so at once); `cut`: the process died mid-request (retried,',
      "with the same Idempotency-Key for a submission); a hang is no complete answer within the limit. Probe errors (the drill's own): " +
        ([...f.probeErrors.counts].map(([k, v]) => `${k} ${v}`).join(', ') || 'none'),
    ]),
  );
  if (f.soak) {
    const names = Object.keys(f.soak.rss);
    out.push(
      table(
        'Soak: RSS (MB) of every member and the p99 submission latency, per minute',
        ['minute', 'load', 'p99 submit ms', ...names],
        f.soak.minutes.map((m) => [m.minute, m.load1.toFixed(1), m.submitP99Ms?.toFixed(0) ?? '', ...names.map((n) => m.rssMb[n]!.toFixed(0))]),
        [
          `first third -> last third (first minute left out): p99 ${f.soak.p99.firstMs.toFixed(0)} -> ${f.soak.p99.lastMs.toFixed(0)} ms${f.soak.p99.grows ? ' GROWS' : ''}; ` +
            names
              .map((n) => `${n} ${f.soak!.rss[n]!.firstMb.toFixed(0)} -> ${f.soak!.rss[n]!.lastMb.toFixed(0)}${f.soak!.rss[n]!.grows ? ' GROWS' : ''}`)
              .join(', '),
          f.soak.anythingGrows
            ? 'Something grows: see the marked columns.'
            : 'Nothing grows beyond the limits (RSS 15%, p99 50% between the first and last third).',
        ],
      ),
    );
  }
  const bad = zero.filter(([, v]) => v !== 0);
  out.push('', bad.length ? `DRILL FAILED: ${bad.map(([k, v]) => `${k} = ${v}`).join('; ')}` : 'Drill passed: every must-be-zero count is zero.');
  return out.join('\n') + '\n';
}

export function writeJson(path: string, f: DrillFacts): void {
  const zero = mustBeZero(f);
  const doc = {
    ...f,
    tasks: { ...f.tasks, failed: f.tasks.failed.slice(0, 50), unfinished: f.tasks.unfinished.slice(0, 50) },
    sse: { ...f.sse, unended: f.sse.unended.slice(0, 50) },
    ws: { ...f.ws, unended: f.ws.unended.slice(0, 50) },
    errors: Object.fromEntries(f.errors.counts),
    errorExamples: Object.fromEntries(f.errors.examples),
    probeErrors: Object.fromEntries(f.probeErrors.counts),
    mustBeZero: Object.fromEntries(zero),
    passed: zero.every(([, v]) => v === 0),
  };
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, JSON.stringify(doc, null, 2) + '\n');
}
