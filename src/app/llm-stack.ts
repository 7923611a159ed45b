/**
 * The model layer of this process: the router over the catalogue's providers (retries,
 * fallback, the offline provider when no real one is configured), behind the response cache
 * (NATS KV, shared by every worker) when ENABLE_CACHE.
 */
import type { Tracer } from '@opentelemetry/api';
import type { Bus } from '../bus/index.js';
import type { Config } from '../config/index.js';
import type { Logger } from '../kernel/index.js';
import { CachedProvider, LlmCache, createRouter, loadCatalogue, type Catalogue, type LlmProvider, type LlmRouter } from '../llm/index.js';
import { shipped } from './shipped.js';

export function createLlm(cfg: Config, bus: Bus, log: Logger, tracer?: Tracer): { llm: LlmProvider; router: LlmRouter; catalogue: Catalogue } {
  // MODELS_CONFIG_PATH (default ./config/models.yaml, else the catalogue shipped with the package).
  const catalogue = loadCatalogue(shipped(cfg.paths.models, './config/models.yaml'));
  const router = createRouter(catalogue, cfg.llm, { log: log.child({ module: 'llm' }), tracer });
  const llm = cfg.llm.cache.enabled
    ? new CachedProvider(router, new LlmCache(bus.kv.llmCache, { ...cfg.llm.cache, embedderFor: (r) => router.embedderFor(r), log }), (r) => {
        try {
          return router.resolveModelChoice({ tier: r.tier, model: r.model, provider: r.provider }).provider === 'offline';
        } catch {
          return false;
        }
      })
    : router;
  return { llm, router, catalogue };
}
