/**
 * The soak's figures: once a minute, the resident set size of every member (VmRSS from
 * /proc/<pid>/status) and the machine's load average; with the submissions' latency of the
 * same minute, the p99. Growth is judged on the steady part: the mean of the last third of
 * the minutes against the first third, the first minute (warm-up) left out.
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import type { Cluster } from '../cluster/types.js';
import { quantile } from './checks.js';

/** RSS growing more than this between the first and the last third of the soak is reported as growth. */
const RSS_GROWTH_LIMIT = 0.15;
/** p99 latency likewise (it is noisier: other engineers share the machine). */
const P99_GROWTH_LIMIT = 0.5;

export interface SoakMinute {
  minute: number;
  load1: number;
  /** MB per member (NaN while a member is down). */
  rssMb: Record<string, number>;
  submitP99Ms?: number;
  submissions?: number;
}

export interface SoakVerdict {
  minutes: SoakMinute[];
  /** Per member: first-third mean, last-third mean (MB), relative growth, whether it counts as growing. */
  rss: Record<string, { firstMb: number; lastMb: number; growth: number; grows: boolean }>;
  p99: { firstMs: number; lastMs: number; growth: number; grows: boolean };
  anythingGrows: boolean;
}

export function rssMb(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  try {
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

export class SoakSampler {
  readonly minutes: SoakMinute[] = [];
  private timer?: NodeJS.Timeout;

  constructor(private readonly cluster: Cluster) {}

  start(): void {
    let minute = 0;
    const sample = () => {
      const rss: Record<string, number> = {};
      for (const m of this.cluster.members) rss[m.name] = rssMb(m.pid);
      this.minutes.push({ minute: minute++, load1: loadavg()[0]!, rssMb: rss });
    };
    sample();
    this.timer = setInterval(sample, 60_000);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** The per-minute rows with the submission p99 filled in, and the growth verdict. */
  verdict(latencyByMinute: number[][]): SoakVerdict {
    for (const m of this.minutes) {
      // Row m is sampled at the end of minute m - 1 of the load.
      const lat = latencyByMinute[m.minute - 1];
      if (lat?.length) {
        m.submitP99Ms = quantile(lat, 0.99);
        m.submissions = lat.length;
      }
    }
    const steady = this.minutes.slice(2);
    const third = Math.max(1, Math.floor(steady.length / 3));
    const mean = (xs: number[]) => {
      const f = xs.filter(Number.isFinite);
      return f.length ? f.reduce((a, b) => a + b, 0) / f.length : NaN;
    };
    const rss: SoakVerdict['rss'] = {};
    for (const m of this.cluster.members) {
      const firstMb = mean(steady.slice(0, third).map((x) => x.rssMb[m.name]!));
      const lastMb = mean(steady.slice(-third).map((x) => x.rssMb[m.name]!));
      const growth = (lastMb - firstMb) / firstMb;
      rss[m.name] = { firstMb, lastMb, growth, grows: growth > RSS_GROWTH_LIMIT };
    }
    const firstMs = mean(steady.slice(0, third).map((x) => x.submitP99Ms ?? NaN));
    const lastMs = mean(steady.slice(-third).map((x) => x.submitP99Ms ?? NaN));
    const growth = (lastMs - firstMs) / firstMs;
    const p99 = { firstMs, lastMs, growth, grows: growth > P99_GROWTH_LIMIT };
    return { minutes: this.minutes, rss, p99, anythingGrows: p99.grows || Object.values(rss).some((r) => r.grows) };
  }
}
