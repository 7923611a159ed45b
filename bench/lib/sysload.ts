/**
 * Other load on the machine. The benchmark shares a 2-core machine with whatever else runs
 * there (e.g. another test suite); CPU used by processes outside this run's process tree
 * ("foreign") is measured for every window and reported, and `waitQuiet()` holds a
 * measurement back (bounded) while the machine is busy with foreign work.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { CLK_TCK, sleep } from './proc.js';

interface P {
  ppid: number;
  ticks: number;
  kernel: boolean;
  comm: string;
}

function procs(): Map<number, P> {
  const out = new Map<number, P>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const s = readFileSync(`/proc/${d}/stat`, 'utf8');
      const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
      const ppid = Number(f[1]);
      const pid = Number(d);
      // Kernel threads are children of kthreadd (pid 2).
      const comm = s.slice(s.indexOf('(') + 1, s.lastIndexOf(')'));
      out.set(pid, { ppid, ticks: Number(f[11]) + Number(f[12]), kernel: pid === 2 || ppid === 2, comm });
    } catch {
      /* exited */
    }
  }
  return out;
}

function mine(all: Map<number, P>, root: number): Set<number> {
  const set = new Set<number>([root]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, p] of all) {
      if (!set.has(pid) && set.has(p.ppid)) {
        set.add(pid);
        grew = true;
      }
    }
  }
  return set;
}

export class LoadWindow {
  private a = procs();
  private t0 = performance.now();
  /** % of one core used by processes outside this run (and by kernel threads) since the window opened. */
  stop(): { foreignPct: number; kernelThreadsPct: number } {
    const b = procs();
    const dt = (performance.now() - this.t0) / 1000;
    const my = mine(b, process.pid);
    let foreign = 0;
    let kernel = 0;
    for (const [pid, p] of b) {
      if (my.has(pid)) continue;
      const before = this.a.get(pid)?.ticks ?? 0;
      const d = Math.max(0, p.ticks - before);
      if (p.kernel) kernel += d;
      else foreign += d;
    }
    return { foreignPct: +((foreign / CLK_TCK / dt) * 100).toFixed(0), kernelThreadsPct: +((kernel / CLK_TCK / dt) * 100).toFixed(0) };
  }
}

let quietBudgetMs = 60_000;

/**
 * Waits until foreign processes use less than `maxPct` of one core over 0.5 s, for at most
 * `maxWaitMs` (and at most 60 s summed over the run). Returns the foreign load last seen.
 */
export async function waitQuiet(maxPct = 15, maxWaitMs = 15_000, log?: (s: string) => void): Promise<number> {
  const end = Date.now() + Math.min(maxWaitMs, quietBudgetMs);
  let warned = false;
  for (;;) {
    const w = new LoadWindow();
    await sleep(500);
    const { foreignPct } = w.stop();
    if (foreignPct < maxPct) return foreignPct;
    if (Date.now() >= end) {
      log?.(`  machine still busy with other processes (${foreignPct}% of a core); measuring anyway`);
      return foreignPct;
    }
    if (!warned) log?.(`  waiting for other processes on the machine to go quiet (${foreignPct}% of a core)`);
    warned = true;
    quietBudgetMs -= 500;
  }
}

/** CPU % of one core used by each process tree (a root and its descendants) over a window. */
export class TreeCpuWindow {
  private a = procs();
  private t0 = performance.now();
  constructor(private readonly roots: Record<string, number | undefined>) {}
  stop(): Record<string, number> {
    const b = procs();
    const dt = (performance.now() - this.t0) / 1000;
    const out: Record<string, number> = {};
    for (const [name, root] of Object.entries(this.roots)) {
      if (!root) continue;
      let ticks = 0;
      for (const pid of mine(b, root)) {
        const p = b.get(pid);
        if (p) ticks += Math.max(0, p.ticks - (this.a.get(pid)?.ticks ?? 0));
      }
      out[name] = +((ticks / CLK_TCK / dt) * 100).toFixed(0);
    }
    return out;
  }
}

/** The PostgreSQL postmaster started by this run (a `postgres` process whose parent is not one). */
export function findPostmaster(): number | undefined {
  const all = procs();
  for (const pid of mine(all, process.pid)) {
    const p = all.get(pid)!;
    if (p.comm === 'postgres' && all.get(p.ppid)?.comm !== 'postgres') return pid;
  }
  return undefined;
}
