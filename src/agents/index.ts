/**
 * The agent loop (DESIGN.md, "Agent loop"): model turns and tool calls, each a journaled
 * step of the workflow, so a replay after a crash pays for no recorded model call and runs
 * no recorded tool call again.
 *
 * One agent: AGENT_STARTED; per turn the model streams (LLM_PARTIAL deltas) and either
 * answers (LLM_OUTPUT, AGENT_COMPLETED) or asks for tools: its text before the calls is
 * AGENT_THINKING, each call is TOOL_INVOKED {tool, call_id, arguments} then
 * TOOL_OBSERVATION {tool, call_id, success, output (truncated), execution_time_ms}, and the
 * results go back to the model as `tool` messages. Calls of one turn run `parallelism` at a
 * time. After `maxIterations` turns with tool calls the model is asked to answer without
 * tools.
 *
 * A tool call cut off by a crash runs again only when its tool is `retryable`; otherwise a
 * `<step>-started` journal entry written before it ran shows it was cut off, and the model
 * is told the call was interrupted instead (it may have had effects).
 *
 * Budgets are checked before every model call (`Budget.beforeCall`).
 */
import { AppError, Code, type Tier } from '../kernel/index.js';
import type { Budget, ChatMessage, LlmProvider, LlmRequest, LlmResult, LlmTool, LlmToolCall, LlmUsage } from '../llm/index.js';
export { Budget, BudgetExceeded, type BudgetLimits } from '../llm/index.js';
import type { EventType } from '../bus/index.js';

/**
 * What the agent loop needs of its context: journaled steps, events, cancellation. A
 * workflow's WorkflowContext is one (durable); AgentService runs agents on an ephemeral one.
 */
export interface AgentContext {
  step<T>(name: string, fn: () => Promise<T>): Promise<T>;
  isRecorded(step: string): boolean;
  emit(type: EventType, agentId: string, message: string, payload?: Record<string, unknown>): unknown;
  checkpoint(): void;
  readonly signal: AbortSignal;
}

/**
 * A context for one group of parallel work (a plan's subtasks, one turn's tool calls) that can
 * be stopped on its own: when one member fails, the others are aborted (their model calls and
 * tools cancelled, no new step started, nothing more emitted) instead of running on while the
 * workflow fails or is retried.
 */
export function scopedContext(parent: AgentContext): { ctx: AgentContext; abort(reason: unknown): void } {
  const ac = new AbortController();
  const signal = AbortSignal.any([parent.signal, ac.signal]);
  const stopped = () => {
    if (ac.signal.aborted) throw ac.signal.reason instanceof Error ? ac.signal.reason : new Error('stopped: a parallel step failed');
  };
  const ctx: AgentContext = {
    step: (name, fn) => {
      stopped();
      return parent.step(name, fn);
    },
    isRecorded: (name) => parent.isRecorded(name),
    emit: (type, agentId, message, payload) => (ac.signal.aborted ? undefined : parent.emit(type, agentId, message, payload)),
    checkpoint: () => {
      parent.checkpoint();
      stopped();
    },
    signal,
  };
  return { ctx, abort: (reason) => ac.abort(reason) };
}

/**
 * Awaits every promise; on the first failure aborts the rest (`abort`) and waits for all of
 * them to settle before throwing it, so nothing of the group still runs when the caller moves on.
 */
export async function allOrStop<T>(ps: Promise<T>[], abort: (reason: unknown) => void): Promise<T[]> {
  let first: { err: unknown } | undefined;
  const watched = ps.map((p) =>
    p.catch((err: unknown) => {
      if (!first) {
        first = { err };
        abort(err);
      }
      throw err;
    }),
  );
  const settled = await Promise.allSettled(watched);
  if (first) throw first.err;
  return settled.map((r) => (r as PromiseFulfilledResult<T>).value);
}

