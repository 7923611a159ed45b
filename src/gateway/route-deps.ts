/** What a route module gets from the gateway: admission (auth + rate limit), data, config. */
import type { Client } from '@connectrpc/connect';
import type { Bus } from '../bus/index.js';
import type { OrchestratorService } from '../gen/svc/v1/orchestrator_pb.js';
import type { Logger, Principal } from '../kernel/index.js';
import type { TaskStore } from '../tasks/index.js';
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

export interface RouteDeps {
  ctx: { cors: CorsPolicy; log: Logger };
  admit: Admit;
  store: TaskStore;
  bus: Bus;
  orchestrator: Client<typeof OrchestratorService>;
  log: Logger;
  /** Root folder of the per-session workspaces (one folder per session id). */
  workspaceRoot: string;
  schedules: { maxPerUser: number; minIntervalMinutes: number; maxBudgetUsd: number };
}
