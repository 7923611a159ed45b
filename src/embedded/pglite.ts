/**
 * Embedded PostgreSQL: PGlite (Postgres compiled to WASM, running in this process) served
 * over TCP by `@electric-sql/pglite-socket`, so the ordinary `postgres` driver code runs
 * unchanged against it.
 *
 * Concurrency model (pglite-socket 0.2.17, read from its source and checked) — read this
 * before choosing a pool size:
 * - PGlite is ONE Postgres backend, i.e. one session. pglite-socket accepts several TCP
 *   clients at once (`maxConnections`, default 1; connections over the limit are closed
 *   straight away) and multiplexes them onto that one session through a global FIFO queue,
 *   one wire-protocol message at a time. Nothing runs in parallel.
 * - While the session is inside a transaction, only messages from the client that opened
 *   it are run; the others wait until it ends. A transaction left open by a client that
 *   disconnects is rolled back.
 * - Outside a transaction, nothing stops another client's messages from running between
 *   the Parse/Bind/Execute/Sync messages of one extended-protocol query (we did not see it
 *   happen: the `postgres` driver writes each query in one piece and the queue drains it
 *   without yielding), and all clients share session state: the unnamed statement and
 *   portal, SET, temp tables, LISTEN, advisory locks.
 * Therefore: give the `postgres` driver `max: EMBEDDED_PG_MAX_CONNECTIONS` (1). The driver
 * then queues and pipelines queries itself, and `sql.begin` holds the one connection for
 * the transaction. The server still accepts SERVER_MAX_CONNECTIONS clients so that a few
 * separate clients (test workers, a migration run, a pool being replaced) are not refused;
 * they work, with the caveats above. A second connection gives no extra throughput.
 *
 * Lifecycle: `startEmbeddedPostgres` opens (creating if missing) the data directory and
 * starts listening; `stop()` closes the listener and client sockets, then closes PGlite,
 * which leaves the data directory consistent for the next start. PGlite itself does not
 * stop two processes from opening one data directory (which would corrupt it), so a lock
 * file `pglite.lock` holding the owner's pid guards it; a lock left by a dead process is
 * taken over.
 *
 * Memory (the embedded default's idle RSS): PGlite's WASM heap holds Postgres's shared
 * buffers, 128 MB by default; an embedded database of a single service is small, and the OS
 * page cache still holds its files, so it starts with `shared_buffers` EMBEDDED_PG_SHARED_BUFFERS
 * (about 140 MB less RSS). A new data directory is created (initdb) in a short-lived child
 * process: initdb's own WASM instance, about 500 MB, is never released by the process that
 * ran it, so the service's first start would otherwise hold it for good.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

/** Pool size to give the `postgres` driver for an embedded database (see above). */
export const EMBEDDED_PG_MAX_CONNECTIONS = 1;

/** TCP clients the socket server accepts at once (not the recommended pool size). */
const SERVER_MAX_CONNECTIONS = 16;

/** Postgres's `shared_buffers` inside PGlite (its default, 128MB, is most of an idle service's memory). */
export const EMBEDDED_PG_SHARED_BUFFERS = '16MB';

/** Longest an initdb of a new data directory may take in its child process. */
const INITDB_TIMEOUT_MS = 120_000;

/** PGlite's own start parameters (its static `defaultStartParams`) with the shared buffers set. */
function startParams(): string[] | undefined {
  const defaults = (PGlite as unknown as { defaultStartParams?: unknown }).defaultStartParams;
  // A PGlite without the list: its own defaults, unchanged (only memory is lost, not behaviour).
  if (!Array.isArray(defaults) || !defaults.every((x) => typeof x === 'string')) return undefined;
  return [...defaults, '-c', `shared_buffers=${EMBEDDED_PG_SHARED_BUFFERS}`];
}

/**
 * Creates a new data directory (initdb) in a child process that exits when done; nothing is
 * done when `dataDir` already holds a database. The child is killed if this process exits first.
 */
async function initdbApart(dataDir: string): Promise<void> {
  if (existsSync(join(dataDir, 'PG_VERSION'))) return;
  const url = import.meta.resolve('@electric-sql/pglite');
  const script = `const { PGlite } = await import(${JSON.stringify(url)}); const db = await PGlite.create({ dataDir: process.argv[1] }); await db.close();`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script, dataDir], { stdio: ['ignore', 'ignore', 'pipe'] });
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
  const timer = setTimeout(kill, INITDB_TIMEOUT_MS);
  try {
    const code = await new Promise<number | null>((res, rej) => {
      child.once('error', rej);
      child.once('exit', (c) => res(c));
    });
    if (code !== 0) throw new Error(`embedded database ${dataDir}: initdb failed (exit ${code}): ${stderr.trim().split('\n').slice(-3).join(' | ')}`);
  } finally {
    clearTimeout(timer);
    process.removeListener('exit', kill);
  }
}

export interface EmbeddedPostgresOptions {
  /** Data directory; created if missing, reused (persistent) if present. */
  dataDir: string;
  /** Interface to listen on. Default 127.0.0.1. */
  host?: string;
  /** TCP port. Default 0: a free port chosen by the OS. */
  port?: number;
}

export interface EmbeddedPostgres {
  /** `postgres://postgres@<host>:<port>/postgres`, no password, no TLS. */
  url: string;
  stop(): Promise<void>;
}

const LOCK_FILE = 'pglite.lock';

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes the data directory's lock file; returns its release function. */
async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  const path = join(dataDir, LOCK_FILE);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await writeFile(path, `${process.pid}\n`, { flag: 'wx' });
      return () => rm(path, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const owner = Number((await readFile(path, 'utf8').catch(() => '')).trim());
    if (owner === process.pid || (owner > 0 && processAlive(owner))) {
      throw new Error(`embedded database ${dataDir} is already open in process ${owner} (lock file ${path})`);
    }
    await rm(path, { force: true }); // stale: its owner is gone
  }
  throw new Error(`could not lock embedded database ${dataDir} (lock file ${path})`);
}

export async function startEmbeddedPostgres(opts: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const dataDir = resolve(opts.dataDir);
  const host = opts.host ?? '127.0.0.1';
  await mkdir(dataDir, { recursive: true });
  const unlock = await lockDataDir(dataDir);

  let db: PGlite | undefined;
  let server: PGLiteSocketServer;
  try {
    await initdbApart(dataDir);
    db = await PGlite.create({ dataDir, startParams: startParams() });
    server = new PGLiteSocketServer({
      db,
      host,
      port: opts.port ?? 0,
      maxConnections: SERVER_MAX_CONNECTIONS,
    });
    await server.start();
  } catch (err) {
    await db?.close().catch(() => {});
    await unlock();
    throw err;
  }
  const openDb = db;
  // getServerConn() is "<host>:<port>" once listening (the OS-assigned port for port 0).
  const conn = server.getServerConn();
  const port = Number(conn.slice(conn.lastIndexOf(':') + 1));
  const urlHost = host.includes(':') ? `[${host}]` : host;

  let stopped: Promise<void> | undefined;
  return {
    url: `postgres://postgres@${urlHost}:${port}/postgres`,
    stop() {
      stopped ??= (async () => {
        try {
          await server.stop();
          await openDb.close();
        } finally {
          await unlock();
        }
      })();
      return stopped;
    },
  };
}
