/**
 * Usage records of model calls (table llm_calls): one row per journaled model call, keyed by
 * task and step so a replayed step writes once. Each call is queued as it happens (batched,
 * not awaited: no database round trip inside an agent step); when a workflow finishes it
 * writes all its calls again from the journal (`recordAll`, a no-op for rows that exist, and
 * the rows lost if a crash came before their batch) and reads its `usage` and
 * `metadata.model_breakdown` back from the rows.
 */
import type { Logger } from '../kernel/index.js';
import { Batcher, type Sql } from '../store/index.js';

export interface ModelCallRecord {
  /** The task (workflow or AgentService run); absent for LLMService calls, which have none. */
  taskId?: string;
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
  private readonly batch: Batcher<ModelCallRecord>;
  constructor(
    private readonly sql: Sql,
    private readonly log?: Logger,
  ) {
    this.batch = new Batcher((items) => this.insert(items));
  }

  /** Queues one record (written with the others of the same tick); returns at once. */
  recordModelCall(r: ModelCallRecord): void {
    this.batch.push(r).catch((err: unknown) => this.log?.warn({ err, task_id: r.taskId }, 'model call record not written; the task end writes it again'));
  }

  /** Writes these records now (rows that exist are left as they are). */
  async recordAll(rs: ModelCallRecord[]): Promise<void> {
    for (let i = 0; i < rs.length; i += 500) await this.insert(rs.slice(i, i + 500));
  }

  private async insert(rs: ModelCallRecord[]): Promise<void> {
    if (!rs.length) return;
    const rows = rs.map((r) => ({
      id: `${r.taskId ?? r.agentId}:${r.step}`,
      task_id: r.taskId ?? null,
      agent_id: r.agentId,
      model: r.model,
      provider: r.provider,
      tier: r.tier,
      input_tokens: r.inputTokens,
      output_tokens: r.outputTokens,
      total_tokens: r.totalTokens,
      cost_usd: r.costUsd,
      cache_hit: r.cacheHit,
    }));
    await this.sql`INSERT INTO llm_calls ${this.sql(rows)} ON CONFLICT (id) DO NOTHING`;
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

  /**
   * Model calls per tier over the last `hours`, with each tier's share of them: how routing
   * compares with the 50/40/10 target (every process's calls: they are all recorded here).
   */
  async tierShares(hours = 24): Promise<Record<string, { calls: number; share: number }>> {
    const rows = await this.sql<{ tier: string; n: number }[]>`
      SELECT tier, count(*)::int AS n FROM llm_calls WHERE created_at > now() - make_interval(hours => ${hours}) AND tier <> '' GROUP BY tier`;
    const total = rows.reduce((a, r) => a + r.n, 0);
    const out: Record<string, { calls: number; share: number }> = {
      small: { calls: 0, share: 0 },
      medium: { calls: 0, share: 0 },
      large: { calls: 0, share: 0 },
    };
    for (const r of rows) out[r.tier] = { calls: r.n, share: total ? r.n / total : 0 };
    return out;
  }

  /** What a task's model calls used so far, by agent (a budget resumed elsewhere starts from it). */
  async spentByAgent(
    taskId: string,
  ): Promise<{ agentId: string; usage: { inputTokens: number; outputTokens: number; totalTokens: number; costUsd: number } }[]> {
    const rows = await this.sql<{ agent_id: string; input: string; output: string; total: string; cost: number }[]>`
      SELECT agent_id, sum(input_tokens) AS input, sum(output_tokens) AS output, sum(total_tokens) AS total, sum(cost_usd)::float8 AS cost
      FROM llm_calls WHERE task_id = ${taskId}::uuid GROUP BY agent_id`;
    return rows.map((r) => ({
      agentId: r.agent_id,
      usage: { inputTokens: Number(r.input), outputTokens: Number(r.output), totalTokens: Number(r.total), costUsd: r.cost },
    }));
  }
}
