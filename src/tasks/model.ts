/**
 * The task model: a task as stored (tasks row), what a workflow's end writes, archived
 * events, and the start message a worker receives, built here only.
 */
import { MODE_BY_EXECUTION, type Mode, type TERMINAL_STATUSES, type Tier } from '../kernel/index.js';

export interface TaskRow {
  id: string;
  session_id: string;
  user_id: string | null;
  tenant_id: string | null;
  query: string;
  context: Record<string, unknown>;
  options: Record<string, unknown>;
  mode: string;
  status: string;
  result: string | null;
  metadata: Record<string, unknown>;
  error: string;
  model_used: string;
  provider: string;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  cost_usd: number;
  trace_id: string | null;
  created_at: Date;
  updated_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
}

export interface TaskOutcome {
  status: (typeof TERMINAL_STATUSES)[number];
  result?: string | null;
  error?: string;
  metadata?: Record<string, unknown>;
  modelUsed?: string;
  provider?: string;
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  costUsd?: number;
}

export interface EventRow {
  workflow_id: string;
  seq: number;
  type: string;
  agent_id: string;
  message: string;
  payload: unknown;
  ts: Date;
  stream_id: string;
}

export interface ListTasksQuery {
  limit: number;
  offset: number;
  sessionId?: string;
  status?: string;
  userId?: string;
  tenantId?: string;
}

/** The work-queue message that starts (and, on redelivery, re-activates) a workflow. */
export interface TaskStart {
  task_id: string;
  session_id: string;
  user_id?: string;
  tenant_id?: string;
  query: string;
  context: Record<string, unknown>;
  mode: Mode;
  model_tier: Tier;
  model_override?: string;
  /** A provider of the catalogue every model call of the task goes to. */
  provider_override?: string;
  max_concurrent_agents?: number;
  /** Tool rounds of an agent (max_iterations). */
  max_iterations?: number;
  /** Set when the mode was detected: how complex the query looked (0-1). */
  complexity_score?: number;
  /** Run this workflow template instead of a mode's agents. */
  template?: { name: string; version?: string };
  /** Template-only: no model call at all. */
  disable_ai?: boolean;
  /** A skill's instructions drive the (single) agent. */
  skill?: { name: string; version?: string };
  /** Verify the answer in a last step; findings go into metadata. */
  enable_verification?: boolean;
  /** The deep-research workflow and its settings. */
  research?: { strategy: string; maxIterations: number; iterative: boolean; factExtraction: boolean };
  trace_id?: string;
  submitted_at: string;
  /** The session was generated for this task (the client named none). */
  new_session?: boolean;
}

/** A task as it is stored (the tasks row): everything its start message is built from. */
export interface QueuedTask {
  id: string;
  session_id: string;
  user_id: string | null;
  tenant_id: string | null;
  query: string;
  context: Record<string, unknown> | null;
  /** What was asked at submission: mode (when named), model_tier, model_override, max_concurrent_agents, new_session. */
  options: Record<string, unknown> | null;
  /** The execution mode name stored with the task (EXECUTION_MODE_*). */
  mode: string;
  trace_id: string | null;
  created_at: Date;
}

/**
 * The start message of a stored task, built here only: at submission and when the
 * reconciler publishes it again, so both carry the same fields.
 */
export function startMessage(t: QueuedTask): TaskStart {
  const o = t.options ?? {};
  return {
    task_id: t.id,
    session_id: t.session_id,
    user_id: t.user_id ?? undefined,
    tenant_id: t.tenant_id ?? undefined,
    query: t.query,
    context: t.context ?? {},
    mode: (o.mode as Mode | undefined) ?? MODE_BY_EXECUTION.get(t.mode) ?? 'simple',
    model_tier: (o.model_tier as Tier | undefined) ?? 'small',
    model_override: (o.model_override as string | undefined) || undefined,
    ...(o.provider_override ? { provider_override: o.provider_override as string } : {}),
    max_concurrent_agents: (o.max_concurrent_agents as number | undefined) || undefined,
    ...(o.max_iterations ? { max_iterations: o.max_iterations as number } : {}),
    ...(typeof o.complexity_score === 'number' ? { complexity_score: o.complexity_score } : {}),
    ...(o.template ? { template: o.template as { name: string; version?: string } } : {}),
    ...(o.disable_ai ? { disable_ai: true } : {}),
    ...(o.skill ? { skill: o.skill as { name: string; version?: string } } : {}),
    ...(o.enable_verification ? { enable_verification: true } : {}),
    ...(o.research ? { research: o.research as NonNullable<TaskStart['research']> } : {}),
    trace_id: t.trace_id ?? undefined,
    submitted_at: t.created_at.toISOString(),
    ...(o.new_session ? { new_session: true } : {}),
  };
}

/** A task as a session's history shows it. */
export interface TaskBrief {
  id: string;
  query: string;
  result: string | null;
  status: string;
  mode: string;
  error: string;
  totalTokens: number;
  costUsd: number;
  createdAt: Date;
  startedAt: Date | null;
  completedAt: Date | null;
}

/** A task to insert: a QueuedTask whose owner and trace may be left out (null). */
export type NewTask = Omit<QueuedTask, 'user_id' | 'tenant_id' | 'trace_id'> & { user_id?: string | null; tenant_id?: string | null; trace_id?: string | null };
