/** What a route module gets from the gateway: admission (auth + rate limit), data, config. */
import type { Client } from '@connectrpc/connect';
import type { Bus } from '../bus/index.js';
import type { OrchestratorService } from '../gen/svc/v1/orchestrator_pb.js';
import type { Logger } from '../log/index.js';
import type { Store } from '../store/index.js';
import type { Principal } from './auth.js';
import type { CorsPolicy, Req } from './http.js';

export type Admit = (req: Req, o?: { burst?: boolean }) => Promise<{ p: Principal; headers: Record<string, string> }>;

export interface RouteDeps {
  ctx: { cors: CorsPolicy; log: Logger };
  admit: Admit;
  store: Store;
  bus: Bus;
  orchestrator: Client<typeof OrchestratorService>;
  log: Logger;
  /** Root folder of the per-session workspaces (one folder per session id). */
  workspaceRoot: string;
  schedules: { maxPerUser: number; minIntervalMinutes: number; maxBudgetUsd: number };
}
