/**
 * The cluster's processes, whoever started them: the CLI's `stop` and `status` run in another
 * process than the `start` that spawned the members, so a member is known by its pid and the
 * pid's start time (/proc/<pid>/stat), never by the pid alone: a pid reused by an unrelated
 * program after the member died is not the member and is never signalled.
 *
 * Detached members lead process groups of their own and outlive the process that started them
 * (the CLI). Attached ones (tests, drill, bench) each get a watchdog (src/embedded/watchdog.ts)
 * that stops them when the starting process ends, however it ends, kill -9 included. Every
 * member writes stdout and stderr to its log file, never to a pipe, so that nothing depends on
 * a reader staying alive.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { watchOverChild, type Watchdog } from '../../src/embedded/watchdog.js';

/** One process: its pid and its start time (clock ticks since boot), which together name it. */
export interface ProcRef {
  pid: number;
  start: string;
}

export interface Command {
  cmd: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd?: string;
  uid?: number;
  gid?: number;
}

/** Field 22 (starttime) and field 3 (state) of /proc/<pid>/stat; undefined when there is no such process. */
function statOf(pid: number): { start: string; state: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: count from after it.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: rest[0], start: rest[19] };
  } catch {
    return undefined;
  }
}

/** The ref of the running process `pid`, or undefined. */
export function refOf(pid: number): ProcRef | undefined {
  const s = statOf(pid);
  return s ? { pid, start: s.start } : undefined;
}

/** Whether the process `ref` names is still running (a zombie is not: it only waits to be reaped). */
export function isAlive(ref: ProcRef): boolean {
  const s = statOf(ref.pid);
  return !!s && s.start === ref.start && s.state !== 'Z' && s.state !== 'X';
}

/** Sends `sig` to the process `ref` names, if it is still that process; whether it was sent. */
export function signalRef(ref: ProcRef, sig: NodeJS.Signals): boolean {
  if (!isAlive(ref)) return false;
  try {
    process.kill(ref.pid, sig);
    return true;
  } catch {
    return false;
  }
}

/** Resolves true once the process has gone, false if it is still there after `ms`. */
export async function waitGone(ref: ProcRef, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (isAlive(ref)) {
    if (Date.now() > deadline) return false;
    await sleep(50);
  }
  return true;
}

/**
 * Stops the process: `sig` (then SIGCONT, so that a frozen process sees it), SIGKILL after
 * `graceMs`; resolves once it has gone.
 */
export async function stopRef(ref: ProcRef, sig: NodeJS.Signals, graceMs: number): Promise<void> {
  if (!signalRef(ref, sig)) return;
  signalRef(ref, 'SIGCONT');
  if (await waitGone(ref, graceMs)) return;
  signalRef(ref, 'SIGKILL');
  if (!(await waitGone(ref, 10_000))) throw new Error(`process ${ref.pid} is still there 10 s after SIGKILL`);
}

export interface Launched {
  ref: ProcRef;
  /** Attached members only: the watchdog, dismissed once the member has been stopped. */
  watchdog?: Watchdog;
}

/** Grace the watchdog gives a member of a process that died before SIGKILL. */
const WATCHDOG_GRACE_MS = 10_000;

/** Starts `c` with its output appended to `logFile`. */
export async function launch(c: Command, logFile: string, detached: boolean): Promise<Launched> {
  const fd = openSync(logFile, 'a');
  let child;
  try {
    child = spawn(c.cmd, c.args, { cwd: c.cwd, env: c.env, uid: c.uid, gid: c.gid, stdio: ['ignore', fd, fd], detached });
  } finally {
    closeSync(fd); // the child has its own copy
  }
  const pid = await new Promise<number>((resolvePid, reject) => {
    child.once('spawn', () => resolvePid(child.pid!));
    child.once('error', (err) => reject(new Error(`${c.cmd}: ${err.message}`)));
  });
  const ref = refOf(pid);
  if (!ref) throw new Error(`${c.cmd} exited at once (see ${logFile})`);
  if (detached) {
    child.unref();
    return { ref };
  }
  const watchdog = watchOverChild(child, [c.cmd, ...c.args], WATCHDOG_GRACE_MS);
  // Gone for whatever reason (a drill's SIGKILL too): nothing left to watch, and the pid may be reused.
  child.once('exit', () => void watchdog.dismiss());
  return { ref, watchdog };
}

/** The last `bytes` of a log file, for an error that says why a member did not start. */
export async function logTail(path: string, bytes = 4096): Promise<string> {
  try {
    const f = await open(path, 'r');
    try {
      const size = (await f.stat()).size;
      const start = Math.max(0, size - bytes);
      const buf = Buffer.alloc(size - start);
      await f.read(buf, 0, buf.length, start);
      return buf.toString('utf8').trim().split('\n').slice(-15).join('\n');
    } finally {
      await f.close();
    }
  } catch {
    return '';
  }
}
