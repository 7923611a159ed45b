/**
 * The tool registry: what tools exist, their schemas, and the one way to run one. Every
 * execution (a model's tool call inside a workflow, or a direct call through the API) goes
 * through `ToolRegistry.execute`, which
 * - refuses a dangerous tool unless the caller allows it (direct execution never does);
 * - validates the arguments against the tool's JSON Schema (400 naming the field);
 * - counts the call against the tool's per-minute limit, shared by every process through a
 *   NATS KV fixed window (`WEB_SEARCH_RATE_LIMIT`, `CALCULATOR_RATE_LIMIT`,
 *   `PYTHON_EXECUTOR_RATE_LIMIT`);
 * - runs it under its time limit (and the caller's, whichever is shorter) and abort signal,
 *   once the tool is ready (`prepare`: a cold worker's start is not counted);
 * - reports success or failure as a result (a tool's failure is data the model reads), and
 *   hands a usage record to `onUsage` without waiting for it.
 */
import type { KV } from '@nats-io/kv';
import type { Tracer } from '@opentelemetry/api';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { countInWindow } from '../bus/index.js';
import { AppError, Code, badRequest, forbidden, notFound, type Logger } from '../kernel/index.js';
import { globalTracer, inSpan, markFailed } from '../tracing/index.js';
import { ToolError, type Tool, type ToolContext } from './tool.js';
import type { ToolUsage } from './usage.js';

/** What a listing shows of a tool (the route maps it to the spec's JSON). */
export interface ToolInfo {
  name: string;
  description: string;
  category: string;
  version: string;
  parameters: Record<string, unknown>;
  timeoutSeconds: number;
  costPerUse: number;
}

/** The outcome of one execution. */
export interface ToolExecution {
  tool: string;
  success: boolean;
  output: Record<string, unknown>;
  text: string;
  error: string | null;
  /** Why it failed: the tool's own kind, `timeout`, or `interrupted`. */
  errorKind?: ToolError['kind'] | 'timeout' | 'aborted' | 'internal';
  metadata: Record<string, unknown>;
  executionTimeMs: number;
  costUsd: number;
  /** The spec's synthetic token count: the larger of 100 and cost_usd / 0.000002. */
  tokens: number;
}

export interface ExecuteOptions extends Omit<ToolContext, 'signal'> {
  signal?: AbortSignal;
  /** Caps the tool's own time limit (the API's 120 s). */
  maxTimeoutMs?: number;
  /** Dangerous tools run only when the caller allows them (a workflow role that lists them). */
  allowDangerous?: boolean;
  taskId?: string;
}

export interface RegistryOptions {
  /** Calls per minute by limit setting name (e.g. WEB_SEARCH_RATE_LIMIT: 120); 0 = unlimited. */
  rateLimits?: Readonly<Record<string, number>>;
  /** The RATELIMIT bucket; without it limits are not enforced (tests of single tools). */
  rateKv?: KV;
  log?: Logger;
  onUsage?: (u: ToolUsage) => void;
  /** Each execution is a span (gen_ai.tool.name); default: the API's tracer. */
  tracer?: Tracer;
}

/** The synthetic token count of the spec's tool execution result. */
export const syntheticTokens = (costUsd: number) => Math.max(100, Math.floor(costUsd / 0.000002));

const fieldOf = (e: ErrorObject) => {
  const base = e.instancePath ? `arguments${e.instancePath.replace(/\//g, '.')}` : 'arguments';
  if (e.keyword === 'required') return `${base}.${(e.params as { missingProperty: string }).missingProperty}`;
  if (e.keyword === 'additionalProperties') return `${base}.${(e.params as { additionalProperty: string }).additionalProperty}`;
  return base;
};

function argumentError(e: ErrorObject): AppError {
  const field = fieldOf(e);
  if (e.keyword === 'required') return badRequest(`${field} is required`);
  if (e.keyword === 'additionalProperties') return badRequest(`${field} is not a parameter of this tool`);
  return badRequest(`${field} ${e.message ?? 'is invalid'}`);
}

/** What a registry and the views made from it (`withExtraTools`) share: compiled schemas and rate-limit quotas. */
interface Shared {
  /** Compiled argument validators by schema object (a tool whose schema is one constant compiles once for every view). */
  validators: WeakMap<object, ValidateFunction>;
  /** Made at the first validation (a view made and dropped per agent builds none). */
  ajv?: Ajv;
  /** Calls this process may still make in the current window, per tool (claimed from the shared counter in blocks). */
  quota: Map<string, { window: number; left: number }>;
}

export class ToolRegistry {
  private readonly tools = new Map<string, Tool>();
  private shared: Shared = { validators: new WeakMap(), quota: new Map() };
  /** The tools `close` ends: all of them, or a view's own extra tools. */
  private owned: readonly Tool[];

  constructor(
    tools: readonly Tool[],
    private readonly opts: RegistryOptions = {},
  ) {
    for (const t of tools) {
      if (this.tools.has(t.name)) throw new Error(`tool ${t.name} registered twice`);
      this.tools.set(t.name, t as Tool);
    }
    this.owned = [...this.tools.values()];
  }

