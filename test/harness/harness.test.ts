import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import postgres from 'postgres';
import { describe, expect, inject, it } from 'vitest';
import { EMBEDDED_PG_MAX_CONNECTIONS } from '../../src/embedded/pglite.js';
import { dropDatabases, newRunPrefix } from './databases.js';
import { dropStaleDatabases, staleRuns } from './stale-databases.js';

describe('test harness', () => {
  it('provides a nats-server with JetStream enabled', async () => {
    const nc = await connect({ servers: inject('natsUrl') });
    try {
      const jsm = await jetstreamManager(nc);
      const info = await jsm.getAccountInfo();
      expect(info.limits).toBeDefined();
      expect(nc.info?.jetstream).toBe(true);
    } finally {
      await nc.close();
    }
  });

  it(`provides a database (${inject('pgKind')})`, async () => {
    const kind = inject('pgKind');
    expect(['postgres', 'pglite']).toContain(kind);
    const sql = postgres(inject('pgUrl'), {
      max: kind === 'pglite' ? EMBEDDED_PG_MAX_CONNECTIONS : 2,
      onnotice: () => {},
    });
    try {
      const rows = await sql`select 1 as one`;
      expect(rows[0]?.one).toBe(1);
    } finally {
      await sql.end();
    }
  });

  it.skipIf(!inject('pgTemplate'))('gives this file its own database, migrated, cloned from the template', async () => {
    const url = new URL(inject('pgUrl'));
    expect(url.pathname).toMatch(new RegExp(`^/${inject('pgPrefix')}_harness_`));
    expect(url.pathname).not.toBe(new URL(inject('pgServerUrl')).pathname);
    const sql = postgres(inject('pgUrl'), { max: 1, onnotice: () => {} });
    try {
      const [{ db }] = await sql<{ db: string }[]>`SELECT current_database() AS db`;
      expect(`/${db}`).toBe(url.pathname);
      const migrations = await sql`SELECT name FROM schema_migrations`;
      expect(migrations.length).toBeGreaterThan(0);
      // No other file's rows: the clone starts from the template's empty tables.
      const [{ n }] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM tasks`;
      expect(n).toBe(0);
    } finally {
      await sql.end();
    }
  });
});

describe('databases that killed runs left', () => {
  const HOUR = 3600 * 1000;
  const now = Date.UTC(2026, 0, 1);
  const c = (datname: string, sessions = 0, createdMs: number | null = null) => ({ datname, sessions, createdMs });

  it('a run goes when it started over an hour ago and none of its databases has a session', () => {
    const own = newRunPrefix(now);
    const old = newRunPrefix(now - 2 * HOUR);
    const busy = newRunPrefix(now - 2 * HOUR - 1000);
    const recent = newRunPrefix(now - HOUR / 2);
    const stale = staleRuns(
      [
        c(`${own}_template`),
        c(`${old}_template`),
        c(`${old}_store_1`),
        // A long run still going: its template has no session (connections refused), a file's database has.
        c(`${busy}_template`),
        c(`${busy}_store_1`, 1),
        c(`${recent}_template`),
        // Names of the harness before the timestamp: by the age of their files, if readable.
        c('taskorch_test_0123abcd_template', 0, now - 2 * HOUR),
        c('taskorch_test_89abcdef_template', 0, null),
        c('taskorch_test_other'),
      ],
      own,
      now,
    );
    expect(stale).toEqual([[`${old}_template`, `${old}_store_1`], ['taskorch_test_0123abcd_template']]);
  });

  it.skipIf(!inject('pgTemplate'))('are dropped from the server, this run and a recent run kept', async () => {
    const server = inject('pgServerUrl');
    const old = newRunPrefix(Date.now() - 2 * 3600 * 1000);
    const recent = newRunPrefix();
    const sql = postgres(server, { max: 1, onnotice: () => {} });
    const names = async () => (await sql<{ datname: string }[]>`SELECT datname FROM pg_database`).map((r) => r.datname);
    try {
      await sql.unsafe(`CREATE DATABASE "${old}_template"`);
      await sql.unsafe(`ALTER DATABASE "${old}_template" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`);
      await sql.unsafe(`CREATE DATABASE "${old}_harness_x"`);
      await sql.unsafe(`CREATE DATABASE "${recent}_harness_x"`);
      const dropped = await dropStaleDatabases(server, inject('pgPrefix'));
      expect(dropped).toEqual(expect.arrayContaining([`${old}_template`, `${old}_harness_x`]));
      const left = await names();
      expect(left).not.toContain(`${old}_template`);
      expect(left).not.toContain(`${old}_harness_x`);
      expect(left).toContain(`${recent}_harness_x`);
      expect(left).toContain(inject('pgTemplate'));
      expect(left).toContain(new URL(inject('pgUrl')).pathname.slice(1));
    } finally {
      await sql.end();
      await dropDatabases(server, [`${old}_template`, `${old}_harness_x`, `${recent}_harness_x`]);
    }
  });
});
