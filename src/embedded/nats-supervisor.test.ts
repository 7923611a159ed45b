/**
 * The supervisor's shutdown rules: an exit after shutdown began is not answered with a
 * restart, and stop() during a restart stops the restarted server too (nothing outlives it).
 * Positive control: while supervising, an exit is answered with a restart. And a stale pid file
 * never gets an unrelated nats-server stopped.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { findNatsServerBinary } from './nats-server.js';
import { startSupervisedNatsServer, type SupervisedNatsServer } from './nats-supervisor.js';

const dirs: string[] = [];
const servers: SupervisedNatsServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function recorder() {
  const lines: string[] = [];
  const rec = (...args: unknown[]) => void lines.push(args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' '));
  return { lines, logger: { info: rec, warn: rec, error: rec } };
}

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'nats-supervisor-'));
  dirs.push(dir);
  return dir;
}

async function supervised(storeDir = tempDir()) {
  const log = recorder();
  const srv = await startSupervisedNatsServer({ storeDir, logger: log.logger });
  servers.push(srv);
  return { srv, storeDir, lines: log.lines };
}

/** Live processes whose command line names `dir` (zombies have none). */
function processesNaming(dir: string): number[] {
  return readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .filter((n) => {
      try {
        return readFileSync(`/proc/${n}/cmdline`, 'utf8').includes(dir);
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Resolves once `pid` is gone and reaped: by then its parent has seen the exit. */
async function gone(pid: number): Promise<void> {
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await sleep(20);
  }
}

async function until(fn: () => boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) throw new Error('timed out');
    await sleep(20);
  }
}

describe('supervised nats-server', () => {
  it('restarts a server that exits while supervised (positive control)', async () => {
    const { srv, lines } = await supervised();
    const first = srv.pid;
    process.kill(first, 'SIGKILL');
    await until(() => srv.pid !== first && lines.some((l) => l.includes('embedded nats-server restarted')));
  }, 30_000);

  it('does not restart a server that exits after shutdown began', async () => {
    const { srv, storeDir, lines } = await supervised();
    const pid = srv.pid;
    srv.endSupervision();
    process.kill(pid, 'SIGKILL');
    await gone(pid);
    await srv.stop();
    expect(lines.filter((l) => /restart/.test(l))).toEqual([]);
    expect(processesNaming(storeDir)).toEqual([]);
  }, 30_000);

  it('stop() during a restart also stops the restarted server', async () => {
    const { srv, storeDir, lines } = await supervised();
    process.kill(srv.pid, 'SIGKILL');
    await until(() => lines.some((l) => l.includes('exited unexpectedly')));
    await srv.stop();
    expect(processesNaming(storeDir)).toEqual([]);
  }, 30_000);

  it('a stale pid file naming another nats-server leaves that server running', async () => {
    const other = tempDir();
    const unrelated = spawn(findNatsServerBinary()!, ['-p', '-1', '-sd', other], { stdio: 'ignore' });
    try {
      await until(() => processesNaming(other).length === 1);
      const storeDir = tempDir();
      writeFileSync(join(storeDir, 'nats-server.pid'), String(unrelated.pid));
      await supervised(storeDir);
      expect(unrelated.exitCode).toBeNull();
      expect(unrelated.signalCode).toBeNull();
      expect(processesNaming(other)).toEqual([unrelated.pid]);
    } finally {
      unrelated.kill('SIGKILL');
      await gone(unrelated.pid!);
    }
  }, 30_000);
});
