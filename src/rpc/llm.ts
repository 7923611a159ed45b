/**
 * LLMService over Connect/gRPC, on the orchestrator's RPC port behind the same internal RPC
 * authentication: Complete, StreamComplete, Embed, ListModels, CountTokens (names chosen
 * here; the spec gives the service five RPCs without naming them).
 *
 * Completions go through the process's LlmProvider (the router: catalogue, tiers, retries,
 * fallback; behind the response cache when ENABLE_CACHE), the same one the workflows use; they
 * belong to no task, so no llm_calls row and no budget applies. Embed and ListModels read the
 * router's routing (the catalogue with keys resolved); without a router they are
 * FAILED_PRECONDITION. CountTokens is an estimate (estimateTokens: about 4 characters per
 * token), and says so in its answer.
 */
import { randomUUID } from 'node:crypto';
import { create } from '@bufbuild/protobuf';
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import { ModelTier, TokenUsageSchema } from '../gen/svc/v1/common_pb.js';
import {
  CompleteResponseSchema,
  StreamCompleteResponseSchema,
  type CompleteRequest,
  type CompleteResponse,
  type CompletionMessage,
  type LLMService,
  type StreamCompleteRequest,
  type StreamCompleteResponse,
} from '../gen/svc/v1/llm_pb.js';
import { AppError, Code, MODEL_TIER_BY_NAME, TIER_BY_ENUM, badRequest, createLogger, unavailable, type Logger, type Tier } from '../kernel/index.js';
import {
  estimateTokens,
  listProviderModels,
  type ChatMessage,
  type LlmProvider,
  type LlmRequest,
  type LlmRouter,
  type LlmTool,
  type UsageStore,
} from '../llm/index.js';
import { callerOf } from './auth.js';
import { rpcError, rpcHandlers } from './errors.js';
import { pushed } from './pushed.js';

export interface LlmServiceDeps {
  llm: LlmProvider;
  /** Routing for Embed and ListModels, and model choice checks. */
  router?: LlmRouter;
  log?: Logger;
  /** DEFAULT_MODEL_TIER (else the router's, else small). */
  defaultTier?: Tier;
  /** MAX_TOKENS (default 2000). */
  maxTokens?: number;
  /** TEMPERATURE (default 0.7). */
  temperature?: number;
  /** Where each call is recorded (llm_calls, agent `llm-service`, no task). */
  usage?: UsageStore;
}

/** Inputs of one Embed call at most (the OpenAI embeddings API's limit). */
export const MAX_EMBED_INPUTS = 2048;
export const TOKEN_ESTIMATE_METHOD =
  'estimate: ceil(characters / 4) for each non-empty message content and text, summed; no tokenizer, message framing not counted';

const TOOL_NAME_RE = /^[A-Za-z0-9_-]{1,64}$/;
const failedPrecondition = (msg: string) => new AppError(Code.FailedPrecondition, msg);

function tierOf(t: ModelTier, d: LlmServiceDeps): Tier {
  if (!TIER_BY_ENUM.has(t)) throw badRequest(`invalid tier: ${t as number}`);
  return TIER_BY_ENUM.get(t) ?? d.defaultTier ?? d.router?.routing.defaultTier ?? 'small';
}

function toChatMessage(m: CompletionMessage, i: number): ChatMessage {
  const at = `messages[${i}]`;
  switch (m.role) {
    case 'system':
    case 'user':
      if (m.toolCalls.length) throw badRequest(`${at}.tool_calls: only an assistant message carries tool calls`);
      return { role: m.role, content: m.content };
    case 'assistant':
      return {
        role: 'assistant',
        content: m.content,
        ...(m.toolCalls.length
          ? {
              toolCalls: m.toolCalls.map((c, j) => {
                if (!c.id || !c.name) throw badRequest(`${at}.tool_calls[${j}]: id and name are required`);
                return { id: c.id, name: c.name, arguments: c.arguments };
              }),
            }
          : {}),
      };
    case 'tool':
      if (!m.toolCallId) throw badRequest(`${at}.tool_call_id is required for role tool`);
      return { role: 'tool', content: m.content, toolCallId: m.toolCallId };
    default:
      throw badRequest(`${at}.role must be one of: system, user, assistant, tool`);
  }
}

