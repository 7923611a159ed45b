/**
 * The embedded nats-server, supervised: when the child exits while the service runs, it is
 * started again on the same port and store directory (JetStream recovers its streams,
 * consumers and buckets from there), retrying with backoff until it is up. Clients reconnect
 * to the same URL on their own.
 *
 * Lifecycle: once the service begins to shut down (`endSupervision()`, then `stop()`), an exit
 * is never answered with a restart, and a restart under way when that happens is stopped as
 * soon as it is up: nothing started here outlives the service. The child does not get the
 * signals of the service's process group (nats-server.ts starts it detached), so it stops
 * when the service, having drained, calls `stop()`. A signal can still reach the child and the
 * service at the same moment (systemd's default KillMode=control-group signals every process
 * of the unit); an exit is therefore answered only after a short pause, in which the service's
 * own signal handler gets to begin the shutdown.
 *
 * One server per store directory: a pid file there names the current one, and a server left
 * running by an earlier process (its watchdog could not run, e.g. the machine's pid namespace
 * went away) is stopped before a new one starts.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { backoffDelay } from '../kernel/index.js';
import { natsServerConfigPath, startNatsServer, type NatsServerHandle, type NatsServerLogger, type StartNatsServerOptions } from './nats-server.js';

const RESTART_BACKOFF = { baseMs: 100, capMs: 5000, jitter: 'none' } as const;
/**
 * How long an exit waits for a shutdown that began at the same moment before it counts as a
 * crash. Every exit waits: nats-server answers SIGTERM with exit code 1, so the exit status
 * does not tell a signal from a failure.
 */
const EXIT_SETTLE_MS = 250;

export interface SupervisedNatsServer {
  /** Stable across restarts: the same host and port. */
  url: string;
  port: number;
  /** The pid of the current process. */
  readonly pid: number;
  /** Shutdown has begun: an exit of the server from now on is not answered with a restart. */
  endSupervision(): void;
  /** Ends supervision and stops the server (and a restart under way). */
  stop(): Promise<void>;
}

export interface NatsSupervisorLogger extends NatsServerLogger {
  error: (...args: any[]) => void;
}

export async function startSupervisedNatsServer(opts: StartNatsServerOptions & { logger: NatsSupervisorLogger }): Promise<SupervisedNatsServer> {
  // Two servers on one store directory would corrupt it.
  const pidFile = join(resolve(opts.storeDir), 'nats-server.pid');
  await stopOrphan(pidFile, natsServerConfigPath(opts.storeDir), opts.logger);
  let current = await startNatsServer(opts);
  await writeFile(pidFile, String(current.pid));
  const port = current.port;
  const log = opts.logger;
  const ending = new AbortController();
  let restarting: Promise<void> | undefined;
  let restarts = 0;

  const restart = async (): Promise<void> => {
    for (let attempt = 1; !ending.signal.aborted; attempt++) {
      try {
        const next = await startNatsServer({ ...opts, port });
        current = next;
        if (ending.signal.aborted) return; // stop() stops `current`, which is now this one
        restarts++;
        await writeFile(pidFile, String(next.pid)).catch(() => {});
        log.warn({ pid: next.pid, restarts }, 'embedded nats-server restarted');
        watch(next);
        return;
      } catch (err) {
        const delay = backoffDelay(RESTART_BACKOFF, attempt);
        log.error({ err }, `embedded nats-server restart failed; retrying in ${delay} ms`);
        await sleep(delay, undefined, { signal: ending.signal }).catch(() => {});
      }
    }
  };
  const watch = (h: NatsServerHandle): void => {
    void h.exited.then(async (how) => {
      await sleep(EXIT_SETTLE_MS, undefined, { signal: ending.signal }).catch(() => {});
      if (ending.signal.aborted) return;
      log.error({ pid: h.pid, exit: how }, 'embedded nats-server exited unexpectedly; restarting it on the same store');
      restarting = restart().finally(() => (restarting = undefined));
    });
  };
  watch(current);
  let stopping: Promise<void> | undefined;
  return {
    url: current.url,
    port,
    get pid() {
      return current.pid;
    },
    endSupervision() {
      ending.abort();
    },
    stop() {
      ending.abort();
      stopping ??= (async () => {
        await restarting;
        await current.stop();
        await rm(pidFile, { force: true });
      })();
      return stopping;
    },
  };
}

/**
 * Stops a nats-server left running by a previous process of this service on the same store:
 * only a process started exactly as nats-server.ts starts it (`<binary> -c <this store's
 * config>`), since a stale pid file may name a pid now reused by anything, another nats-server
 * included.
 */
async function stopOrphan(pidFile: string, configPath: string, log: NatsServerLogger): Promise<void> {
  const pid = Number(await readFile(pidFile, 'utf8').catch(() => ''));
  if (!Number.isInteger(pid) || pid <= 0) return;
  // Every argument followed by a NUL: exactly three arguments.
  const args = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
  if (args.length !== 4 || args[1] !== '-c' || args[2] !== configPath || args[3] !== '') return;
  log.warn({ pid }, 'stopping a nats-server left running on this store by an earlier process');
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  for (let i = 0; i < 50; i++) {
    await sleep(100);
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
  }
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    /* gone */
  }
  await sleep(100);
}
