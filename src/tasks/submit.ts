/**
 * The submission rules, in one place for every entry point (the HTTP gateway, gRPC
 * SubmitTask, the scheduler): what a submission may ask for, how context fallbacks and
 * defaults resolve, and the fields refused because nothing implements them yet. Then the
 * submission itself: the row is committed (QUEUED) and its start message queued.
 */
import { randomUUID } from 'node:crypto';
import { TASK_PRIORITIES, type Bus, type TaskPriority } from '../bus/index.js';
import { AppError, Code, EXECUTION_MODE, MODES, badRequest, isTier, rolePreset, type Logger, type Mode, type Tier } from '../kernel/index.js';
import { countTaskSubmitted } from '../metrics/index.js';
import { enqueueStart } from './enqueue.js';
import { conversationHistoryOf, startHeaders, startMessage, taskModelSettings, type TaskAgent } from './model.js';
import { CONTEXT_VALUE_RULES, contextBoolean, contextInteger, contextValue, normaliseContext } from './context-values.js';
import { notAvailableField, notAvailableMessage, firstGiven } from './not-available.js';
import type { TaskStore } from './store.js';

/** A submission as an entry point received it (names of the REST body; unset fields absent). */
export interface SubmitRequest {
  query: string;
  context?: Record<string, unknown>;
  /** The session the client named (UUID or external id); absent: a new one is generated. */
  sessionId?: string;
  /** A workflow mode the client asked for; absent: detected from the query. */
  mode?: string;
  modelTier?: string;
  modelOverride?: string;
  providerOverride?: string;
  skill?: string;
  researchStrategy?: string;
  maxIterations?: number;
  enableVerification?: boolean;
  maxConcurrentAgents?: number;
  traceId?: string;
  /** The submission's W3C trace context (traceparent, tracestate), carried to every activation. */
  traceContext?: Record<string, string>;
  /** A person approves the task before its first action (gRPC require_approval; REST context.require_approval). */
  requireApproval?: boolean;
  /** Which waiting task a free worker takes first (REST `priority`, gRPC metadata.labels.priority): a TASK_PRIORITIES name. */
  priority?: string;
  /** Fields only some entry points carry (e.g. gRPC's require_approval), by their wire name. */
  extraFields?: Record<string, unknown>;
}

/** A submission that passed the rules, with its fallbacks and defaults resolved. */
export interface Submission {
  query: string;
  context: Record<string, unknown>;
  sessionId?: string;
  /** The mode the client asked for, if any (re-runs keep it). */
  requestedMode?: Mode;
  mode: Mode;
  /** How complex the query looked (0-1), when the mode was detected rather than asked for. */
  complexityScore?: number;
  tier: Tier;
  maxIterations?: number;
  modelOverride?: string;
  providerOverride?: string;
  maxConcurrentAgents?: number;
  traceId?: string;
  traceContext?: Record<string, string>;
  /** A workflow template (context.template or its alias template_name) and its version. */
  template?: { name: string; version?: string };
  /** Template-only mode: no model call at all. */
  disableAi?: boolean;
  /** A skill (markdown instructions) driving a single agent, and its version. */
  skill?: { name: string; version?: string };
  /** A catalogue agent (context.agent + context.agent_input): its tool and checked input; absent when the catalogue was not consulted. */
  agent?: TaskAgent;
  enableVerification?: boolean;
  /** The deep-research workflow (research_strategy or context.force_research). */
  research?: ResearchOptions;
  requireApproval?: boolean;
  /** Plan review (context.require_review or review_plan "manual"): the research plan waits for a person. */
  review?: { timeoutSeconds: number };
  /** The work queue of a task asked for with a priority other than normal. */
  priority?: Exclude<TaskPriority, 'normal'>;
}

export const RESEARCH_STRATEGIES = ['quick', 'standard', 'deep', 'academic'] as const;
export type ResearchStrategy = (typeof RESEARCH_STRATEGIES)[number];

export interface ResearchOptions {
  strategy: ResearchStrategy;
  /** Rounds of the coverage loop (1-5): iterative_max_iterations, else the strategy's preset. */
  maxIterations: number;
  /** iterative_research_enabled (default true): false runs one round. */
  iterative: boolean;
  /** enable_fact_extraction: structured facts into metadata. */
  factExtraction: boolean;
}

/** Rounds of the coverage loop by strategy (iterative_max_iterations overrides). */
export const RESEARCH_ROUNDS: Readonly<Record<ResearchStrategy, number>> = Object.freeze({ quick: 1, standard: 2, deep: 3, academic: 3 });

