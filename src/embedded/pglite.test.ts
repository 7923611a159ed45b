import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMBEDDED_PG_MAX_CONNECTIONS, EMBEDDED_PG_SHARED_BUFFERS, startEmbeddedPostgres } from './pglite.js';

describe('startEmbeddedPostgres', () => {
  let parent: string;
  let dataDir: string;

  beforeAll(async () => {
    parent = await mkdtemp(join(tmpdir(), 'pglite-unit-'));
    dataDir = join(parent, 'nested', 'data'); // does not exist yet
  });
  afterAll(async () => {
    await rm(parent, { recursive: true, force: true });
  });

  const open = (url: string) => postgres(url, { max: EMBEDDED_PG_MAX_CONNECTIONS, onnotice: () => {} });

  it('serves the postgres driver: parameters, transactions, jsonb, timestamptz, errors', async () => {
    const pg = await startEmbeddedPostgres({ dataDir });
    expect(pg.url).toMatch(/^postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres$/);
    const sql = open(pg.url);
    try {
      const [row] = await sql`select ${41}::int + 1 as n, ${'héllo'}::text as s`;
      expect(row).toEqual({ n: 42, s: 'héllo' });
      // Lean: small shared buffers (PGlite's other start parameters kept: UTC, search_path public).
      const [settings] = await sql`select current_setting('shared_buffers') as sb, current_setting('TimeZone') as tz, current_setting('search_path') as sp`;
      expect(settings).toEqual({ sb: EMBEDDED_PG_SHARED_BUFFERS, tz: 'UTC', sp: 'public' });

      await sql`create table items (id serial primary key, doc jsonb not null, at timestamptz not null)`;
      const doc = { a: 1, nested: { list: [1, 'two', null], ok: true }, text: 'é€' };
      const at = new Date('2024-01-02T03:04:05.678Z');
      const [inserted] = await sql`insert into items (doc, at) values (${sql.json(doc)}, ${at}) returning doc, at`;
      expect(inserted?.doc).toEqual(doc);
      expect(inserted?.at).toBeInstanceOf(Date);
      expect((inserted?.at as Date).toISOString()).toBe(at.toISOString());
      const [byPath] = await sql`select doc->'nested'->>'ok' as ok from items where doc @> ${sql.json({ a: 1 })}`;
      expect(byPath?.ok).toBe('true');

      // A failed transaction rolls back; a successful one commits.
      await expect(
        sql.begin(async (tx) => {
          await tx`insert into items (doc, at) values (${tx.json({ a: 2 })}, now())`;
          throw new Error('abort');
        }),
      ).rejects.toThrow('abort');
      await sql.begin(async (tx) => {
        await tx`insert into items (doc, at) values (${tx.json({ a: 3 })}, now())`;
      });
      const rows = await sql`select doc->>'a' as a from items order by id`;
      expect(rows.map((r) => r.a)).toEqual(['1', '3']);

      // SQL errors reach the client and leave the connection usable.
      await expect(sql`select 1 / ${0}::int`).rejects.toThrow(/division by zero/);
      const many = await Promise.all(Array.from({ length: 20 }, (_, i) => sql`select ${i}::int as i`));
      expect(many.map((r) => r[0]?.i)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    } finally {
      await sql.end();
      await pg.stop();
    }
  });

  it('keeps data across stop and restart on the same dataDir, and refuses a second opener', async () => {
    const pg = await startEmbeddedPostgres({ dataDir });
    const sql = open(pg.url);
    try {
      await expect(startEmbeddedPostgres({ dataDir })).rejects.toThrow(/already open/);
      const [{ count } = { count: -1 }] = await sql`select count(*)::int as count from items`;
      expect(count).toBe(2);
    } finally {
      await sql.end();
      await pg.stop();
    }
  });
});
