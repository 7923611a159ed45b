/**
 * Usage records of model calls (table llm_calls): one row per journaled model call, keyed by
 * task and step so a replayed step writes once. A task's `usage` and
 * `metadata.model_breakdown` are read back from these rows when it finishes.
 */
import type { Sql } from '../store/index.js';

export interface ModelCallRecord {
  taskId: string;
  step: string;
  agentId: string;
  model: string;
  provider: string;
  tier: string;
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  costUsd: number;
  cacheHit: boolean;
}

export interface ModelBreakdownEntry {
  model: string;
  provider: string;
  executions: number;
  tokens: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  cache_hits: number;
}

export interface TaskUsage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  costUsd: number;
  breakdown: ModelBreakdownEntry[];
  /** Calls per tier, for the tier-share metrics. */
  tiers: Record<string, number>;
}

export class UsageStore {
  constructor(private readonly sql: Sql) {}

  async recordModelCall(r: ModelCallRecord): Promise<void> {
    await this.sql`INSERT INTO llm_calls (id, task_id, agent_id, model, provider, tier, input_tokens, output_tokens, total_tokens, cost_usd, cache_hit)
      VALUES (${`${r.taskId}:${r.step}`}, ${r.taskId}::uuid, ${r.agentId}, ${r.model}, ${r.provider}, ${r.tier}, ${r.inputTokens}, ${r.outputTokens},
        ${r.totalTokens}, ${r.costUsd}, ${r.cacheHit})
      ON CONFLICT (id) DO NOTHING`;
  }

  /** The task's usage, summed from its model call records. */
  async taskUsage(taskId: string): Promise<TaskUsage> {
    const rows = await this.sql<
      { model: string; provider: string; tier: string; n: number; input: string; output: string; total: string; cost: number; hits: number }[]
    >`SELECT model, provider, tier, count(*)::int AS n, sum(input_tokens) AS input, sum(output_tokens) AS output, sum(total_tokens) AS total,
        sum(cost_usd)::float8 AS cost, count(*) FILTER (WHERE cache_hit)::int AS hits
      FROM llm_calls WHERE task_id = ${taskId}::uuid GROUP BY model, provider, tier ORDER BY min(created_at)`;
    const out: TaskUsage = { inputTokens: 0, outputTokens: 0, totalTokens: 0, costUsd: 0, breakdown: [], tiers: {} };
    const byModel = new Map<string, ModelBreakdownEntry>();
    for (const r of rows) {
      const input = Number(r.input);
      const output = Number(r.output);
      const total = Number(r.total);
      out.inputTokens += input;
      out.outputTokens += output;
      out.totalTokens += total;
      out.costUsd += r.cost;
      if (r.tier) out.tiers[r.tier] = (out.tiers[r.tier] ?? 0) + r.n;
      const k = `${r.provider}/${r.model}`;
      const e = byModel.get(k) ?? {
        model: r.model,
        provider: r.provider,
        executions: 0,
        tokens: 0,
        input_tokens: 0,
        output_tokens: 0,
        cost_usd: 0,
        cache_hits: 0,
      };
      e.executions += r.n;
      e.tokens += total;
      e.input_tokens += input;
      e.output_tokens += output;
      e.cost_usd += r.cost;
      e.cache_hits += r.hits;
      byModel.set(k, e);
    }
    out.breakdown = [...byModel.values()];
    return out;
  }
}
