/**
 * Drops the databases that earlier test runs left on a server (a run killed before its
 * teardown leaves its template and its files' databases behind; every run has a new prefix,
 * so nothing else would ever drop them). A concurrently running suite keeps its databases:
 * a run's databases go only when the run started over an hour ago by its prefix's timestamp
 * AND none of them has a session, and they are dropped without FORCE.
 */
import postgres from 'postgres';
import { RUN_PREFIX_ROOT, runStartedAt } from './databases.js';

/** A run older than this is over (a whole suite takes minutes). */
export const STALE_RUN_AGE_MS = 3600 * 1000;

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

interface Candidate {
  datname: string;
  sessions: number;
  /** When its files were created (ms), if the server lets this role read it; else null. */
  createdMs: number | null;
}

/**
 * The databases of runs other than `ownPrefix` that are stale, grouped by run. A run is
 * stale when started over `maxAgeMs` ago and none of its databases has a session.
 */
export function staleRuns(candidates: Candidate[], ownPrefix: string, now: number, maxAgeMs = STALE_RUN_AGE_MS): string[][] {
  const runs = new Map<string, Candidate[]>();
  for (const c of candidates) {
    const run = runStartedAt(c.datname);
    if (!run || run.prefix === ownPrefix) continue;
    runs.set(run.prefix, [...(runs.get(run.prefix) ?? []), c]);
  }
  const stale: string[][] = [];
  for (const [prefix, dbs] of runs) {
    if (dbs.some((d) => d.sessions > 0)) continue;
    // Names of the harness before the timestamp was added: the age of their files, when readable.
    const started = runStartedAt(prefix)?.at ?? Math.min(...dbs.map((d) => d.createdMs ?? Infinity));
    if (Number.isFinite(started) && now - started > maxAgeMs) stale.push(dbs.map((d) => d.datname));
  }
  return stale;
}

/** Drops stale runs' databases; what cannot be dropped (another role's, in use meanwhile) is left, with a warning. */
export async function dropStaleDatabases(serverUrl: string, ownPrefix: string): Promise<string[]> {
  const sql = postgres(serverUrl, { max: 1, onnotice: () => {} });
  const dropped: string[] = [];
  try {
    const rows = await sql<{ datname: string; sessions: number; oid: number }[]>`
      SELECT d.datname, d.oid::int AS oid, (SELECT count(*)::int FROM pg_stat_activity a WHERE a.datname = d.datname) AS sessions
      FROM pg_database d WHERE starts_with(d.datname, ${RUN_PREFIX_ROOT})`;
    const candidates: Candidate[] = [];
    for (const r of rows) {
      let createdMs: number | null = null;
      const run = runStartedAt(r.datname);
      if (run && run.at === undefined) {
        // pg_stat_file needs superuser or pg_read_server_files; without it such a run stays.
        const [f] = await sql<{ m: Date }[]>`SELECT (pg_stat_file(${`base/${r.oid}/PG_VERSION`})).modification AS m`.catch(() => []);
        createdMs = f ? f.m.getTime() : null;
      }
      candidates.push({ datname: r.datname, sessions: r.sessions, createdMs });
    }
    for (const names of staleRuns(candidates, ownPrefix, Date.now())) {
      for (const n of names) {
        try {
          await sql.unsafe(`ALTER DATABASE ${ident(n)} WITH IS_TEMPLATE false`);
          // No FORCE: a session that appeared since the check makes this fail, and the database stays.
          await sql.unsafe(`DROP DATABASE IF EXISTS ${ident(n)}`);
          dropped.push(n);
        } catch (err) {
          console.warn(`[test setup] Left the stale test database ${n}: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
    }
  } finally {
    await sql.end();
  }
  return dropped;
}
