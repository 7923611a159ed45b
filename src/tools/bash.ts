/**
 * `bash`: runs a shell command in the session's workspace folder.
 *
 * THIS IS NOT A SANDBOX. The command runs as the service's own user, on the service's host,
 * with that user's file system access and network. The workspace folder is only its working
 * directory and HOME: nothing stops `cd /`, reading files the service user can read, or
 * connecting anywhere. What the tool does limit:
 * - the environment: PATH, HOME (the workspace folder) and LANG only, so the service's secrets
 *   (database URL, API keys, JWT secret...) in `process.env` are not handed down;
 * - stdin is closed; stdout and stderr are each kept up to `maxOutputBytes` (marked truncated,
 *   the rest is read and dropped);
 * - time: the command runs in its own process group (a new session), and the whole group gets
 *   SIGKILL at `timeoutMs` (a normal result with `timed_out: true`), when the call is aborted
 *   (`ctx.signal`), and when the shell exits (background processes do not outlive the call).
 *   A process that leaves the group on purpose (setsid) escapes this.
 *
 * Therefore the tool is `dangerous` (never listed, never executed directly through the API), is
 * meant only for the `developer` role, and is off unless the operator sets TOOLS_ENABLE_BASH=1:
 * disabled, every call fails with `not_configured`.
 */
import { spawn } from 'node:child_process';
import { type Workspace } from '../workspace/index.js';
import { type Tool, type ToolContext, ToolError, type ToolOutput } from './tool.js';

export interface BashOptions {
  /** TOOLS_ENABLE_BASH: when false every call fails with `not_configured`. */
  enabled: boolean;
  /** Whose session folders are the commands' working directories. */
  workspace: Workspace;
  /** Longest a command may run before its process group is killed. */
  timeoutMs: number;
  /** Cap of stdout and of stderr, each. */
  maxOutputBytes: number;
}

export interface BashArgs extends Record<string, unknown> {
  command: string;
}

export const BASH_DISABLED_MESSAGE = 'bash is disabled: set TOOLS_ENABLE_BASH=1 to allow it for the developer role';
const BASH_NO_SESSION_MESSAGE = 'bash needs a session (its workspace is the working directory): submit the task with a session_id';
const MAX_COMMAND_CHARS = 10_000;
/** Added to the tool's declared time limit so that its own timer (a `timed_out` result) fires first. */
const KILL_GRACE_MS = 5_000;
/** How long output pipes held open by escaped processes are waited for after the shell exits. */
const DRAIN_MS = 2_000;
const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** Keeps the first `cap` bytes of a stream, counting the rest. */
class Capture {
  private chunks: Buffer[] = [];
  private kept = 0;
  truncated = false;
  constructor(private readonly cap: number) {}
  push(chunk: Buffer): void {
    const room = this.cap - this.kept;
    if (chunk.length > room) this.truncated = true;
    if (room <= 0) return;
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.chunks.push(part);
    this.kept += part.length;
  }
  text(): string {
    // stream: a character cut at the cap is dropped rather than shown as U+FFFD.
    return new TextDecoder('utf-8').decode(Buffer.concat(this.chunks), { stream: this.truncated });
  }
}

interface RunResult {
  exitCode: number | null;
  signal: string | null;
  stdout: Capture;
  stderr: Capture;
  timedOut: boolean;
}

function cancelled(signal: AbortSignal): ToolError {
  const why = signal.reason instanceof Error ? `: ${signal.reason.message}` : '';
  return new ToolError(`the bash command was cancelled${why}`, 'limit');
}

