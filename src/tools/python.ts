/**
 * `python_executor`: runs a Python snippet in Pyodide (CPython compiled to WebAssembly) inside a
 * worker thread (./python-worker.mjs, which also describes the sandbox: no network, no host
 * file system, no host processes, a capped WebAssembly heap).
 *
 * One warm worker serves the calls one at a time: it loads Pyodide once (lazily, on the first
 * call) and runs each snippet in a fresh `__main__` namespace, clearing /tmp, the home directory
 * and modules imported by the previous snippet. It is replaced after a time limit (the thread is
 * terminated), a memory limit, or a crash; the next call starts a new one.
 *
 * A Python exception is a normal result (`error` holds the traceback, for the model to read);
 * exceeding the time or memory limit throws `ToolError` kind `limit`.
 */
import { Worker } from 'node:worker_threads';
import { type Tool, ToolError, type ToolContext, type ToolOutput } from './tool.js';

export interface PythonExecutorOptions {
  /** Longest a snippet may run (the worker's start-up is not counted). */
  timeoutMs: number;
  /** Cap of the WebAssembly heap (Python's memory); the worker's JS heap gets the same cap (at least 64 MB). */
  memoryMb: number;
  /** Cap of stdout and of stderr, each (default 64 KiB). */
  outputCapBytes?: number;
  /** Longest time Pyodide may take to start (default 60 s). */
  startTimeoutMs?: number;
}

export interface PythonArgs extends Record<string, unknown> {
  code: string;
  stdin?: string;
}

export interface PythonExecutorTool extends Tool<PythonArgs> {
  /** Terminates the worker (calls in progress fail). The tool starts a new one if used again. */
  close(): Promise<void>;
}

const MAX_CODE_CHARS = 100_000;
const DEFAULT_OUTPUT_CAP = 64 * 1024;
const DEFAULT_START_TIMEOUT_MS = 60_000;
/** Added to the tool's `timeoutMs` (the registry's limit) for a cold start and queueing. */
const STARTUP_ALLOWANCE_MS = 30_000;
const REPR_CAP_CHARS = 16 * 1024;
/** Pyodide itself takes 30 MB of WebAssembly heap before any user code runs. */
const MIN_MEMORY_MB = 32;
/** Below this the JS heap spends the start-up collecting garbage. */
const MIN_JS_HEAP_MB = 64;

/** The worker's answer to one run: the result's output fields, and how the run ended. */
interface RunReply extends Omit<PythonRunResult, 'durationMs' | 'coldStart'> {
  type: 'result';
  id: number;
  memoryError?: boolean;
  memoryLimitHit: boolean;
  fatal?: boolean;
}

type WorkerMessage = { type: 'ready'; loadMs: number; wasmHeapBytes: number } | { type: 'failed'; message: string } | RunReply;

export interface PythonRunResult {
  stdout: string;
  stderr: string;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  /** repr() of the last expression's value, when the snippet ends with an expression that is not None. */
  result: string | null;
  /** The traceback of an uncaught exception (SystemExit with code 0 is not one). */
  error: string | null;
  durationMs: number;
  /** This call started the worker (Pyodide was loaded for it). */
  coldStart: boolean;
}

/** One Pyodide worker, used by one call at a time. */
class PythonSandbox {
  private worker: Worker | null = null;
  private ready: Promise<Worker> | null = null;
  /** Settles when the last call in line is done (never rejects). */
  private queue: Promise<void> = Promise.resolve();
  private nextId = 1;
  /** Set while a call runs: how to end it when the worker dies under it. */
  private onDeath: ((e: ToolError) => void) | null = null;
  /** Startup timings of the current worker, for metadata and tests. */
  lastLoadMs: number | null = null;

  constructor(private readonly opts: Required<PythonExecutorOptions>) {}

  /** Runs calls one after another; a call cancelled while it waits for its turn ends at once. */
  async run(code: string, stdin: string | undefined, signal: AbortSignal): Promise<PythonRunResult> {
    const previous = this.queue;
    let done!: () => void;
    const mine = new Promise<void>((resolve) => (done = resolve));
    this.queue = previous.then(() => mine);
    try {
      await raceAbort(previous, signal);
      return await this.runNow(code, stdin, signal);
    } finally {
      done();
    }
  }

  async close(): Promise<void> {
    const w = this.worker;
    this.worker = null;
    this.ready = null;
    this.onDeath?.(new ToolError('the Python executor was closed', 'backend'));
    if (w) await w.terminate();
  }

