/**
 * A signal to the service's whole process group (systemd's default KillMode=control-group, a
 * terminal's Ctrl-C) on the embedded defaults, under load: the service drains and exits 0, the
 * embedded nats-server is neither restarted nor left behind (nothing whose command line names
 * the data folder outlives the service), and every task the gateway accepted reaches a
 * terminal state once the service runs again on the same data folder. systemd's default
 * KillMode=control-group is not a group signal: it signals every process of the unit at the same
 * moment, the nats-server and its watchdog included; the nats-server's exit then is not answered
 * with a restart either. A SIGKILL, which the service cannot answer, still leaves nothing
 * running, and the nats-server shuts down cleanly (its log is a file: no pipe to a dead reader).
 * A second Ctrl-C during start-up exits at once.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { TERMINAL_STATUSES } from '../src/kernel/index.js';
import { json, waitFor } from './helpers/app.js';
import { embeddedEnv, gatewayBase, startServiceProcess, type ServiceProcess } from './helpers/process.js';

const dataDir = mkdtempSync(join(tmpdir(), 'taskorch-pgroup-'));
const started: ServiceProcess[] = [];
afterAll(() => {
  // A failed assertion must not leave a service group running behind the test.
  for (const p of started) if (p.proc.exitCode === null && p.proc.pid) tryKill(-p.proc.pid);
  for (const { pid } of processesNaming(dataDir)) tryKill(pid);
  rmSync(dataDir, { recursive: true, force: true });
});

function tryKill(pid: number, signal: NodeJS.Signals = 'SIGKILL'): void {
  try {
    process.kill(pid, signal);
  } catch {
    /* gone */
  }
}

/** Pids of the live processes whose command line mentions `dir` (zombies have none). */
function processesNaming(dir: string): { pid: number; cmd: string }[] {
  const found: { pid: number; cmd: string }[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    let cmd: string;
    try {
      cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8').replace(/\0/g, ' ');
    } catch {
      continue; // exited while listed
    }
    if (cmd.includes(dir)) found.push({ pid: Number(name), cmd });
  }
  return found;
}

/** `pid` and every process descended from it (systemd's view of the unit: its cgroup). */
function processTree(root: number): number[] {
  const parents = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // `pid (comm) state ppid ...`; comm may hold spaces and parentheses.
      parents.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      /* exited while listed */
    }
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) for (const [pid, ppid] of parents) if (ppid === tree[i]) tree.push(pid);
  return tree;
}

/** The last lines of the embedded nats-server's log. */
function natsLogEnd(): string {
  return readFileSync(join(dataDir, 'nats', 'nats-server.log'), 'utf8')
    .trim()
    .split('\n')
    .slice(-3)
    .join('\n');
}

const env = embeddedEnv(dataDir);

async function start(): Promise<{ p: ServiceProcess; base: string }> {
  const p = await startServiceProcess(env, { detached: true });
  started.push(p);
  return { p, base: await gatewayBase(p) };
}

/**
 * Submits tasks from a few concurrent clients until `stop()`; returns the ids the gateway
 * accepted (answered 2xx). Refused or cut-off requests are not accepted tasks.
 */
function load(base: string) {
  const accepted: string[] = [];
  let running = true;
  const client = async (n: number) => {
    for (let i = 0; running; i++) {
      try {
        const r = await fetch(`${base}/api/v1/tasks`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: `group signal ${n}.${i}` }),
        });
        if (r.ok) accepted.push((await json(r)).task_id as string);
        else await r.text();
      } catch {
        await new Promise((res) => setTimeout(res, 20)); // the gateway is gone or going
      }
    }
  };
  const clients = Promise.all([0, 1, 2, 3].map(client));
  return {
    accepted,
    async stop() {
      running = false;
      await clients;
    },
  };
}

/** Every task in `ids` reaches a terminal status on the service at `base`. */
async function allTerminal(base: string, ids: string[]): Promise<void> {
  const open = new Set(ids);
  await waitFor(
    async () => {
      for (const id of [...open]) {
        const b = await json(await fetch(`${base}/api/v1/tasks/${id}`));
        if ((TERMINAL_STATUSES as readonly string[]).includes(b.status)) open.delete(id);
      }
      return open.size === 0;
    },
    60_000,
    200,
  ).catch(() => {
    throw new Error(`tasks not terminal after a restart: ${[...open].join(', ')}`);
  });
}

