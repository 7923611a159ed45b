/**
 * Usage records of model calls (table llm_calls): one row per journaled model call, keyed by
 * task and step so a replayed step writes once. Each call is queued as it happens (batched,
 * not awaited: no database round trip inside an agent step); when a workflow finishes it
 * queues all its calls again from the journal (rows that exist are left alone; rows lost if a
 * crash came before their batch are written), and its `usage` and `metadata.model_breakdown`
 * are the sums of that same list.
 */
import type { Logger } from '../kernel/index.js';
import { countModelCall } from '../metrics/index.js';
import { Batcher, rowInserter, type Sql } from '../store/index.js';

const insertCalls = rowInserter<{
  id: string;
  task_id: string | null;
  agent_id: string;
  model: string;
  provider: string;
  tier: string;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  cost_usd: number;
  cache_hit: boolean;
}>(
  'llm_calls',
  [
    ['id', 'text'],
    ['task_id', 'uuid'],
    ['agent_id', 'text'],
    ['model', 'text'],
    ['provider', 'text'],
    ['tier', 'text'],
    ['input_tokens', 'integer'],
    ['output_tokens', 'integer'],
    ['total_tokens', 'integer'],
    ['cost_usd', 'double precision'],
    ['cache_hit', 'boolean'],
  ],
  'ON CONFLICT (id) DO NOTHING',
);

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
    countModelCall(r);
    this.batch.push(r).catch((err: unknown) => this.log?.warn({ err, task_id: r.taskId }, 'model call record not written; the task end writes it again'));
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
    await insertCalls(this.sql, rows);
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
