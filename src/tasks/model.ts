/**
 * The task model: a task as stored (tasks row), what a workflow's end writes, archived
 * events, and the start message a worker receives, built here only.
 */
import type { TaskPriority } from '../bus/index.js';
import { MODE_BY_EXECUTION, badRequest, type Mode, type TERMINAL_STATUSES, type Tier } from '../kernel/index.js';

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

/** A catalogue agent as its task runs it: the agent's id, its tool and the tool's arguments. */
export interface TaskAgent {
  id: string;
  tool: string;
  input: Record<string, unknown>;
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
  /** A catalogue agent (context.agent): its tool and input (validated, defaults filled), pinned at submission. */
  agent?: TaskAgent;
  /** Verify the answer in a last step; findings go into metadata. */
  enable_verification?: boolean;
  /** The deep-research workflow and its settings. */
  research?: { strategy: string; maxIterations: number; iterative: boolean; factExtraction: boolean };
  /** A person approves the task before its first action (require_approval). */
  require_approval?: true;
  /** A person reviews the research plan before the research (context.require_review / review_plan "manual"). */
  review?: { timeoutSeconds: number };
  trace_id?: string;
  submitted_at: string;
  /** The session was generated for this task (the client named none). */
  new_session?: boolean;
  /** Set on a wake: time the task spent waiting for people, added to its time limit. */
  waited_ms?: number;
  /** The work queue it waits in (absent: normal); every later start message of the task goes there too. */
  priority?: TaskPriority;
}

/** A task as it is stored (the tasks row): everything its start message is built from. */
export interface QueuedTask {
  id: string;
  session_id: string;
  user_id: string | null;
  tenant_id: string | null;
  query: string;
  context: Record<string, unknown> | null;
  /** What was asked at submission: mode (when named), model_tier, model_override, max_concurrent_agents, new_session, priority (when not normal). */
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
    ...(o.agent ? { agent: o.agent as TaskAgent } : {}),
    ...(o.enable_verification ? { enable_verification: true } : {}),
    ...(o.research ? { research: o.research as NonNullable<TaskStart['research']> } : {}),
    ...(o.require_approval ? { require_approval: true as const } : {}),
    ...(o.review ? { review: o.review as { timeoutSeconds: number } } : {}),
    trace_id: t.trace_id ?? undefined,
    submitted_at: t.created_at.toISOString(),
    ...(o.new_session ? { new_session: true } : {}),
    ...(o.priority ? { priority: o.priority as TaskPriority } : {}),
  };
}

/**
 * The NATS headers of every start message of a task (at submission, on a wake, on a
 * re-publish): the W3C trace context of its submission, kept in the row (options.trace_context),
 * so that each activation of the workflow, on whichever worker, joins the submission's trace.
 */
