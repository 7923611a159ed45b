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
});
