/**
 * Vitest global setup: one nats-server (JetStream) and one database server for the whole run,
 * handed to tests through `inject('natsUrl' | 'pgUrl' | 'pgKind')`.
 *
 * On PostgreSQL, the run's template database is migrated here once, and each test file gets
 * its own copy of it (test/harness/file-database.ts), which its `inject('pgUrl')` returns.
 * On PGlite (one database, one session) every file shares the one database.
 *
 * Database, in order of preference:
 * 1. TEST_DATABASE_URL, if set (a real PostgreSQL you provide, whose role may CREATE DATABASE:
 *    the run fails otherwise; databases that killed runs left there are dropped);
 * 2. a throwaway real PostgreSQL started from the installed server binaries;
 * 3. embedded PGlite (with a console message saying so), unless REQUIRE_REAL_POSTGRES=1,
 *    in which case the run fails.
 * TEST_DATABASE_KIND=pglite skips 1 and 2 (to run the suite against the embedded mode).
 * NATS: NATS_URL if set, else a throwaway nats-server.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from '../src/embedded/pglite.js';
import { startTestNats } from './harness/nats.js';
import { createTemplateDatabase, databasesWithPrefix, dropDatabases, migrateShared, newRunPrefix } from './harness/databases.js';
import { dropStaleDatabases } from './harness/stale-databases.js';
import { startPostgresServer } from './harness/postgres-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    natsUrl: string;
    pgUrl: string;
    pgKind: 'postgres' | 'pglite';
    /** The server's maintenance URL, where per-file databases are created and dropped. */
    pgServerUrl: string;
    /** The migrated template each file's database is cloned from; '' when files share `pgUrl`. */
    pgTemplate: string;
    /** Prefix of every database this run creates. */
    pgPrefix: string;
  }
}

type Stop = () => Promise<void>;

async function startDatabase(): Promise<{ url: string; kind: 'postgres' | 'pglite'; stop: Stop }> {
  const required = process.env.REQUIRE_REAL_POSTGRES === '1';
  let reason: string;
  if (process.env.TEST_DATABASE_KIND === 'pglite') {
    reason = 'TEST_DATABASE_KIND=pglite';
  } else {
    const fromEnv = process.env.TEST_DATABASE_URL;
    if (fromEnv) return { url: fromEnv, kind: 'postgres', stop: async () => {} };
    try {
      const pg = await startPostgresServer();
      if (pg) return { url: pg.url, kind: 'postgres', stop: pg.stop };
      reason = 'no PostgreSQL server binaries (initdb, postgres) found on PATH or in /usr/lib/postgresql/*/bin';
    } catch (err) {
      reason = `starting PostgreSQL failed: ${err instanceof Error ? err.message : String(err)}`;
    }
  }
  if (required) {
    throw new Error(`REQUIRE_REAL_POSTGRES=1 but ${reason}. Install PostgreSQL (e.g. \`apt-get install postgresql-15\`) or set TEST_DATABASE_URL.`);
  }

  console.warn(
    `[test setup] Using embedded PGlite, not a real PostgreSQL (${reason}). To test against a real server, install PostgreSQL (\`apt-get install postgresql-15\`) or set TEST_DATABASE_URL.`,
  );
  const dataDir = await mkdtemp(join(tmpdir(), 'pglite-test-'));
  try {
    const pg = await startEmbeddedPostgres({ dataDir });
    return {
      url: pg.url,
      kind: 'pglite',
      stop: async () => {
        await pg.stop();
        await rm(dataDir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await rm(dataDir, { recursive: true, force: true });
    throw err;
  }
}

function cannotCreateDatabases(url: string, err: unknown): string {
  const u = new URL(url);
  const role = decodeURIComponent(u.username) || 'the role of TEST_DATABASE_URL';
  u.password = '';
  return (
    `[test setup] Cannot create the test databases on ${u.toString()} (${err instanceof Error ? err.message : String(err)}). ` +
    `Each test file gets a database of its own, so the role needs CREATEDB: run \`ALTER ROLE ${role} CREATEDB;\` as a superuser, ` +
    `or unset TEST_DATABASE_URL (a throwaway server is started), or set TEST_DATABASE_KIND=pglite.`
  );
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const stops: Stop[] = [];
  const teardown = async () => {
    for (const stop of stops.reverse()) await stop().catch((err) => console.error('[test teardown]', err));
  };
  try {
    let natsUrl = process.env.NATS_URL;
    if (!natsUrl) {
      const nats = await startTestNats();
      stops.push(nats.stop);
      natsUrl = nats.url;
    }
    const db = await startDatabase();
    stops.push(db.stop);

    const prefix = newRunPrefix();
    let template = '';
    if (db.kind === 'postgres') {
      // Drop the template and any file's database left behind, even on a server we did not start.
      stops.push(async () => dropDatabases(db.url, await databasesWithPrefix(db.url, prefix)));
      const stale = await dropStaleDatabases(db.url, prefix);
      if (stale.length) console.warn(`[test setup] Dropped ${stale.length} database(s) that earlier, killed runs left: ${stale.join(', ')}`);
      try {
        template = await createTemplateDatabase(db.url, prefix);
      } catch (err) {
        // Sharing one database would let the files that run at once see each other's rows.
        throw new Error(cannotCreateDatabases(db.url, err), { cause: err });
      }
    } else {
      // PGlite: the files share the one database (one after another); it is migrated here once.
      await migrateShared(db.url);
    }

    project.provide('natsUrl', natsUrl);
    project.provide('pgUrl', db.url);
    project.provide('pgKind', db.kind);
    project.provide('pgServerUrl', db.url);
    project.provide('pgTemplate', template);
    project.provide('pgPrefix', prefix);
  } catch (err) {
    await teardown();
    throw err;
  }
  return teardown;
}
