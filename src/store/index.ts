/**
 * The database: the connection, migrations (plain SQL files applied in order under an
 * advisory lock, so any number of processes may start at once) and the statement batcher.
 * No domain SQL lives here: each module owns its tables and their SQL (tasks/, sessions/,
 * auth/, scheduler/).
 *
 * The same code runs against a PostgreSQL server and against embedded PGlite (served on a
 * local socket), which allows one connection at a time.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import type { Logger } from '../kernel/index.js';

export type Sql = postgres.Sql;
export type { postgres };

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'migrations');

export function connectSql(url: string, opts: { max: number; log?: Logger }): Sql {
  return postgres(url, {
    max: opts.max,
    onnotice: () => {},
    idle_timeout: 0,
    connect_timeout: 10,
    // jsonb values are passed through sql.json(); results parse automatically.
    types: {},
  });
}

export async function migrate(sql: Sql, log?: Logger): Promise<string[]> {
  const files = readdirSync(MIGRATIONS_DIR)
    .filter((f) => f.endsWith('.sql'))
    .sort();
  const applied: string[] = [];
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(727274)`;
    await tx`CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`;
    const done = new Set((await tx`SELECT name FROM schema_migrations`).map((r) => r.name as string));
    for (const f of files) {
      if (done.has(f)) continue;
      await tx.unsafe(readFileSync(join(MIGRATIONS_DIR, f), 'utf8'));
      await tx`INSERT INTO schema_migrations (name) VALUES (${f})`;
      applied.push(f);
    }
  });
  if (applied.length) log?.info({ applied }, 'database migrations applied');
  return applied;
}

/** SQLSTATE classes 22 (data exception) and 23 (integrity constraint): caused by one row's values. */
const isDataError = (err: unknown) => /^2[23]/.test(String((err as { code?: unknown })?.code ?? ''));

/**
 * Coalesces calls made in the same tick into one multi-row statement. When a batch fails on a
 * row's data (e.g. an invalid uuid), its items are retried one by one so that only the bad
 * item's caller gets the error, not every caller that happened to share its tick.
 */
export class Batcher<T> {
  private pending: { item: T; resolve: () => void; reject: (e: unknown) => void }[] = [];
  private scheduled = false;
  constructor(
    private readonly flushFn: (items: T[]) => Promise<void>,
    private readonly maxBatch = 500,
  ) {}
  push(item: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }
  private async flush(): Promise<void> {
    this.scheduled = false;
    while (this.pending.length) {
      const batch = this.pending.splice(0, this.maxBatch);
      try {
        await this.flushFn(batch.map((b) => b.item));
        batch.forEach((b) => b.resolve());
      } catch (err) {
        if (batch.length > 1 && isDataError(err)) {
          await Promise.all(batch.map((b) => this.flushFn([b.item]).then(b.resolve, b.reject)));
        } else {
          batch.forEach((b) => b.reject(err));
        }
      }
    }
  }
}
