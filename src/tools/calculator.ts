/**
 * `calculator`: evaluates an arithmetic expression exactly where it can (./calculator-eval.mjs:
 * mathjs's parser and exact rationals, no eval) in a worker thread, so that a heavy expression
 * never holds the service's event loop (its streams, its heartbeats) and the time limit really
 * stops it: the thread is terminated and a fresh one serves the next call.
 *
 * A few warm workers serve the calls, one call each at a time; calls beyond them wait for a free
 * one (a call cancelled while it waits ends at once). A short expression of plain numbers and
 * + - * / is answered on the calling thread (./calculator-simple.ts): its cost is bounded by its
 * shape, and the hop to a worker would cost more than the evaluation.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import pLimit, { type LimitFunction } from 'p-limit';
import type { CalculatorResult } from './calculator-eval.mjs';
import { MAX_EXPRESSION_CHARS } from './calculator-limits.mjs';
import { evaluateSimple } from './calculator-simple.js';
import { type Tool, ToolError, type ToolContext, type ToolOutput } from './tool.js';

export { MAX_BITS, MAX_DENOMINATOR_BITS, MAX_EXPRESSION_CHARS, MAX_FACTORIAL } from './calculator-limits.mjs';
export type { CalculatorResult } from './calculator-eval.mjs';

const DEFAULT_TIMEOUT_MS = 5_000;
/** Loading mathjs takes about a second of CPU; a busy machine may take several. */
const START_TIMEOUT_MS = 60_000;
/** The evaluator needs little; a runaway one is stopped by the heap cap before it hurts the service. */
const WORKER_HEAP_MB = 256;

export interface CalculatorOptions {
  /** Longest one evaluation may take before its worker is terminated (default 5 s). */
  timeoutMs?: number;
  /** Workers evaluating at the same time (default: up to 2, never more than the cores). */
  workers?: number;
}

export interface CalculatorTool extends Tool<{ expression: string }> {
  /** Terminates the workers (calls in progress fail); the tool starts new ones if used again. */
  close(): Promise<void>;
}

type Reply = { ok: true; result: CalculatorResult } | { ok: false; message: string; expressionError: boolean };
type Started = { worker: Worker; ready: Promise<void> };

/** Warm evaluator threads, one call each at a time. */
class CalculatorWorkers {
  private readonly idle: Started[] = [];
  private readonly live = new Set<Worker>();
  private readonly limit: LimitFunction;
  /** Every worker of the pool has been ready since the last one was lost: warm() has nothing to wait for. */
  private warmed = false;

  constructor(
    private readonly timeoutMs: number,
    private readonly size: number,
  ) {
    this.limit = pLimit(size);
  }

  /**
   * Resolves when the pool's workers are ready (starting the missing ones), so that calls made
   * at once never wait for a cold start inside their time limit; a call that finds every worker
   * busy waits its turn without a start of its own. Asked before every call (the registry's
   * `prepare`): a pool that is ready answers without a wait.
   */
  async warm(signal: AbortSignal): Promise<void> {
    if (this.warmed && !signal.aborted) return;
    while (this.live.size < this.size) this.idle.push(this.spawn());
    await raceAbort(
      Promise.all(this.idle.map((s) => s.ready)).then(() => undefined),
      signal,
    );
    this.warmed = this.live.size >= this.size;
  }

  evaluate(expression: string, signal: AbortSignal): Promise<CalculatorResult> {
    return raceAbort(
      this.limit(() => this.runOn(expression, signal)),
      signal,
    );
  }

  async close(): Promise<void> {
    this.warmed = false;
    const all = [...this.live];
    this.live.clear();
    this.idle.length = 0;
    await Promise.all(all.map((w) => w.terminate()));
  }

