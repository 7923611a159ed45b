/**
 * The connection. The same code runs against a PostgreSQL server and against embedded PGlite
 * (served on a local socket), which allows one connection at a time.
 */
import postgres from 'postgres';
import type { Logger } from '../kernel/index.js';

export type Sql = postgres.Sql;
export type { postgres };

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
