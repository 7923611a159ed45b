/**
 * One model call as a journaled step: the stream as LLM_PARTIAL events, the answer as
 * LLM_OUTPUT, the call's usage counted against the budgets and recorded. A replayed call is
 * not made again; its usage still counts against this run's budgets.
 */
import type { Tier } from '../kernel/index.js';
import type { ChatMessage, LlmResult, LlmTool, LlmToolCall, LlmUsage } from '../llm/index.js';
import { DeltaCoalescer } from './coalescer.js';
import type { AgentContext } from './context.js';
import type { AgentDeps, AgentSpec, ModelCall } from './spec.js';
import { startAgentClock } from './timeout.js';

/** A recorded model turn (the journal keeps exactly this). */
export interface Turn {
  tier?: Tier;
  text: string;
  toolCalls?: LlmToolCall[];
  model: string;
  provider: string;
  usage: LlmUsage;
  cacheHit?: boolean;
  cacheScore?: number;
  /** When the call started and ended (ms since the epoch): the agent's clock runs from a first turn's start and counts a wait for a person from a turn's end (timeout.ts). */
  startedAt?: number;
  endedAt?: number;
}

export interface TurnOptions {
  /** Emit LLM_OUTPUT when the model answered (no tool calls). Default true. */
  emitOutput?: boolean;
  /** A one-call agent: AGENT_STARTED before the call, AGENT_COMPLETED after it. */
  announce?: boolean;
  /** Inside the step, before the call (events that belong to this step). */
  before?: () => void;
  /** Inside the step, after the call. */
  after?: (t: Turn) => void;
  /** The caller is already inside a step: run without a step of its own. */
  inStep?: boolean;
  maxTokens?: number;
  temperature?: number;
}

/** One model call as a journaled step: streams, records usage, returns the turn. */
export async function modelTurn(
  outer: AgentContext,
  deps: AgentDeps,
  spec: Pick<AgentSpec, 'agentId' | 'tier' | 'model' | 'provider' | 'finalAnswer'> & { taskId?: string },
  step: string,
  messages: ChatMessage[],
  tools: LlmTool[] | undefined,
  o: TurnOptions = {},
): Promise<Turn> {
  // A recorded call is counted against the budgets again (this run's totals), silently.
  const replayed = !o.inStep && outer.isRecorded(step);
  // A one-call agent's clock (AGENT_TIMEOUT_SECONDS), also inside a caller's step (a planner, a
  // synthesis); the tool loop runs its turns on its own clock instead.
  const clock = deps.timeoutMs && !replayed ? startAgentClock(outer, spec.agentId, deps.timeoutMs) : undefined;
  const ctx = clock?.ctx ?? outer;
  const answer = spec.finalAnswer ? { final_answer: true } : {};
  const run = async (): Promise<Turn> => {
    const startedAt = Date.now();
    o.before?.();
    if (o.announce) ctx.emit('AGENT_STARTED', spec.agentId, `Agent ${spec.agentId} started`);
    deps.budget?.beforeCall(ctx, spec.agentId);
    const co = new DeltaCoalescer(
      (piece) => ctx.emit('LLM_PARTIAL', spec.agentId, piece, { delta: piece, ...answer }),
      deps.partialChunkChars,
      deps.partialFlushMs ?? 50,
    );
    let r: LlmResult;
    try {
      r = await deps.llm.complete(
        {
          messages,
          tier: spec.tier,
          model: spec.model,
          ...(spec.provider ? { provider: spec.provider } : {}),
          // Named for the model layer's budgets (LLM_DISABLE_BUDGETS=0).
          ...(spec.taskId ? { budget: { taskId: spec.taskId, agentId: spec.agentId } } : {}),
          maxTokens: o.maxTokens ?? deps.maxTokens,
          temperature: o.temperature ?? deps.temperature,
          ...deps.sampling,
          ...(tools?.length ? { tools, toolChoice: 'auto' as const } : {}),
          signal: ctx.signal,
        },
        (d) => co.push(d),
      );
    } finally {
      co.flush();
    }
    const cacheHit = r.cacheHit;
    const call: ModelCall = {
      agentId: spec.agentId,
      step,
      tier: spec.tier,
      model: r.model,
      provider: r.provider,
      usage: r.usage,
      ...(cacheHit ? { cacheHit, cacheScore: r.cacheScore ?? 1 } : {}),
    };
    deps.budget?.afterCall(ctx, spec.agentId, r.usage);
    await deps.onModelCall?.(call);
    if ((o.emitOutput ?? true) && !r.toolCalls?.length) {
      ctx.emit('LLM_OUTPUT', spec.agentId, r.text, {
        model: r.model,
        provider: r.provider,
        usage: { input_tokens: r.usage.inputTokens, output_tokens: r.usage.outputTokens, total_tokens: r.usage.totalTokens, cost_usd: r.usage.costUsd },
        ...(cacheHit ? { cache_hit: true, cache_score: r.cacheScore ?? 1 } : {}),
        ...answer,
      });
    }
    const turn: Turn = {
      tier: spec.tier,
      text: r.text,
      model: r.model,
      provider: r.provider,
      usage: r.usage,
      ...(r.toolCalls?.length ? { toolCalls: r.toolCalls } : {}),
      ...(cacheHit ? { cacheHit, cacheScore: r.cacheScore ?? 1 } : {}),
      startedAt,
      endedAt: Date.now(),
    };
    if (o.announce) ctx.emit('AGENT_COMPLETED', spec.agentId, `Agent ${spec.agentId} completed`, { total_tokens: r.usage.totalTokens });
    o.after?.(turn);
    return turn;
  };
  let turn: Turn;
  try {
    turn = o.inStep ? await run() : await ctx.step(step, run);
  } catch (err) {
    throw clock ? clock.failure(err) : err;
  } finally {
    clock?.stop();
  }
  if (replayed) deps.budget?.afterCall(undefined, spec.agentId, turn.usage);
  return turn;
}
