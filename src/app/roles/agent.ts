/**
 * Role agent: AgentService on AGENT_GRPC_PORT, behind the same internal RPC authentication as
 * the orchestrator's. Not durable: runs live in this process's memory (src/rpc/agent.ts).
 */
import { AgentService } from '../../gen/svc/v1/agent_pb.js';
import { createAgentService, serverAuthInterceptor } from '../../rpc/index.js';
import { requireSession } from '../../sessions/index.js';
import { listenConnect } from '../listen.js';
import { VERSION } from '../version.js';
import type { AppContext, RoleStop } from '../types.js';

export async function startAgentRole(ctx: AppContext): Promise<RoleStop> {
  const { cfg, log, tools, sql } = ctx;
  if (!tools) throw new Error('role agent needs the tool registry');
  const agentRpc = createAgentService({
    llm: ctx.llm,
    usage: ctx.usage,
    tools,
    log,
    version: VERSION,
    maxConcurrent: cfg.worker.concurrency,
    defaultTier: cfg.llm.defaultTier,
    maxTokens: cfg.llm.maxTokens,
    temperature: cfg.llm.temperature,
    parallelism: cfg.tools.parallelism,
    partialChunkChars: cfg.workflow.partialChunkChars,
    budgets: cfg.budgets.inWorkflow ? ctx.budgetLimits : undefined,
    maxMemoryMb: cfg.tools.python.memoryMb,
    agentTimeoutSeconds: cfg.agents.timeoutSeconds,
    checkModel: (c) => void ctx.llmStack.router.resolveModelChoice(c),
    resolveSession: async (p, id) => (await requireSession(sql, id, p)).id,
  });
  const srv = await listenConnect((r) => r.service(AgentService, agentRpc), [serverAuthInterceptor(ctx.internalRpcToken())], cfg.agent.host, cfg.agent.port);
  ctx.app.agentPort = srv.port;
  log.info({ host: cfg.agent.host, port: srv.port }, 'agent service (Connect, gRPC, gRPC-Web) listening');
  return () => srv.close();
}
