/**
 * The task's usage from its model calls: one call as an agent's output, the records written
 * to llm_calls, the totals and model_breakdown.
 */
import type { AgentOutput, ModelCall } from '../agents/index.js';
import type { Tier } from '../kernel/index.js';
import type { LlmUsage, ModelCallRecord } from '../llm/index.js';
import type { TaskStart } from '../tasks/index.js';

export const sumUsage = (us: LlmUsage[]): LlmUsage =>
  us.reduce(
    (a, u) => ({
      inputTokens: a.inputTokens + u.inputTokens,
      outputTokens: a.outputTokens + u.outputTokens,
      totalTokens: a.totalTokens + u.totalTokens,
      costUsd: a.costUsd + u.costUsd,
    }),
    { inputTokens: 0, outputTokens: 0, totalTokens: 0, costUsd: 0 },
  );

export const recordOf = (t: TaskStart, c: ModelCall): ModelCallRecord => ({
  taskId: t.task_id,
  step: c.step,
  agentId: c.agentId,
  model: c.model,
  provider: c.provider,
  tier: c.tier ?? t.model_tier,
  inputTokens: c.usage.inputTokens,
  outputTokens: c.usage.outputTokens,
  totalTokens: c.usage.totalTokens,
  costUsd: c.usage.costUsd,
  cacheHit: !!c.cacheHit,
});

/** A one-call agent's turn as an output, with the record of its call. */
export function asOutput(
  agentId: string,
  step: string,
  t: { text: string; model: string; provider: string; usage: LlmUsage; cacheHit?: boolean; cacheScore?: number; tier?: Tier },
): AgentOutput {
  return {
    text: t.text,
    model: t.model,
    provider: t.provider,
    usage: t.usage,
    calls: [
      {
        agentId,
        step,
        ...(t.tier ? { tier: t.tier } : {}),
        model: t.model,
        provider: t.provider,
        usage: t.usage,
        ...(t.cacheHit ? { cacheHit: true, cacheScore: t.cacheScore } : {}),
      },
    ],
    toolCalls: 0,
  };
}

/** metadata.model_breakdown: the calls per provider and model. */
export function breakdown(calls: ModelCall[]) {
  const m = new Map<
    string,
    { model: string; provider: string; executions: number; tokens: number; input_tokens: number; output_tokens: number; cost_usd: number; cache_hits: number }
  >();
  for (const c of calls) {
    const k = `${c.provider}/${c.model}`;
    const e = m.get(k) ?? { model: c.model, provider: c.provider, executions: 0, tokens: 0, input_tokens: 0, output_tokens: 0, cost_usd: 0, cache_hits: 0 };
    e.executions++;
    e.tokens += c.usage.totalTokens;
    e.input_tokens += c.usage.inputTokens;
    e.output_tokens += c.usage.outputTokens;
    e.cost_usd += c.usage.costUsd;
    if (c.cacheHit) e.cache_hits++;
    m.set(k, e);
  }
  return [...m.values()];
}