/** Runs steps once each, in memory: for agents outside a workflow (AgentService). */
export class EphemeralContext implements AgentContext {
  private readonly done = new Map<string, unknown>();
  readonly abort = new AbortController();
  constructor(private readonly onEvent: (type: EventType, agentId: string, message: string, payload?: Record<string, unknown>) => void = () => {}) {}
  get signal(): AbortSignal {
    return this.abort.signal;
  }
  async step<T>(name: string, fn: () => Promise<T>): Promise<T> {
    if (this.done.has(name)) return this.done.get(name) as T;
    this.checkpoint();
    const r = await fn();
    this.done.set(name, r);
    return r;
  }
  isRecorded(step: string): boolean {
    return this.done.has(step);
  }
  emit(type: EventType, agentId: string, message: string, payload?: Record<string, unknown>): void {
    this.onEvent(type, agentId, message, payload);
  }
  checkpoint(): void {
    if (this.signal.aborted) throw this.signal.reason instanceof Error ? this.signal.reason : new Error('aborted');
  }
}

import type { ToolExecution, ToolRegistry } from '../tools/index.js';

/** What an agent produced: its answer, the model that gave it, and the usage of every call. */
export interface AgentOutput {
  text: string;
  model: string;
  provider: string;
  usage: LlmUsage;
  /** One entry per model call, for cost records and model_breakdown. */
  calls: ModelCall[];
  toolCalls: number;
}

export interface ModelCall {
  agentId: string;
  step: string;
  /** The tier the call asked for (the task's, or a subtask's, skill's or template step's own). */
  tier?: Tier;
  model: string;
  provider: string;
  usage: LlmUsage;
  cacheHit?: boolean;
  /** Similarity of the cached request (1 = the same). */
  cacheScore?: number;
}

export interface AgentDeps {
  llm: LlmProvider;
  tools?: ToolRegistry;
  /** Tool calls of one turn run this many at a time (TOOL_PARALLELISM). */
  parallelism: number;
  maxTokens: number;
  temperature: number;
  /** top_p, stop and penalties for every model call of these agents (a task's `context.model_settings`). */
  sampling?: Pick<LlmRequest, 'topP' | 'stop' | 'presencePenalty' | 'frequencyPenalty'>;
  /** LLM_PARTIAL coalescing: at most this many characters per event. */
  partialChunkChars: number;
  /** How long a delta may wait for more text before it is sent (the 50 ms liveness bound). */
  partialFlushMs?: number;
  budget?: Budget;
  /** Called once per model call after it is journaled-to-be (cost records). */
  onModelCall?: (c: ModelCall) => Promise<void>;
}

export interface AgentSpec {
  agentId: string;
  messages: ChatMessage[];
  tier: Tier;
  model?: string;
  provider?: string;
  /** Tools this agent may call (the role's allowlist); empty: a plain model call. */
  tools: string[];
  /** The role lists a dangerous tool (developer: bash). */
  allowDangerous?: boolean;
  maxIterations: number;
  /** The session's UUID, for workspace file tools. */
  sessionId?: string;
  userId?: string;
  taskId: string;
  /** Prefix of this agent's journal steps (unique within the workflow). */
  stepPrefix: string;
  /** Inside the agent's first step, before AGENT_STARTED (e.g. DEPENDENCY_SATISFIED). */
  onStart?: () => void;
  /** Inside the agent's last step, after AGENT_COMPLETED. */
  onComplete?: () => void;
}

/** Longest tool output a TOOL_OBSERVATION event carries (the model gets more). */
export const OBSERVATION_EVENT_CHARS = 2000;
/** Longest tool output handed back to the model. */
export const OBSERVATION_MODEL_CHARS = 16_000;