/** The LlmRequest of a Complete/StreamComplete request, checked (400 naming the field). */
function toLlmRequest(d: LlmServiceDeps, req: CompleteRequest | StreamCompleteRequest, signal: AbortSignal): LlmRequest {
  if (!req.messages.length) throw badRequest('messages is required');
  const messages = req.messages.map(toChatMessage);
  const tier = tierOf(req.tier, d);
  if (req.model || req.provider) d.router?.resolveModelChoice({ tier, model: req.model || undefined, provider: req.provider || undefined });
  if (req.maxTokens < 0) throw badRequest('max_tokens must be >= 0 (0: MAX_TOKENS)');
  const temperature = req.temperature ?? d.temperature ?? 0.7;
  if (!Number.isFinite(temperature) || temperature < 0 || temperature > 2) throw badRequest('temperature must be from 0 to 2');
  const tools: LlmTool[] = req.tools.map((t, i) => {
    if (!TOOL_NAME_RE.test(t.name)) throw badRequest(`tools[${i}].name must be 1 to 64 letters, digits, _ or -`);
    return { name: t.name, ...(t.description ? { description: t.description } : {}), ...(t.parameters ? { parameters: t.parameters } : {}) };
  });
  const choice = req.toolChoice || undefined;
  if (choice !== undefined && choice !== 'auto' && choice !== 'none' && choice !== 'required') throw badRequest('tool_choice must be auto, none or required');
  if (choice && !tools.length) throw badRequest('tool_choice needs tools');
  return {
    messages,
    tier,
    ...(req.model ? { model: req.model } : {}),
    ...(req.provider ? { provider: req.provider } : {}),
    maxTokens: req.maxTokens || d.maxTokens || 2000,
    temperature,
    ...(tools.length ? { tools, toolChoice: choice ?? 'auto' } : {}),
    signal,
  };
}

const int32 = (n: number) => Math.min(2 ** 31 - 1, Math.max(0, Math.round(n)));

async function complete(
  d: LlmServiceDeps,
  req: CompleteRequest | StreamCompleteRequest,
  ctx: HandlerContext,
  onDelta?: (s: string) => void,
): Promise<CompleteResponse> {
  callerOf(ctx);
  const r = await d.llm.complete(toLlmRequest(d, req, ctx.signal), onDelta);
  // The request's tier, as asked or defaulted (the answering model's own tier may differ after a fallback).
  const tier = tierOf(req.tier, d);
  d.usage?.recordModelCall({
    step: randomUUID(),
    agentId: 'llm-service',
    model: r.model,
    provider: r.provider,
    tier,
    inputTokens: r.usage.inputTokens,
    outputTokens: r.usage.outputTokens,
    totalTokens: r.usage.totalTokens,
    costUsd: r.usage.costUsd,
    cacheHit: !!r.cacheHit,
  });
  return create(CompleteResponseSchema, {
    text: r.text,
    toolCalls: (r.toolCalls ?? []).map((c) => ({ id: c.id, name: c.name, arguments: c.arguments })),
    finishReason: r.finishReason,
    usage: create(TokenUsageSchema, {
      promptTokens: int32(r.usage.inputTokens),
      completionTokens: int32(r.usage.outputTokens),
      totalTokens: int32(r.usage.totalTokens),
      costUsd: r.usage.costUsd,
      model: r.model,
      tier: MODEL_TIER_BY_NAME.get(tier),
    }),
    provider: r.provider,
    cacheHit: !!r.cacheHit,
    cacheScore: r.cacheHit ? (r.cacheScore ?? 1) : 0,
  });
}

