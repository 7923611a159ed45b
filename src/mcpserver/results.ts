/**
 * The shape of one MCP tool of this server (its listing and its call) and the results the
 * calls return: JSON as structuredContent with the same JSON (or the task's answer) as text,
 * failures as `isError` results carrying the message, and the run-and-wait that submit_task
 * with `wait` and every agent tool share.
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { McpFacade, SubmittedTask, TaskJson, TaskProgress } from './facade.js';

/** How long a waited task may run by default, and at most, before the call answers with its id. */
export const DEFAULT_WAIT_SECONDS = 300;
export const MAX_WAIT_SECONDS = 3600;

/** What a call gets besides its arguments. */
export interface CallContext {
  /** Aborted when the client cancels the call or goes away. */
  signal: AbortSignal;
  /** Set when the client asked for progress (a progressToken in `_meta`). */
  onProgress?: (p: TaskProgress) => void;
}

export interface ToolEntry {
  tool: Tool;
  call(args: Record<string, unknown>, ctx: CallContext): Promise<CallToolResult>;
}

export function jsonResult(json: Record<string, unknown>, text = JSON.stringify(json)): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: json };
}

export function errorResult(message: string, json?: Record<string, unknown>): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }], ...(json ? { structuredContent: json } : {}) };
}

/**
 * A waited task as a result: its answer as text once COMPLETED; an error result naming the
 * status and error once it failed, was cancelled or timed out; the task JSON with a note when
 * the wait ended first (the task runs on: get_task reads it later).
 */
export function taskResult(task: TaskJson, finished: boolean, waitedSeconds: number): CallToolResult {
  if (!finished) {
    return jsonResult(
      task,
      `Task ${task.task_id} is ${task.status} after ${waitedSeconds} s of waiting; it runs on: read it with get_task. ${JSON.stringify(task)}`,
    );
  }
  if (task.status === 'TASK_STATUS_COMPLETED') return jsonResult(task, typeof task.result === 'string' && task.result ? task.result : JSON.stringify(task));
  const error = typeof task.error === 'string' && task.error ? `: ${task.error}` : '';
  return errorResult(`Task ${task.task_id} ended ${task.status}${error}`, task);
}

/** Waits for a submitted task (telling the client its id first) and answers with taskResult. */
export async function waitedResult(f: McpFacade, s: SubmittedTask, ctx: CallContext, waitSeconds: number): Promise<CallToolResult> {
  ctx.onProgress?.({ progress: 0, message: `task ${s.taskId} submitted` });
  const { task, finished } = await f.waitForTask(s.taskId, { timeoutMs: waitSeconds * 1000, signal: ctx.signal, onProgress: ctx.onProgress });
  return taskResult(task, finished, waitSeconds);
}
