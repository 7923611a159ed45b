/**
 * The embedded defaults of a process with nothing configured: a supervised nats-server when
 * NATS_URL is unset, PGlite when DATABASE_URL is unset, both under DATA_DIR.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config/index.js';
import {
  EMBEDDED_PG_MAX_CONNECTIONS,
  findNatsServerBinary,
  natsServerVersion,
  startEmbeddedPostgres,
  startSupervisedNatsServer,
  supportsSyncInterval,
  type SupervisedNatsServer,
} from '../embedded/index.js';
import type { Logger } from '../kernel/index.js';
import type { Teardown } from './teardown.js';

export interface Backends {
  natsUrl: string;
  embeddedNats?: SupervisedNatsServer;
  /** The embedded server's sync_interval, when one is set. */
  natsSyncInterval?: string;
  databaseUrl: string;
  maxConnections: number;
}

/**
 * Starts what is not configured, the nats-server and the database at once; each server
 * started is registered on `teardown` (one that started while the other failed is stopped
 * by the caller's teardown like any other).
 */
export async function startBackends(cfg: Config, dataDir: string, log: Logger, teardown: Teardown): Promise<Backends> {
  const [nats, db] = await Promise.allSettled([startNats(cfg, dataDir, log, teardown), startDatabase(cfg, dataDir, log, teardown)]);
  if (nats.status === 'rejected') throw nats.reason;
  if (db.status === 'rejected') throw db.reason;
  return { ...nats.value, ...db.value };
}

async function startNats(
  cfg: Config,
  dataDir: string,
  log: Logger,
  teardown: Teardown,
): Promise<Pick<Backends, 'natsUrl' | 'embeddedNats' | 'natsSyncInterval'>> {
  if (cfg.nats.url) return { natsUrl: cfg.nats.url };
  mkdirSync(join(dataDir, 'nats'), { recursive: true });
  // No acknowledged event lost: an ack means written to the store file (survives a kill of
  // the server); with sync_interval "always" (nats-server >= 2.10) also fsynced (survives
  // a power loss). Older servers fsync every 2 minutes: say so.
  const bin = findNatsServerBinary();
  const canSync = supportsSyncInterval(bin ? natsServerVersion(bin) : undefined);
  const syncInterval = cfg.nats.syncInterval ?? (canSync ? 'always' : undefined);
  if (!canSync && !cfg.nats.syncInterval) {
    log.warn(
      'nats-server < 2.10: acknowledged events survive a crash of the server process but not a power loss (fsync every 2 minutes); see deploy/README.md',
    );
  }
  const srv = await startSupervisedNatsServer({ storeDir: join(dataDir, 'nats'), port: 0, host: '127.0.0.1', logger: log, syncInterval });
  teardown.push(() => srv.stop());
  log.info({ url: srv.url }, 'embedded nats-server started');
  return { natsUrl: srv.url, embeddedNats: srv, natsSyncInterval: syncInterval };
}

async function startDatabase(cfg: Config, dataDir: string, log: Logger, teardown: Teardown): Promise<Pick<Backends, 'databaseUrl' | 'maxConnections'>> {
  if (cfg.db.url) return { databaseUrl: cfg.db.url, maxConnections: cfg.db.maxConnections };
  mkdirSync(join(dataDir, 'pglite'), { recursive: true });
  const pg = await startEmbeddedPostgres({ dataDir: join(dataDir, 'pglite') });
  teardown.push(() => pg.stop());
  log.info('embedded PGlite started');
  return { databaseUrl: pg.url, maxConnections: EMBEDDED_PG_MAX_CONNECTIONS };
}