/** context.review_timeout when none is given (seconds). */
export const DEFAULT_REVIEW_TIMEOUT_SECONDS = 900;
/** Values of context.review_plan: only `manual` asks a person. */
export const REVIEW_PLANS = ['manual', 'auto', 'none'] as const;

/**
 * Plan review: context.require_review (a flag) or context.review_plan "manual", and
 * context.review_timeout (seconds, 1-86400, default 900). A plan to review is a research
 * plan, so review implies the research workflow.
 */
function reviewOf(context: Record<string, unknown>): { timeoutSeconds: number } | undefined {
  const required = contextBoolean(context, 'require_review');
  const plan = fromContext(context, 'review_plan')?.trim().toLowerCase();
  if (plan !== undefined && !(REVIEW_PLANS as readonly string[]).includes(plan))
    throw badRequest(`context.review_plan must be one of: ${REVIEW_PLANS.join(', ')}`);
  const timeout = contextInteger(context, 'review_timeout', 1, 86_400);
  return required === true || plan === 'manual' ? { timeoutSeconds: timeout ?? DEFAULT_REVIEW_TIMEOUT_SECONDS } : undefined;
}

function researchOf(top: string | undefined, context: Record<string, unknown>, reviewed = false): ResearchOptions | undefined {
  const strategy = top || fromContext(context, 'research_strategy');
  if (strategy !== undefined && !(RESEARCH_STRATEGIES as readonly string[]).includes(strategy)) {
    throw badRequest(`research_strategy must be one of: ${RESEARCH_STRATEGIES.join(', ')}`);
  }
  const force = contextBoolean(context, 'force_research') || reviewed;
  const iterative = contextBoolean(context, 'iterative_research_enabled');
  const facts = contextBoolean(context, 'enable_fact_extraction');
  const rounds = contextValue(context, 'iterative_max_iterations', CONTEXT_VALUE_RULES.iterative_max_iterations) as number | undefined;
  if (!strategy && !force) {
    const stray = ['iterative_research_enabled', 'iterative_max_iterations', 'enable_fact_extraction'].find(
      (k) => Object.hasOwn(context, k) && context[k] !== undefined && context[k] !== null,
    );
    if (stray) throw badRequest(`context.${stray} applies to the research workflow: set research_strategy or context.force_research`);
    return undefined;
  }
  const s = (strategy ?? 'standard') as ResearchStrategy;
  return {
    strategy: s,
    maxIterations: rounds ?? (strategy ? RESEARCH_ROUNDS[s] : 3),
    iterative: iterative ?? true,
    factExtraction: facts ?? false,
  };
}

/**
 * How complex a query looks, 0 to 1, from what can be seen without a model: length,
 * sentences, steps joined by "then"/"and", and words that ask for comparison or research.
 */
export function complexityScore(query: string): number {
  const sentences = query.split(/[.?!]\s+/).filter((s) => s.trim().length > 0).length;
  const steps = (query.match(/\b(then|after that|afterwards|finally|next)\b/gi) ?? []).length;
  const asks = (query.match(/\b(compare|analy[sz]e|research|investigate|evaluate|plan|design|write a report|summari[sz]e)\b/gi) ?? []).length;
  const score = Math.min(query.length / 1200, 0.35) + Math.min((sentences - 1) * 0.12, 0.3) + Math.min(steps * 0.1, 0.2) + Math.min(asks * 0.08, 0.2);
  return Math.round(Math.min(1, Math.max(0, score)) * 100) / 100;
}

/** The mode for a complexity score: simple below 0.3, standard below 0.6, else complex. */
export const modeForScore = (s: number): Mode => (s < 0.3 ? 'simple' : s < 0.6 ? 'standard' : 'complex');

export const detectMode = (query: string): Mode => modeForScore(complexityScore(query));

const isMode = (s: string): s is Mode => (MODES as readonly string[]).includes(s);

/**
 * A submission's priority: one of TASK_PRIORITIES (400 otherwise). `normal` is the default
 * and needs nothing; another level needs priority queues (PRIORITY_QUEUES=on) where the task
 * is queued, else it is refused rather than queued as normal (`queues` undefined: a caller
 * that does not queue, e.g. a gateway's early check, checks the name only).
 */
export function priorityOf(given: string | undefined, queues?: boolean): Exclude<TaskPriority, 'normal'> | undefined {
  if (given === undefined || given === '') return undefined;
  if (!(TASK_PRIORITIES as readonly string[]).includes(given)) throw badRequest(`priority must be one of: ${TASK_PRIORITIES.join(', ')}`);
  if (given === 'normal') return undefined;
  if (queues === false) {
    throw badRequest(
      `priority "${given}" needs priority queues, which are off on this server (PRIORITY_QUEUES=off): submit without a priority, or with "normal"`,
    );
  }
  return given as Exclude<TaskPriority, 'normal'>;
}

