/** Scheduler role: filled in by the schedules work. */
import type { Client } from '@connectrpc/connect';
import type { Bus } from '../bus/index.js';
import type { OrchestratorService } from '../gen/svc/v1/orchestrator_pb.js';
import type { Logger } from '../log/index.js';
import type { Store } from '../store/index.js';

export interface SchedulerDeps {
  bus: Bus;
  store: Store;
  log: Logger;
  orchestrator: Client<typeof OrchestratorService>;
  instanceId: string;
  maxBudgetUsd: number;
}

export async function startScheduler(_deps: SchedulerDeps): Promise<{ stop(): Promise<void> }> {
  return { async stop() {} };
}