export function createLlmService(d: LlmServiceDeps): ServiceImpl<typeof LLMService> {
  const log = d.log ?? createLogger({ level: 'silent' });
  const wrap = rpcHandlers(log, 'llm rpc');
  const routerOf = (what: string): LlmRouter => {
    if (!d.router) throw failedPrecondition(`${what} needs the model catalogue, which this process has not loaded`);
    return d.router;
  };

  return {
    complete: wrap(async (req, ctx) => complete(d, req, ctx)),

    async *streamComplete(req, ctx) {
      // The model call pushes deltas; they reach the client in order.
      try {
        yield* pushed<StreamCompleteResponse>(async (push) => {
          const r = await complete(d, req, ctx, (delta) => {
            if (delta) push(create(StreamCompleteResponseSchema, { event: { case: 'delta', value: delta } }));
          });
          push(create(StreamCompleteResponseSchema, { event: { case: 'done', value: r } }));
        });
      } catch (err) {
        throw rpcError(err, log, 'llm rpc');
      }
    },

    embed: wrap(async (req, ctx) => {
      callerOf(ctx);
      if (!req.texts.length) throw badRequest('texts is required');
      if (req.texts.length > MAX_EMBED_INPUTS) throw badRequest(`texts: at most ${MAX_EMBED_INPUTS} per call`);
      const i = req.texts.findIndex((t) => !t);
      if (i >= 0) throw badRequest(`texts[${i}] is empty`);
      const router = routerOf('Embed');
      const tier = tierOf(req.tier, d);
      const choice = router.resolveModelChoice({ tier, model: req.model || undefined, provider: req.provider || undefined });
      const p = router.routing.providers[choice.provider]!;
      if (p.offline) {
        throw failedPrecondition(
          `no embeddings: the request would be served by the ${p.name} provider (deterministic, no model), which has no embeddings endpoint; configure a provider with an embedding_model (MODELS_CONFIG_PATH) and its key`,
        );
      }
      if (!p.embeddingModel) throw failedPrecondition(`no embeddings: provider ${p.name} names no embedding_model in the model catalogue (MODELS_CONFIG_PATH)`);
      if (!p.configured) throw failedPrecondition(`no embeddings: provider ${p.name} is not configured (${p.apiKeyEnv ?? 'its key'} is not set)`);
      const embedder = router.embedderFor({ tier, ...(req.model ? { model: req.model } : {}), ...(req.provider ? { provider: req.provider } : {}) });
      if (!embedder) throw failedPrecondition(`no embeddings: provider ${p.name} has no embeddings endpoint (no base_url)`);
      let vectors: number[][];
      try {
        vectors = await embedder.embed(req.texts, ctx.signal);
      } catch (err) {
        if (ctx.signal.aborted) throw new AppError(Code.Canceled, 'the call was cancelled', { cause: err });
        throw unavailable(`embeddings endpoint of provider ${p.name} failed: ${(err as Error)?.message ?? String(err)}`, err);
      }
      return {
        embeddings: vectors.map((values) => ({ values })),
        provider: p.name,
        model: p.embeddingModel,
        dimensions: vectors[0]?.length ?? 0,
      };
    }),

    listModels: wrap(async (req, ctx) => {
      callerOf(ctx);
      if (!TIER_BY_ENUM.has(req.tier)) throw badRequest(`invalid tier: ${req.tier as number}`);
      const tier = TIER_BY_ENUM.get(req.tier);
      const listing = listProviderModels(routerOf('ListModels').routing, tier);
      return {
        providers: Object.fromEntries(
          Object.entries(listing).map(([name, models]) => [
            name,
            {
              models: models.map((m) => ({
                id: m.id,
                name: m.name,
                tier: MODEL_TIER_BY_NAME.get(m.tier) ?? ModelTier.UNSPECIFIED,
                contextWindow: BigInt(m.context_window),
                costPer1kPromptTokens: m.cost_per_1k_prompt_tokens,
                costPer1kCompletionTokens: m.cost_per_1k_completion_tokens,
                supportsTools: m.supports_tools,
                supportsStreaming: m.supports_streaming,
                available: m.available,
              })),
            },
          ]),
        ),
      };
    }),

    countTokens: wrap(async (req, ctx) => {
      callerOf(ctx);
      const pieces = [...req.messages.map((m) => m.content), req.text].filter((s) => s.length > 0);
      return { tokenCount: int32(pieces.reduce((n, s) => n + estimateTokens(s), 0)), estimated: true, method: TOKEN_ESTIMATE_METHOD };
    }),
  };
}