/** The context fallback of a top-level field (`context.<key>`): a non-empty string or nothing. */
function fromContext(context: Record<string, unknown>, k: string): string | undefined {
  if (!Object.hasOwn(context, k)) return undefined;
  const v = context[k];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw badRequest(`context.${k} must be a string`);
  return v;
}

/**
 * Checks that a model choice can be served (the LLM router's rule: known model, known provider
 * with its key configured); throws a 400 otherwise.
 */
export type ModelChoiceCheck = (c: { tier: Tier; model?: string; provider?: string }) => void;

/** Checks that a template or skill (and version) exists; throws a 400 otherwise. */
export interface CatalogCheck {
  /** The version `version` resolves to (the latest when absent); 400 when there is none. */
  template(name: string, version?: string): string;
  skill(name: string, version?: string): string;
  /**
   * A catalogue agent's tool and its input checked against its schema, defaults filled:
   * 404 `Agent not found: <id>`, 400 `input validation failed: ...`.
   */
  agent?(id: string, input: Record<string, unknown>): TaskAgent;
  /** Throws a 400 when the swarm workflow is disabled (config/features.yaml swarm.enabled, SWARM_ENABLED). */
  swarm?(): void;
}

/**
 * context.agent (a catalogue agent's id) and context.agent_input (its input, an object):
 * shape checks here, the catalogue's checks through `catalogs.agent` where it is known.
 */
function agentOf(context: Record<string, unknown>, catalogs?: CatalogCheck): { id: string; run?: TaskAgent } | undefined {
  const id = fromContext(context, 'agent');
  const raw = Object.hasOwn(context, 'agent_input') ? context.agent_input : undefined;
  const input = raw === undefined || raw === null ? undefined : raw;
  if (input !== undefined && (typeof input !== 'object' || Array.isArray(input))) throw badRequest("context.agent_input must be an object (the agent's input)");
  if (!id) {
    if (input !== undefined) throw badRequest('context.agent_input needs context.agent (the id of a catalogue agent: GET /api/v1/agents)');
    return undefined;
  }
  if (catalogs && !catalogs.agent) throw new AppError(Code.FailedPrecondition, 'context.agent: this orchestrator has no agent catalogue');
  return { id, run: catalogs?.agent?.(id, (input ?? {}) as Record<string, unknown>) };
}

/** Context keys only a model-driven workflow reads: its prompt and the session history it is given. */
const PROMPT_AND_HISTORY_KEYS = [
  'system_prompt',
  'prompt_params',
  'conversation_history',
  'history_window_size',
  'use_case_preset',
  'primers_count',
  'recents_count',
  'compression_trigger_ratio',
  'compression_target_ratio',
];

/**
 * A catalogue agent runs its tool once, without a model: the fields only a model-driven
 * workflow reads would do nothing, so they are refused rather than ignored. The model controls
 * do steer the verifier, so they are accepted with enable_verification (whose prompt is its own).
 */
function refuseUnreadWithAgent(r: SubmitRequest, context: Record<string, unknown>): void {
  const fields: [string, unknown][] = [
    ['mode', r.mode],
    ['max_iterations', r.maxIterations],
    ['max_concurrent_agents', r.maxConcurrentAgents],
    ...PROMPT_AND_HISTORY_KEYS.map((k): [string, unknown] => [`context.${k}`, context[k]]),
  ];
  if (!r.enableVerification) {
    fields.push(
      ['model_tier', r.modelTier],
      ['model_override', r.modelOverride],
      ['provider_override', r.providerOverride],
      ['context.model_tier', context.model_tier],
      ['context.model_override', context.model_override],
      ['context.provider_override', context.provider_override],
      ['context.model_settings', context.model_settings],
    );
  }
  const given = fields.find(([, v]) => v !== undefined && v !== null && v !== '' && v !== 0);
  if (given) throw badRequest(`context.agent cannot be combined with ${given[0]}: a catalogue agent runs its tool once, without a model, and would ignore it`);
}

/**
 * Applies the rules (HTTP 400 / gRPC InvalidArgument on the first broken one):
 * top-level model_tier / model_override / provider_override win over their context
 * fallbacks; `disable_ai` with any of them is refused; tiers and modes are the known ones;
 * fields nothing implements yet are refused rather than ignored. The returned context has its
 * recognised flags and numbers normalised (context-values.ts); that copy is what is stored.
 * `priorityQueues`: PRIORITY_QUEUES of the process that queues the task (see priorityOf).
 */
