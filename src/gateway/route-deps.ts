/** What a route module gets from the gateway: admission (auth + rate limit), the domains it serves, config. */
import type { Client } from '@connectrpc/connect';
import type { Bus } from '../bus/index.js';
import type { ChannelService } from '../channels/index.js';
import type { OrchestratorService } from '../gen/svc/v1/orchestrator_pb.js';
import { notFound, type Logger, type Principal } from '../kernel/index.js';
import type { ScheduleStore } from '../scheduler/index.js';
import type { SessionRow, Sessions } from '../sessions/index.js';
import type { SwarmMessenger } from '../swarm/index.js';
import type { SessionRef, TaskStore } from '../tasks/index.js';
import type { ToolRegistry } from '../tools/index.js';
import type { ReviewService } from '../workflows/index.js';
import type { CorsPolicy, Reply, Req } from './http.js';

export type Admit = (req: Req, o?: { burst?: boolean }) => Promise<{ p: Principal; headers: Record<string, string> }>;

/**
 * A JSON handler behind admission (authentication + rate limit): `fn` returns the body; the
 * reply carries the X-RateLimit-* headers. Status 204 sends no body.
 */
export function admitted(admit: Admit, fn: (req: Req, p: Principal) => Promise<unknown>, status = 200): (req: Req) => Promise<Reply> {
  return async (req) => {
    const { p, headers } = await admit(req);
    const body = await fn(req, p);
    return status === 204 ? { status, headers } : { status, headers, body };
  };
}

/**
 * Like `admitted`, for a handler that builds the whole reply (status, headers, body): the
 * X-RateLimit-* headers are added, the handler's own headers win. `burst` also counts the
 * request against the task-list burst limit.
 */
export function admittedReply(admit: Admit, fn: (req: Req, p: Principal) => Promise<Reply> | Reply, o: { burst?: boolean } = {}): (req: Req) => Promise<Reply> {
  return async (req) => {
    const { p, headers } = await admit(req, o);
    const r = await fn(req, p);
    return { ...r, headers: { ...headers, ...r.headers } };
  };
}

/**
 * How routes find a caller's session by the name a client gives (UUID or external id) and
 * register new ones; another owner's session is indistinguishable from a missing one.
 */
export interface SessionLookup {
  resolve(idOrExternal: string, p: Principal, o?: { includeDeleted?: boolean }): Promise<SessionRow | undefined>;
  /** Registers a new session as its owner's in one statement: its UUID, or undefined when the owner has one by that name. */
  create(ref: SessionRef): Promise<string | undefined>;
}

/** The caller's live session, or 404 `Session not found`. */
export async function requireSession(lookup: SessionLookup, idOrExternal: string, p: Principal): Promise<SessionRow> {
  const s = await lookup.resolve(idOrExternal, p);
  if (!s) throw notFound('Session not found');
  return s;
}

/**
 * The domains behind the database-backed routes, built once by the process that runs the
 * gateway: the gateway never holds a SQL handle of its own.
 */
export interface GatewayDomains {
  /** Task reads for readiness and timelines. */
  tasks: TaskStore;
  sessions: Sessions;
  sessionLookup: SessionLookup;
  schedules: ScheduleStore;
  channels: ChannelService;
  /** Plan reviews of waiting research tasks (review-routes.ts). */
  review?: ReviewService;
  /** People's messages to running swarms (swarm-routes.ts). */
  swarm?: SwarmMessenger;
}

export interface RouteDeps {
  ctx: { cors: CorsPolicy; log: Logger };
  admit: Admit;
  domains: GatewayDomains;
  bus: Bus;
  orchestrator: Client<typeof OrchestratorService>;
  log: Logger;
  /** Root folder of the per-session workspaces (one folder per session id). */
  workspaceRoot: string;
  scheduleLimits: { maxPerUser: number; minIntervalMinutes: number; maxBudgetUsd: number };
  /**
   * The tools one caller may see and run: the built-in ones, the operator's MCP servers' and
   * the caller's own tool sources' (MCP servers, OpenAPI documents). Absent: no tool registry here.
   */
  toolsFor?: (p: Principal) => Promise<ToolRegistry>;
}
