/**
 * The database: the connection (db.ts), migrations (migrate.ts: plain SQL files applied in
 * order under an advisory lock, so any number of processes may start at once), the statement
 * batcher (batcher.ts) and many rows in one statement of fixed text (insert-rows.ts). No domain
 * SQL lives here: each module owns its tables and their SQL (tasks/, sessions/, auth/,
 * scheduler/).
 *
 * The same code runs against a PostgreSQL server and against embedded PGlite (served on a
 * local socket), which allows one connection at a time.
 */
export { connectSql, type postgres, type Sql } from './db.js';
export { migrate } from './migrate.js';
export { Batcher } from './batcher.js';
export { rowInserter, type ColumnType, type RowInserter } from './insert-rows.js';
