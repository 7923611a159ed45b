import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import postgres from 'postgres';
import { describe, expect, inject, it } from 'vitest';
import { EMBEDDED_PG_MAX_CONNECTIONS } from '../../src/embedded/pglite.js';

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
