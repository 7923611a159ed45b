/**
 * Budgets of a task (MAX_TOKENS_PER_REQUEST, MAX_COST_PER_REQUEST, TOKEN_BUDGET_PER_AGENT,
 * TOKEN_BUDGET_PER_TASK), checked before every model call. Where they are enforced is
 * LLM_DISABLE_BUDGETS: 1 (the default) in the workflow, which also emits BUDGET_THRESHOLD
 * events; 0 in the model layer (`BudgetedProvider`), which refuses the call the same way but
 * has no event stream to warn on.
 */
import { LRUCache } from 'lru-cache';
import { AppError, Code } from '../kernel/index.js';
import type { LlmProvider, LlmRequest, LlmResult, LlmUsage } from './provider.js';
import type { UsageStore } from './usage.js';

/** Where threshold events go (a workflow's context); absent: counted silently. */
export interface BudgetEvents {
  emit(type: 'BUDGET_THRESHOLD', agentId: string, message: string, payload?: Record<string, unknown>): unknown;
}

/** A budget refused a model call: the task ends FAILED with this message. */
export class BudgetExceeded extends AppError {
  override name = 'BudgetExceeded';
  constructor(message: string) {
    super(Code.ResourceExhausted, message, { retryable: false });
  }
}

export interface BudgetLimits {
  /** MAX_TOKENS_PER_REQUEST: tokens of the whole task. */
  maxTokensPerRequest?: number;
  /** MAX_COST_PER_REQUEST: USD of the whole task. */
  maxCostPerRequest?: number;
  /** TOKEN_BUDGET_PER_AGENT */
  tokensPerAgent?: number;
  /** TOKEN_BUDGET_PER_TASK */
  tokensPerTask?: number;
}

/**
 * The budgets of one task, checked before every model call. Totals come from the calls this
 * run has seen, journaled ones included (they are replayed through `afterCall` by the
 * workflow before new calls), so a replay counts what was spent before the crash.
 * BUDGET_THRESHOLD is emitted once per budget at 80% and once at the limit.
 */
export class Budget {
  private taskTokens = 0;
  private taskCost = 0;
  private readonly agentTokens = new Map<string, number>();
  private readonly warned = new Set<string>();
  constructor(private readonly limits: BudgetLimits) {}

  /** Counts a call's usage (new or replayed from the journal). */
  afterCall(ctx: BudgetEvents | undefined, agentId: string, u: LlmUsage): void {
    this.taskTokens += u.totalTokens;
    this.taskCost += u.costUsd;
    this.agentTokens.set(agentId, (this.agentTokens.get(agentId) ?? 0) + u.totalTokens);
    this.warn(ctx, agentId);
  }

  private checks(agentId: string): { name: string; used: number; limit: number; unit: string }[] {
    const l = this.limits;
    const out: { name: string; used: number; limit: number; unit: string }[] = [];
    if (l.maxTokensPerRequest) out.push({ name: 'MAX_TOKENS_PER_REQUEST', used: this.taskTokens, limit: l.maxTokensPerRequest, unit: 'tokens' });
    if (l.tokensPerTask) out.push({ name: 'TOKEN_BUDGET_PER_TASK', used: this.taskTokens, limit: l.tokensPerTask, unit: 'tokens' });
    if (l.tokensPerAgent) out.push({ name: 'TOKEN_BUDGET_PER_AGENT', used: this.agentTokens.get(agentId) ?? 0, limit: l.tokensPerAgent, unit: 'tokens' });
    if (l.maxCostPerRequest) out.push({ name: 'MAX_COST_PER_REQUEST', used: this.taskCost, limit: l.maxCostPerRequest, unit: 'USD' });
    return out;
  }

  /** Emits each threshold crossed once; without a context (a replayed call) only notes it. */
  private warn(ctx: BudgetEvents | undefined, agentId: string): void {
    for (const c of this.checks(agentId)) {
      const key = `${c.name}:${c.name === 'TOKEN_BUDGET_PER_AGENT' ? agentId : ''}`;
      const level = c.used >= c.limit ? 'limit' : c.used >= 0.8 * c.limit ? '80' : undefined;
      if (!level || this.warned.has(`${key}:${level}`)) continue;
      this.warned.add(`${key}:${level}`);
      if (level === 'limit') this.warned.add(`${key}:80`);
      ctx?.emit('BUDGET_THRESHOLD', agentId, `${c.name}: ${round(c.used)} of ${c.limit} ${c.unit} used (${Math.round((100 * c.used) / c.limit)}%)`, {
        budget: c.name,
        used: round(c.used),
        limit: c.limit,
        unit: c.unit,
        threshold: level === 'limit' ? 1 : 0.8,
      });
    }
  }

  /** Refuses the next model call when a budget is used up. */
  beforeCall(ctx: BudgetEvents | undefined, agentId: string): void {
    for (const c of this.checks(agentId)) {
      if (c.used >= c.limit) {
        this.warn(ctx, agentId);
        throw new BudgetExceeded(`budget exceeded: ${c.name} (${round(c.used)} of ${c.limit} ${c.unit} used)`);
      }
    }
  }
}

const round = (n: number) => Math.round(n * 1e6) / 1e6;

/**
 * The model layer's enforcement (LLM_DISABLE_BUDGETS=0): requests that name their task
 * (`req.budget`) are counted per task and refused past a limit. A task seen for the first time
 * in this process starts from what llm_calls already holds for it (a task resumed here after
 * a crash elsewhere keeps its spend).
 */
export class BudgetedProvider implements LlmProvider {
  readonly name: string;
  // Bounded: a task lives at most TASK_TIMEOUT_SECONDS, and one process sees many tasks.
  private readonly tasks = new LRUCache<string, Promise<Budget>>({ max: 10_000 });
  constructor(
    private readonly inner: LlmProvider,
    private readonly limits: BudgetLimits,
    private readonly usage?: UsageStore,
  ) {
    this.name = inner.name;
  }

  private budgetOf(taskId: string): Promise<Budget> {
    let b = this.tasks.get(taskId);
    if (!b) {
      b = (async () => {
        const budget = new Budget(this.limits);
        const spent = await this.usage?.spentByAgent(taskId).catch(() => []);
        for (const s of spent ?? []) budget.afterCall(undefined, s.agentId, s.usage);
        return budget;
      })();
      this.tasks.set(taskId, b);
    }
    return b;
  }

  async complete(req: LlmRequest, onDelta?: (delta: string) => void): Promise<LlmResult> {
    if (!req.budget) return this.inner.complete(req, onDelta);
    const b = await this.budgetOf(req.budget.taskId);
    b.beforeCall(undefined, req.budget.agentId);
    const r = await this.inner.complete(req, onDelta);
    b.afterCall(undefined, req.budget.agentId, r.usage);
    return r;
  }
}
