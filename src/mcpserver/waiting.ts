/**
 * The run-and-wait that submit_task with `wait` and every agent tool share. A wait ends by
 * default after 45 s, inside the 60 s the official SDKs give a request, with the task's id and
 * status (a result, not an error: the task runs on and get_task reads it). A call that carries
 * a progressToken hears each task event and, when none came for a while (a long generation
 * sends only token deltas, which are not reported), a heartbeat, so a client that resets its
 * timeout on progress keeps waiting. Each wait holds one of the caller's concurrent waits.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { TERMINAL_STATUSES, badRequest } from '../kernel/index.js';
import type { McpFacade, SubmittedTask } from './facade.js';
import { readSubmitted, taskResult, type CallContext } from './results.js';

/** How long a waited task may run by default, and at most, before the call answers with its id. */
export const DEFAULT_WAIT_SECONDS = 45;
export const MAX_WAIT_SECONDS = 3600;
/** Longest silence of a waiting call with a progressToken. */
export const HEARTBEAT_MS = 15_000;

/** The `wait` and `timeout_seconds` parameters, `wait` defaulting to `waitByDefault`. */
export function waitProperties(waitByDefault: boolean): Record<string, object> {
  return {
    wait: {
      type: 'boolean',
      description: waitByDefault
        ? 'Wait for the result (default true; progress notifications meanwhile); false: answer with the task id at once'
        : 'Wait for the result (progress notifications meanwhile); default false: answer with the task id at once',
    },
    timeout_seconds: {
      type: 'integer',
      minimum: 1,
      maximum: MAX_WAIT_SECONDS,
      description: `With wait: the longest to wait (default ${DEFAULT_WAIT_SECONDS}); then the task's id and status are returned and it runs on (read it with get_task)`,
    },
  };
}

/** Whether and how long to wait; `timeout_seconds` without waiting is refused rather than ignored. */
export function waitChoice(args: { wait?: boolean; timeout_seconds?: number }, waitByDefault: boolean): { wait: boolean; seconds: number } {
  const wait = args.wait ?? waitByDefault;
  if (!wait && args.timeout_seconds !== undefined) throw badRequest('arguments.timeout_seconds applies only with wait: true');
  return { wait, seconds: args.timeout_seconds ?? DEFAULT_WAIT_SECONDS };
}

const terminal = (status: unknown) => (TERMINAL_STATUSES as readonly unknown[]).includes(status);

/**
 * Submits (once one of the caller's waits is taken, so a refused wait submits nothing), tells
 * the client the task's id, waits up to `seconds` and answers with taskResult.
 */
export async function waitedResult(f: McpFacade, submit: () => Promise<SubmittedTask>, ctx: CallContext, seconds: number): Promise<CallToolResult> {
  const release = ctx.claimWait();
  let heartbeat: NodeJS.Timeout | undefined;
  try {
    const s = await submit();
    const started = Date.now();
    let n = 0;
    const report = (message: string) => {
      if (!ctx.onProgress) return;
      ctx.onProgress({ progress: n++, message });
      clearTimeout(heartbeat);
      heartbeat = setTimeout(() => report(`task ${s.taskId}: still waiting (${Math.round((Date.now() - started) / 1000)} s)`), ctx.heartbeatMs);
      heartbeat.unref();
    };
    report(`task ${s.taskId} submitted`);
    await f.waitForTask(s.taskId, { timeoutMs: seconds * 1000, signal: ctx.signal, onEvent: report });
    clearTimeout(heartbeat);
    const task = await readSubmitted(f, s, ctx.log);
    return taskResult(s, task, terminal(task?.status), seconds);
  } finally {
    clearTimeout(heartbeat);
    release();
  }
}