function runCommand(command: string, cwd: string, opts: BashOptions, signal: AbortSignal): Promise<RunResult> {
  if (signal.aborted) return Promise.reject(cancelled(signal));
  return new Promise<RunResult>((resolve, reject) => {
    const env = { PATH: process.env.PATH || DEFAULT_PATH, HOME: cwd, LANG: 'C.UTF-8' };
    const child = spawn('/bin/bash', ['-c', command], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const stdout = new Capture(opts.maxOutputBytes);
    const stderr = new Capture(opts.maxOutputBytes);
    child.stdout.on('data', (c: Buffer) => stdout.push(c));
    child.stderr.on('data', (c: Buffer) => stderr.push(c));
    let timedOut = false;
    let settled = false;
    let drainTimer: NodeJS.Timeout | undefined;

    const killGroup = () => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // ESRCH: the group is gone already
      }
    };
    const cleanup = () => {
      settled = true;
      clearTimeout(timer);
      clearTimeout(drainTimer);
      signal.removeEventListener('abort', onAbort);
    };
    const onAbort = () => {
      killGroup();
      if (settled) return;
      cleanup();
      child.stdout.destroy();
      child.stderr.destroy();
      reject(cancelled(signal));
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, opts.timeoutMs);
    signal.addEventListener('abort', onAbort, { once: true });

    child.on('error', (err) => {
      killGroup();
      if (settled) return;
      cleanup();
      reject(new ToolError(`bash could not be started: ${err.message}`, 'backend'));
    });
    child.on('exit', () => {
      // Background processes of the command do not outlive the call; a process that left the
      // group and still holds the pipes is not waited for longer than DRAIN_MS.
      killGroup();
      drainTimer = setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
      }, DRAIN_MS);
    });
    child.on('close', (code, sig) => {
      if (settled) return;
      cleanup();
      resolve({ exitCode: code, signal: sig, stdout, stderr, timedOut });
    });
  });
}

export function bashTool(opts: BashOptions): Tool<BashArgs> {
  return {
    name: 'bash',
    available: opts.enabled,
    description:
      "Run a bash command in the session's workspace folder (its working directory and HOME) and return its exit code, stdout and stderr. stdin is closed; the command is killed at the time limit.",
    category: 'code',
    version: '1.0.0',
    parameters: {
      type: 'object',
      properties: {
        command: { type: 'string', description: 'The command, run with /bin/bash -c', minLength: 1, maxLength: MAX_COMMAND_CHARS },
      },
      required: ['command'],
      additionalProperties: false,
    },
    timeoutMs: opts.timeoutMs + KILL_GRACE_MS,
    costPerUse: 0,
    dangerous: true,
    retryable: false,
    async run(args, ctx: ToolContext): Promise<ToolOutput> {
      if (!opts.enabled) throw new ToolError(BASH_DISABLED_MESSAGE, 'not_configured');
      const command = args.command;
      if (typeof command !== 'string' || !command.trim()) throw new ToolError('command is required', 'bad_arguments');
      if (command.length > MAX_COMMAND_CHARS) throw new ToolError(`command is longer than ${MAX_COMMAND_CHARS} characters`, 'bad_arguments');
      if (!ctx.sessionId) throw new ToolError(BASH_NO_SESSION_MESSAGE, 'bad_arguments');
      let cwd: string;
      try {
        cwd = await opts.workspace.ensureSessionDir(ctx.sessionId);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException)?.code;
        throw new ToolError(code ? `workspace error (${code})` : `workspace error: ${(err as Error).message}`, 'backend');
      }
      const r = await runCommand(command, cwd, opts, ctx.signal);
      const out = r.stdout.text();
      const err = r.stderr.text();
      const status = r.timedOut
        ? `timed out after ${opts.timeoutMs / 1000}s (killed)`
        : r.exitCode !== null
          ? `exit code ${r.exitCode}`
          : `killed by ${r.signal}`;
      const section = (name: string, text: string, truncated: boolean) =>
        text || truncated ? `\n${name}:\n${text}${truncated ? `\n[${name} truncated at ${opts.maxOutputBytes} bytes]` : ''}` : '';
      return {
        output: {
          exit_code: r.exitCode,
          signal: r.signal,
          stdout: out,
          stderr: err,
          timed_out: r.timedOut,
          stdout_truncated: r.stdout.truncated,
          stderr_truncated: r.stderr.truncated,
        },
        text: `${status}${section('stdout', out, r.stdout.truncated)}${section('stderr', err, r.stderr.truncated)}`,
      };
    },
  };
}