/** Signals the service's group while `load` runs; the service must drain and leave nothing. */
async function signalGroupUnderLoad(p: ServiceProcess, base: string, signal: NodeJS.Signals): Promise<string[]> {
  const l = load(base);
  // Load first: the signal lands while tasks are being accepted, queued and run.
  await waitFor(async () => l.accepted.length >= 20, 30_000);
  process.kill(-p.proc.pid!, signal);
  const code = await p.exited;
  await l.stop();
  expect(code).toBe(0);
  expect(p.logs.filter((line) => /restart/i.test(line))).toEqual([]);
  expect(processesNaming(dataDir)).toEqual([]);
  return l.accepted;
}

describe('a signal to the whole process group', () => {
  it('drains, stops the embedded nats-server after the service, leaves nothing running, and loses no accepted task', async () => {
    let s = await start();
    const first = await signalGroupUnderLoad(s.p, s.base, 'SIGTERM');

    s = await start();
    await allTerminal(s.base, first);
    const second = await signalGroupUnderLoad(s.p, s.base, 'SIGINT');

    s = await start();
    await allTerminal(s.base, second);
    process.kill(-s.p.proc.pid!, 'SIGTERM');
    expect(await s.p.exited).toBe(0);
    expect(processesNaming(dataDir)).toEqual([]);
  }, 240_000);

  it('SIGTERM to every process of the service, as systemd KillMode=control-group sends it: exits 0, no restart, nothing left', async () => {
    const s = await start();
    const l = load(s.base);
    await waitFor(async () => l.accepted.length >= 10, 30_000);
    const tree = processTree(s.p.proc.pid!);
    const named = processesNaming(dataDir).map((x) => x.pid);
    // Positive control: the tree holds the service, its nats-server and that server's watchdog.
    expect(named.length).toBeGreaterThanOrEqual(2);
    expect(named.filter((pid) => !tree.includes(pid))).toEqual([]);
    // The service's signal lands 100 ms after the others, as when its event loop is busy at
    // that moment: signalled strictly together, it always begins its shutdown before it sees the
    // nats-server's exit, and the test would not tell a supervisor that waits from one that does not.
    for (const pid of tree) if (pid !== s.p.proc.pid) tryKill(pid, 'SIGTERM');
    await sleep(100);
    tryKill(s.p.proc.pid!, 'SIGTERM');
    const code = await s.p.exited;
    await l.stop();
    expect(code).toBe(0);
    expect(s.p.logs.filter((line) => /restart/i.test(line))).toEqual([]);
    expect(processesNaming(dataDir)).toEqual([]);
  }, 120_000);

  it('SIGKILL, which the service cannot answer: the nats-server it started is stopped all the same', async () => {
    const s = await start();
    const nats = processesNaming(dataDir).filter((x) => /nats-server -c/.test(x.cmd) && !/watchdog/.test(x.cmd));
    expect(nats).toHaveLength(1); // positive control: the scan sees the server while the service runs
    process.kill(-s.p.proc.pid!, 'SIGKILL');
    await s.p.exited;
    // Its watchdog sees the service gone and stops the server (SIGTERM first: JetStream flushes).
    await waitFor(async () => processesNaming(dataDir).length === 0, 15_000, 100).catch(() => {
      throw new Error(`left running after the service was killed: ${JSON.stringify(processesNaming(dataDir))}`);
    });
    expect(natsLogEnd()).toMatch(/Server Exiting/);
  }, 120_000);

  it('a second SIGINT during start-up exits at once (130); the nats-server it started is stopped', async () => {
    // Not startServiceProcess: that waits for "ready", and this must act before it.
    const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: fileURLToPath(new URL('..', import.meta.url)),
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    started.push({ proc } as ServiceProcess);
    let out = '';
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
    await waitFor(async () => out.includes('embedded nats-server started'), 60_000, 20);
    proc.kill('SIGINT');
    await waitFor(async () => out.includes('signal during start-up'), 10_000, 5);
    expect(out).not.toMatch(/"msg":"ready/); // else this tested the deferred stop, not start-up
    proc.kill('SIGINT');
    expect(await exited).toBe(130);
    await waitFor(async () => processesNaming(dataDir).length === 0, 15_000, 100).catch(() => {
      throw new Error(`left running after the service exited: ${JSON.stringify(processesNaming(dataDir))}`);
    });
    expect(natsLogEnd()).toMatch(/Server Exiting/);
  }, 120_000);
});
