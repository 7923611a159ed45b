/**
 * AgentService over Connect/gRPC (AGENT_GRPC_PORT, default 50051): one agent run for an
 * internal caller, outside any workflow.
 *
 * NOT DURABLE. A run is `runAgentLoop` on an `EphemeralContext`: its steps live in this
 * process's memory only. Nothing is journaled, so a run is lost (not resumed, not retried)
 * when this process stops or the client goes away (the call's signal aborts the run); no task
 * row, event stream or llm_calls record is written (tool calls are recorded in tool_calls like
 * every tool execution). Durable tasks go through OrchestratorService.SubmitTask.
 *
 * What a request may ask, and what is refused (INVALID_ARGUMENT naming the field) rather
 * than ignored:
 * - mode: UNSPECIFIED/STANDARD run the tool loop; SIMPLE one model call without tools;
 *   COMPLEX is refused (decomposition needs a workflow).
 * - context.role picks the tool allowlist (kernel/roles); available_tools narrows it: every
 *   name must be a registered tool the role allows, else refused. The agent gets exactly
 *   available_tools ∩ the role's tools (all of the role's when empty).
 * - config.max_iterations (0 = 10, 1..50); config.timeout_seconds (0 = AGENT_TIMEOUT_SECONDS, default 600; 1..3600; when it
 *   passes the run is aborted and answered with status TIMEOUT).
 * - config.enable_sandbox: unset = tools as configured; true = sandboxed execution only,
 *   refused when the agent's tools include a dangerous tool (bash runs on the host); false =
 *   refused (python_executor has no unsandboxed mode).
 * - config.memory_limit_mb: only 0 (a run shares the process; no per-run limit exists).
 * - config.enable_learning: only false (nothing is kept between runs).
 * - session_context: refused when it carries anything (no conversation state here).
 * - metadata: task_id a UUID or empty (then generated); user_id/tenant_id honoured only from
 *   a system caller (actingPrincipal); session_id must name one of the caller's sessions (its
 *   workspace is the file tools'; its history is not loaded); token_budget > 0 limits the
 *   run's tokens; max_agents < 0 refused; labels and created_at accepted.
 * Budgets of the process (MAX_TOKENS_PER_REQUEST, ...) apply when it configures them.
 */
import { randomUUID } from 'node:crypto';
import { create, type JsonObject } from '@bufbuild/protobuf';
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import { EphemeralContext, ZERO_USAGE, runAgentLoop, type AgentDeps } from '../agents/index.js';
import type { EventType } from '../bus/index.js';
import { AgentState, ExecutionMode, StatusCode, TokenUsageSchema } from '../gen/svc/v1/common_pb.js';
import {
  AgentMetricsSchema,
  ExecuteTaskResponseSchema,
  StreamExecuteTaskResponseSchema,
  ToolCallSchema,
  ToolResultSchema,
  type AgentService,
  type ExecuteTaskRequest,
  type ExecuteTaskResponse,
  type StreamExecuteTaskRequest,
  type StreamExecuteTaskResponse,
  type ToolCall,
  type ToolResult,
} from '../gen/svc/v1/agent_pb.js';
import {
  AppError,
  Code,
  MODEL_TIER_BY_NAME,
  ROLE_NAMES,
  UUID_RE,
  badRequest,
  isTier,
  rolePreset,
  roleTools,
  type Logger,
  type Principal,
  type Tier,
} from '../kernel/index.js';
import { Budget, BudgetExceeded, LlmError, type BudgetLimits, type ChatMessage, type LlmProvider, type LlmUsage, type UsageStore } from '../llm/index.js';
import type { ToolInfo, ToolRegistry } from '../tools/index.js';
import { actingPrincipal, callerOf } from './auth.js';
import { rpcError, rpcHandlers } from './errors.js';
import { pushed } from './pushed.js';

