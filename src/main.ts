/**
 * Entry point: `npm start`. Foreground process; SIGTERM/SIGINT shut it down cleanly
 * (in-flight workflows are handed back to the work queue for another worker), whether sent to
 * this process or to its whole process group (Ctrl-C, `kill -- -pgid`): the embedded
 * nats-server is outside that group and stops last, after the service has drained. systemd's
 * default KillMode=control-group is not a group signal: it signals every process of the unit,
 * the nats-server too, which then stops while the service drains (nothing is restarted or left
 * behind, but the drain loses its bus); deploy/README.md recommends KillMode=mixed.
 */
import { ConfigError, loadConfig } from './config/index.js';
import { createLogger, resolveLogFormat } from './kernel/index.js';
import { startApp, startupBanner, VERSION, type App } from './app/index.js';

async function main(): Promise<void> {
  let cfg;
  try {
    cfg = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
  const format = resolveLogFormat(cfg.logFormat);
  const log = createLogger({ level: cfg.logLevel, format });
  // Listened for from the start: a signal during start-up stops the service once it is up
  // (startApp undoes a failed start itself), instead of killing it half-started. A second one
  // before then is someone who will not wait: exit at once, as an unhandled signal would (the
  // embedded nats-server's watchdog stops the server).
  let app: App | undefined = undefined;
  let signalled: string | undefined;
  const stop = async (signal: string) => {
    if (!app && signalled) {
      log.warn({ signal }, 'second signal during start-up; exiting without a clean shutdown');
      process.exit(signal === 'SIGINT' ? 130 : 143);
    }
    if (signalled) return;
    signalled = signal;
    if (!app) {
      log.info({ signal }, 'signal during start-up: stopping once started (a second one exits at once)');
      return; // stopped right after start-up
    }
    log.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      log.error('shutdown took longer than 20 s; exiting');
      process.exit(1);
    }, 20_000);
    force.unref();
    await app.stop();
    log.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  app = await startApp(cfg, log);
  log.info(
    { roles: [...cfg.roles], gateway: app.gatewayPort, grpc: app.grpcPort, llm: cfg.llm.provider },
    app.gatewayPort ? `ready: http://localhost:${app.gatewayPort}` : 'ready',
  );
  // A person at a terminal gets the essentials in one place; JSON consumers have the line above.
  if (format === 'pretty') {
    process.stdout.write(startupBanner(cfg, app, VERSION, process.stdout.isTTY === true && process.stdout.hasColors?.() === true));
  }
  if (signalled) {
    const signal = signalled;
    signalled = undefined;
    await stop(signal);
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
