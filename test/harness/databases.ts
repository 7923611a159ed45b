/**
 * One database per test file, cloned from a template that is migrated once per run.
 *
 * `CREATE DATABASE … TEMPLATE …` copies files instead of replaying migrations, so a fresh,
 * migrated database costs tens of milliseconds. Each test file then sees only its own rows:
 * no test has to clean up after another file's reconciler or scheduler.
 *
 * Names carry a per-run prefix so that a run against a server you provide
 * (TEST_DATABASE_URL) can drop exactly what it created, leftovers included, and, from its
 * timestamp, what killed runs left (stale-databases.ts).
 */
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { migrate } from '../../src/store/index.js';

/** What every test database's name starts with. */
export const RUN_PREFIX_ROOT = 'taskorch_test_';

/**
 * Prefix of every database this run creates; the template is `<prefix>_template`. It carries
 * the run's start (seconds, base 36) so that a later run can tell a killed run's leftovers
 * from a running suite's databases (stale-databases.ts).
 */
export function newRunPrefix(now = Date.now()): string {
  return `${RUN_PREFIX_ROOT}t${Math.floor(now / 1000).toString(36)}_${randomBytes(2).toString('hex')}`;
}

/**
 * The run a database belongs to: its prefix, and when the run started (ms) if the name says;
 * names of the harness before the timestamp (`taskorch_test_<8 hex>`) have none.
 */
export function runStartedAt(name: string): { prefix: string; at?: number } | undefined {
  const now = /^taskorch_test_t([0-9a-z]{1,10})_[0-9a-f]{4}(?=_|$)/.exec(name);
  if (now) return { prefix: now[0], at: parseInt(now[1]!, 36) * 1000 };
  const before = /^taskorch_test_[0-9a-f]{8}(?=_|$)/.exec(name);
  return before ? { prefix: before[0] } : undefined;
}

/** `url` with its database name replaced by `name`. */
export function databaseUrl(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

const admin = (serverUrl: string) => postgres(serverUrl, { max: 1, onnotice: () => {} });

/** Names come from this module only; quoting keeps them valid whatever the prefix. */
const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Applies every migration to a database the test files share (one session: PGlite allows no more). */
export async function migrateShared(url: string): Promise<void> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await migrate(sql);
  } finally {
    await sql.end();
  }
}

/** Creates `<prefix>_template` on the server and applies every migration to it. */
export async function createTemplateDatabase(serverUrl: string, prefix: string): Promise<string> {
  const name = `${prefix}_template`;
  const sql = admin(serverUrl);
  try {
    await sql.unsafe(`CREATE DATABASE ${ident(name)}`);
  } finally {
    await sql.end();
  }
  const tpl = postgres(databaseUrl(serverUrl, name), { max: 1, onnotice: () => {} });
  try {
    await migrate(tpl);
  } finally {
    await tpl.end();
  }
  // A session connected to the template would make every clone fail ("source database is
  // being accessed by other users"); refuse connections so that nothing can.
  const sql2 = admin(serverUrl);
  try {
    await sql2.unsafe(`ALTER DATABASE ${ident(name)} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`);
  } finally {
    await sql2.end();
  }
  return name;
}

/** A fresh copy of the template; `drop()` removes it, closing any session still on it. */
export async function createDatabaseFromTemplate(serverUrl: string, template: string, name: string): Promise<{ url: string; drop(): Promise<void> }> {
  const sql = admin(serverUrl);
  try {
    await sql.unsafe(`CREATE DATABASE ${ident(name)} TEMPLATE ${ident(template)}`);
  } finally {
    await sql.end();
  }
  return { url: databaseUrl(serverUrl, name), drop: () => dropDatabases(serverUrl, [name]) };
}

/** Drops the named databases; FORCE ends sessions a test left open (PostgreSQL 13+). */
export async function dropDatabases(serverUrl: string, names: string[]): Promise<void> {
  if (names.length === 0) return;
  const sql = admin(serverUrl);
  try {
    for (const n of names) {
      await sql.unsafe(`ALTER DATABASE ${ident(n)} WITH IS_TEMPLATE false`).catch(() => {});
      await sql.unsafe(`DROP DATABASE IF EXISTS ${ident(n)} WITH (FORCE)`);
    }
  } finally {
    await sql.end();
  }
}

/** Every database whose name starts with `prefix` (the template and any file's leftover). */
export async function databasesWithPrefix(serverUrl: string, prefix: string): Promise<string[]> {
  const sql = admin(serverUrl);
  try {
    const rows = await sql<{ datname: string }[]>`SELECT datname FROM pg_database WHERE starts_with(datname, ${prefix})`;
    return rows.map((r) => r.datname);
  } finally {
    await sql.end();
  }
}