export interface AgentServiceDeps {
  llm: LlmProvider;
  tools: ToolRegistry;
  log: Logger;
  version: string;
  /** Runs served at once; more are refused with RESOURCE_EXHAUSTED. */
  maxConcurrent: number;
  /** DEFAULT_MODEL_TIER (default small). */
  defaultTier?: Tier;
  /** MAX_TOKENS per model call (default 2000). */
  maxTokens?: number;
  /** TEMPERATURE (default 0.7). */
  temperature?: number;
  /** TOOL_PARALLELISM (default 1). */
  parallelism?: number;
  /** PARTIAL_CHUNK_CHARS: streamed deltas are coalesced up to this many characters (default 64). */
  partialChunkChars?: number;
  /** The process's budgets; a request's metadata.token_budget tightens the per-task one. */
  budgets?: BudgetLimits;
  /** python_executor's memory limit, reported as max_memory_mb. */
  maxMemoryMb?: number;
  /** Where each model call is recorded (llm_calls, under the run's task id). */
  usage?: UsageStore;
  /** The router's check of a model choice (400 for an unknown model or provider). */
  checkModel?: (c: { tier: Tier; model?: string; provider?: string }) => void;
  /** The caller's session named by UUID or external id, as its UUID (404 when not theirs); absent: session_id refused. */
  resolveSession?: (p: Principal, idOrExternal: string) => Promise<string>;
  /** AGENT_TIMEOUT_SECONDS: a run's time limit when config.timeout_seconds is 0 (default 600). */
  agentTimeoutSeconds?: number;
}

export const AGENT_DEFAULT_MAX_ITERATIONS = 10;
export const AGENT_DEFAULT_TIMEOUT_SECONDS = 600;
const MAX_TIMEOUT_SECONDS = 3600;
const AGENT_ID = 'agent';
/** Context keys the service reads itself; the others go to the model as context. */
const CONTEXT_KEYS = new Set(['role', 'system_prompt', 'model_tier', 'model_override', 'provider_override']);
const DEFAULT_SYSTEM_PROMPT =
  'You are a capable AI agent. Use the tools you are given when they help, read their results carefully, and answer the request directly and accurately.';

/** Everything a run needs, checked. */
interface RunPlan {
  taskId: string;
  messages: ChatMessage[];
  tier: Tier;
  model?: string;
  provider?: string;
  tools: string[];
  allowDangerous: boolean;
  maxIterations: number;
  timeoutSeconds: number;
  /** What set timeoutSeconds, named in the timeout error. */
  timeoutSetting: 'config.timeout_seconds' | 'AGENT_TIMEOUT_SECONDS';
  budget?: Budget;
  sessionId?: string;
  userId?: string;
}

/** A context fallback (`context.<key>`): a non-empty string or nothing. */
function contextString(c: Record<string, unknown>, k: string): string | undefined {
  if (!Object.hasOwn(c, k)) return undefined;
  const v = c[k];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw badRequest(`context.${k} must be a string`);
  return v;
}

const registered = (tools: ToolRegistry) => tools.names().map((n) => ({ name: n, dangerous: tools.get(n)!.dangerous }));