const truncate = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}… [${s.length - n} more characters]` : s);
const addUsage = (a: LlmUsage, b: LlmUsage): LlmUsage => ({
  inputTokens: a.inputTokens + b.inputTokens,
  outputTokens: a.outputTokens + b.outputTokens,
  totalTokens: a.totalTokens + b.totalTokens,
  costUsd: a.costUsd + b.costUsd,
});
export const ZERO_USAGE: LlmUsage = { inputTokens: 0, outputTokens: 0, totalTokens: 0, costUsd: 0 };

/** A recorded model turn (the journal keeps exactly this). */
interface Turn {
  tier?: Tier;
  text: string;
  toolCalls?: LlmToolCall[];
  model: string;
  provider: string;
  usage: LlmUsage;
  cacheHit?: boolean;
  cacheScore?: number;
}

/** How long the first text of a stream may wait for more (ms). */
const FIRST_FLUSH_MS = 5;

/**
 * Streams deltas as LLM_PARTIAL events: up to `chunk` characters each, and never holding text
 * back longer than `flushMs` (a slow model's words reach clients as they come); the first text
 * of a stream waits at most FIRST_FLUSH_MS, so the time to the first token is not the window.
 */

export class DeltaCoalescer {
  private buf = '';
  private timer?: NodeJS.Timeout;
  private started = false;
  constructor(
    private readonly send: (piece: string) => void,
    private readonly chunk: number,
    private readonly flushMs: number,
  ) {}
  push(delta: string): void {
    this.buf += delta;
    if (this.buf.length >= this.chunk && !this.started) {
      // Text comes fast: whole chunks from here on, the first-text timer gives way to the window.
      this.started = true;
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    while (this.buf.length >= this.chunk) {
      // Never split a surrogate pair (an emoji) across two events.
      let n = this.chunk;
      const c = this.buf.charCodeAt(n - 1);
      if (c >= 0xd800 && c <= 0xdbff) n = n > 1 ? n - 1 : n + 1;
      if (n > this.buf.length) break;
      this.send(this.buf.slice(0, n));
      this.buf = this.buf.slice(n);
    }
    // The first text waits at most FIRST_FLUSH_MS: long enough for a fast model to fill whole
    // chunks, short enough that a slow model's first token is not kept for the whole window.
    const wait = this.started ? this.flushMs : Math.min(this.flushMs, FIRST_FLUSH_MS);
    if (this.buf && !this.timer) this.timer = setTimeout(() => this.flush(), wait);
  }
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.buf) return;
    this.started = true;
    const piece = this.buf;
    this.buf = '';
    this.send(piece);
  }
}

export interface TurnOptions {
  /** Emit LLM_OUTPUT when the model answered (no tool calls). Default true. */
  emitOutput?: boolean;
  /** A one-call agent: AGENT_STARTED before the call, AGENT_COMPLETED after it. */
  announce?: boolean;
  /** Inside the step, before the call (events that belong to this step). */
  before?: () => void;
  /** Inside the step, after the call. */
  after?: (t: Turn) => void;
  /** The caller is already inside a step: run without a step of its own. */
  inStep?: boolean;
  maxTokens?: number;
  temperature?: number;
}

/** One model call as a journaled step: streams, records usage, returns the turn. */
export async function modelTurn(
  ctx: AgentContext,
  deps: AgentDeps,
  spec: Pick<AgentSpec, 'agentId' | 'tier' | 'model' | 'provider'> & { taskId?: string },
  step: string,
  messages: ChatMessage[],
  tools: LlmTool[] | undefined,
  o: TurnOptions = {},
): Promise<Turn> {
  // A recorded call is counted against the budgets again (this run's totals), silently.
  const replayed = !o.inStep && ctx.isRecorded(step);
  const run = async (): Promise<Turn> => {
    o.before?.();
    if (o.announce) ctx.emit('AGENT_STARTED', spec.agentId, `Agent ${spec.agentId} started`);
    deps.budget?.beforeCall(ctx, spec.agentId);
    const co = new DeltaCoalescer((piece) => ctx.emit('LLM_PARTIAL', spec.agentId, piece, { delta: piece }), deps.partialChunkChars, deps.partialFlushMs ?? 50);
    let r: LlmResult;
    try {
      r = await deps.llm.complete(
        {
          messages,
          tier: spec.tier,
          model: spec.model,
          ...(spec.provider ? { provider: spec.provider } : {}),
          // Named for the model layer's budgets (LLM_DISABLE_BUDGETS=0).
          ...(spec.taskId ? { budget: { taskId: spec.taskId, agentId: spec.agentId } } : {}),
          maxTokens: o.maxTokens ?? deps.maxTokens,
          temperature: o.temperature ?? deps.temperature,
          ...deps.sampling,
          ...(tools?.length ? { tools, toolChoice: 'auto' as const } : {}),
          signal: ctx.signal,
        },
        (d) => co.push(d),
      );
    } finally {
      co.flush();
    }
    const cacheHit = r.cacheHit;
    const call: ModelCall = {
      agentId: spec.agentId,
      step,
      tier: spec.tier,
      model: r.model,
      provider: r.provider,
      usage: r.usage,
      ...(cacheHit ? { cacheHit, cacheScore: r.cacheScore ?? 1 } : {}),
    };
    deps.budget?.afterCall(ctx, spec.agentId, r.usage);
    await deps.onModelCall?.(call);
    if ((o.emitOutput ?? true) && !r.toolCalls?.length) {
      ctx.emit('LLM_OUTPUT', spec.agentId, r.text, {
        model: r.model,
        provider: r.provider,
        usage: { input_tokens: r.usage.inputTokens, output_tokens: r.usage.outputTokens, total_tokens: r.usage.totalTokens, cost_usd: r.usage.costUsd },
        ...(cacheHit ? { cache_hit: true, cache_score: r.cacheScore ?? 1 } : {}),
      });
    }
    const turn: Turn = {
      tier: spec.tier,
      text: r.text,
      model: r.model,
      provider: r.provider,
      usage: r.usage,
      ...(r.toolCalls?.length ? { toolCalls: r.toolCalls } : {}),
      ...(cacheHit ? { cacheHit, cacheScore: r.cacheScore ?? 1 } : {}),
    };
    if (o.announce) ctx.emit('AGENT_COMPLETED', spec.agentId, `Agent ${spec.agentId} completed`, { total_tokens: r.usage.totalTokens });
    o.after?.(turn);
    return turn;
  };
  const turn = o.inStep ? await run() : await ctx.step(step, run);
  if (replayed) deps.budget?.afterCall(undefined, spec.agentId, turn.usage);
  return turn;
}

interface ToolStepResult {
  callId: string;
  content: string;
  success: boolean;
}

/**
 * Runs `fn` over `items`, at most `n` at a time, keeping the order of results. On the first
 * failure no new item starts, the running ones are stopped (scoped context), and the failure
 * is thrown once all have settled.
 */
async function pool<T, R>(parent: AgentContext, items: T[], n: number, fn: (ctx: AgentContext, x: T, i: number) => Promise<R>): Promise<R[]> {
  const { ctx, abort } = scopedContext(parent);
  const out = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const lane = async () => {
    while (next < items.length && !failed) {
      const i = next++;
      out[i] = await fn(ctx, items[i]!, i);
    }
  };
  await allOrStop(Array.from({ length: Math.max(1, Math.min(n, items.length)) }, lane), (reason) => {
    failed = true;
    abort(reason);
  });
  return out;
}

async function toolStep(ctx: AgentContext, deps: AgentDeps, spec: AgentSpec, call: LlmToolCall, step: string): Promise<ToolStepResult> {
  const tool = deps.tools?.get(call.name);
  const allowed = !!tool && spec.tools.includes(call.name);
  // A tool that is not safe to run twice: was it started before a crash and never recorded?
  if (allowed && !tool.retryable && !ctx.isRecorded(step) && ctx.isRecorded(`${step}-started`)) {
    return ctx.step(step, async () => {
      const msg = `tool call interrupted: the worker running it stopped before it finished; ${call.name} is not safe to run twice, so it was not run again and may or may not have taken effect`;
      ctx.emit('TOOL_OBSERVATION', spec.agentId, msg, {
        tool: call.name,
        call_id: call.id,
        success: false,
        output: msg,
        execution_time_ms: 0,
        interrupted: true,
      });
      return { callId: call.id, content: msg, success: false };
    });
  }
  if (allowed && !tool.retryable) await ctx.step(`${step}-started`, async () => true);
  return ctx.step(step, async () => {
    let args: unknown;
    try {
      args = call.arguments.trim() ? JSON.parse(call.arguments) : {};
    } catch {
      args = undefined;
    }
    ctx.emit('TOOL_INVOKED', spec.agentId, `Calling ${call.name}`, { tool: call.name, call_id: call.id, arguments: args ?? call.arguments });
    let exec: Pick<ToolExecution, 'success' | 'text' | 'error' | 'output' | 'executionTimeMs'>;
    if (!allowed) {
      exec = {
        success: false,
        text: '',
        error: `tool ${call.name} is not available to this agent; available: ${spec.tools.join(', ') || 'none'}`,
        output: {},
        executionTimeMs: 0,
      };
    } else if (args === undefined) {
      exec = { success: false, text: '', error: 'the arguments are not valid JSON', output: {}, executionTimeMs: 0 };
    } else {
      try {
        exec = await deps.tools!.execute(call.name, args, {
          signal: ctx.signal,
          sessionId: spec.sessionId,
          userId: spec.userId,
          taskId: spec.taskId,
          allowDangerous: spec.allowDangerous,
        });
      } catch (err) {
        // Refusals (bad arguments, rate limit) are told to the model, which may correct itself.
        if (err instanceof AppError && err.code !== Code.Internal) {
          exec = { success: false, text: '', error: err.message, output: {}, executionTimeMs: 0 };
        } else throw err;
      }
    }
    ctx.checkpoint(); // cancelled or handed back while the tool ran: do not record a cut-off result
    const content = exec.success ? exec.text || JSON.stringify(exec.output) : `error: ${exec.error}`;
    ctx.emit('TOOL_OBSERVATION', spec.agentId, exec.success ? `${call.name} succeeded` : `${call.name} failed: ${exec.error}`, {
      tool: call.name,
      call_id: call.id,
      success: exec.success,
      output: truncate(content, OBSERVATION_EVENT_CHARS),
      execution_time_ms: exec.executionTimeMs,
    });
    return { callId: call.id, content: truncate(content, OBSERVATION_MODEL_CHARS), success: exec.success };
  });
}

/** The tools of `names` as the model sees them (known ones only). */
export function llmToolsOf(registry: ToolRegistry | undefined, names: string[]): LlmTool[] {
  if (!registry) return [];
  return names.flatMap((n) => {
    const t = registry.get(n);
    return t ? [{ name: t.name, description: t.description, parameters: t.parameters as unknown as Record<string, unknown> }] : [];
  });
}

/** Runs one agent to its answer. */
export async function runAgentLoop(ctx: AgentContext, deps: AgentDeps, spec: AgentSpec): Promise<AgentOutput> {
  const tools = llmToolsOf(deps.tools, spec.tools);
  const messages = [...spec.messages];
  const calls: ModelCall[] = [];
  let usage = ZERO_USAGE;
  let toolCalls = 0;
  let last: Turn | undefined;
  for (let i = 1; i <= spec.maxIterations + 1; i++) {
    const forced = i > spec.maxIterations;
    const step = `${spec.stepPrefix}-turn-${i}`;
    if (forced) {
      messages.push({ role: 'user', content: `You have used all ${spec.maxIterations} tool rounds. Answer now with what you have, without calling tools.` });
    }
    const before = usage;
    const turn = await modelTurn(ctx, deps, spec, step, messages, forced ? undefined : tools, {
      before:
        i === 1
          ? () => {
              spec.onStart?.();
              ctx.emit('AGENT_STARTED', spec.agentId, `Agent ${spec.agentId} started`);
            }
          : undefined,
      after: (t) => {
        if (t.toolCalls?.length && !forced) {
          if (t.text.trim()) ctx.emit('AGENT_THINKING', spec.agentId, t.text, { iteration: i });
          return;
        }
        ctx.emit('AGENT_COMPLETED', spec.agentId, `Agent ${spec.agentId} completed`, {
          total_tokens: before.totalTokens + t.usage.totalTokens,
          tool_calls: toolCalls,
          iterations: i,
        });
        spec.onComplete?.();
      },
    });
    calls.push({
      agentId: spec.agentId,
      step,
      tier: turn.tier ?? spec.tier,
      model: turn.model,
      provider: turn.provider,
      usage: turn.usage,
      ...(turn.cacheHit ? { cacheHit: true, cacheScore: turn.cacheScore } : {}),
    });
    usage = addUsage(usage, turn.usage);
    last = turn;
    if (!turn.toolCalls?.length || forced) break;
    messages.push({ role: 'assistant', content: turn.text, toolCalls: turn.toolCalls });
    const results = await pool(ctx, turn.toolCalls, deps.parallelism, (sc, c, j) => toolStep(sc, deps, spec, c, `${step}-tool-${j + 1}`));
    toolCalls += results.length;
    for (const r of results) messages.push({ role: 'tool', toolCallId: r.callId, content: r.content });
  }
  return { text: last!.text, model: last!.model, provider: last!.provider, usage, calls, toolCalls };
}
