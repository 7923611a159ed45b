/**
 * Child processes of the bench runner: spawning (optionally pinned to a CPU with taskset and
 * with a raised open-files limit), IPC calls, clean termination, and what /proc says about a
 * process (CPU time, RSS) and about the machine (busy CPU time).
 *
 * Every child is registered and killed by its pid when the runner exits; bench children also
 * exit by themselves when the runner's IPC channel closes (see ipc.ts) and the service
 * process gets a preload (parent-watch.ts) that stops it when the runner dies.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

const live = new Set<ChildProc>();

function which(bin: string): string | undefined {
  for (const d of (process.env.PATH ?? '').split(':').filter(Boolean).concat(['/usr/bin', '/bin', '/usr/sbin'])) {
    const p = join(d, bin);
    if (existsSync(p)) return p;
  }
  return undefined;
}

export const TASKSET = which('taskset');
export const BASH = which('bash');

export const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

export interface SpawnOptions {
  name: string;
  /** Script path relative to the repository root. */
  script: string;
  args?: string[];
  env?: Record<string, string>;
  /** Pin to this CPU with taskset (ignored when taskset is missing). */
  cpu?: number;
  /** Try to raise the open-files limit to this (up to the hard limit). */
  nofile?: number;
  /** Extra node flags (e.g. --cpu-prof). */
  nodeArgs?: string[];
  /** Modules preloaded after tsx (may be TypeScript), e.g. bench/lib/parent-watch.ts. */
  imports?: string[];
  /** Bench processes talk over IPC; the service process does not. */
  ipc?: boolean;
  /** Print the child's output as it comes (default: keep the tail for error reports). */
  echo?: boolean;
}

/** The node arguments of `npm start`'s last command (`node <flags> dist/main.js`), from package.json. */
export function npmStartArgv(): string[] {
  const start = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
  const last = start.split('&&').pop()!.trim().split(/\s+/);
  if (last[0] !== 'node' || last.at(-1) !== 'dist/main.js') throw new Error(`npm start no longer ends with node ... dist/main.js: ${start}`);
  return last.slice(1);
}

/** The node flags `npm start` runs the service with (its argv without `dist/main.js`): every bench service runs with them. */
export const serviceNodeFlags = (): string[] => npmStartArgv().slice(0, -1);

export class ChildProc {
  readonly proc: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private nextId = 1;
  private pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
  private handlers = new Map<string, (data: any) => void>();
  output = '';
  exitInfo?: { code: number | null; signal: NodeJS.Signals | null };
  /** Set when pinning was requested and applied. */
  readonly pinnedCpu?: number;

  constructor(readonly opts: SpawnOptions) {
    const imports = (opts.imports ?? []).flatMap((m) => ['--import', pathToFileURL(join(ROOT, m)).href]);
    const nodeArgv = [process.execPath, ...(opts.nodeArgs ?? []), '--import', 'tsx', ...imports, join(ROOT, opts.script), ...(opts.args ?? [])];
    const pin = opts.cpu !== undefined && TASKSET ? ['taskset', '-c', String(opts.cpu)] : [];
    this.pinnedCpu = pin.length ? opts.cpu : undefined;
    let cmd: string;
    let argv: string[];
    if (opts.nofile && BASH) {
      // exec keeps the pid, so the runner sees the node process itself.
      const script = `ulimit -n ${opts.nofile} 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec "$@"`;
      cmd = BASH;
      argv = ['-c', script, 'bash', ...pin, ...nodeArgv];
    } else if (pin.length) {
      cmd = TASKSET!;
      argv = [...pin.slice(1), ...nodeArgv];
    } else {
      cmd = nodeArgv[0];
      argv = nodeArgv.slice(1);
    }
    this.proc = spawn(cmd, argv, {
      cwd: ROOT,
      env: { ...process.env, ...opts.env },
      stdio: opts.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
    });
    const keep = (d: Buffer) => {
      const s = d.toString();
      this.output = (this.output + s).slice(-32 * 1024);
      if (opts.echo) process.stderr.write(`[${opts.name}] ${s}`);
    };
    this.proc.stdout?.on('data', keep);
    this.proc.stderr?.on('data', keep);
    this.exited = new Promise((res) => {
      this.proc.once('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        live.delete(this);
        for (const p of this.pending.values()) {
          clearTimeout(p.timer);
          p.reject(new Error(`${opts.name} exited (${code ?? signal}) during a call\n${this.tail()}`));
        }
        this.pending.clear();
        res({ code, signal });
      });
    });
    this.proc.on('error', (err) => {
      this.output += `\nspawn error: ${err.message}`;
    });
    this.proc.on('message', (m: any) => {
      if (m && typeof m.id === 'number') {
        const p = this.pending.get(m.id);
        if (!p) return;
        this.pending.delete(m.id);
        clearTimeout(p.timer);
        if (m.ok) p.resolve(m.result);
        else p.reject(new Error(`${opts.name}: ${m.error}`));
      } else if (m && typeof m.ev === 'string') {
        this.handlers.get(m.ev)?.(m.data);
      }
    });
    live.add(this);
  }

  get pid(): number {
    return this.proc.pid!;
  }

  tail(lines = 15): string {
    return this.output.trim().split('\n').slice(-lines).join('\n');
  }

  call<T = any>(cmd: string, args: unknown = {}, timeoutMs = 30_000): Promise<T> {
    if (this.exitInfo) return Promise.reject(new Error(`${this.opts.name} is not running\n${this.tail()}`));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${this.opts.name}: ${cmd} timed out after ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      this.proc.send({ id, cmd, args });
    });
  }

  /** Fire-and-forget message (no reply). */
  send(ev: string, data: unknown): void {
    if (!this.exitInfo && this.proc.connected) this.proc.send({ ev, data });
  }

  on(ev: string, fn: (data: any) => void): void {
    this.handlers.set(ev, fn);
  }

  /** SIGTERM, then SIGKILL after graceMs. */
  async stop(graceMs = 8000): Promise<void> {
    if (this.exitInfo) return;
    this.proc.kill('SIGTERM');
    const t = setTimeout(() => this.proc.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(t);
  }
}