async function planRun(d: AgentServiceDeps, req: ExecuteTaskRequest | StreamExecuteTaskRequest, ctx: HandlerContext): Promise<RunPlan> {
  const caller = callerOf(ctx);
  const query = req.query.trim();
  if (!query) throw badRequest('query is required');
  const md = req.metadata;
  if (md?.taskId && !UUID_RE.test(md.taskId)) throw badRequest('metadata.task_id must be a UUID (or empty for a generated one)');
  if (md && md.maxAgents < 0) throw badRequest('metadata.max_agents must not be negative');
  if (md && (!Number.isFinite(md.tokenBudget) || md.tokenBudget < 0)) throw badRequest('metadata.token_budget must be a number >= 0');
  const sc = req.sessionContext;
  if (sc && (sc.sessionId || sc.history.length || Object.keys(sc.context ?? {}).length)) {
    throw badRequest(
      'session_context is not supported by AgentService: it keeps no conversation state; submit through OrchestratorService.SubmitTask with metadata.session_id for a conversation',
    );
  }

  const cfg = req.config;
  if (cfg?.enableLearning) throw badRequest('config.enable_learning is not supported: this edition keeps nothing between runs to learn from');
  if (cfg?.enableSandbox === false) {
    throw badRequest(
      'config.enable_sandbox=false cannot be honoured: python_executor always runs in its Pyodide sandbox; leave it unset for the tools as configured',
    );
  }
  if (cfg && cfg.memoryLimitMb !== 0n) {
    throw badRequest(
      `config.memory_limit_mb is not supported: an agent run shares the service's process, so no per-run memory limit can be enforced (python_executor calls are limited to ${d.maxMemoryMb ?? 0} MB by configuration); leave it 0`,
    );
  }
  const maxIterations = cfg?.maxIterations || AGENT_DEFAULT_MAX_ITERATIONS;
  if (maxIterations < 1 || maxIterations > 50) throw badRequest('config.max_iterations must be from 1 to 50 (0: 10)');
  const timeoutSetting = cfg?.timeoutSeconds ? 'config.timeout_seconds' : 'AGENT_TIMEOUT_SECONDS';
  const timeoutSeconds = cfg?.timeoutSeconds || (d.agentTimeoutSeconds ?? AGENT_DEFAULT_TIMEOUT_SECONDS);
  if (cfg?.timeoutSeconds && (timeoutSeconds < 1 || timeoutSeconds > MAX_TIMEOUT_SECONDS))
    throw badRequest(`config.timeout_seconds must be from 1 to ${MAX_TIMEOUT_SECONDS} (0: AGENT_TIMEOUT_SECONDS)`);

  let simple: boolean;
  switch (req.mode) {
    case ExecutionMode.UNSPECIFIED:
    case ExecutionMode.STANDARD:
      simple = false;
      break;
    case ExecutionMode.SIMPLE:
      simple = true;
      break;
    case ExecutionMode.COMPLEX:
      throw badRequest('mode COMPLEX is not supported by AgentService (one agent per run): submit through OrchestratorService.SubmitTask for decomposition');
    default:
      throw badRequest(`invalid mode: ${req.mode as number}`);
  }

  const context = (req.context ?? {}) as Record<string, unknown>;
  const role = rolePreset(context.role);
  const systemPrompt = contextString(context, 'system_prompt') ?? DEFAULT_SYSTEM_PROMPT;
  const tierRaw = contextString(context, 'model_tier');
  if (tierRaw !== undefined && !isTier(tierRaw)) throw badRequest('context.model_tier must be one of: small, medium, large');
  const tier = (tierRaw as Tier | undefined) ?? d.defaultTier ?? 'small';
  const model = contextString(context, 'model_override');
  const provider = contextString(context, 'provider_override');
  if (model || provider) d.checkModel?.({ tier, model, provider });

  const roleToolNames = roleTools(role, registered(d.tools));
  let tools = roleToolNames;
  if (req.availableTools.length) {
    if (simple) throw badRequest('available_tools: mode SIMPLE makes one model call without tools; use STANDARD to give the agent tools');
    const wanted = [...new Set(req.availableTools)];
    for (const n of wanted) {
      if (!d.tools.get(n))
        throw badRequest(
          `available_tools: unknown tool ${JSON.stringify(n)}; known: ${d.tools
            .list()
            .map((t) => t.name)
            .join(', ')}`,
        );
      if (!roleToolNames.includes(n))
        throw badRequest(`available_tools: ${n} is not allowed for role ${role.name} (allowed: ${roleToolNames.join(', ') || 'none'})`);
    }
    tools = wanted;
  }
  if (simple) tools = [];
  if (cfg?.enableSandbox === true) {
    const unsandboxed = tools.filter((n) => d.tools.get(n)?.dangerous);
    if (unsandboxed.length) {
      throw badRequest(
        `config.enable_sandbox=true cannot be honoured with ${unsandboxed.join(', ')}: it runs on the host, not in a sandbox; leave it out of available_tools`,
      );
    }
  }

  const principal = actingPrincipal(caller, md);
  let sessionId: string | undefined;
  if (md?.sessionId) {
    if (!d.resolveSession) throw badRequest('metadata.session_id is not supported by this agent server (no session store)');
    sessionId = await d.resolveSession(principal, md.sessionId);
  }

  const limits: BudgetLimits = { ...d.budgets };
  if (md && md.tokenBudget > 0) limits.tokensPerTask = Math.min(limits.tokensPerTask ?? Infinity, Math.ceil(md.tokenBudget));
  const budget = Object.values(limits).some((v) => typeof v === 'number' && v > 0) ? new Budget(limits) : undefined;

  const extra = Object.fromEntries(Object.entries(context).filter(([k]) => !CONTEXT_KEYS.has(k)));
  const system = Object.keys(extra).length ? `${systemPrompt}\n\nContext (JSON):\n${JSON.stringify(extra)}` : systemPrompt;
  return {
    taskId: md?.taskId || randomUUID(),
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: query },
    ],
    tier,
    ...(model ? { model } : {}),
    ...(provider ? { provider } : {}),
    tools,
    allowDangerous: role.allowDangerous,
    maxIterations,
    timeoutSeconds,
    timeoutSetting,
    ...(budget ? { budget } : {}),
    ...(sessionId ? { sessionId } : {}),
    ...(principal.userId ? { userId: principal.userId } : {}),
  };
}

