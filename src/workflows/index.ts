/**
 * Workflows: deterministic code over the runtime's context. All contact with the outside world
 * (model calls, tools, the database) happens inside journaled steps and every event is emitted
 * inside one, so a replay after a crash skips what was done and repeats nothing.
 *
 * One workflow per kind of task (registry.ts): simple, standard, complex and supervisor (a DAG
 * of subtasks), research, template, skill. Whatever the workflow, the LLM_PARTIAL and
 * LLM_OUTPUT events of the agent whose text is the task's result carry `final_answer: true`.
 *
 * Plan review (review-*.ts): a research task asking for review waits for a person after its
 * plan (a durable wait: it holds no worker); the ReviewService serves the review's feedback
 * rounds and approval to the gateway.
 */
export { runWorkflow } from './run.js';
export { DEFAULT_MAX_ITERATIONS } from './workflow.js';
export type { Prepared, Workflow, WorkflowDeps, WorkflowResult } from './workflow.js';
export { WORKFLOWS, workflowNameOf } from './registry.js';
export type { WorkflowName } from './registry.js';
export { systemPrompt } from './preparation.js';
export { MAX_SUBTASKS, parseSubtasks } from './subtasks.js';
export type { Subtask } from './subtasks.js';
export { ReviewStore } from './review-store.js';
export { MAX_FEEDBACK_BYTES, REVIEW_NOT_FOUND, ReviewService, ReviewUpstreamError } from './review-service.js';
export type { FeedbackResult, ReviewServiceDeps, ReviewView } from './review-service.js';
export { MAX_REVIEW_ROUNDS } from './review-text.js';
export { SWARM_LEAD, SWARM_SUPERVISOR, SwarmFailed } from './swarm-state.js';
export type { SwarmRuntime } from './swarm-state.js';
