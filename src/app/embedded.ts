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
  databaseUrl: string;
  maxConnections: number;
}

/** Starts what is not configured; each server started is registered on `teardown`. */
export async function startBackends(cfg: Config, dataDir: string, log: Logger, teardown: Teardown): Promise<Backends> {
  let natsUrl = cfg.nats.url;
  let embeddedNats: SupervisedNatsServer | undefined;
  if (!natsUrl) {
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
    embeddedNats = srv;
    natsUrl = srv.url;
    log.info({ url: natsUrl }, 'embedded nats-server started');
  }
  let databaseUrl = cfg.db.url;
  let maxConnections = cfg.db.maxConnections;
  if (!databaseUrl) {
    mkdirSync(join(dataDir, 'pglite'), { recursive: true });
    const pg = await startEmbeddedPostgres({ dataDir: join(dataDir, 'pglite') });
    teardown.push(() => pg.stop());
    databaseUrl = pg.url;
    maxConnections = EMBEDDED_PG_MAX_CONNECTIONS;
    log.info('embedded PGlite started');
  }
  return { natsUrl, embeddedNats, databaseUrl, maxConnections };
}