export function checkSubmission(
  r: SubmitRequest,
  defaultTier: Tier,
  checkModel?: ModelChoiceCheck,
  catalogs?: CatalogCheck,
  priorityQueues?: boolean,
): Submission {
  const query = r.query.trim();
  if (!query) throw badRequest('query is required');
  const priority = priorityOf(r.priority, priorityQueues);
  // Flags and numbers as clients send them ("true", "3"): real booleans and numbers from here on, stored so.
  const context = normaliseContext(r.context ?? {});
  const topTier = r.modelTier || undefined;
  const ctxTier = topTier ? undefined : fromContext(context, 'model_tier');
  const modelOverride = r.modelOverride || fromContext(context, 'model_override');
  const providerOverride = r.providerOverride || fromContext(context, 'provider_override');
  if (context.disable_ai === true && (topTier || ctxTier || modelOverride || providerOverride)) {
    throw badRequest('disable_ai cannot be combined with model_tier, model_override or provider_override');
  }
  if (topTier !== undefined && !isTier(topTier)) throw badRequest('model_tier must be one of: small, medium, large');
  if (ctxTier !== undefined && !isTier(ctxTier)) throw badRequest('context.model_tier must be one of: small, medium, large');
  // Accepted and ignored would pretend: what nothing implements yet is refused.
  const notYet = notAvailableField({}, context) ?? firstGiven(r.extraFields ?? {});
  if (notYet) throw badRequest(notAvailableMessage(notYet));
  if (
    r.maxConcurrentAgents !== undefined &&
    r.maxConcurrentAgents !== 0 &&
    (!Number.isInteger(r.maxConcurrentAgents) || r.maxConcurrentAgents < 1 || r.maxConcurrentAgents > 100)
  ) {
    throw badRequest('max_concurrent_agents must be an integer from 1 to 100');
  }
  const requested = r.mode || undefined;
  if (requested !== undefined && !isMode(requested)) throw badRequest(`invalid mode: ${requested}`);
  rolePreset(context.role); // an unknown role, or one this edition cannot run, is a 400
  // Sampling settings and a client-held history (the OpenAI-compatible layer's keys): 400 when malformed.
  taskModelSettings(context);
  conversationHistoryOf(context);
  if (r.maxIterations !== undefined && r.maxIterations !== 0 && (!Number.isInteger(r.maxIterations) || r.maxIterations < 1 || r.maxIterations > 50)) {
    throw badRequest('max_iterations must be an integer from 1 to 50');
  }
  // Templates: `template` and its alias `template_name` (one of them), `template_version`.
  const tplName = fromContext(context, 'template') ?? fromContext(context, 'template_name');
  if (fromContext(context, 'template') && fromContext(context, 'template_name')) throw badRequest('use context.template or context.template_name, not both');
  const tplVersion = fromContext(context, 'template_version');
  if (tplVersion && !tplName) throw badRequest('context.template_version needs context.template');
  const disableAi = context.disable_ai === true;
  if (disableAi && !tplName) throw badRequest('disable_ai runs a template without a model: it needs context.template');
  if (disableAi && r.enableVerification) throw badRequest('disable_ai cannot be combined with enable_verification: verification calls a model');
  // The version is pinned at submission: a replay after a catalogue update runs the same one.
  const tplPinned = tplName ? (catalogs?.template(tplName, tplVersion) ?? tplVersion) : undefined;
  // Skills: top-level `skill` over its deprecated context fallback; `skill_version` in context.
  const skillName = r.skill || fromContext(context, 'skill');
  const skillVersion = fromContext(context, 'skill_version');
  if (skillVersion && !skillName) throw badRequest('context.skill_version needs a skill');
  if (skillName && tplName) throw badRequest('a task runs either a skill or a template, not both');
  const skillPinned = skillName ? (catalogs?.skill(skillName, skillVersion) ?? skillVersion) : undefined;
  const agent = agentOf(context, catalogs);
  if (agent) refuseUnreadWithAgent(r, context);
  if (agent && (tplName || skillName)) throw badRequest('a task runs either a catalogue agent (context.agent), a template or a skill, not more than one');
  const review = reviewOf(context);
  const research = researchOf(r.researchStrategy, context, !!review);
  if (agent && research) throw badRequest('context.agent cannot be combined with the research workflow');
  const requireApproval = r.requireApproval === true || contextBoolean(context, 'require_approval') === true;
  if (research && (tplName || skillName)) throw badRequest('the research workflow cannot be combined with a template or a skill');
  if (context.force_swarm === true) {
    // Research options (force_research, research_strategy) may come with it: the swarm runs, and
    // the research workflow is the normal routing a failed swarm falls back to (workflows/registry.ts).
    // A plan review has no plan to show in a swarm; a template, a skill or an agent is its own run.
    if (review || tplName || skillName || agent) {
      throw badRequest('context.force_swarm cannot be combined with a plan review, a template, a skill or a catalogue agent');
    }
    catalogs?.swarm?.();
  }
  const score = requested || tplName || skillName || research || agent ? undefined : complexityScore(query);
  const tier = ((topTier ?? ctxTier) as Tier | undefined) ?? defaultTier;
  if (checkModel && (modelOverride || providerOverride)) checkModel({ tier, model: modelOverride, provider: providerOverride });
  return {
    query,
    context,
    sessionId: r.sessionId || undefined,
    requestedMode: requested,
    // A skill drives one agent (standard); a template is its own pipeline (recorded as simple).
    // A catalogue agent runs one tool (recorded as simple).
    mode: requested ?? (research ? 'complex' : skillName ? 'standard' : tplName || agent ? 'simple' : modeForScore(score!)),
    ...(score !== undefined ? { complexityScore: score } : {}),
    ...(r.maxIterations ? { maxIterations: r.maxIterations } : {}),
    ...(tplName ? { template: { name: tplName, ...(tplPinned ? { version: tplPinned } : {}) } } : {}),
    ...(disableAi ? { disableAi } : {}),
    ...(skillName ? { skill: { name: skillName, ...(skillPinned ? { version: skillPinned } : {}) } } : {}),
    ...(agent?.run ? { agent: agent.run } : {}),
    ...(r.enableVerification ? { enableVerification: true } : {}),
    ...(research ? { research } : {}),
    ...(requireApproval ? { requireApproval } : {}),
    ...(review ? { review } : {}),
    ...(priority ? { priority } : {}),
    tier,
    modelOverride,
    providerOverride,
    maxConcurrentAgents: r.maxConcurrentAgents || undefined,
    traceId: r.traceId || undefined,
    ...(r.traceContext ? { traceContext: r.traceContext } : {}),
  };
}

