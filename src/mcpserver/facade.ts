/**
 * What the MCP server offers, as one interface bound to one caller: tasks (submit, wait, read,
 * list, cancel), the agent catalogue and the tools the caller may run. The gateway implements
 * it over the same code its REST routes call (gateway/mcp-facade.ts), so the MCP surface cannot
 * drift from the API: same validation, same ownership rule, same JSON shapes. Failures are
 * thrown as kernel AppErrors whose public message the server hands to the client.
 */

/** A task submission: the fields of POST /api/v1/tasks the MCP tool offers. */
export interface TaskSubmission {
  query: string;
  mode?: string;
  session_id?: string;
  /** The REST `context` (research options such as force_research and research_strategy live here). */
  context?: Record<string, unknown>;
}

export interface SubmittedTask {
  taskId: string;
  workflowId: string;
  sessionId: string;
}

export interface WaitOptions {
  timeoutMs: number;
  /** Stops the wait (the client went away); the task runs on. */
  signal: AbortSignal;
  /** Hears each of the task's events (but token deltas), as one line of text. */
  onEvent?: (message: string) => void;
}

/** A task as GET /api/v1/tasks/{id} shows it (task_id, workflow_id, status, result, error, ...). */
export type TaskJson = Record<string, unknown> & { task_id: string; status: string };

/** A catalogue agent as GET /api/v1/agents lists it (input_schema exactly as listed there). */
export interface McpAgent {
  id: string;
  name: string;
  description: string;
  tool: string;
  cost_per_call: number;
  input_schema: { required: string[]; properties: Record<string, object> };
}

/** A tool the caller may run, as GET /api/v1/tools lists it. */
export interface McpToolInfo {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** One tool execution: `result` as POST /api/v1/tools/{name}/execute answers it. */
export interface ToolRun {
  success: boolean;
  error: string | null;
  text: string;
  result: Record<string, unknown>;
}

export interface McpFacade {
  /** Submits a task as the caller (checked as POST /api/v1/tasks checks it). */
  submitTask(s: TaskSubmission): Promise<SubmittedTask>;
  /**
   * Returns once the caller's task has ended, the time ran out or the wait was stopped,
   * reporting the task's events meanwhile; the caller reads the task afterwards.
   */
  waitForTask(taskId: string, o: WaitOptions): Promise<void>;
  /** The caller's task; another user's is `Task not found` (or forbidden), never its data. */
  getTask(taskId: string): Promise<TaskJson>;
  listTasks(q: { limit: number; offset: number; status?: string }): Promise<{ tasks: Record<string, unknown>[]; total_count: number }>;
  cancelTask(taskId: string, reason: string): Promise<{ success: boolean; message: string; task_id: string }>;
  agents(): readonly McpAgent[];
  /** Runs a catalogue agent as the caller's task (input checked as POST /api/v1/agents/{id} checks it). */
  runAgent(agentId: string, input: Record<string, unknown>, o?: { sessionId?: string }): Promise<SubmittedTask>;
  tools(): Promise<readonly McpToolInfo[]>;
  /** Runs a tool; its own failures are a result (`success: false`), bad arguments are thrown (naming the field). */
  executeTool(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<ToolRun>;
}
