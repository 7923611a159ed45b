/**
 * Many rows in one INSERT whose text does not depend on how many there are: each column goes
 * as one text[] parameter, unnested and cast to the column's type. The statement is then
 * parsed, described and planned once per connection and only bound after that.
 *
 * Why: a `VALUES (...), (...)` list of n rows is a new statement for every n. The driver
 * describes an unprepared statement before binding it (one more round trip each time), and the
 * server parses and plans it again, with up to thousands of parameters. Measured on the
 * ROLES=all intake (issue 18 §2): every batched INSERT of tasks and events was described, and
 * most of the sessions' and model calls'.
 */
import type { Sql } from './db.js';

/** The PostgreSQL type a column's text is cast to. */
export type ColumnType = 'text' | 'uuid' | 'jsonb' | 'timestamptz' | 'bigint' | 'integer' | 'boolean' | 'double precision';

/** An INSERT of any number of rows into `table`'s `columns`, `tail` after it (e.g. `ON CONFLICT DO NOTHING`). */
export type RowInserter<R> = (sql: Sql, rows: readonly R[]) => Promise<number>;

const IDENT = /^[a-z_][a-z0-9_]*$/;

/**
 * Builds the statement once. `table` and the column names are the caller's constants (checked
 * as plain identifiers), never input. A column's value is sent as text: null and undefined as
 * NULL, a Date as its ISO time, jsonb as its JSON text (any JSON value, a string included),
 * anything else as `String(value)`. Resolves to the number of rows inserted.
 */
export function rowInserter<R extends object>(
  table: string,
  columns: readonly (readonly [name: keyof R & string, type: ColumnType])[],
  tail = '',
): RowInserter<R> {
  for (const name of [table, ...columns.map(([n]) => n)]) {
    if (!IDENT.test(name)) throw new Error(`rowInserter: ${JSON.stringify(name)} is not a plain identifier`);
  }
  const names = columns.map(([n]) => n).join(', ');
  const casts = columns.map(([n, t]) => `u.${n}::${t}`).join(', ');
  const arrays = columns.map((_, i) => `$${i + 1}::text[]`).join(', ');
  const text = `INSERT INTO ${table} (${names}) SELECT ${casts} FROM unnest(${arrays}) AS u(${names}) ${tail}`.trim();
  return async (sql, rows) => {
    if (!rows.length) return 0;
    const params = columns.map(([name, type]) => arrayLiteral(rows.map((r) => toText(r[name], type))));
    const result = await sql.unsafe(text, params, { prepare: true });
    return result.count;
  };
}

/**
 * A text[] literal: every element quoted (a backslash and a double quote escaped), NULL bare.
 * Written here rather than left to the driver, whose array parameters need the server's array
 * types, which a fresh connection has not read yet.
 */
function arrayLiteral(items: readonly (string | null)[]): string {
  return `{${items.map((v) => (v === null ? 'NULL' : `"${v.replace(/[\\"]/g, '\\$&')}"`)).join(',')}}`;
}

function toText(v: unknown, type: ColumnType): string | null {
  if (v === null || v === undefined) return null;
  if (type === 'jsonb') return JSON.stringify(v);
  if (v instanceof Date) return v.toISOString();
  return String(v);
}