export interface SubmitDeps {
  bus: Bus;
  tasks: TaskStore;
  log: Logger;
}

/**
 * Commits the task (QUEUED) and queues its start message; refused with 503 when the message
 * cannot be stored (the row is withdrawn, the task never runs). `owner`: who the task runs as.
 */
export async function submitTask(
  d: SubmitDeps,
  s: Submission,
  owner: { userId?: string; tenantId?: string },
): Promise<{ taskId: string; sessionId: string; createdAt: Date }> {
  // A submission checked without the catalogue (a gateway's early check) never runs as if it named no agent.
  if (typeof s.context.agent === 'string' && s.context.agent !== '' && !s.agent) {
    throw new AppError(Code.FailedPrecondition, 'context.agent was not checked against the agent catalogue; the task was not submitted');
  }
  const taskId = randomUUID();
  const sessionId = s.sessionId ?? randomUUID();
  const createdAt = new Date();
  const options: Record<string, unknown> = {
    mode: s.requestedMode,
    model_tier: s.tier,
    model_override: s.modelOverride,
    provider_override: s.providerOverride,
    max_concurrent_agents: s.maxConcurrentAgents,
    max_iterations: s.maxIterations,
    complexity_score: s.complexityScore,
    template: s.template,
    disable_ai: s.disableAi,
    skill: s.skill,
    agent: s.agent,
    enable_verification: s.enableVerification,
    research: s.research,
    require_approval: s.requireApproval,
    review: s.review,
    priority: s.priority,
    trace_context: s.traceContext,
    // The client named no session: one was generated (the workflow then skips history).
    ...(s.sessionId ? {} : { new_session: true }),
  };
  const task = {
    id: taskId,
    session_id: sessionId,
    user_id: owner.userId ?? null,
    tenant_id: owner.tenantId ?? null,
    query: s.query,
    context: s.context,
    options,
    mode: EXECUTION_MODE[s.mode],
    trace_id: s.traceId ?? null,
    created_at: createdAt,
  };
  await d.tasks.insertTask(task);
  await enqueueStart(d, startMessage(task), startHeaders(task));
  countTaskSubmitted(task.mode);
  d.log.debug({ workflow_id: taskId, trace_id: s.traceId, mode: s.mode }, 'task submitted');
  return { taskId, sessionId, createdAt };
}