  /**
   * A view of this registry with `extra` tools added (e.g. a swarm agent's own `send_message`):
   * it knows, lists and runs them alongside this registry's tools, and shares this registry's
   * rate limits (settings, bucket and this process's claimed quota), usage records and compiled
   * validators. A name this registry already has is refused. `close()` on the view ends only
   * its extra tools.
   */
  withExtraTools(extra: readonly Tool[]): ToolRegistry {
    const view = new ToolRegistry([...this.tools.values(), ...extra], this.opts);
    view.shared = this.shared;
    view.owned = [...extra];
    return view;
  }

  /** Tools a listing shows: never the dangerous ones; optionally one category. */
  list(category?: string): ToolInfo[] {
    return [...this.tools.values()]
      .filter((t) => !t.dangerous && (!category || t.category === category))
      .sort((a, b) => a.name.localeCompare(b.name))
      .map(infoOf);
  }

  /** Names of every registered tool, dangerous ones included (for role allowlists). */
  names(): string[] {
    return [...this.tools.keys()].sort();
  }

  get(name: string): Tool | undefined {
    return this.tools.get(name);
  }

  /** A tool as the API shows it: unknown → 404, dangerous → 403. */
  describe(name: string): ToolInfo {
    return infoOf(this.publicTool(name));
  }

  private publicTool(name: string): Tool {
    const t = this.tools.get(name);
    if (!t) throw notFound(`Tool not found: ${name}`);
    if (t.dangerous) throw forbidden('Tool not available via direct execution');
    return t;
  }

  /** Throws 400 naming the first argument that breaks the tool's schema. */
  validate(tool: Tool, args: unknown): Record<string, unknown> {
    if (!args || typeof args !== 'object' || Array.isArray(args)) throw badRequest('arguments must be a JSON object');
    const v = this.validatorOf(tool);
    if (!v(args)) throw argumentError(v.errors![0]!);
    return args as Record<string, unknown>;
  }

  /**
   * The first way `args` break the named tool's schema, or undefined when they fit (or there
   * is no such tool): `field` the argument's path (`keywords`, `urls[0]`, `filters.country`;
   * '' for the object itself) and `reason` the schema's rule it breaks. Nothing runs.
   */
  argumentProblem(name: string, args: Record<string, unknown>): { field: string; reason: string } | undefined {
    const tool = this.tools.get(name);
    if (!tool) return undefined;
    const v = this.validatorOf(tool);
    if (v(args)) return undefined;
    const e = v.errors![0]!;
    const path = e.instancePath.split('/').slice(1);
    if (e.keyword === 'required') path.push((e.params as { missingProperty: string }).missingProperty);
    if (e.keyword === 'additionalProperties') path.push((e.params as { additionalProperty: string }).additionalProperty);
    const field = path.map((s, i) => (/^\d+$/.test(s) ? `[${s}]` : i ? `.${s}` : s)).join('');
    const reason =
      e.keyword === 'required' ? 'is required' : e.keyword === 'additionalProperties' ? 'is not a parameter of this tool' : (e.message ?? 'is invalid');
    return { field, reason };
  }

  private validatorOf(tool: Tool): ValidateFunction {
    const { validators } = this.shared;
    let v = validators.get(tool.parameters);
    if (!v) {
      // Schemas from elsewhere (OpenAPI: int64, date-time) name formats Ajv does not check: not logged for every compile.
      v = (this.shared.ajv ??= new Ajv({ allErrors: false, strict: false, logger: false })).compile(tool.parameters);
      validators.set(tool.parameters, v);
    }
    return v;
  }