export function spawnChild(opts: SpawnOptions): ChildProc {
  return new ChildProc(opts);
}

/** Kills every child still running (by pid); used on exit and on fatal errors. */
export async function killAll(): Promise<void> {
  await Promise.all([...live].map((c) => c.stop(3000).catch(() => {})));
}

export function killAllSync(): void {
  for (const c of live) {
    try {
      c.proc.kill('SIGKILL');
    } catch {
      /* already gone */
    }
  }
}

export function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      s.close(() => res(port));
    });
  });
}

/** utime + stime of a process, in seconds. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / CLK_TCK;
  } catch {
    return NaN;
  }
}

/** Resident set size in KiB (VmRSS). */
export function rssKb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : NaN;
  } catch {
    return NaN;
  }
}

/** Open-files soft limit of a process. */
export function nofileLimit(pid: number): number {
  try {
    const m = /Max open files\s+(\d+)/.exec(readFileSync(`/proc/${pid}/limits`, 'utf8'));
    return m ? Number(m[1]) : NaN;
  } catch {
    return NaN;
  }
}

/** Machine-wide CPU time: busy and total, in clock ticks. */
export function machineTicks(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0];
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  const total = v.reduce((a, b) => a + b, 0);
  const idle = v[3] + (v[4] ?? 0);
  return { busy: total - idle, total };
}

/** CPU use of processes over a window: start() then stop() -> % of one core per pid. */
export class CpuWindow {
  private t0 = 0;
  private start0 = new Map<string, number>();
  private m0 = machineTicks();
  constructor(private readonly pids: Record<string, number | undefined>) {
    this.t0 = performance.now();
    for (const [k, pid] of Object.entries(pids)) if (pid) this.start0.set(k, cpuSeconds(pid));
    this.m0 = machineTicks();
  }
  stop(): { perProcess: Record<string, number>; machineBusyPct: number } {
    const dt = (performance.now() - this.t0) / 1000;
    const out: Record<string, number> = {};
    for (const [k, pid] of Object.entries(this.pids)) {
      if (!pid) continue;
      out[k] = +(((cpuSeconds(pid) - this.start0.get(k)!) / dt) * 100).toFixed(0);
    }
    const m1 = machineTicks();
    const busy = ((m1.busy - this.m0.busy) / Math.max(1, m1.total - this.m0.total)) * 100;
    return { perProcess: out, machineBusyPct: +busy.toFixed(0) };
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls fn until it returns a truthy value or the time is up (bounded). */
export async function waitUntil<T>(
  fn: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs: number,
  stepMs = 50,
  what = 'condition',
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(stepMs);
  }
}
