/**
 * Request and response schemas: one source for validation (Ajv) and for /openapi.json.
 * Only OpenAPI 3.0-compatible JSON Schema keywords are used (enum, nullable, no const).
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { TASK_PRIORITIES } from '../bus/index.js';
import { EXECUTION_MODES, TASK_STATUSES, badRequest } from '../kernel/index.js';
import { CONTEXT_VALUE_RULES, NOT_AVAILABLE_CONTEXT_KEYS } from '../tasks/index.js';

export const StringEnum = <T extends string>(values: readonly T[], opts: Record<string, unknown> = {}) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], ...opts });
const FreeObject = (description: string) => Type.Object({}, { additionalProperties: true, description });
const Nullable = <T extends TSchema>(s: T) => Type.Unsafe<Static<T> | null>({ ...s, nullable: true });

export const TASK_STATUS_VALUES = TASK_STATUSES;
export const EXECUTION_MODE_VALUES = EXECUTION_MODES;
export const LIST_STATUS_FILTERS = ['QUEUED', 'RUNNING', 'COMPLETED', 'FAILED', 'CANCELLED', 'CANCELED', 'TIMEOUT', 'PAUSED'] as const;

/** How context flags and numbers are read (src/tasks/context-values.ts), from its rules. */
const CONTEXT_VALUES = (() => {
  const rules = Object.entries(CONTEXT_VALUE_RULES);
  const flags = rules.filter(([, r]) => r.type === 'boolean').map(([k]) => k);
  const numbers = rules.flatMap(([k, r]) =>
    r.type === 'boolean'
      ? []
      : [
          `${k} (${r.type === 'number' && r.minExclusive ? `a number above ${r.min}, at most ${r.max}` : `${r.type === 'integer' ? 'an integer' : 'a number'} ${r.min}-${r.max}`})`,
        ],
  );
  return (
    `Flags (${flags.join(', ')}) take true/false or the strings "true", "false", "1", "0" (case-insensitive, trimmed); ` +
    `${numbers.join(', ')} take numbers or numeric strings. They are stored as booleans and numbers; any other value is refused with 400 "context.<key> must be ..."`
  );
})();

/** How the fields that nothing implements yet are documented (src/tasks/not-available.ts refuses them). */
const NOT_YET = 'Not available yet, refused with 400 "context.<key> is not available yet":';

