/**
 * Throwaway real PostgreSQL server for tests: initdb into a temp dir, start `postgres` on a
 * free port on 127.0.0.1 with durability off (fsync, synchronous_commit, full_page_writes),
 * trust authentication, user `postgres`. `stop()` does a fast shutdown (SIGINT) and removes
 * the temp dir. Finding the binaries, the unprivileged account when root, initdb, the command
 * line and the wait are the cluster's (deploy/cluster/postgres.ts): one implementation.
 *
 * Returns undefined when no PostgreSQL server binaries are installed; throws when they are
 * installed but the server cannot be started.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { statSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { findPostgresBinDir, initPostgres, postgresCommand, postgresRunAs, postgresUrl, waitForPostgres } from '../../deploy/cluster/postgres.js';

export { findPostgresBinDir };

export interface PostgresServerHandle {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust auth, no password). */
  url: string;
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 10_000;

/** A parent for the temp dir that the unprivileged user can traverse. */
function baseTempDir(asOther: boolean): string {
  const base = tmpdir();
  if (!asOther) return base;
  for (let dir = base; ; dir = dirname(dir)) {
    try {
      if ((statSync(dir).mode & 0o001) === 0) return '/tmp';
    } catch {
      return '/tmp';
    }
    if (dirname(dir) === dir) return base;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolvePort(port));
    });
  });
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

function waitForExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (exited(child)) return Promise.resolve(true);
  return new Promise((done) => {
    const timer = setTimeout(() => done(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      done(true);
    });
  });
}

export async function startPostgresServer(): Promise<PostgresServerHandle | undefined> {
  const binDir = findPostgresBinDir();
  if (!binDir) return undefined;

  const runAs = postgresRunAs();
  const dir = await mkdtemp(join(baseTempDir(runAs !== undefined), 'pg-test-'));
  const dataDir = join(dir, 'data');
  let child: ChildProcess | undefined;

  const cleanup = async () => {
    if (child && !exited(child)) {
      child.kill('SIGINT'); // fast shutdown
      if (!(await waitForExit(child, STOP_TIMEOUT_MS))) {
        child.kill('SIGKILL');
        await waitForExit(child, STOP_TIMEOUT_MS);
      }
    }
    await rm(dir, { recursive: true, force: true });
  };

  try {
    if (runAs) await chown(dir, runAs.uid, runAs.gid);
    await initPostgres({ binDir, dataDir, runAs, noSync: true });

    const port = await freePort();
    const command = postgresCommand({
      binDir,
      dataDir,
      port,
      socketDir: dir,
      settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' },
      runAs,
    });
    let log = '';
    child = spawn(command.cmd, command.args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], env: command.env, uid: command.uid, gid: command.gid });
    const server = child;
    server.stdout?.on('data', (d) => (log = (log + d).slice(-8192)));
    server.stderr?.on('data', (d) => (log = (log + d).slice(-8192)));
    let spawnError: Error | undefined;
    server.once('error', (err) => (spawnError = err));

    const url = postgresUrl(port);
    await waitForPostgres(url, {
      timeoutMs: START_TIMEOUT_MS,
      failed: () => (spawnError ? spawnError.message : exited(server) ? `postgres exited (${server.exitCode ?? server.signalCode})` : undefined),
    }).catch((err: Error) => {
      throw new Error(`${err.message}\n${log.trim()}`, { cause: err });
    });

    let stopping: Promise<void> | undefined;
    return {
      url,
      stop: () => (stopping ??= cleanup()),
    };
  } catch (err) {
    await cleanup();
    throw err;
  }
}