  private start(): Promise<Worker> {
    const { memoryMb, outputCapBytes, startTimeoutMs } = this.opts;
    const worker = new Worker(new URL('./python-worker.mjs', import.meta.url), {
      workerData: { memoryMb, outputCapBytes, reprCapChars: REPR_CAP_CHARS },
      // The JS heap has its own cap (the WebAssembly heap is not part of it).
      resourceLimits: { maxOldGenerationSizeMb: Math.max(memoryMb, MIN_JS_HEAP_MB), maxYoungGenerationSizeMb: 16 },
      env: {}, // none of the service's environment (secrets) reaches the sandbox
      execArgv: [], // no loaders (tsx) needed: the worker is plain JavaScript
      stdout: true, // anything written to the thread's own stdout/stderr is dropped
      stderr: true,
    });
    worker.stdout.resume();
    worker.stderr.resume();
    worker.unref();
    this.worker = worker;
    worker.on('error', (e: unknown) => {
      const error =
        (e as { code?: string })?.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? new ToolError(`memory limit exceeded: the Python worker ran out of its ${Math.max(memoryMb, MIN_JS_HEAP_MB)} MB JavaScript heap`, 'limit')
          : new ToolError(`the Python runtime failed: ${firstLine(e instanceof Error ? e.message : String(e))}`, 'backend');
      this.discard(worker, error);
    });
    worker.on('exit', (code) => this.discard(worker, new ToolError(`the Python worker exited unexpectedly (code ${code})`, 'backend')));

    return new Promise<Worker>((resolve, reject) => {
      const timer = setTimeout(() => {
        cleanup();
        void this.kill(worker);
        reject(new ToolError(`Python did not start within ${Math.round(startTimeoutMs / 1000)} s`, 'backend'));
      }, startTimeoutMs);
      const onMessage = (m: WorkerMessage) => {
        if (m.type === 'ready') {
          cleanup();
          this.lastLoadMs = m.loadMs;
          resolve(worker);
        } else if (m.type === 'failed') {
          cleanup();
          void this.kill(worker);
          reject(new ToolError(`Python could not start: ${firstLine(m.message)}`, 'backend'));
        }
      };
      const onGone = () => {
        cleanup();
        reject(new ToolError('the Python worker exited while starting', 'backend'));
      };
      const cleanup = () => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('exit', onGone);
      };
      worker.on('message', onMessage);
      worker.on('exit', onGone);
    });
  }

  /** Forgets a worker that died or was killed; a call running on it ends with `error`. */
  private discard(worker: Worker, error: ToolError): void {
    if (this.worker !== worker) return;
    this.worker = null;
    this.ready = null;
    this.onDeath?.(error);
  }

  private async kill(worker: Worker): Promise<void> {
    if (this.worker === worker) {
      this.worker = null;
      this.ready = null;
    }
    await worker.terminate();
  }

  private async runNow(code: string, stdin: string | undefined, signal: AbortSignal): Promise<PythonRunResult> {
    const coldStart = this.ready === null;
    if (!this.ready) {
      this.ready = this.start();
      this.ready.catch(() => {});
    }
    const worker = await raceAbort(this.ready, signal);
    if (this.worker !== worker) throw new ToolError('the Python worker exited before the call started', 'backend');

    const { timeoutMs, memoryMb } = this.opts;
    const id = this.nextId++;
    const started = performance.now();
    const reply = await new Promise<RunReply>((resolve, reject) => {
      const timer = setTimeout(() => {
        finish();
        void this.kill(worker);
        reject(new ToolError(`time limit exceeded: the Python code ran longer than ${formatSeconds(timeoutMs)} and was stopped`, 'limit'));
      }, timeoutMs);
      const onAbort = () => {
        finish();
        void this.kill(worker);
        reject(cancelled(signal));
      };
      const onMessage = (m: WorkerMessage) => {
        if (m.type === 'result' && m.id === id) {
          finish();
          resolve(m);
        }
      };
      const finish = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        worker.off('message', onMessage);
        this.onDeath = null;
      };
      this.onDeath = (e) => {
        finish();
        reject(e);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      worker.on('message', onMessage);
      worker.postMessage({ type: 'run', id, code, stdin });
    });
    const durationMs = Math.round(performance.now() - started);

    // A worker whose heap reached the cap, or whose runtime failed, is not used again.
    if (reply.memoryLimitHit || reply.fatal) void this.kill(worker);
    if (reply.memoryLimitHit && (reply.memoryError || reply.fatal)) {
      throw new ToolError(`memory limit exceeded: the Python code needed more than ${memoryMb} MB and was stopped`, 'limit');
    }
    if (reply.fatal) throw new ToolError(`the Python runtime failed: ${firstLine(reply.error ?? 'unknown error')}`, 'backend');
    return {
      stdout: reply.stdout,
      stderr: reply.stderr,
      stdoutTruncated: reply.stdoutTruncated,
      stderrTruncated: reply.stderrTruncated,
      result: reply.result,
      error: reply.error,
      durationMs,
      coldStart,
    };
  }
}

