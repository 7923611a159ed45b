/**
 * The four task tools: submit_task (optionally waiting for the result, with progress),
 * get_task, list_tasks and cancel_task. Their arguments are the REST API's fields under the same
 * names; each call is checked against the schema it lists, then by the same code as the REST
 * route, and answers with the REST route's JSON.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { MODES } from '../kernel/index.js';
import { checkArguments } from './arguments.js';
import type { McpFacade, TaskSubmission } from './facade.js';
import { jsonResult, submittedResult, type ToolEntry } from './results.js';
import { waitChoice, waitedResult, waitProperties } from './waiting.js';

const taskId = { type: 'string', description: 'The task id (task_id of submit_task or list_tasks)' };

const SUBMIT: Tool['inputSchema'] = {
  type: 'object',
  properties: {
    query: { type: 'string', minLength: 1, maxLength: 100_000, description: 'What the task should do, in natural language' },
    mode: { type: 'string', enum: [...MODES], description: 'The workflow; default: chosen from the query' },
    session_id: { type: 'string', maxLength: 255, description: 'Session for multi-turn use (UUID or your own id); generated when omitted' },
    context: {
      type: 'object',
      additionalProperties: true,
      description:
        'The REST context object: research options (force_research: true, research_strategy: quick|standard|deep|academic, ' +
        'iterative_research_enabled, iterative_max_iterations), role, system_prompt, template, skill_version, agent with agent_input, ...',
    },
    ...waitProperties(false),
  },
  required: ['query'],
  additionalProperties: false,
};

const GET: Tool['inputSchema'] = { type: 'object', properties: { task_id: taskId }, required: ['task_id'], additionalProperties: false };

const LIST: Tool['inputSchema'] = {
  type: 'object',
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: 100, description: 'Default 20' },
    offset: { type: 'integer', minimum: 0, maximum: 1_000_000_000, description: 'Default 0' },
    status: { type: 'string', description: 'Only tasks in this status: QUEUED, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT or PAUSED' },
  },
  additionalProperties: false,
};

const CANCEL: Tool['inputSchema'] = {
  type: 'object',
  properties: { task_id: taskId, reason: { type: 'string', maxLength: 1000, description: 'Why (recorded with the task)' } },
  required: ['task_id'],
  additionalProperties: false,
};

type SubmitArgs = TaskSubmission & { wait?: boolean; timeout_seconds?: number };

export function taskTools(f: McpFacade): ToolEntry[] {
  return [
    {
      tool: {
        name: 'submit_task',
        title: 'Submit a task',
        description:
          'Runs a task (a question or a job for the agents; research with context.force_research or context.research_strategy). ' +
          'Returns {task_id, workflow_id, status, ...} at once, or with wait: true the finished task with its result as text ' +
          '(progress notifications as its events arrive when the call carries a progressToken). A task still running when ' +
          'timeout_seconds pass is returned by id and status and runs on; read it later with get_task.',
        inputSchema: SUBMIT,
      },
      async call(args, ctx) {
        const { wait, timeout_seconds, ...submission } = checkArguments<SubmitArgs>(SUBMIT, args);
        const choice = waitChoice({ wait, timeout_seconds }, false);
        if (choice.wait) return waitedResult(f, () => f.submitTask(submission), ctx, choice.seconds);
        return submittedResult(f, await f.submitTask(submission), ctx.log);
      },
    },
    {
      tool: {
        name: 'get_task',
        title: 'Read a task',
        description: 'One of your tasks as GET /api/v1/tasks/{id} shows it: status, result (once completed), error, usage, timestamps.',
        inputSchema: GET,
        annotations: { readOnlyHint: true },
      },
      async call(args) {
        const { task_id } = checkArguments<{ task_id: string }>(GET, args);
        return jsonResult(await f.getTask(task_id));
      },
    },
    {
      tool: {
        name: 'list_tasks',
        title: 'List tasks',
        description: 'Your tasks, newest first, as GET /api/v1/tasks lists them: {tasks: [{task_id, query, status, mode, ...}], total_count}.',
        inputSchema: LIST,
        annotations: { readOnlyHint: true },
      },
      async call(args) {
        const q = checkArguments<{ limit?: number; offset?: number; status?: string }>(LIST, args);
        return jsonResult(await f.listTasks({ limit: q.limit ?? 20, offset: q.offset ?? 0, status: q.status || undefined }));
      },
    },
    {
      tool: {
        name: 'cancel_task',
        title: 'Cancel a task',
        description: 'Cancels one of your tasks: {success, message, task_id}; an error when the task has already ended.',
        inputSchema: CANCEL,
        annotations: { destructiveHint: true, idempotentHint: true },
      },
      async call(args) {
        const { task_id, reason } = checkArguments<{ task_id: string; reason?: string }>(CANCEL, args);
        return jsonResult(await f.cancelTask(task_id, reason ?? ''));
      },
    },
  ];
}