export function startHeaders(t: Pick<QueuedTask, 'options'>): Record<string, string> | undefined {
  const c = t.options?.trace_context;
  if (!c || typeof c !== 'object' || Array.isArray(c)) return undefined;
  return Object.fromEntries(Object.entries(c).filter((e): e is [string, string] => typeof e[1] === 'string'));
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

/** Most output tokens a task may ask for per model call (`context.model_settings.max_tokens`). */
export const MAX_TASK_MAX_TOKENS = 16384;
/** Most stop sequences (OpenAI's limit). */
export const MAX_STOP_SEQUENCES = 4;
/** Most messages `context.conversation_history` may carry. */
export const MAX_CONVERSATION_HISTORY = 1000;

/**
 * Sampling settings a task carries in `context.model_settings` (the OpenAI-compatible layer
 * sets them from its request): every model call of the task's own agents uses them instead of
 * the service's MAX_TOKENS / TEMPERATURE and the provider's defaults.
 */
export interface TaskModelSettings {
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  stop?: string[];
  presencePenalty?: number;
  frequencyPenalty?: number;
}

const finiteIn = (v: unknown, min: number, max: number) => typeof v === 'number' && Number.isFinite(v) && v >= min && v <= max;

/**
 * `context.model_settings` ({max_tokens, temperature, top_p, stop, presence_penalty,
 * frequency_penalty}, each optional) checked and read; a 400 naming the key when a value is
 * out of range. Empty when the key is absent.
 */
export function taskModelSettings(context: Readonly<Record<string, unknown>>): TaskModelSettings {
  const raw = Object.hasOwn(context, 'model_settings') ? context.model_settings : undefined;
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw badRequest('context.model_settings must be an object');
  const o = raw as Record<string, unknown>;
  const known = ['max_tokens', 'temperature', 'top_p', 'stop', 'presence_penalty', 'frequency_penalty'];
  const stray = Object.keys(o).find((k) => !known.includes(k));
  if (stray) throw badRequest(`context.model_settings.${stray} is not a model setting; known: ${known.join(', ')}`);
  const get = (k: string) => (o[k] === null ? undefined : o[k]);
  const out: TaskModelSettings = {};
  const mt = get('max_tokens');
  if (mt !== undefined) {
    if (typeof mt !== 'number' || !Number.isInteger(mt) || mt < 1 || mt > MAX_TASK_MAX_TOKENS) {
      throw badRequest(`context.model_settings.max_tokens must be an integer from 1 to ${MAX_TASK_MAX_TOKENS}`);
    }
    out.maxTokens = mt;
  }
  const num = (k: string, field: keyof TaskModelSettings, min: number, max: number) => {
    const v = get(k);
    if (v === undefined) return;
    if (!finiteIn(v, min, max)) throw badRequest(`context.model_settings.${k} must be a number from ${min} to ${max}`);
    (out as Record<string, unknown>)[field] = v;
  };
  num('temperature', 'temperature', 0, 2);
  num('top_p', 'topP', 0, 1);
  num('presence_penalty', 'presencePenalty', -2, 2);
  num('frequency_penalty', 'frequencyPenalty', -2, 2);
  const stop = get('stop');
  if (stop !== undefined) {
    const list = typeof stop === 'string' ? [stop] : stop;
    if (!Array.isArray(list) || list.length > MAX_STOP_SEQUENCES || !list.every((x) => typeof x === 'string' && x.length > 0 && x.length <= 256)) {
      throw badRequest(`context.model_settings.stop must be a string or an array of at most ${MAX_STOP_SEQUENCES} non-empty strings`);
    }
    if (list.length) out.stop = list as string[];
  }
  return out;
}

/** One earlier message of a conversation the client sends with the task. */
export interface ConversationTurn {
  role: 'user' | 'assistant';
  content: string;
}

/**
 * `context.conversation_history`: the earlier messages of the conversation, oldest first, as
 * the client holds them (the OpenAI-compatible layer sends every message but the system
 * prompt and the query). When given, the workflow uses it as the task's history instead of
 * the session's earlier turns (same window and compression). Undefined when absent; a 400
 * when malformed.
 */
export function conversationHistoryOf(context: Readonly<Record<string, unknown>>): ConversationTurn[] | undefined {
  const raw = Object.hasOwn(context, 'conversation_history') ? context.conversation_history : undefined;
  if (raw === undefined || raw === null) return undefined;
  if (!Array.isArray(raw)) throw badRequest('context.conversation_history must be an array of {role, content}');
  if (raw.length > MAX_CONVERSATION_HISTORY) throw badRequest(`context.conversation_history may hold at most ${MAX_CONVERSATION_HISTORY} messages`);
  return raw.map((m, i) => {
    const o = (m ?? {}) as Record<string, unknown>;
    if (typeof m !== 'object' || Array.isArray(m) || (o.role !== 'user' && o.role !== 'assistant') || typeof o.content !== 'string') {
      throw badRequest(`context.conversation_history[${i}] must be {role: "user" | "assistant", content: string}`);
    }
    return { role: o.role, content: o.content };
  });
}