function cancelled(signal: AbortSignal): ToolError {
  const why = signal.reason instanceof Error ? `: ${signal.reason.message}` : '';
  return new ToolError(`the Python call was cancelled${why}`, 'limit');
}

function raceAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(cancelled(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(cancelled(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

function firstLine(s: string): string {
  return s.split('\n', 1)[0];
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}

/** What the model reads: the sections that are not empty. */
function summarise(r: PythonRunResult): string {
  const parts: string[] = [];
  if (r.error) {
    const last = r.error.trimEnd().split('\n').pop() ?? '';
    parts.push(`Python raised an exception (${last}).`);
  } else {
    parts.push('Python ran successfully.');
  }
  if (r.stdout) parts.push(`stdout:\n${r.stdout.replace(/\n$/, '')}`);
  if (r.stderr) parts.push(`stderr:\n${r.stderr.replace(/\n$/, '')}`);
  if (r.result !== null) parts.push(`result: ${r.result}`);
  if (r.error) parts.push(`traceback:\n${r.error.replace(/\n$/, '')}`);
  if (!r.stdout && !r.stderr && r.result === null && !r.error) parts.push('(no output)');
  return parts.join('\n\n');
}

export function pythonExecutorTool(opts: PythonExecutorOptions): PythonExecutorTool {
  if (!(opts.timeoutMs > 0)) throw new Error('python_executor: timeoutMs must be positive');
  if (!(opts.memoryMb >= MIN_MEMORY_MB)) throw new Error(`python_executor: memoryMb must be at least ${MIN_MEMORY_MB}`);
  const sandbox = new PythonSandbox({
    timeoutMs: opts.timeoutMs,
    memoryMb: Math.floor(opts.memoryMb),
    outputCapBytes: opts.outputCapBytes ?? DEFAULT_OUTPUT_CAP,
    startTimeoutMs: opts.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS,
  });
  return {
    name: 'python_executor',
    description:
      'Runs Python 3 code (CPython in a WebAssembly sandbox, standard library only) and returns stdout, stderr, ' +
      'the repr of the last expression, and the traceback if it raised. No network and no access to host files; ' +
      `each call starts from a clean namespace; at most ${formatSeconds(opts.timeoutMs)} and ${Math.floor(opts.memoryMb)} MB per call.`,
    category: 'code',
    version: '1.0.0',
    parameters: {
      type: 'object',
      properties: {
        code: { type: 'string', minLength: 1, maxLength: MAX_CODE_CHARS, description: 'Python source; the value of a final expression is returned.' },
        stdin: { type: 'string', maxLength: MAX_CODE_CHARS, description: 'Text the code reads from standard input (input(), sys.stdin).' },
      },
      required: ['code'],
      additionalProperties: false,
    },
    timeoutMs: opts.timeoutMs + STARTUP_ALLOWANCE_MS,
    costPerUse: 0,
    dangerous: false,
    rateLimitSetting: 'PYTHON_EXECUTOR_RATE_LIMIT',
    retryable: false,
    async run(args: PythonArgs, ctx: ToolContext): Promise<ToolOutput> {
      if (typeof args.code !== 'string' || args.code.trim() === '') throw new ToolError('code must be a non-empty string', 'bad_arguments');
      if (args.code.length > MAX_CODE_CHARS) throw new ToolError(`code is longer than ${MAX_CODE_CHARS} characters`, 'bad_arguments');
      if (args.stdin !== undefined && typeof args.stdin !== 'string') throw new ToolError('stdin must be a string', 'bad_arguments');
      const r = await sandbox.run(args.code, args.stdin, ctx.signal);
      return {
        output: {
          stdout: r.stdout,
          stderr: r.stderr,
          result: r.result,
          error: r.error,
          stdoutTruncated: r.stdoutTruncated,
          stderrTruncated: r.stderrTruncated,
        },
        text: summarise(r),
        metadata: { durationMs: r.durationMs, coldStart: r.coldStart, ...(r.coldStart ? { loadMs: sandbox.lastLoadMs } : {}) },
      };
    },
    close: () => sandbox.close(),
  };
}
