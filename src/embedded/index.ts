/**
 * The embedded defaults, for a service started with nothing configured: a supervised
 * nats-server child process (JetStream under DATA_DIR/nats) and PGlite, which runs inside
 * this process, served on a local socket (DATA_DIR/pglite).
 *
 * Guarantees: one server per store directory (a pid file for nats-server, a lock file for
 * PGlite); nothing started here outlives the service, however the service ends (the
 * nats-server child runs in its own process group, stopped by the service after it drained,
 * or by its watchdog when the service ends without doing so); during shutdown the
 * nats-server is never restarted.
 */
export {
  DEFAULT_MAX_PAYLOAD,
  NATS_SERVER_NOT_FOUND_MESSAGE,
  findNatsServerBinary,
  natsServerVersion,
  startNatsServer,
  supportsSyncInterval,
} from './nats-server.js';
export type { NatsServerHandle, NatsServerLogger, StartNatsServerOptions } from './nats-server.js';
export { startSupervisedNatsServer } from './nats-supervisor.js';
export type { NatsSupervisorLogger, SupervisedNatsServer } from './nats-supervisor.js';
export { EMBEDDED_PG_MAX_CONNECTIONS, startEmbeddedPostgres } from './pglite.js';
export type { EmbeddedPostgres, EmbeddedPostgresOptions } from './pglite.js';