export const TaskSubmitRequest = Type.Object(
  {
    query: Type.String({ minLength: 1, maxLength: 100_000, description: 'Natural-language task description' }),
    session_id: Type.Optional(Type.String({ maxLength: 255, description: 'Session for multi-turn use; generated when omitted' })),
    context: Type.Optional(
      FreeObject(
        'Key-value context. Read: system_prompt, prompt_params, model_tier and model_override (fallbacks for the top-level fields), ' +
          'role (tool allowlist: generalist (default), analysis, research, writer, critic, developer), ' +
          'template (alias template_name), template_version (default latest), disable_ai (runs the template with no model call), skill_version, ' +
          'force_research, iterative_research_enabled, iterative_max_iterations, enable_fact_extraction (the research workflow), ' +
          'require_approval (a person approves the task before its first action: APPROVAL_REQUESTED, POST /api/v1/approvals/decision), ' +
          'require_review or review_plan ("manual"; "auto" and "none": no review) and review_timeout (seconds, 1-86400, default 900): ' +
          'a person reviews the research plan (implies the research workflow; /api/v1/tasks/{workflow_id}/review), ' +
          'agent (a catalogue agent id, GET /api/v1/agents) with agent_input (its input object; checked against the agent input_schema, ' +
          '400 "input validation failed: ...", unknown agent 404 "Agent not found: <id>"): the same run as POST /api/v1/agents/{id}, ' +
          'history_window_size, use_case_preset, primers_count, recents_count, compression_trigger_ratio, compression_target_ratio. ' +
          `${CONTEXT_VALUES}. ` +
          'force_swarm (runs the task as a swarm of agents: POST /api/v1/swarm/{workflow_id}/message reaches its lead; a 400 ' +
          '"swarm is disabled on this server ..." when the swarm is off, at the top level of the body, and with a plan review, ' +
          'a template, a skill or an agent; with research options the swarm runs and a failed swarm falls back to research), ' +
          (NOT_AVAILABLE_CONTEXT_KEYS.length ? `${NOT_YET} ${NOT_AVAILABLE_CONTEXT_KEYS.join(', ')}. ` : '') +
          'Other keys are stored with the task.',
      ),
    ),
    mode: Type.Optional(StringEnum(['simple', 'standard', 'complex', 'supervisor'] as const, { description: 'Default: auto-detect' })),
    model_tier: Type.Optional(StringEnum(['small', 'medium', 'large'] as const, { description: 'Default: small' })),
    model_override: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    provider_override: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description: 'A provider of the model catalogue (GET /providers/models on the model service); unknown or without its key: 400',
      }),
    ),
    skill: Type.Optional(Type.String({ maxLength: 200, description: 'A skill (GET /api/v1/skills): its instructions drive one agent with its tools' })),
    research_strategy: Type.Optional(
      StringEnum(['quick', 'standard', 'deep', 'academic'] as const, {
        description:
          'Runs the deep-research workflow: sub-questions researched by agents with the research tools, a coverage loop (rounds: quick 1, standard 2, deep 3, academic 3; context.iterative_max_iterations 1-5), a cited report',
      }),
    ),
    max_iterations: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, description: 'Tool rounds an agent may take before it must answer (default 10)' })),
    max_concurrent_agents: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 100,
        description: 'Most agents a complex, supervisor or research workflow runs at once (default: all of a plan, at most 8)',
      }),
    ),
    enable_verification: Type.Optional(
      Type.Boolean({
        description:
          'Adds a verification step; its findings go into metadata.verification (research tasks: each cited claim checked against the pages it cites)',
      }),
    ),
    priority: Type.Optional(
      StringEnum(TASK_PRIORITIES, {
        description:
          'Which waiting task a free worker takes first, across the fleet (default normal). Needs PRIORITY_QUEUES=on on the server: with it off, ' +
          'any value but normal is a 400. Of every 8 fetches a free worker makes, 4 look at critical first, 2 at high, 1 at normal, 1 at low, ' +
          'then at the other levels highest first, so low priority is slowed, never starved. gRPC: metadata.labels.priority',
      }),
    ),
  },
  { additionalProperties: true },
);
export type TaskSubmitRequest = Static<typeof TaskSubmitRequest>;

export const TaskSubmitResponse = Type.Object({
  task_id: Type.String(),
  status: Type.String({ description: 'Submission status, e.g. STATUS_CODE_OK' }),
  message: Type.Optional(Type.String()),
  created_at: Type.String({ format: 'date-time' }),
});

export const TaskStreamSubmitResponse = Type.Object({
  workflow_id: Type.String(),
  task_id: Type.String(),
  stream_url: Type.String({ description: '/api/v1/stream/sse?workflow_id=<workflow_id>' }),
});

export const Usage = Type.Object({
  total_tokens: Type.Integer(),
  input_tokens: Type.Optional(Type.Integer()),
  output_tokens: Type.Optional(Type.Integer()),
  estimated_cost: Type.Optional(Type.Number()),
});

export const TaskStatusObject = Type.Object({
  task_id: Type.String(),
  workflow_id: Type.String({ description: 'Same as task_id' }),
  status: StringEnum(TASK_STATUS_VALUES),
  progress: Type.Number({ minimum: 0, maximum: 1, description: '0 until the task completes, then 1' }),
  result: Type.Optional(Type.String({ description: 'Raw LLM output; absent until completed' })),
  response: Type.Optional(FreeObject('Parsed JSON, present only when result is valid JSON')),
  metadata: Type.Optional(
    FreeObject(
      'model_breakdown, agents_used, tool_calls, role, history, .... Research tasks also: citations (array of {url, title, source, credibility_score, quality_score}; ' +
        'citations[n-1] is the source of every inline [n] of result, and only pages this task searched or read are cited), verification (with enable_verification: ' +
        'overall_confidence, total_claims, supported_claims, unsupported_claims, conflicts, claim_details[{claim, supporting_citations, conflicting_citations, confidence}]), ' +
        'extracted_facts and fact_summary (with context.enable_fact_extraction), unified_response, research (strategy, rounds, questions, coverage)',
    ),
  ),
  error: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  completed_at: Type.Optional(Nullable(Type.String({ format: 'date-time' }))),
  query: Type.String(),
  session_id: Type.String(),
  mode: StringEnum(EXECUTION_MODE_VALUES),
  model_used: Type.String(),
  provider: Type.String(),
  usage: Usage,
});

