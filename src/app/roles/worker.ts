/**
 * Role worker: workflow actors fed by the TASKS work queue. Stopping hands the running
 * workflows back to the queue for another worker.
 */
import { Worker } from '../../runtime/index.js';
import { WaitStore } from '../../tasks/index.js';
import { ReviewStore, runWorkflow } from '../../workflows/index.js';
import type { AppContext, RoleStop } from '../types.js';

export async function startWorkerRole(ctx: AppContext): Promise<RoleStop> {
  const { cfg, log } = ctx;
  const workflowDeps = {
    templates: ctx.templates,
    skills: ctx.skills,
    tasks: ctx.store,
    sessions: ctx.sessions,
    llm: ctx.llm,
    tools: ctx.tools,
    usage: ctx.usage,
    partialChunkChars: cfg.workflow.partialChunkChars,
    maxTokens: cfg.llm.maxTokens,
    temperature: cfg.llm.temperature,
    synthBypassSingle: cfg.workflow.synthBypassSingle,
    toolParallelism: cfg.tools.parallelism,
    agentTimeoutMs: cfg.agents.timeoutSeconds * 1000,
    enableToolSelection: cfg.tools.selection,
    budgets: cfg.budgets.inWorkflow ? ctx.budgetLimits : undefined,
    approvals: { timeoutSeconds: cfg.approvals.timeoutSeconds, policies: cfg.features.approvals },
    reviews: await ReviewStore.open(ctx.bus),
    history: {
      windowMessages: cfg.history.windowMessages,
      debugWindowMessages: cfg.history.windowDebugMessages,
      triggerRatio: cfg.history.compressionTriggerRatio,
    },
  };
  const worker = new Worker(
    ctx.bus,
    ctx.store,
    (wctx, task) => runWorkflow(wctx, workflowDeps, task),
    {
      concurrency: cfg.worker.concurrency,
      ackWaitMs: cfg.worker.ackWaitMs,
      maxDeliver: cfg.worker.maxDeliver,
      taskTimeoutSeconds: cfg.worker.taskTimeoutSeconds,
      waits: new WaitStore(ctx.store.sql, ctx.store, ctx.bus),
    },
    log,
  );
  await worker.start();
  ctx.app.worker = worker;
  return () => worker.stop();
}