/** Strips what a Struct cannot hold (undefined). */
const asJson = (v: unknown): JsonObject | undefined => (v && typeof v === 'object' ? (JSON.parse(JSON.stringify(v)) as JsonObject) : undefined);
const isPlainObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

function toolCallOf(p: Record<string, unknown>): ToolCall {
  const args = p.arguments;
  return create(ToolCallSchema, {
    callId: String(p.call_id ?? ''),
    name: String(p.tool ?? ''),
    ...(isPlainObject(args) ? { arguments: asJson(args) } : { rawArguments: typeof args === 'string' ? args : JSON.stringify(args ?? null) }),
  });
}

function toolResultOf(p: Record<string, unknown>): ToolResult {
  const success = p.success === true;
  const output = String(p.output ?? '');
  return create(ToolResultSchema, {
    callId: String(p.call_id ?? ''),
    name: String(p.tool ?? ''),
    success,
    output,
    error: success ? '' : output.replace(/^error: /, ''),
    executionTimeMs: BigInt(Math.max(0, Math.round(Number(p.execution_time_ms) || 0))),
  });
}

const STATE_OF: Partial<Record<EventType, AgentState>> = {
  AGENT_STARTED: AgentState.PLANNING,
  LLM_PARTIAL: AgentState.PLANNING,
  AGENT_THINKING: AgentState.PLANNING,
  LLM_OUTPUT: AgentState.PLANNING,
  TOOL_INVOKED: AgentState.EXECUTING,
  TOOL_OBSERVATION: AgentState.EXECUTING,
  AGENT_COMPLETED: AgentState.COMPLETED,
};

const int32 = (n: number) => Math.min(2 ** 31 - 1, Math.max(0, Math.round(n)));

/** The status of a run that failed with `err`, when it is a failure a client may be told about. */
function failureStatus(err: unknown): { status: StatusCode; message: string } | undefined {
  if (err instanceof BudgetExceeded) return { status: StatusCode.BUDGET_EXCEEDED, message: err.message };
  if (err instanceof LlmError && err.status === 429) return { status: StatusCode.RATE_LIMITED, message: err.message };
  if (err instanceof AppError && err.isPublic) return { status: StatusCode.ERROR, message: err.message };
  return undefined;
}

