/** Summarises a V8 .cpuprofile (from node --cpu-prof): self time by function and by area. */
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './proc.js';
import { fmtInt, table } from './report.js';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

export interface ProfileSummary {
  file: string;
  sampledMs: number;
  busyMs: number;
  byArea: { area: string; selfMs: number; pctOfBusy: number }[];
  topFunctions: { fn: string; where: string; area: string; selfMs: number; pctOfBusy: number }[];
}

function rel(url: string): string {
  let u = url.replace(/^file:\/\//, '');
  if (u.startsWith(ROOT)) u = u.slice(ROOT.length + 1);
  return u;
}

export function areaOf(fn: string, url: string): string {
  if (fn === '(garbage collector)') return 'GC';
  if (fn === '(idle)') return 'idle';
  if (fn === '(program)') return 'V8/native (program)';
  const u = rel(url);
  if (!u) return 'native (uWS C++ calls, V8 builtins)';
  if (u.includes('node_modules/@nats-io')) return 'nats client';
  if (u.includes('node_modules/uWebSockets.js')) return 'uWS JS glue';
  if (u.includes('node_modules/pino')) return 'pino';
  if (u.includes('node_modules/postgres')) return 'postgres driver';
  if (u.includes('node_modules/@connectrpc') || u.includes('node_modules/@bufbuild')) return 'connect/protobuf';
  if (u.includes('node_modules/')) return 'other node_modules';
  if (u.startsWith('node:')) return 'node core';
  if (u.startsWith('src/')) return u.split('/').slice(0, 2).join('/');
  if (u.startsWith('bench/')) return 'bench preload';
  return u;
}

export function summarizeProfile(path: string, top = 15): ProfileSummary {
  const p = JSON.parse(readFileSync(path, 'utf8')) as { nodes: Node[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number };
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  for (let i = 0; i < p.samples.length; i++) {
    const dt = p.timeDeltas[i + 1] ?? 0; // the delta after a sample is the time it stood for
    self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + dt);
  }
  const fns = new Map<string, { fn: string; where: string; area: string; us: number }>();
  const areas = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const [id, us] of self) {
    const n = byId.get(id)!;
    const { functionName, url, lineNumber } = n.callFrame;
    const fn = functionName || '(anonymous)';
    const area = areaOf(fn, url);
    total += us;
    if (area === 'idle') idle += us;
    areas.set(area, (areas.get(area) ?? 0) + us);
    const where = url ? `${rel(url)}:${lineNumber + 1}` : '';
    const key = `${fn}@${where}`;
    const e = fns.get(key) ?? { fn, where, area, us: 0 };
    e.us += us;
    fns.set(key, e);
  }
  const busy = total - idle;
  const pct = (us: number) => +((us / Math.max(1, busy)) * 100).toFixed(1);
  return {
    file: rel(path),
    sampledMs: Math.round(total / 1000),
    busyMs: Math.round(busy / 1000),
    byArea: [...areas.entries()]
      .filter(([a]) => a !== 'idle')
      .sort((a, b) => b[1] - a[1])
      .map(([area, us]) => ({ area, selfMs: Math.round(us / 1000), pctOfBusy: pct(us) })),
    topFunctions: [...fns.values()]
      .filter((f) => f.area !== 'idle')
      .sort((a, b) => b.us - a.us)
      .slice(0, top)
      .map((f) => ({ fn: f.fn, where: f.where, area: f.area, selfMs: Math.round(f.us / 1000), pctOfBusy: pct(f.us) })),
  };
}

/** node flags for a profiled service; the busiest per-thread profile is the main thread. */
export function profArgs(dir: string | undefined, name: string): string[] | undefined {
  if (!dir) return undefined;
  const d = join(dir, name);
  rmSync(d, { recursive: true, force: true });
  return ['--cpu-prof', `--cpu-prof-dir=${d}`];
}

export function mainProfile(dir: string | undefined, name: string): ProfileSummary | undefined {
  if (!dir) return undefined;
  const d = join(dir, name);
  return readdirSync(d)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => summarizeProfile(join(d, f)))
    .sort((a, b) => b.busyMs - a.busyMs)[0];
}

/** The profile's areas and hottest functions as two tables; `name` says which process and phase. */
export function profileTables(name: string, p: ProfileSummary): string {
  return (
    table(
      `Service CPU profile, ${name} (self time; figures above include profiler overhead)`,
      ['area', 'self ms', '% of busy'],
      p.byArea.slice(0, 12).map((a) => [a.area, fmtInt(a.selfMs), `${a.pctOfBusy}%`]),
      [`profile: ${p.file}`],
    ) +
    table(
      `Service hottest functions, ${name}`,
      ['function', 'where', 'self ms', '% of busy'],
      p.topFunctions.map((f) => [f.fn, f.where || f.area, fmtInt(f.selfMs), `${f.pctOfBusy}%`]),
    )
  );
}
