/**
 * Role worker: workflow actors fed by the TASKS work queue. Stopping hands the running
 * workflows back to the queue for another worker.
 */
import { Worker } from '../../runtime/index.js';
import { Mailboxes, SwarmBoard, startAgentHost } from '../../swarm/index.js';
import { WaitStore } from '../../tasks/index.js';
import { ReviewStore, SWARM_SUPERVISOR, runWorkflow } from '../../workflows/index.js';
import type { AppContext, RoleStop } from '../types.js';

export async function startWorkerRole(ctx: AppContext): Promise<RoleStop> {
  const { cfg, log } = ctx;
  // Swarms: the lead runs as the workflow; its agents run here (and on every worker process) from SWARM_AGENTS.
  const mail = new Mailboxes(ctx.bus.js, ctx.bus.jsm, ctx.bus.events);
  const swarmBoard = await SwarmBoard.open(ctx.bus);
  const workflowDeps = {
    templates: ctx.templates,
    skills: ctx.skills,
    tasks: ctx.store,
    sessions: ctx.sessions,
    llm: ctx.llm,
    tools: ctx.tools,
    toolsFor: ctx.toolsFor,
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
    swarm: { mail, board: swarmBoard, publisher: ctx.bus.events, limits: cfg.features.swarm },
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
      producerOf: (t) => (t.context.force_swarm === true ? SWARM_SUPERVISOR : 'orchestrator'),
      tracer: ctx.tracer,
      priorityQueues: cfg.priorityQueues,
    },
    log,
  );
  await worker.start();
  ctx.app.worker = worker;
  const agents = await startAgentHost({
    bus: ctx.bus,
    mail,
    board: swarmBoard,
    usage: ctx.usage,
    llm: ctx.llm,
    tools: ctx.tools,
    toolsFor: ctx.toolsFor,
    parallelism: cfg.tools.parallelism,
    partialChunkChars: cfg.workflow.partialChunkChars,
    concurrency: cfg.worker.concurrency,
    ackWaitMs: cfg.worker.ackWaitMs,
    maxDeliver: cfg.worker.maxDeliver,
    log: log.child({ component: 'swarm-agents' }),
  });
  return async () => {
    await agents.stop();
    await worker.stop();
  };
}
