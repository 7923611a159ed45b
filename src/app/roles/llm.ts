/** Role llm: the internal model service (GET /providers/models, /health, metrics) on LLM_SERVICE_PORT. */
import { startModelService } from '../../llm/index.js';
import type { AppContext, RoleStop } from '../types.js';

export async function startLlmRole(ctx: AppContext): Promise<RoleStop> {
  const { cfg, log, llmStack, usage } = ctx;
  const ms = await startModelService({
    host: cfg.rpc.host,
    port: cfg.llm.servicePort,
    catalogue: llmStack.catalogue,
    settings: cfg.llm,
    log,
    // Tier shares of every process's model calls (llm_calls), against the 50/40/10 target;
    // and what this process's router routed.
    metrics: async () => ({
      tier_shares: { window_hours: 24, target: { small: 0.5, medium: 0.4, large: 0.1 }, ...(await usage.tierShares(24)) },
      router_tier_calls: llmStack.router.tierShares(),
    }),
  });
  ctx.app.modelServicePort = ms.port;
  log.info({ host: cfg.rpc.host, port: ms.port }, 'model service (GET /providers/models) listening');
  return () => ms.close();
}