  private spawn(): Started {
    const worker = new Worker(new URL('./calculator-worker.mjs', import.meta.url), {
      resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
      env: {}, // none of the service's environment reaches the evaluator
      execArgv: [], // plain JavaScript: no loader (tsx) needed
    });
    worker.unref();
    this.live.add(worker);
    // A worker that fails or ends (also while idle) leaves the pool; a call on it hears it too.
    worker.on('error', () => this.forget(worker)).on('exit', () => this.forget(worker));
    const ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => onGone(new Error(`not ready within ${START_TIMEOUT_MS / 1000} s`)), START_TIMEOUT_MS).unref();
      const onGone = (e: unknown) => {
        clearTimeout(timer);
        worker.off('message', onReady).off('error', onGone).off('exit', onGone);
        reject(new ToolError(`the calculator could not start: ${e instanceof Error ? e.message : `exit code ${String(e)}`}`, 'backend'));
      };
      const onReady = () => {
        clearTimeout(timer);
        worker.off('error', onGone).off('exit', onGone);
        resolve();
      };
      worker.once('message', onReady).once('error', onGone).once('exit', onGone);
    });
    ready.catch(() => this.forget(worker));
    return { worker, ready };
  }

  /** Drops a worker that could not start from the pool. */
  private forget(worker: Worker): void {
    const i = this.idle.findIndex((s) => s.worker === worker);
    if (i >= 0) this.idle.splice(i, 1);
    this.kill(worker);
  }

  private kill(worker: Worker): void {
    this.warmed = false;
    this.live.delete(worker);
    void worker.terminate();
  }

  /** Runs on an idle worker (or a new one); the time limit starts when the worker is ready. */
  private async runOn(expression: string, signal: AbortSignal): Promise<CalculatorResult> {
    if (signal.aborted) throw cancelled(signal);
    const started = this.idle.pop() ?? this.spawn();
    const { worker } = started;
    try {
      await raceAbort(started.ready, signal);
    } catch (e) {
      // Cancelled while the worker starts: it still serves the next call.
      if (signal.aborted && this.live.has(worker))
        started.ready.then(
          () => this.idle.push(started),
          () => {},
        );
      throw e;
    }
    return new Promise<CalculatorResult>((resolve, reject) => {
      const fail = (e: Error) => {
        finish();
        this.kill(worker);
        reject(e);
      };
      const timer = setTimeout(
        () => fail(new ToolError(`time limit exceeded: the expression took longer than ${this.timeoutMs / 1000} s to evaluate and was stopped`, 'limit')),
        this.timeoutMs,
      );
      const onAbort = () => fail(cancelled(signal));
      const onError = (e: unknown) => fail(new ToolError(`the calculator failed: ${e instanceof Error ? e.message : String(e)}`, 'backend'));
      const onExit = (code: number) => fail(new ToolError(`the calculator worker exited unexpectedly (code ${code})`, 'backend'));
      const onMessage = (m: Reply) => {
        finish();
        if (this.live.has(worker)) this.idle.push(started);
        if (m.ok) resolve(m.result);
        else reject(m.expressionError ? new ToolError(m.message, 'bad_arguments') : new Error(m.message));
      };
      const finish = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        worker.off('message', onMessage).off('error', onError).off('exit', onExit);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      worker.on('message', onMessage).on('error', onError).on('exit', onExit);
      worker.postMessage({ expression });
    });
  }
}

function cancelled(signal: AbortSignal): ToolError {
  const why = signal.reason instanceof Error ? `: ${signal.reason.message}` : '';
  return new ToolError(`the calculation was cancelled${why}`, 'limit');
}

function raceAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(cancelled(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(cancelled(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function abbreviate(s: string, max = 2000): string {
  if (s.length <= max) return s;
  return `${s.slice(0, 60)}…${s.slice(-60)} (${s.replace(/^-/, '').length} characters)`;
}

export function calculatorTool(opts: CalculatorOptions = {}): CalculatorTool {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const workers = new CalculatorWorkers(timeoutMs, opts.workers ?? Math.max(1, Math.min(2, availableParallelism())));
  return {
    name: 'calculator',
    description:
      'Evaluates an arithmetic expression exactly where possible (rational arithmetic: 0.1+0.2 = 0.3, 1/3 stays 1/3). ' +
      'Operators: + - * / % ^ (or **, right-associative), unary minus, parentheses, postfix ! (factorial). ' +
      'Constants: pi, e. Functions: sqrt, abs, sin, cos, tan, asin, acos, atan (radians), ln, log (base 10, or log(x, base)), ' +
      'exp, floor, ceil, round (round(x, digits) too), min, max.',
    category: 'math',
    version: '1.0.0',
    parameters: {
      type: 'object',
      properties: {
        expression: { type: 'string', minLength: 1, maxLength: MAX_EXPRESSION_CHARS, description: 'e.g. "2^100", "(1/3 + 0.5) * 6", "sqrt(2) * sin(pi/4)"' },
      },
      required: ['expression'],
      additionalProperties: false,
    },
    timeoutMs,
    costPerUse: 0,
    dangerous: false,
    rateLimitSetting: 'CALCULATOR_RATE_LIMIT',
    retryable: true,
    async run(args, ctx: ToolContext): Promise<ToolOutput> {
      const { expression } = args;
      if (typeof expression !== 'string' || expression.trim() === '') throw new ToolError('expression must be a non-empty string', 'bad_arguments');
      if (expression.length > MAX_EXPRESSION_CHARS) throw new ToolError(`expression is longer than ${MAX_EXPRESSION_CHARS} characters`, 'bad_arguments');
      const r = (!ctx.signal.aborted && evaluateSimple(expression)) || (await workers.evaluate(expression, ctx.signal));
      const approx = r.decimal !== r.result ? ` ≈ ${abbreviate(r.decimal)}` : '';
      const text = `${expression} = ${abbreviate(r.result)}${approx}${r.exact ? '' : ' (floating-point approximation)'}`;
      return { output: r, text };
    },
    prepare: (signal) => workers.warm(signal),
    close: () => workers.close(),
  };
}