  /**
   * Runs a tool. Unknown → 404, dangerous without `allowDangerous` → 403, bad arguments → 400,
   * over its rate limit → 429 (all thrown); everything the tool itself reports, including its
   * time limit, is a result with `success: false`.
   */
  execute(name: string, args: unknown, o: ExecuteOptions = {}): Promise<ToolExecution> {
    const attributes = { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': name };
    return inSpan(this.opts.tracer ?? globalTracer(), `execute_tool ${name}`, { attributes }, async (span) => {
      const exec = await this.run(name, args, o);
      if (!exec.success) markFailed(span, exec.errorKind ?? 'internal', exec.error ?? 'tool failed');
      return exec;
    });
  }

  private async run(name: string, args: unknown, o: ExecuteOptions): Promise<ToolExecution> {
    const tool = o.allowDangerous ? this.tools.get(name) : this.publicTool(name);
    if (!tool) throw notFound(`Tool not found: ${name}`);
    const valid = this.validate(tool, args);
    await this.checkRate(tool);
    const timeoutMs = Math.min(tool.timeoutMs, o.maxTimeoutMs ?? Infinity);
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const onAbort = () => controller.abort(o.signal?.reason);
    if (o.signal?.aborted) onAbort();
    else o.signal?.addEventListener('abort', onAbort, { once: true });
    const started = performance.now();
    let exec: ToolExecution;
    try {
      // A cold start (a worker thread loading its libraries) is not the call's work: the limit starts after it.
      await tool.prepare?.(controller.signal);
      timer = setTimeout(() => controller.abort(new ToolTimeout(timeoutMs)), timeoutMs);
      const out = await Promise.race([
        tool.run(valid, { signal: controller.signal, sessionId: o.sessionId, userId: o.userId, tenantId: o.tenantId }),
        // A tool that ignores its signal still ends for the caller at the limit.
        new Promise<never>((_, reject) => controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true })),
      ]);
      const costUsd = out.costUsd ?? tool.costPerUse;
      exec = {
        tool: tool.name,
        success: true,
        output: out.output,
        text: out.text,
        error: null,
        metadata: { ...(out.metadata ?? {}), tool: tool.name, version: tool.version },
        executionTimeMs: Math.round(performance.now() - started),
        costUsd,
        tokens: syntheticTokens(costUsd),
      };
    } catch (err) {
      const { message, kind } = failureOf(err, controller.signal, o.signal);
      exec = {
        tool: tool.name,
        success: false,
        output: {},
        text: '',
        error: message,
        errorKind: kind,
        metadata: { tool: tool.name, version: tool.version },
        executionTimeMs: Math.round(performance.now() - started),
        costUsd: 0,
        tokens: syntheticTokens(0),
      };
    } finally {
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
    }
    this.opts.onUsage?.({
      tool: tool.name,
      sessionId: o.sessionId,
      userId: o.userId,
      taskId: o.taskId,
      success: exec.success,
      executionTimeMs: exec.executionTimeMs,
      costUsd: exec.costUsd,
      tokens: exec.tokens,
      at: new Date(),
    });
    return exec;
  }

  /**
   * Counts a call against the tool's per-minute limit. The shared counter in NATS KV is
   * claimed in blocks (a twentieth of the limit, at most 50), so most calls cost no round
   * trip; a process never uses more than it claimed, so the limit holds across processes
   * (a block claimed and not used within the minute is lost, which only errs on the safe
   * side).
   */
  private async checkRate(tool: Tool): Promise<void> {
    const limit = tool.rateLimit ? tool.rateLimit.perMinute : tool.rateLimitSetting ? (this.opts.rateLimits?.[tool.rateLimitSetting] ?? 0) : 0;
    if (!limit || !this.opts.rateKv) return;
    const key = tool.rateLimit?.key ?? tool.name;
    const now = Date.now();
    const window = Math.floor(now / 60_000);
    const q = this.shared.quota.get(key);
    if (q && q.window === window && q.left > 0) {
      q.left--;
      return;
    }
    const block = Math.max(1, Math.min(50, Math.floor(limit / 20)));
    let c;
    try {
      c = await countInWindow(this.opts.rateKv, `tool.${key}`, 60_000, now, block);
    } catch (err) {
      // A NATS hiccup must not stop every tool: allowed, and said.
      this.opts.log?.warn({ err, tool: tool.name }, 'tool rate limit bucket unavailable; call allowed');
      return;
    }
    if (!c) return; // heavy contention on the key: allowed
    const before = c.count - block;
    const granted = Math.max(0, Math.min(block, limit - before));
    if (granted === 0) {
      this.shared.quota.set(key, { window, left: 0 });
      const retryAfter = Math.max(1, Math.ceil((c.resetAtMs - now) / 1000));
      throw new AppError(
        Code.ResourceExhausted,
        `rate limit exceeded for tool ${tool.name}: ${limit} calls per minute (${tool.rateLimitSetting ?? tool.rateLimit?.key})`,
        {
          retryable: true,
          retryAfter,
        },
      );
    }
    this.shared.quota.set(key, { window, left: granted - 1 });
  }

  /** Ends what the tools hold (the python worker). */
  async close(): Promise<void> {
    await Promise.all(this.owned.map((t) => (t as Tool & { close?: () => Promise<void> }).close?.()));
  }
}

class ToolTimeout extends Error {
  constructor(readonly ms: number) {
    super(`tool timed out after ${ms / 1000} s`);
  }
}

function failureOf(err: unknown, own: AbortSignal, caller?: AbortSignal): { message: string; kind: ToolExecution['errorKind'] } {
  if (own.reason instanceof ToolTimeout && own.aborted) return { message: own.reason.message, kind: 'timeout' };
  if (caller?.aborted) return { message: 'tool call interrupted: its task was cancelled or stopped', kind: 'aborted' };
  if (err instanceof ToolError) return { message: err.message, kind: err.kind };
  return { message: `tool failed: ${(err as Error)?.message ?? String(err)}`, kind: 'internal' };
}

function infoOf(t: Tool): ToolInfo {
  return {
    name: t.name,
    description: t.description,
    category: t.category,
    version: t.version,
    parameters: t.parameters as unknown as Record<string, unknown>,
    timeoutSeconds: Math.ceil(t.timeoutMs / 1000),
    costPerUse: t.costPerUse,
  };
}
