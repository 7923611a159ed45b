/**
 * Agents: the agent loop (model turns and tool calls, each a journaled step of its context, so
 * a replay after a crash pays for no recorded model call and runs no recorded tool call again),
 * the contexts it runs in, and groups of parallel work that fail as one (the first failure
 * aborts the rest of the group, which is awaited before the failure propagates).
 *
 * Budgets (llm's `Budget`) are checked before every model call (`Budget.beforeCall`). A tool call cut off by a
 * crash runs again only when its tool is `retryable`; otherwise the model is told it was
 * interrupted (it may have had effects). An agent whose answer is the task's result marks its
 * LLM_PARTIAL and LLM_OUTPUT events `final_answer: true` (AgentSpec.finalAnswer). The calls
 * of a turn that the workflow's hook holds for a person (AgentDeps.approveTool) are decided,
 * one after another, before any call of the turn runs; a refused call is not run and the
 * model is told why. AgentDeps.timeoutMs (AGENT_TIMEOUT_SECONDS) bounds one agent's execution
 * (timeout.ts): its deadline survives a re-activation, and it fails with AgentTimedOut when it passes.
 */
export { EphemeralContext, scopedContext } from './context.js';
export type { AgentContext } from './context.js';
export { parallelGroup, runLimited } from './parallel.js';
export type { ParallelGroup } from './parallel.js';
export { DeltaCoalescer } from './coalescer.js';
export { ZERO_USAGE } from './spec.js';
export type { AgentDeps, AgentOutput, AgentSpec, ModelCall, ToolApproval, ToolCallProposal } from './spec.js';
export { modelTurn } from './model-turn.js';
export type { Turn, TurnOptions } from './model-turn.js';
export { OBSERVATION_EVENT_CHARS, OBSERVATION_MODEL_CHARS, llmToolsOf } from './tool-step.js';
export { runAgentLoop } from './loop.js';
export { AgentTimedOut, startAgentClock } from './timeout.js';
export type { AgentClock } from './timeout.js';
export { createAgentCatalogue, loadAgentCatalogue } from './catalogue.js';
export type { AgentCatalogue } from './catalogue.js';
export { AGENT_ID_RE, AGENT_PROPERTY_TYPES, AgentFileError, parseAgentFile } from './catalogue-parse.js';
export type { AgentDefinition, AgentInputSchema, AgentItems, AgentProperty, AgentPropertyType } from './catalogue-parse.js';
export { INPUT_VALIDATION_FAILED, checkAgentInput, validateAgentInput } from './agent-input.js';
export type { ToolArgumentCheck } from './agent-input.js';
