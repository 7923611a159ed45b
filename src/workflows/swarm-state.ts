/**
 * The swarm lead's state (journaled whole after every decision, so a replay restores it without
 * re-deciding anything), what the lead needs from the process (SwarmRuntime), and the
 * accounting of the swarm's model calls (its limits, usage, model_breakdown).
 */
import type { AgentOutput, ModelCall } from '../agents/index.js';
import type { PipelinedPublisher } from '../bus/index.js';
import { Budget, BudgetExceeded, type BudgetLimits, type LlmUsage } from '../llm/index.js';
import type { SwarmLimits } from '../config/index.js';
import { AppError, type Code } from '../kernel/index.js';
import type { AgentReport, Mailboxes, SwarmBoard, SwarmTask } from '../swarm/index.js';

/** The agent id of the swarm's WORKFLOW_STARTED, PROGRESS (planning, synthesizing) and WORKFLOW_COMPLETED. */
export const SWARM_SUPERVISOR = 'swarm-supervisor';
/** The agent id of the lead's decisions: LEAD_DECISION, TASKLIST_UPDATED, TEAM_*. */
export const SWARM_LEAD = 'swarm-lead';

/** What the swarm workflow needs of the process: the mailboxes, the shared board, the start queue and the limits. */
export interface SwarmRuntime {
  mail: Mailboxes;
  board: SwarmBoard;
  /** Publishes agents' start messages (SWARM_AGENTS) and the lead's stop messages. */
  publisher: PipelinedPublisher;
  limits: SwarmLimits;
  /** How long the lead waits for agents it stopped to report before it counts them failed (ms). Default 30 s. */
  stopGraceMs?: number;
}

export const DEFAULT_STOP_GRACE_MS = 30_000;

export interface AgentRec {
  name: string;
  task: string;
  status: 'running' | 'done' | 'failed';
  /** Model calls and tokens so far (its last PROGRESS, then its report). */
  calls: number;
  tokens: number;
  /** Its model calls' cost so far (USD; its last PROGRESS, then its report). */
  cost?: number;
  report?: AgentReport;
  note?: string;
}

export interface LeadState {
  /** When the swarm started (its plan): max_wall_clock_minutes runs from here. */
  startedAt: number;
  /** The lead's mailbox position: the last message it acted on. */
  cursor: number;
  /** Agents recruited so far (names agent-1, agent-2, ...). */
  next: number;
  tasks: SwarmTask[];
  agents: AgentRec[];
  /** The lead's own model calls (plan, decisions on people's messages). */
  lead: ModelCall[];
  /** Messages agents sent the lead (for the synthesis). */
  notes: string[];
  /** A swarm limit was reached: agents were told to stop. */
  /** `budget`: the limit is one of the task's budgets (MAX_TOKENS_PER_REQUEST...), not a swarm limit. */
  stop?: { limit: string; reason: string; at: number; budget?: boolean };
}

/** The swarm's model calls and tokens so far (the lead's and every agent's). */
export function totals(s: LeadState): { calls: number; tokens: number } {
  let calls = s.lead.length;
  let tokens = s.lead.reduce((n, c) => n + c.usage.totalTokens, 0);
  for (const a of s.agents) {
    calls += a.calls;
    tokens += a.tokens;
  }
  return { calls, tokens };
}

/** A swarm limit the state has reached, if any. */
export function limitReached(s: LeadState, L: SwarmLimits, now: number): { limit: string; reason: string } | undefined {
  const t = totals(s);
  if (t.calls >= L.max_total_llm_calls)
    return { limit: 'max_total_llm_calls', reason: `${t.calls} model calls reached max_total_llm_calls (${L.max_total_llm_calls})` };
  if (t.tokens >= L.max_total_tokens) return { limit: 'max_total_tokens', reason: `${t.tokens} tokens reached max_total_tokens (${L.max_total_tokens})` };
  if (now >= s.startedAt + L.max_wall_clock_minutes * 60_000) {
    return { limit: 'max_wall_clock_minutes', reason: `the swarm ran for max_wall_clock_minutes (${L.max_wall_clock_minutes})` };
  }
  return undefined;
}

/**
 * The task's budgets (MAX_TOKENS_PER_REQUEST, MAX_COST_PER_REQUEST, TOKEN_BUDGET_PER_TASK,
 * TOKEN_BUDGET_PER_AGENT) over the swarm's model calls so far (`earlier`: the task's calls
 * before the swarm, e.g. its history summary): the first one used up, named, if any.
 */
export function budgetReached(
  s: LeadState,
  limits: BudgetLimits | undefined,
  earlier: LlmUsage[] = [],
): { limit: string; reason: string; budget: true } | undefined {
  if (!limits) return undefined;
  const b = new Budget(limits);
  for (const u of earlier) b.afterCall(undefined, 'history', u);
  for (const c of s.lead) b.afterCall(undefined, c.agentId, c.usage);
  for (const a of s.agents) b.afterCall(undefined, a.name, { inputTokens: 0, outputTokens: 0, totalTokens: a.tokens, costUsd: a.cost ?? 0 });
  for (const id of [...s.agents.map((a) => a.name), SWARM_LEAD]) {
    try {
      b.beforeCall(undefined, id);
    } catch (err) {
      if (!(err instanceof BudgetExceeded)) throw err;
      return { limit: /^budget exceeded: ([A-Z_]+)/.exec(err.message)?.[1] ?? 'budget', reason: err.message, budget: true };
    }
  }
  return undefined;
}

/** Every agent's work as outputs (failed ones too: their calls cost), the lead's calls as one output each. */
export function swarmOutputs(s: LeadState): AgentOutput[] {
  const lead = s.lead.map((c) => ({ text: '', model: c.model, provider: c.provider, usage: c.usage, calls: [c], toolCalls: 0 }));
  const agents = s.agents.flatMap((a): AgentOutput[] => {
    const r = a.report;
    if (!r) return [];
    const calls: ModelCall[] = r.calls.map((c) => ({ ...c }));
    const usage = calls.reduce(
      (u, c) => ({
        inputTokens: u.inputTokens + c.usage.inputTokens,
        outputTokens: u.outputTokens + c.usage.outputTokens,
        totalTokens: u.totalTokens + c.usage.totalTokens,
        costUsd: u.costUsd + c.usage.costUsd,
      }),
      { inputTokens: 0, outputTokens: 0, totalTokens: 0, costUsd: 0 },
    );
    const last = calls.at(-1);
    return [{ text: r.text, model: last?.model ?? '', provider: last?.provider ?? '', usage, calls, toolCalls: r.toolCalls }];
  });
  return [...lead, ...agents];
}

/** The swarm failed for good (every agent and the re-route, or a limit before any result): FAILED with its metadata. */
export class SwarmFailed extends AppError {
  override name = 'SwarmFailed';
  constructor(
    code: Code,
    message: string,
    /** Merged into the task's metadata (workflow_type, total_agents, total_tokens, model_breakdown, cost_usd). */
    readonly metadata: Record<string, unknown>,
  ) {
    super(code, message);
  }
}
