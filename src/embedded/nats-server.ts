/**
 * Launches a local `nats-server` with JetStream as a child process (the embedded default
 * and the test harness). Works with nats-server 2.9.10 (Debian stable) and newer.
 *
 * The launcher writes `nats-server.conf` into `storeDir`, with JetStream storage under
 * `storeDir` and a ports file directory; port 0 becomes nats-server's random port (-1),
 * and the port actually bound is read back from the ports file the server writes once it
 * listens. `stop()` sends SIGTERM (JetStream flushes and shuts down cleanly), and SIGKILL
 * if the process has not exited 5 s later.
 *
 * The server runs in a process group of its own, so that only its parent decides when it
 * stops; a watchdog (watchdog.ts) stops it when the parent ends without having done so.
 * Its output goes to `nats-server.log` in `storeDir`, never to a pipe: a pipe whose reader
 * (this process) is gone would kill it with SIGPIPE at its first log line, in the middle of
 * the clean shutdown the watchdog asked for.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { accessSync, closeSync, constants as fsConstants, openSync, statSync } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { connect as netConnect } from 'node:net';
import { delimiter, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { watchOverChild } from './watchdog.js';

export const NATS_SERVER_NOT_FOUND_MESSAGE =
  'nats-server not found: install it with `apt-get install nats-server` (Debian/Ubuntu) or put the binary on PATH, or set NATS_URL to an existing server with JetStream';

/** Default maximum message payload (nats-server's own default is 1 MB). */
export const DEFAULT_MAX_PAYLOAD = 8 * 1024 * 1024;

const START_TIMEOUT_MS = 10_000;
const STOP_GRACE_MS = 5_000;
const LOG_TAIL_BYTES = 16 * 1024;
/** Past this size at a start, the log is moved to `nats-server.log.1` (replacing the older one). */
const LOG_ROTATE_BYTES = 16 * 1024 * 1024;

export interface NatsServerLogger {
  info: (...args: any[]) => void;
  warn: (...args: any[]) => void;
}

export interface StartNatsServerOptions {
  /** Directory for the config file, the ports file and JetStream storage. Created if missing. */
  storeDir: string;
  /** Client port. Default 0: a free port chosen by the server. */
  port?: number;
  /** Interface to listen on. Default 127.0.0.1. */
  host?: string;
  /** Path of the nats-server binary. Default: see findNatsServerBinary(). */
  binary?: string;
  /** Maximum message payload in bytes. Default DEFAULT_MAX_PAYLOAD (8 MB). */
  maxPayload?: number;
  /**
   * JetStream `sync_interval` (`always` or a duration): when acknowledged messages are
   * fsynced. Needs nats-server >= 2.10; asking for it on an older server is an error.
   */
  syncInterval?: string;
  logger?: NatsServerLogger;
}

