/**
 * Workflows: deterministic code over the runtime's context. All contact with the outside world
 * (model calls, tools, the database) happens inside journaled steps and every event is emitted
 * inside one, so a replay after a crash skips what was done and repeats nothing.
 *
 * One workflow per kind of task (registry.ts): simple, standard, complex and supervisor (a DAG
 * of subtasks), research, template, skill. Whatever the workflow, the LLM_PARTIAL and
 * LLM_OUTPUT events of the agent whose text is the task's result carry `final_answer: true`.
 */
export { runWorkflow } from './run.js';
export { DEFAULT_MAX_ITERATIONS } from './workflow.js';
export type { Prepared, Workflow, WorkflowDeps, WorkflowResult } from './workflow.js';
export { WORKFLOWS, workflowNameOf } from './registry.js';
export type { WorkflowName } from './registry.js';
export { systemPrompt } from './preparation.js';
export { MAX_SUBTASKS, parseSubtasks } from './subtasks.js';
export type { Subtask } from './subtasks.js';
