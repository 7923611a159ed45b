/**
 * The shape of one MCP tool of this server (its listing and its call) and the results the
 * calls return: JSON as structuredContent with the same JSON (or the task's answer) as text,
 * failures as `isError` results carrying the message. A task once submitted is never reported
 * as a failure because reading it back failed: the client would retry and submit it twice, so
 * it gets the task's id and a queued status from the submission instead, and polls get_task.
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../kernel/index.js';
import type { McpFacade, SubmittedTask, TaskJson } from './facade.js';

/** One progress notification: `progress` grows with each one of a call. */
export interface TaskProgress {
  progress: number;
  message: string;
}

/** What a call gets besides its arguments. */
export interface CallContext {
  /**
   * Aborted when the client disconnects (its HTTP request closes). A `notifications/cancelled`
   * cannot abort it: this server is stateless, so the notification arrives in a request of its
   * own, at a fresh server that knows nothing of this call.
   */
  signal: AbortSignal;
  /** Set when the client asked for progress (a progressToken in `_meta`). */
  onProgress?: (p: TaskProgress) => void;
  /** Takes one of the caller's concurrent waits (a limit error when none is left); returns its release. */
  claimWait: () => () => void;
  /** Longest silence while a call waits with a progressToken: a heartbeat notification fills it. */
  heartbeatMs: number;
  log: Logger;
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

/** What the submission itself tells of a task: its ids, queued. */
export function submittedJson(s: SubmittedTask): TaskJson {
  return { task_id: s.taskId, workflow_id: s.workflowId, status: 'TASK_STATUS_QUEUED', session_id: s.sessionId };
}

/** The submitted task as the caller reads it now, or undefined (logged) when it cannot be read. */
export async function readSubmitted(f: McpFacade, s: SubmittedTask, log: Logger): Promise<TaskJson | undefined> {
  try {
    return await f.getTask(s.taskId);
  } catch (err) {
    log.warn({ err, task_id: s.taskId }, 'mcp: submitted task not readable; answering with its submission');
    return undefined;
  }
}

const unreadable = (s: SubmittedTask) =>
  jsonResult(
    submittedJson(s),
    `Task ${s.taskId} was submitted; its status cannot be read right now: read it with get_task. ${JSON.stringify(submittedJson(s))}`,
  );

/** A task just submitted, as it is now. */
export async function submittedResult(f: McpFacade, s: SubmittedTask, log: Logger): Promise<CallToolResult> {
  const task = await readSubmitted(f, s, log);
  return task ? jsonResult(task) : unreadable(s);
}

/**
 * A waited task as a result: its answer as text once COMPLETED; an error result naming the
 * status and error once it failed, was cancelled or timed out; the task JSON with a note when
 * the wait ended first (the task runs on: get_task reads it later).
 */
export function taskResult(s: SubmittedTask, task: TaskJson | undefined, finished: boolean, waitedSeconds: number): CallToolResult {
  if (!task) return unreadable(s);
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
