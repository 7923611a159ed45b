/**
 * The LLM layer. Every model call of the system goes through LlmProvider.complete(), which
 * streams text deltas to a callback and resolves with the full text and usage.
 *
 * Guarantees: the LlmRouter picks provider and model per call from the catalogue
 * (config/models.yaml), retries retryable failures with backoff and hands a failing model's
 * call to the next candidate, but never repeats a call once a delta reached the caller. The
 * `offline` provider is deterministic and says so in every answer. The response cache, budgets
 * and usage records wrap a provider without changing what it answers.
 *
 * Files: provider.ts (the interface and LlmError), offline.ts, openai.ts (the providers; sse-data.ts reads its streamed body),
 * catalogue.ts (models.yaml), routing.ts (model choice), router.ts (retries and fallback),
 * embeddings.ts, cache.ts (response cache), budget.ts, usage.ts (llm_calls),
 * model-service.ts (the model-service role's HTTP endpoint).
 */
export {
  estimateTokens,
  LlmError,
  type ChatMessage,
  type LlmProvider,
  type LlmRequest,
  type LlmResult,
  type LlmTool,
  type LlmToolCall,
  type LlmUsage,
} from './provider.js';
export { OFFLINE_LABEL, OFFLINE_MODEL, OfflineProvider } from './offline.js';
export { OpenAiProvider, retryAfterOf, toOpenAiMessages, type OpenAiProviderOptions } from './openai.js';
export { wireNames, type WireNames } from './wire-names.js';
export {
  loadCatalogue,
  OFFLINE_PROVIDER,
  parseCatalogue,
  parseModelRef,
  pricesOf,
  providerPrices,
  type Catalogue,
  type ModelEntry,
  type ModelRef,
  type ProviderSpec,
} from './catalogue.js';
export {
  buildRouting,
  resolveModelChoice,
  type LlmSettings,
  type ModelCandidate,
  type ModelChoice,
  type ResolvedChoice,
  type RoutedProvider,
  type Routing,
} from './routing.js';
export { createRouter, DEFAULT_RETRY, LlmRouter, type RetryPolicy, type RouterOptions, type TierShare } from './router.js';
export { openAiEmbedder, type Embedder } from './embeddings.js';
export { CachedProvider, cacheKeysOf, cosine, LlmCache, sameFacts, textSimilarity, type CacheHit, type CacheSettings, type LlmCacheOptions } from './cache.js';
export { Budget, BudgetedProvider, BudgetExceeded, type BudgetEvents, type BudgetLimits } from './budget.js';
export { UsageStore, type ModelCallRecord } from './usage.js';
export { listProviderModels, startModelService, type ModelService, type ModelServiceOptions, type ProviderModelEntry } from './model-service.js';