/** The AgentService implementation (see the module comment). */
export function createAgentService(d: AgentServiceDeps): ServiceImpl<typeof AgentService> {
  const wrap = rpcHandlers(d.log, 'agent rpc');
  const started = Date.now();
  let active = 0;

  /** Runs a planned request to its response; `onUpdate` receives each event as a stream message. */
  async function run(p: RunPlan, signal: AbortSignal, onUpdate?: (u: StreamExecuteTaskResponse) => void): Promise<ExecuteTaskResponse> {
    if (active >= d.maxConcurrent) {
      throw new AppError(Code.ResourceExhausted, `agent service busy: ${d.maxConcurrent} runs at once (max_concurrent_tasks)`, {
        retryable: true,
        retryAfter: 1,
      });
    }
    active++;
    const t0 = performance.now();
    const toolCalls: ToolCall[] = [];
    const toolResults: ToolResult[] = [];
    let usage: LlmUsage = ZERO_USAGE;
    let modelCalls = 0;
    let cacheHits = 0;
    let lastModel = '';
    let lastProvider = '';
    let state = AgentState.IDLE;
    const allowance = p.maxIterations + 1;
    const progress = () => Math.min(1, modelCalls / allowance);

    // Counts every model call of the run (usage of a run that fails is reported too).
    const llm: LlmProvider = {
      name: d.llm.name,
      complete: async (req, onDelta) => {
        const r = await d.llm.complete(req, onDelta);
        modelCalls++;
        if (r.cacheHit) cacheHits++;
        usage = {
          inputTokens: usage.inputTokens + r.usage.inputTokens,
          outputTokens: usage.outputTokens + r.usage.outputTokens,
          totalTokens: usage.totalTokens + r.usage.totalTokens,
          costUsd: usage.costUsd + r.usage.costUsd,
        };
        lastModel = r.model;
        lastProvider = r.provider;
        return r;
      },
    };
    const ectx = new EphemeralContext((type, agentId, message, payload) => {
      const p0 = payload ?? {};
      const call = type === 'TOOL_INVOKED' ? toolCallOf(p0) : undefined;
      const result = type === 'TOOL_OBSERVATION' ? toolResultOf(p0) : undefined;
      if (call) toolCalls.push(call);
      if (result) toolResults.push(result);
      state = STATE_OF[type] ?? state;
      onUpdate?.(
        create(StreamExecuteTaskResponseSchema, {
          taskId: p.taskId,
          state,
          message,
          toolCall: call,
          toolResult: result,
          progress: progress(),
          eventType: type,
          agentId,
          payload: asJson(payload),
        }),
      );
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      ectx.abort.abort(new AppError(Code.DeadlineExceeded, `timed out after ${p.timeoutSeconds} s (${p.timeoutSetting})`));
    }, p.timeoutSeconds * 1000);
    const onCancel = () => ectx.abort.abort(new AppError(Code.Canceled, 'the call was cancelled'));
    if (signal.aborted) onCancel();
    else signal.addEventListener('abort', onCancel, { once: true });

    const deps: AgentDeps = {
      llm,
      tools: d.tools,
      parallelism: d.parallelism ?? 1,
      maxTokens: d.maxTokens ?? 2000,
      temperature: d.temperature ?? 0.7,
      partialChunkChars: d.partialChunkChars ?? 64,
      ...(p.budget ? { budget: p.budget } : {}),
      ...(d.usage
        ? {
            onModelCall: async (c) =>
              d.usage!.recordModelCall({
                taskId: p.taskId,
                step: c.step,
                agentId: c.agentId,
                model: c.model,
                provider: c.provider,
                tier: c.tier ?? d.defaultTier ?? 'small',
                inputTokens: c.usage.inputTokens,
                outputTokens: c.usage.outputTokens,
                totalTokens: c.usage.totalTokens,
                costUsd: c.usage.costUsd,
                cacheHit: !!c.cacheHit,
              }),
          }
        : {}),
    };
    let status = StatusCode.OK;
    let result = '';
    let errorMessage = '';
    try {
      const out = await runAgentLoop(ectx, deps, {
        agentId: AGENT_ID,
        messages: p.messages,
        tier: p.tier,
        ...(p.model ? { model: p.model } : {}),
        ...(p.provider ? { provider: p.provider } : {}),
        tools: p.tools,
        allowDangerous: p.allowDangerous,
        maxIterations: p.maxIterations,
        ...(p.sessionId ? { sessionId: p.sessionId } : {}),
        ...(p.userId ? { userId: p.userId } : {}),
        taskId: p.taskId,
        stepPrefix: AGENT_ID,
      });
      result = out.text;
    } catch (err) {
      // The caller's cancellation is not a status: the call itself ends Canceled.
      if (signal.aborted && !timedOut) throw new AppError(Code.Canceled, 'the call was cancelled', { cause: err });
      const f = timedOut ? undefined : failureStatus(err);
      if (timedOut) {
        status = StatusCode.TIMEOUT;
        errorMessage = `timed out after ${p.timeoutSeconds} s (${p.timeoutSetting})`;
      } else if (f) {
        status = f.status;
        errorMessage = f.message;
      } else {
        d.log.error({ err, taskId: p.taskId }, 'agent run failed');
        status = StatusCode.ERROR;
        errorMessage = 'internal error';
      }
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onCancel);
      active--;
    }
    const ok = status === StatusCode.OK;
    return create(ExecuteTaskResponseSchema, {
      taskId: p.taskId,
      status,
      result,
      toolCalls,
      toolResults,
      metrics: create(AgentMetricsSchema, {
        tokenUsage: create(TokenUsageSchema, {
          promptTokens: int32(usage.inputTokens),
          completionTokens: int32(usage.outputTokens),
          totalTokens: int32(usage.totalTokens),
          costUsd: usage.costUsd,
          model: lastModel,
          tier: MODEL_TIER_BY_NAME.get(p.tier),
        }),
        provider: lastProvider,
        durationMs: BigInt(Math.round(performance.now() - t0)),
        modelCalls,
        cacheHit: modelCalls > 0 && cacheHits === modelCalls,
      }),
      errorMessage,
      finalState: ok ? AgentState.COMPLETED : AgentState.FAILED,
    });
  }

  const capability = (t: ToolInfo) => ({
    name: t.name,
    description: t.description,
    category: t.category,
    version: t.version,
    parameters: asJson(t.parameters),
    timeoutSeconds: t.timeoutSeconds,
    costPerUse: t.costPerUse,
  });

  return {
    executeTask: wrap(async (req, ctx) => run(await planRun(d, req, ctx), ctx.signal)),

    async *streamExecuteTask(req, ctx) {
      let p: RunPlan;
      try {
        p = await planRun(d, req, ctx);
      } catch (err) {
        throw rpcError(err, d.log, 'agent rpc');
      }
      // The run pushes updates; they reach the client in order.
      let finished = false;
      const stop = new AbortController();
      const onAbort = () => stop.abort(ctx.signal.reason);
      if (ctx.signal.aborted) onAbort();
      else ctx.signal.addEventListener('abort', onAbort, { once: true });
      try {
        yield* pushed<StreamExecuteTaskResponse>(async (push) => {
          try {
            const r = await run(p, stop.signal, push);
            const ok = r.status === StatusCode.OK;
            push(
              create(StreamExecuteTaskResponseSchema, {
                taskId: r.taskId,
                state: r.finalState,
                message: ok ? r.result : r.errorMessage,
                progress: ok ? 1 : Math.min(1, r.metrics!.modelCalls / (p.maxIterations + 1)),
                eventType: 'EXECUTION_RESULT',
                agentId: AGENT_ID,
                response: r,
              }),
            );
          } finally {
            finished = true;
          }
        });
      } catch (err) {
        throw rpcError(err, d.log, 'agent rpc');
      } finally {
        // The client went away (or the stream was closed early): stop the run.
        ctx.signal.removeEventListener('abort', onAbort);
        if (!finished) stop.abort(new AppError(Code.Canceled, 'the stream was closed'));
      }
    },

    getCapabilities: wrap(async (_req, ctx) => {
      callerOf(ctx);
      return {
        supportedTools: d.tools.list().map((t) => t.name),
        supportedModes: ['simple', 'standard'],
        maxMemoryMb: BigInt(d.maxMemoryMb ?? 0),
        maxConcurrentTasks: d.maxConcurrent,
        version: d.version,
        roles: ROLE_NAMES,
      };
    }),

    healthCheck: wrap(async (_req, ctx) => {
      callerOf(ctx);
      return {
        healthy: true,
        status: 'SERVING',
        version: d.version,
        activeTasks: active,
        maxConcurrentTasks: d.maxConcurrent,
        uptimeSeconds: BigInt(Math.floor((Date.now() - started) / 1000)),
      };
    }),

    discoverTools: wrap(async (req, ctx) => {
      callerOf(ctx);
      return { tools: d.tools.list(req.category || undefined).map(capability) };
    }),

    getToolCapability: wrap(async (req, ctx) => {
      callerOf(ctx);
      if (!req.toolName) throw badRequest('tool_name is required');
      return { tool: capability(d.tools.describe(req.toolName)) };
    }),
  };
}