export const TokenUsageSummary = Type.Object({
  total_tokens: Type.Integer(),
  cost_usd: Type.Number(),
  prompt_tokens: Type.Integer(),
  completion_tokens: Type.Integer(),
});

export const TaskSummary = Type.Object({
  task_id: Type.String(),
  query: Type.String(),
  status: StringEnum(TASK_STATUS_VALUES),
  mode: StringEnum(EXECUTION_MODE_VALUES),
  created_at: Type.String({ format: 'date-time' }),
  completed_at: Nullable(Type.String({ format: 'date-time' })),
  total_token_usage: Nullable(TokenUsageSummary),
});

export const TaskList = Type.Object({ tasks: Type.Array(TaskSummary), total_count: Type.Integer() });

export const Event = Type.Object({
  workflow_id: Type.String(),
  seq: Type.Integer({ description: 'Per-workflow sequence: 1, 2, 3, ...' }),
  stream_id: Type.String({ description: '<ms>-<seq>; usable as Last-Event-ID' }),
  type: Type.String(),
  agent_id: Type.String(),
  message: Type.String(),
  timestamp: Type.String({ format: 'date-time' }),
  payload: Type.Optional(FreeObject('Event-specific data')),
});

export const EventList = Type.Object({ workflow_id: Type.String(), events: Type.Array(Event), count: Type.Integer() });

export const ErrorBody = Type.Object({ error: Type.String() });

export const Health = Type.Object({
  status: StringEnum(['healthy', 'unhealthy'] as const),
  version: Type.String(),
  time: Type.String(),
  checks: Type.Object({ nats: Type.Object({ ok: Type.Boolean(), error: Type.Optional(Type.String()) }) }),
});
export const Readiness = Type.Object({
  status: StringEnum(['ready', 'not_ready'] as const),
  version: Type.String(),
  time: Type.String(),
  checks: Type.Object({}, { additionalProperties: Type.Object({ ok: Type.Boolean(), latency_ms: Type.Number(), error: Type.Optional(Type.String()) }) }),
});

const ajv = new Ajv({ allErrors: false, coerceTypes: false, strict: false, useDefaults: false });
ajv.addFormat('date-time', true);
const ajvAll = new Ajv({ allErrors: true, coerceTypes: false, strict: false, useDefaults: false });

