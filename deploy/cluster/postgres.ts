/**
 * A real PostgreSQL server from the installed binaries, the one implementation used by the
 * cluster (its data kept in the cluster's folder) and by the tests' throwaway server
 * (test/harness/postgres-server.ts): where the binaries are, which account runs them, initdb
 * once, the server's command line, and waiting until it answers a query.
 *
 * PostgreSQL refuses to run as root, so when this process is root the server runs as the
 * `postgres` user if it exists, else `nobody` (spawn's uid/gid), and its folders are chowned
 * to that user.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants as fsConstants, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { chmod, chown, mkdir } from 'node:fs/promises';
import { delimiter, dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import postgres from 'postgres';

export interface RunAs {
  uid: number;
  gid: number;
  name: string;
}

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

/** The unprivileged account to run PostgreSQL as; undefined when this process is not root. */
export function postgresRunAs(): RunAs | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const passwd = readFileSync('/etc/passwd', 'utf8').split('\n');
  for (const name of ['postgres', 'nobody']) {
    const fields = passwd.find((line) => line.startsWith(`${name}:`))?.split(':');
    if (fields && fields.length >= 4) return { name, uid: Number(fields[2]), gid: Number(fields[3]) };
  }
  throw new Error('running as root and neither a "postgres" nor a "nobody" user exists to run PostgreSQL as');
}

/** Creates `dir` (mode 0700) owned by the account the server runs as, which must be able to reach it. */
export async function ownedDir(dir: string, runAs: RunAs | undefined): Promise<void> {
  await mkdir(dir, { recursive: true });
  if (runAs) assertReachable(dirname(resolve(dir)), runAs);
  await chmod(dir, 0o700);
  if (runAs) await chown(dir, runAs.uid, runAs.gid);
}

/** Every folder above the data folder must let the server's account pass (o+x): say which does not. */
function assertReachable(dir: string, runAs: RunAs): void {
  for (let d = dir; ; d = dirname(d)) {
    const st = statSync(d);
    const passes = st.uid === runAs.uid ? st.mode & 0o100 : st.gid === runAs.gid ? st.mode & 0o010 : st.mode & 0o001;
    if (!passes) {
      throw new Error(
        `PostgreSQL runs as the user ${runAs.name} (it refuses to run as root) and cannot reach ${dir}: ${d} is mode ${(st.mode & 0o777).toString(8)}; allow it (chmod o+x ${d}) or choose a folder elsewhere`,
      );
    }
    if (dirname(d) === d) return;
  }
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

/**
 * initdb into `dataDir` unless it already holds a cluster (trust authentication on loopback,
 * superuser `postgres`). `noSync` skips initdb's fsync: for throwaway servers only.
 */
export async function initPostgres(o: { binDir: string; dataDir: string; runAs?: RunAs; noSync?: boolean }): Promise<void> {
  if (existsSync(join(o.dataDir, 'PG_VERSION'))) return;
  await ownedDir(o.dataDir, o.runAs);
  const args = ['-D', o.dataDir, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', ...(o.noSync ? ['--no-sync'] : [])];
  await run(join(o.binDir, 'initdb'), args, { cwd: o.dataDir, runAs: o.runAs });
}

export interface PostgresCommand {
  cmd: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  uid?: number;
  gid?: number;
}

/**
 * The `postgres` command line: listening on 127.0.0.1:`port`, its Unix socket in `socketDir`
 * (none when empty: a deep folder can exceed the socket path limit), plus `settings` (-c).
 */
export function postgresCommand(o: {
  binDir: string;
  dataDir: string;
  port: number;
  socketDir: string;
  settings?: Record<string, string>;
  runAs?: RunAs;
}): PostgresCommand {
  const settings = { listen_addresses: '127.0.0.1', unix_socket_directories: o.socketDir, ...o.settings };
  return {
    cmd: join(o.binDir, 'postgres'),
    args: ['-D', o.dataDir, '-p', String(o.port), ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`])],
    env: { ...process.env, LC_ALL: 'C' },
    ...(o.runAs ? { uid: o.runAs.uid, gid: o.runAs.gid } : {}),
  };
}

/** `postgres://postgres@127.0.0.1:<port>/postgres` (trust authentication, no password). */
export function postgresUrl(port: number): string {
  return `postgres://postgres@127.0.0.1:${port}/postgres`;
}

/** Whether the server at `url` answers `select 1` now. */
export async function postgresAnswers(url: string): Promise<boolean> {
  const sql = postgres(url, { max: 1, connect_timeout: 2, onnotice: () => {} });
  try {
    await sql`select 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

/**
 * Resolves once the server at `url` answers; `failed()` names why waiting is pointless (the
 * process exited) and is checked between attempts.
 */
export async function waitForPostgres(url: string, o: { timeoutMs: number; failed: () => string | undefined }): Promise<void> {
  const deadline = Date.now() + o.timeoutMs;
  for (;;) {
    const why = o.failed();
    if (why) throw new Error(why);
    if (await postgresAnswers(url)) return;
    if (Date.now() > deadline) throw new Error(`postgres at ${url} not ready after ${o.timeoutMs / 1000} s`);
    await sleep(100);
  }
}
