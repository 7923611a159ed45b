/** Role scheduler: cron schedules, one leader at a time; runs are submitted through the orchestrator. */
import { createClient } from '@connectrpc/connect';
import { OrchestratorService } from '../../gen/svc/v1/orchestrator_pb.js';
import { SYSTEM_CALLER } from '../../kernel/index.js';
import { transportAs } from '../../rpc/index.js';
import { startScheduler } from '../../scheduler/index.js';
import type { AppContext, RoleStop } from '../types.js';

export async function startSchedulerRole(ctx: AppContext): Promise<RoleStop> {
  const { cfg } = ctx;
  const scheduler = await startScheduler({
    bus: ctx.bus,
    store: ctx.store,
    log: ctx.log,
    // The scheduler submits and cancels schedule runs for their owners: a system caller.
    orchestrator: createClient(OrchestratorService, transportAs(ctx.orchestratorTransport(), SYSTEM_CALLER)),
    instanceId: cfg.instanceId,
    maxBudgetUsd: cfg.schedules.maxBudgetUsd,
  });
  return () => scheduler.stop();
}