function describe(e: ErrorObject): string {
  const field = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
  if (e.keyword === 'required') return `${(e.params as { missingProperty: string }).missingProperty} is required`;
  if (e.keyword === 'enum') return `${field} must be one of: ${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
  if (e.keyword === 'minLength' && (e.params as { limit: number }).limit === 1) return `${field} must not be empty`;
  return `${field || 'body'} ${e.message ?? 'is invalid'}`;
}

/**
 * A check that returns every error (none: valid), for a layer that words and ranks them
 * itself: the OpenAI-compatible one answers in OpenAI's words, not `describe`'s. Compiled on
 * its first use, not at start-up (compiling every route's schemas took about 0.1 s of it).
 */
export function errorsOf<T extends TSchema>(schema: T): (v: unknown) => ErrorObject[] {
  let check: ValidateFunction | undefined;
  return (v) => {
    check ??= ajvAll.compile(schema);
    return check(v) ? [] : [...check.errors!];
  };
}

/** A validator that throws a 400 naming the first invalid field; compiled on its first use. */
export function validator<T extends TSchema>(schema: T): (v: unknown) => Static<T> {
  let check: ValidateFunction | undefined;
  return (v) => {
    check ??= ajv.compile(schema);
    if (!check(v)) throw badRequest(describe(check.errors![0]));
    return v as Static<T>;
  };
}

// --- authentication ------------------------------------------------------------------------

export const User = Type.Object({
  id: Type.String({ format: 'uuid' }),
  email: Type.String(),
  name: Type.String(),
  role: Type.String(),
  tenant_id: Type.String({ format: 'uuid' }),
  tenant_name: Type.Optional(Type.String()),
  is_active: Type.Boolean(),
  created_at: Type.String({ format: 'date-time' }),
});

export const RegisterRequest = Type.Object({
  email: Type.String({ format: 'email' }),
  password: Type.String({ minLength: 8, maxLength: 256 }),
  name: Type.Optional(Type.String({ maxLength: 200 })),
  tenant_name: Type.Optional(Type.String({ maxLength: 200, description: 'Name of the tenant created for the user' })),
});

export const LoginRequest = Type.Object({ email: Type.String(), password: Type.String() });
export const RefreshRequest = Type.Object({ refresh_token: Type.String() });

export const Tokens = Type.Object({
  access_token: Type.String({ description: 'JWT (HS256); send as Authorization: Bearer' }),
  refresh_token: Type.String({ description: 'Single use: each refresh returns a new one' }),
  token_type: StringEnum(['Bearer'] as const),
  expires_in: Type.Integer({ description: 'Access token lifetime, seconds' }),
  refresh_expires_in: Type.Integer(),
});

export const RegisterResponse = Type.Intersect([Type.Object({ user: User, api_key: Type.String({ description: 'sk_... shown once' }) }), Tokens]);
export const LoginResponse = Type.Intersect([Type.Object({ user: User }), Tokens]);

export const ApiKeyInfo = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  prefix: Type.String({ description: 'First 11 characters, to recognise a key' }),
  is_default: Type.Boolean(),
  created_at: Type.String({ format: 'date-time' }),
  last_used_at: Nullable(Type.String({ format: 'date-time' })),
  expires_at: Nullable(Type.String({ format: 'date-time' })),
});
export const ApiKeyList = Type.Object({ api_keys: Type.Array(ApiKeyInfo), count: Type.Integer() });
export const CreateApiKeyRequest = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100 }),
  expires_in_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 3650 })),
});
export const CreatedApiKey = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  api_key: Type.String({ description: 'sk_... shown once; only its hash is stored' }),
  prefix: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  expires_at: Nullable(Type.String({ format: 'date-time' })),
});
export const RegeneratedKey = Type.Object({ id: Type.String(), api_key: Type.String(), prefix: Type.String(), message: Type.String() });
export const MessageBody = Type.Object({ message: Type.String() });
export const RateLimitBody = Type.Object({ error: Type.String(), retry_after: Type.Integer() });
export const RevokedKey = Type.Object({ message: Type.String(), id: Type.String({ format: 'uuid' }) });

// --- sessions --------------------------------------------------------------------------------

export const SessionObject = Type.Object({
  session_id: Type.String({
    maxLength: 255,
    description: 'The name the client gave the session (its external_id) when it named one, else the same UUID as id; both work as {sessionId}',
  }),
  id: Type.String({ format: 'uuid', description: "The session's UUID" }),
  external_id: Nullable(Type.String({ description: 'The client-chosen id the session was created with, if not a UUID' })),
  user_id: Nullable(Type.String({ format: 'uuid', description: 'Owner; null for sessions of the development principal' })),
  title: Type.String(),
  context: FreeObject('Session context, e.g. history_summary after compression'),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  last_activity_at: Type.String({ format: 'date-time', description: "The later of the session's own activity and its newest task's submission" }),
  expires_at: Nullable(Type.String({ format: 'date-time', description: 'Always null: sessions do not expire' })),
  token_budget: Nullable(Type.Integer({ description: 'Always null: sessions have no token budget' })),
  budget_remaining: Nullable(Type.Integer({ description: 'Always null (no budget)' })),
  budget_utilization: Type.Number({ description: 'Always 0 (no budget)' }),
  is_near_budget_limit: Type.Boolean({ description: 'Always false (no budget)' }),
  task_count: Type.Integer(),
  tokens_used: Type.Integer({ description: "Sum of the tasks' total tokens" }),
  total_tokens: Type.Integer({ description: 'Same as tokens_used' }),
  cost_usd: Type.Number({ description: "Sum of the tasks' cost" }),
  total_cost_usd: Type.Number({ description: 'Same as cost_usd' }),
  successful_tasks: Type.Integer({ description: 'Tasks COMPLETED' }),
  failed_tasks: Type.Integer({ description: 'Tasks FAILED or TIMEOUT' }),
  success_rate: Type.Number({ description: 'successful_tasks / task_count (0 without tasks)' }),
  average_cost_per_task: Type.Number(),
  latest_task_query: Nullable(Type.String()),
  latest_task_status: Nullable(Type.String({ description: 'TASK_STATUS_* of the newest task' })),
  first_task_mode: Nullable(Type.String({ description: 'EXECUTION_MODE_* of the first task' })),
  is_research_session: Type.Boolean({ description: 'The first task asked for research (research_strategy or context.force_research)' }),
  research_strategy: Nullable(Type.String()),
  is_active: Type.Boolean({ description: 'A task of the session is queued, running or paused, or there was activity in the last 24 hours' }),
});
export const SessionList = Type.Object({ sessions: Type.Array(SessionObject), total_count: Type.Integer(), limit: Type.Integer(), offset: Type.Integer() });
export const SessionPatch = Type.Object({ title: Type.String({ minLength: 1, maxLength: 255 }) });
export const SessionHistoryTask = Type.Object({
  task_id: Type.String(),
  workflow_id: Type.String({ description: 'Same as task_id' }),
  query: Type.String(),
  status: StringEnum(TASK_STATUS_VALUES),
  mode: StringEnum(EXECUTION_MODE_VALUES),
  result: Nullable(Type.String()),
  error_message: Type.String(),
  total_tokens: Type.Integer(),
  total_cost_usd: Type.Number(),
  duration_ms: Nullable(Type.Integer({ description: 'From start (or submission) to completion; null until completed' })),
  created_at: Type.String({ format: 'date-time' }),
  started_at: Nullable(Type.String({ format: 'date-time' })),
  completed_at: Nullable(Type.String({ format: 'date-time' })),
});
export const SessionHistory = Type.Object({
  session_id: Type.String({ description: 'As in the session object: the name the client gave it, else its UUID' }),
  messages: Type.Array(
    Type.Object({
      role: StringEnum(['user', 'assistant'] as const),
      content: Type.String(),
      task_id: Type.String(),
      timestamp: Type.String({ format: 'date-time' }),
      status: Type.Optional(Type.String()),
      tokens: Type.Optional(Type.Integer()),
    }),
  ),
  count: Type.Integer({ description: 'Number of messages' }),
  tasks: Type.Array(SessionHistoryTask, { description: 'The same turns as tasks, oldest first' }),
  total: Type.Integer({ description: 'Number of tasks of the session' }),
});
export const SessionEvents = Type.Object({
  session_id: Type.String({ description: 'As in the session object: the name the client gave it, else its UUID' }),
  turns: Type.Array(
    Type.Object({
      turn: Type.Integer({ description: 'Position in the session: 1 is its first task' }),
      task_id: Type.String(),
      query: Type.String(),
      user_query: Type.String({ description: 'Same as query' }),
      status: Type.String(),
      final_output: Nullable(Type.String({ description: "The task's result" })),
      timestamp: Type.String({ format: 'date-time' }),
      events: Type.Array(Event),
      metadata: Type.Object({
        tokens_used: Type.Integer(),
        execution_time_ms: Nullable(Type.Integer()),
        agents_involved: Type.Array(Type.String()),
      }),
    }),
  ),
  count: Type.Integer({ description: 'Number of turns of the session (the same as total_count)' }),
  total_count: Type.Integer(),
  limit: Type.Integer(),
  offset: Type.Integer(),
});

// --- task timeline ---------------------------------------------------------------------------

export const TIMELINE_STEP_STATUSES = ['completed', 'retried', 'running', 'interrupted'] as const;
export const TimelineStep = Type.Object({
  name: Type.String({ description: 'Journaled step name: start, history, agent, plan, subtask-N, synthesize, finish' }),
  agent: Nullable(Type.String({ description: "The step's agent; orchestrator for the workflow's own steps; null when the step emitted no event" })),
  status: StringEnum(TIMELINE_STEP_STATUSES, {
    description:
      'completed; retried (completed after being interrupted and run again); running (not journaled yet); interrupted (never finished: the task failed, was cancelled or timed out)',
  }),
  started_at: Nullable(Type.String({ format: 'date-time', description: "The step's first event, or the end of the step before it when it emitted none" })),
  ended_at: Nullable(Type.String({ format: 'date-time', description: 'When its journal entry was written; null while running' })),
  duration_ms: Nullable(Type.Integer({ minimum: 0 })),
  retries: Type.Integer({ minimum: 0, description: 'ERROR_RECOVERY events of the step' }),
  first_seq: Nullable(Type.Integer()),
  last_seq: Nullable(Type.Integer()),
  seq_after: Nullable(Type.Integer({ description: 'Last seq when the step was journaled' })),
  event_count: Type.Integer(),
  journaled: Type.Boolean(),
});
export const Timeline = Type.Object({
  workflow_id: Type.String(),
  task_id: Type.String(),
  status: StringEnum(TASK_STATUS_VALUES),
  source: StringEnum(['journal', 'events'] as const, {
    description: 'journal: from the step journal and the events; events: the journal expired (7 days), derived from the events',
  }),
  created_at: Nullable(Type.String({ format: 'date-time' })),
  started_at: Nullable(Type.String({ format: 'date-time', description: 'WORKFLOW_STARTED' })),
  ended_at: Nullable(Type.String({ format: 'date-time', description: 'STREAM_END; null until the task ends' })),
  duration_ms: Nullable(Type.Integer({ minimum: 0 })),
  steps: Type.Array(TimelineStep, { description: 'Ordered by first seq' }),
  stats: Type.Object({ steps: Type.Integer(), events: Type.Integer(), retries: Type.Integer() }),
});

// --- workspace files -------------------------------------------------------------------------

export const WorkspaceEntry = Type.Object({
  name: Type.String(),
  path: Type.String({ description: 'Relative to the workspace root, starting with /' }),
  size: Type.Integer({ description: 'Bytes; 0 for directories' }),
  is_dir: Type.Boolean(),
  modified_at: Type.String({ format: 'date-time' }),
});
export const WorkspaceListing = Type.Object({
  session_id: Type.String(),
  path: Type.String(),
  files: Type.Array(WorkspaceEntry),
  truncated: Type.Optional(Type.Boolean({ description: 'More than 10,000 entries: the list was cut' })),
});

// --- task control ----------------------------------------------------------------------------

export const ControlRequest = Type.Object({ reason: Type.Optional(Type.String({ maxLength: 1000 })) });
export const ControlResponse = Type.Object({ success: Type.Boolean(), message: Type.String(), task_id: Type.String() });
export const ControlState = Type.Object({
  task_id: Type.String(),
  status: StringEnum(TASK_STATUS_VALUES),
  is_paused: Type.Boolean(),
  is_cancelled: Type.Boolean(),
  paused_at: Nullable(Type.String({ format: 'date-time' })),
  pause_reason: Type.String(),
  paused_by: Type.String(),
  cancel_reason: Type.String(),
  cancelled_by: Type.String(),
});

// --- schedules -------------------------------------------------------------------------------

const ScheduleFields = {
  name: Type.String({ minLength: 1, maxLength: 255 }),
  description: Type.Optional(Type.String()),
  cron_expression: Type.String({ description: '5 fields: minute hour day-of-month month day-of-week (0-6, Sunday first)' }),
  timezone: Type.Optional(Type.String({ description: 'IANA name; default UTC' })),
  task_query: Type.String({ minLength: 1 }),
  task_context: Type.Optional(FreeObject('Context of every run')),
  max_budget_per_run_usd: Type.Optional(Type.Number({ minimum: 0, description: 'Default 10.0; a run over it pauses the schedule' })),
  timeout_seconds: Type.Optional(Type.Integer({ minimum: 1, description: 'Default 600' })),
};
export const ScheduleCreate = Type.Object(ScheduleFields);
export const ScheduleUpdate = Type.Partial(Type.Object(ScheduleFields));
export const ScheduleObject = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  description: Type.String(),
  cron_expression: Type.String(),
  timezone: Type.String(),
  task_query: Type.String(),
  task_context: FreeObject('Context of every run'),
  max_budget_per_run_usd: Type.Number(),
  timeout_seconds: Type.Integer(),
  status: StringEnum(['ACTIVE', 'PAUSED'] as const),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  next_run_at: Nullable(Type.String({ format: 'date-time' })),
  last_run_at: Nullable(Type.String({ format: 'date-time' })),
  total_runs: Type.Integer(),
  successful_runs: Type.Integer(),
  failed_runs: Type.Integer(),
});
export const ScheduleSummary = Type.Object({
  id: Type.String(),
  name: Type.String(),
  cron_expression: Type.String(),
  timezone: Type.String(),
  status: StringEnum(['ACTIVE', 'PAUSED'] as const),
  next_run_at: Nullable(Type.String({ format: 'date-time' })),
  total_runs: Type.Integer(),
  successful_runs: Type.Integer(),
  failed_runs: Type.Integer(),
});
export const ScheduleList = Type.Object({ schedules: Type.Array(ScheduleSummary), total: Type.Integer(), page: Type.Integer(), page_size: Type.Integer() });
export const ScheduleCreated = Type.Object({ schedule_id: Type.String(), message: Type.String(), next_run_at: Nullable(Type.String({ format: 'date-time' })) });
export const ScheduleRun = Type.Object({
  workflow_id: Type.String(),
  query: Type.String(),
  status: Type.String({ description: 'e.g. RUNNING, COMPLETED, FAILED, TIMEOUT, CANCELLED' }),
  result: Type.Optional(Type.String()),
  error_message: Type.Optional(Type.String()),
  model_used: Type.Optional(Type.String()),
  provider: Type.Optional(Type.String()),
  total_tokens: Type.Integer(),
  total_cost_usd: Type.Number(),
  duration_ms: Type.Optional(Type.Integer()),
  triggered_at: Type.String({ format: 'date-time' }),
  started_at: Type.Optional(Type.String({ format: 'date-time' })),
  completed_at: Type.Optional(Type.String({ format: 'date-time' })),
});
export const ScheduleRuns = Type.Object({ runs: Type.Array(ScheduleRun), total_count: Type.Integer(), page: Type.Integer(), page_size: Type.Integer() });
export const ReasonBody = Type.Object({ reason: Type.Optional(Type.String()) });
export const SchedulePaused = Type.Object({ message: Type.String(), paused_at: Type.String({ format: 'date-time' }) });
export const ScheduleResumed = Type.Object({ message: Type.String(), next_run_at: Nullable(Type.String({ format: 'date-time' })) });

export const Tool = Type.Object({
  name: Type.String(),
  description: Type.String(),
  category: Type.String({ description: 'e.g. search, web, code, math, file' }),
  version: Type.String(),
  parameters: FreeObject('JSON Schema of the arguments'),
  timeout_seconds: Type.Integer(),
  cost_per_use: Type.Number({ description: 'Estimated USD per call' }),
});

export const ToolExecuteRequest = Type.Object(
  {
    arguments: FreeObject('Arguments, validated against the tool parameters'),
    session_id: Type.Optional(Type.String({ maxLength: 255, description: "The caller's session (UUID or external id): its workspace for file tools" })),
  },
  { additionalProperties: false },
);

export const ToolExecution = Type.Object({
  success: Type.Boolean(),
  output: FreeObject('Structured result'),
  text: Type.String({ description: 'The result as text (what a model reads)' }),
  error: Nullable(Type.String()),
  metadata: FreeObject('tool, version and what the tool reports'),
  execution_time_ms: Type.Integer(),
  usage: Type.Object({
    tokens: Type.Integer({ description: 'Synthetic: the larger of 100 and cost_usd / 0.000002' }),
    cost_usd: Type.Number(),
  }),
});
