/**
 * How one process's DATABASE_MAX_CONNECTIONS are shared when it runs both the edge (gateway,
 * orchestrator) and the workflows (worker, archiver) on a PostgreSQL server: the edge gets a
 * pool of its own, so that a submission's INSERT does not queue behind the workers' claims,
 * finishes and archived events. Measured before (issue 18, 1,000 live streams in one process
 * sharing 10 connections): a submission's INSERT waited p50 400-500 ms for a connection.
 *
 * The total stays DATABASE_MAX_CONNECTIONS. Embedded PGlite serves one connection at a time,
 * and a process with one side only, or fewer than EDGE_SPLIT_MIN connections, keeps one pool.
 */
import type { Role } from '../config/index.js';

/** Fewer connections than this: one pool for everything. */
export const EDGE_SPLIT_MIN = 4;

/** The edge's share of the connections when they are split (at least 2: an INSERT of tasks and of their sessions go at once). */
const EDGE_SHARE = 0.3;

/** The two pools' sizes, or undefined for one pool of `max`. */
export function edgePoolSplit(roles: ReadonlySet<Role>, max: number, embedded: boolean): { edge: number; rest: number } | undefined {
  const edgeSide = roles.has('gateway') || roles.has('orchestrator');
  const workSide = roles.has('worker') || roles.has('archiver');
  if (embedded || !edgeSide || !workSide || max < EDGE_SPLIT_MIN) return undefined;
  const edge = Math.max(2, Math.round(max * EDGE_SHARE));
  return { edge, rest: max - edge };
}