export interface NatsServerHandle {
  /** `nats://<host>:<port>` */
  url: string;
  port: number;
  pid: number;
  /** Settles when the process exits, for whatever reason (the exit code, or the signal). */
  exited: Promise<number | string>;
  stop(): Promise<void>;
}

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Looks for `nats-server`: env NATS_SERVER_BIN (if set, only there), then each PATH entry,
 * then /usr/sbin, /usr/bin, /usr/local/bin (Debian installs it in /usr/sbin, which is not
 * on every user's PATH).
 */
/** The config file of the server on `storeDir`: its `-c` argument names the store's server. */
export function natsServerConfigPath(storeDir: string): string {
  return join(resolve(storeDir), 'nats-server.conf');
}

/**
 * Opens the store's log for appending, rotated once it has grown large; the returned
 * offset is where this start's output begins.
 */
async function openLog(path: string): Promise<{ fd: number; from: number }> {
  const size = await stat(path).then(
    (s) => s.size,
    () => 0,
  );
  if (size > LOG_ROTATE_BYTES) await rename(path, `${path}.1`);
  return { fd: openSync(path, 'a'), from: size > LOG_ROTATE_BYTES ? 0 : size };
}

/** The last LOG_TAIL_BYTES the server wrote to its log since offset `from`. */
async function readLogTail(path: string, from: number): Promise<string> {
  try {
    const f = await open(path, 'r');
    try {
      const size = (await f.stat()).size;
      const start = Math.max(from, size - LOG_TAIL_BYTES);
      const buf = Buffer.alloc(Math.max(0, size - start));
      await f.read(buf, 0, buf.length, start);
      return buf.toString('utf8');
    } finally {
      await f.close();
    }
  } catch {
    return '';
  }
}

export function findNatsServerBinary(): string | undefined {
  const fromEnv = process.env.NATS_SERVER_BIN;
  if (fromEnv) return isExecutableFile(fromEnv) ? resolve(fromEnv) : undefined;
  const dirs = [...(process.env.PATH ?? '').split(delimiter).filter(Boolean), '/usr/sbin', '/usr/bin', '/usr/local/bin'];
  for (const dir of dirs) {
    const candidate = join(dir, 'nats-server');
    if (isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

function resolveBinary(explicit: string | undefined): string {
  if (explicit) {
    if (!isExecutableFile(explicit)) {
      throw new Error(`nats-server binary ${JSON.stringify(explicit)} is not an executable file. ${NATS_SERVER_NOT_FOUND_MESSAGE}`);
    }
    return explicit;
  }
  const fromEnv = process.env.NATS_SERVER_BIN;
  if (fromEnv && !isExecutableFile(fromEnv)) {
    throw new Error(`NATS_SERVER_BIN=${JSON.stringify(fromEnv)} is not an executable file. ${NATS_SERVER_NOT_FOUND_MESSAGE}`);
  }
  const found = findNatsServerBinary();
  if (!found) throw new Error(NATS_SERVER_NOT_FOUND_MESSAGE);
  return found;
}

function renderConfig(o: { host: string; port: number; storeDir: string; portsDir: string; maxPayload: number; syncInterval?: string }): string {
  // JSON string literals are valid NATS config strings and take care of quoting paths.
  return [
    `listen: ${JSON.stringify(`${o.host}:${o.port === 0 ? -1 : o.port}`)}`,
    `ports_file_dir: ${JSON.stringify(o.portsDir)}`,
    `max_payload: ${o.maxPayload}`,
    `jetstream {`,
    `  store_dir: ${JSON.stringify(o.storeDir)}`,
    ...(o.syncInterval ? [`  sync_interval: ${JSON.stringify(o.syncInterval)}`] : []),
    `}`,
    '',
  ].join('\n');
}

/** The server's version as [major, minor, patch], from `nats-server --version`. */
export function natsServerVersion(binary: string): [number, number, number] | undefined {
  // Asked once per binary: start-up and every supervised restart would otherwise run it again.
  if (!versions.has(binary)) {
    let v: [number, number, number] | undefined;
    try {
      const m = /v(\d+)\.(\d+)\.(\d+)/.exec(execFileSync(binary, ['--version'], { encoding: 'utf8', timeout: 5000 }));
      v = m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
    } catch {
      v = undefined;
    }
    versions.set(binary, v);
  }
  return versions.get(binary);
}

const versions = new Map<string, [number, number, number] | undefined>();

/** sync_interval arrived in nats-server 2.10. */
export function supportsSyncInterval(v: [number, number, number] | undefined): boolean {
  return !!v && (v[0] > 2 || (v[0] === 2 && v[1] >= 10));
}

/** Reads `<name>_<pid>.ports` ({"nats":["nats://host:port"], ...}) if it exists and parses. */
async function readPortsFile(portsDir: string, pid: number): Promise<number | undefined> {
  let names: string[];
  try {
    names = await readdir(portsDir);
  } catch {
    return undefined;
  }
  const name = names.find((n) => n.endsWith(`_${pid}.ports`));
  if (!name) return undefined;
  try {
    const info = JSON.parse(await readFile(join(portsDir, name), 'utf8')) as { nats?: string[] };
    const first = info.nats?.[0];
    if (!first) return undefined;
    const port = Number(new URL(first).port);
    return Number.isInteger(port) && port > 0 ? port : undefined;
  } catch {
    return undefined; // written but not yet complete
  }
}

function canConnect(host: string, port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = netConnect({ host, port });
    const finish = (ok: boolean) => {
      socket.destroy();
      done(ok);
    };
    socket.setTimeout(1000, () => finish(false));
    socket.once('connect', () => finish(true));
    socket.once('error', () => finish(false));
  });
}

function waitForExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((done) => {
    const timer = setTimeout(() => done(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      done(true);
    });
  });
}

export async function startNatsServer(opts: StartNatsServerOptions): Promise<NatsServerHandle> {
  const binary = resolveBinary(opts.binary);
  const host = opts.host ?? '127.0.0.1';
  const requestedPort = opts.port ?? 0;
  const storeDir = resolve(opts.storeDir);
  const portsDir = join(storeDir, 'ports');
  const configPath = natsServerConfigPath(storeDir);
  const logPath = join(storeDir, 'nats-server.log');
  const logger = opts.logger;

  if (opts.syncInterval && !supportsSyncInterval(natsServerVersion(binary))) {
    throw new Error(`nats-server at ${binary} does not support sync_interval (needs 2.10 or newer); unset NATS_SYNC_INTERVAL or upgrade nats-server`);
  }
  await mkdir(portsDir, { recursive: true });
  await writeFile(
    configPath,
    renderConfig({ host, port: requestedPort, storeDir, portsDir, maxPayload: opts.maxPayload ?? DEFAULT_MAX_PAYLOAD, syncInterval: opts.syncInterval }),
  );

  // Detached: a signal to the service's process group (a terminal's Ctrl-C, `kill -- -pgid`)
  // must not stop the server under a service that is still draining into it; the service stops
  // it last, and the watchdog stops it if the service ends in any other way. (systemd's default
  // KillMode=control-group signals every process of the unit, this one included: the supervisor
  // allows for that, and deploy/README.md recommends KillMode=mixed.)
  // nats-server logs to stderr; its stderr is the log file, config errors before logging starts
  // included, so a failed start can still be explained.
  const log = await openLog(logPath);
  const argv = [binary, '-c', configPath];
  let child: ChildProcess;
  try {
    child = spawn(binary, argv.slice(1), { stdio: ['ignore', 'ignore', log.fd], detached: true });
  } finally {
    closeSync(log.fd); // the child has its own copy
  }
  const watchdog = child.pid !== undefined ? watchOverChild(child, argv, STOP_GRACE_MS) : undefined;
  let spawnError: Error | undefined;
  child.once('error', (err) => {
    spawnError = err;
  });

  const fail = async (reason: string): Promise<never> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await waitForExit(child, 2000);
    }
    await watchdog?.dismiss();
    const output = await readLogTail(logPath, log.from);
    if (output) logger?.warn({ stderr: output }, `nats-server output (${binary})`);
    const tail = output.trim().split('\n').slice(-5).join('\n');
    throw new Error(`nats-server failed to start: ${reason}${tail ? `\n${tail}` : ''}`);
  };

  const deadline = Date.now() + START_TIMEOUT_MS;
  let port: number | undefined;
  for (;;) {
    if (spawnError) return fail(spawnError.message);
    if (child.exitCode !== null || child.signalCode !== null) {
      return fail(`exited with ${child.exitCode !== null ? `code ${child.exitCode}` : child.signalCode}`);
    }
    if (child.pid !== undefined) {
      port ??= await readPortsFile(portsDir, child.pid);
      if (port !== undefined && (await canConnect(host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host, port))) break;
    }
    if (Date.now() > deadline) return fail(`not accepting connections after ${START_TIMEOUT_MS / 1000} s`);
    await sleep(50);
  }

  const pid = child.pid!;
  const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  const url = `nats://${urlHost}:${port}`;
  logger?.info({ url, pid, storeDir }, 'nats-server started');

  const exited = new Promise<number | string>((done) => {
    if (child.exitCode !== null || child.signalCode !== null) done(child.exitCode ?? child.signalCode!);
    else child.once('exit', (code, signal) => done(code ?? signal ?? 'unknown'));
  });
  // Gone, for whatever reason: nothing left to watch (and its pid may be reused).
  void exited.then(() => watchdog?.dismiss());
  let stopping: Promise<void> | undefined;
  return {
    url,
    port,
    pid,
    exited,
    stop() {
      stopping ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) {
          child.kill('SIGTERM');
          if (!(await waitForExit(child, STOP_GRACE_MS))) {
            logger?.warn({ pid }, `nats-server did not exit ${STOP_GRACE_MS / 1000} s after SIGTERM; sending SIGKILL`);
            child.kill('SIGKILL');
            await waitForExit(child, STOP_GRACE_MS);
          }
        }
        await watchdog?.dismiss();
        // nats-server removes its ports file on a clean exit, not after SIGKILL.
        const names = await readdir(portsDir).catch(() => [] as string[]);
        await Promise.all(names.filter((n) => n.endsWith(`_${pid}.ports`)).map((n) => rm(join(portsDir, n), { force: true })));
      })();
      return stopping;
    },
  };
}
