/**
 * Throwaway real PostgreSQL server for tests: initdb into a temp dir, start `postgres` on a
 * free port on 127.0.0.1 with durability off (fsync, synchronous_commit, full_page_writes),
 * trust authentication, user `postgres`. `stop()` does a fast shutdown (SIGINT) and removes
 * the temp dir.
 *
 * PostgreSQL refuses to run as root, so when this process is root the server runs as the
 * `postgres` user if it exists, else `nobody` (via spawn's uid/gid), and the temp dir is
 * chowned to that user.
 *
 * Returns undefined when no PostgreSQL server binaries are installed; throws when they are
 * installed but the server cannot be started.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants as fsConstants, readdirSync, readFileSync, statSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import postgres from 'postgres';

export interface PostgresServerHandle {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust auth, no password). */
  url: string;
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 10_000;

function isExecutable(path: string): boolean {
  try {
    accessSync(path, fsConstants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** A directory holding both `initdb` and `postgres`: PATH first, then Debian's versioned dirs, newest first. */
export function findPostgresBinDir(): string | undefined {
  const candidates = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  try {
    const versions = readdirSync('/usr/lib/postgresql')
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((v) => `/usr/lib/postgresql/${v}/bin`));
  } catch {
    // not Debian-style, or not installed
  }
  return candidates.find((dir) => isExecutable(join(dir, 'initdb')) && isExecutable(join(dir, 'postgres')));
}

interface RunAs {
  uid: number;
  gid: number;
  name: string;
}

/** The unprivileged account to run PostgreSQL as when we are root. */
function unprivilegedUser(): RunAs {
  const passwd = readFileSync('/etc/passwd', 'utf8').split('\n');
  for (const name of ['postgres', 'nobody']) {
    const fields = passwd.find((line) => line.startsWith(`${name}:`))?.split(':');
    if (fields && fields.length >= 4) return { name, uid: Number(fields[2]), gid: Number(fields[3]) };
  }
  throw new Error('running as root and neither a "postgres" nor a "nobody" user exists to run PostgreSQL as');
}

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

function run(cmd: string, args: string[], opts: { cwd: string; runAs?: RunAs }): Promise<void> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(cmd, args, {
      cwd: opts.cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, LC_ALL: 'C' },
      ...(opts.runAs ? { uid: opts.runAs.uid, gid: opts.runAs.gid } : {}),
    });
    let output = '';
    child.stdout?.on('data', (d) => (output += d));
    child.stderr?.on('data', (d) => (output += d));
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (code === 0) resolveRun();
      else reject(new Error(`${cmd} failed (${code ?? signal}):\n${output.trim().split('\n').slice(-10).join('\n')}`));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startPostgresServer(): Promise<PostgresServerHandle | undefined> {
  const binDir = findPostgresBinDir();
  if (!binDir) return undefined;

  const asRoot = process.getuid?.() === 0;
  const runAs = asRoot ? unprivilegedUser() : undefined;
  const dir = await mkdtemp(join(baseTempDir(asRoot), 'pg-test-'));
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
    await run(join(binDir, 'initdb'), ['-D', dataDir, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C'], { cwd: dir, runAs });

    const port = await freePort();
    let log = '';
    child = spawn(
      join(binDir, 'postgres'),
      [
        '-D',
        dataDir,
        '-p',
        String(port),
        '-k',
        dir,
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'fsync=off',
        '-c',
        'synchronous_commit=off',
        '-c',
        'full_page_writes=off',
      ],
      {
        cwd: dir,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, LC_ALL: 'C' },
        ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}),
      },
    );
    const server = child;
    server.stdout?.on('data', (d) => (log = (log + d).slice(-8192)));
    server.stderr?.on('data', (d) => (log = (log + d).slice(-8192)));
    let spawnError: Error | undefined;
    server.once('error', (err) => (spawnError = err));

    const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      if (spawnError) throw spawnError;
      if (exited(server)) throw new Error(`postgres exited (${server.exitCode ?? server.signalCode}):\n${log.trim()}`);
      const sql = postgres(url, { max: 1, connect_timeout: 2, onnotice: () => {} });
      try {
        await sql`select 1`;
        break;
      } catch (err) {
        if (Date.now() > deadline) throw new Error(`postgres not ready after ${START_TIMEOUT_MS / 1000} s: ${String(err)}\n${log.trim()}`, { cause: err });
      } finally {
        await sql.end({ timeout: 1 });
      }
      await sleep(100);
    }

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
