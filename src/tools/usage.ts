/**
 * Usage records of tool executions (table tool_calls), written asynchronously: the registry
 * hands each record over and goes on; rows are batched into one INSERT per tick. A failed
 * write is logged, never surfaced to the caller of the tool.
 */
import { Batcher, rowInserter, type Sql } from '../store/index.js';
import type { Logger } from '../kernel/index.js';
import { countToolCall } from '../metrics/index.js';

/** One execution, as the registry hands it over. */
export interface ToolUsage {
  tool: string;
  sessionId?: string;
  userId?: string;
  /** The workflow that called it, when a workflow did. */
  taskId?: string;
  success: boolean;
  executionTimeMs: number;
  costUsd: number;
  tokens: number;
  at: Date;
}

const insertCalls = rowInserter<{
  tool: string;
  task_id: string | null;
  session_id: string | null;
  user_id: string | null;
  success: boolean;
  execution_time_ms: number;
  cost_usd: number;
  tokens: number;
  created_at: Date;
}>('tool_calls', [
  ['tool', 'text'],
  ['task_id', 'uuid'],
  ['session_id', 'text'],
  ['user_id', 'uuid'],
  ['success', 'boolean'],
  ['execution_time_ms', 'integer'],
  ['cost_usd', 'double precision'],
  ['tokens', 'integer'],
  ['created_at', 'timestamptz'],
]);

export class ToolUsageStore {
  private readonly batch: Batcher<ToolUsage>;
  constructor(
    private readonly sql: Sql,
    private readonly log?: Logger,
  ) {
    this.batch = new Batcher((items) => this.insert(items));
  }

  /** Queues one record; returns at once. */
  record(u: ToolUsage): void {
    countToolCall(u.tool, u.success);
    this.batch.push(u).catch((err: unknown) => this.log?.warn({ err, tool: u.tool }, 'tool usage record not written'));
  }

  private async insert(items: ToolUsage[]): Promise<void> {
    const rows = items.map((u) => ({
      tool: u.tool,
      task_id: u.taskId ?? null,
      session_id: u.sessionId ?? null,
      user_id: u.userId ?? null,
      success: u.success,
      execution_time_ms: u.executionTimeMs,
      cost_usd: u.costUsd,
      tokens: u.tokens,
      created_at: u.at,
    }));
    await insertCalls(this.sql, rows);
  }

  /** Calls per tool since `since` (operators and tests). */
  async counts(since: Date): Promise<Record<string, number>> {
    const rows = await this.sql<{ tool: string; n: number }[]>`SELECT tool, count(*)::int AS n FROM tool_calls WHERE created_at >= ${since} GROUP BY tool`;
    return Object.fromEntries(rows.map((r) => [r.tool, r.n]));
  }
}
