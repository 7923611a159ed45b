/**
 * What an agent is given (its spec, the services it calls) and what it gives back (its answer
 * and the record of every model call it made).
 */
import type { Tier } from '../kernel/index.js';
import type { Budget, ChatMessage, LlmProvider, LlmRequest, LlmUsage } from '../llm/index.js';
import type { ToolRegistry } from '../tools/index.js';

/** What an agent produced: its answer, the model that gave it, and the usage of every call. */
export interface AgentOutput {
  text: string;
  model: string;
  provider: string;
  usage: LlmUsage;
  /** One entry per model call, for cost records and model_breakdown. */
  calls: ModelCall[];
  toolCalls: number;
}

export interface ModelCall {
  agentId: string;
  step: string;
  /** The tier the call asked for (the task's, or a subtask's, skill's or template step's own). */
  tier?: Tier;
  model: string;
  provider: string;
  usage: LlmUsage;
  cacheHit?: boolean;
  /** Similarity of the cached request (1 = the same). */
  cacheScore?: number;
}

export interface AgentDeps {
  llm: LlmProvider;
  tools?: ToolRegistry;
  /** Tool calls of one turn run this many at a time (TOOL_PARALLELISM). */
  parallelism: number;
  maxTokens: number;
  temperature: number;
  /** top_p, stop and penalties for every model call of these agents (a task's `context.model_settings`). */
  sampling?: Pick<LlmRequest, 'topP' | 'stop' | 'presencePenalty' | 'frequencyPenalty'>;
  /** LLM_PARTIAL coalescing: at most this many characters per event. */
  partialChunkChars: number;
  /** How long a delta may wait for more text before it is sent (the 50 ms liveness bound). */
  partialFlushMs?: number;
  budget?: Budget;
  /**
   * AGENT_TIMEOUT_SECONDS in ms: one agent's execution (the tool loop, or a one-call agent's
   * model call) ends with AgentTimedOut after it (timeout.ts). Absent: no limit.
   */
  timeoutMs?: number;
  /** Called once per model call after it is journaled-to-be (cost records). */
  onModelCall?: (c: ModelCall) => Promise<void>;
  /**
   * Asked before a tool call runs (the workflow's tool policies): undefined lets it run as
   * asked. It may wait for a person (the workflow passivates inside it), so it is called only
   * while the call's step is not recorded, and must be deterministic per `step`.
   */
  approveTool?: (call: ToolCallProposal) => Promise<ToolApproval | undefined>;
}

/** A tool call about to run, as a person is asked about it. */
export interface ToolCallProposal {
  tool: string;
  arguments: unknown;
  callId: string;
  agentId: string;
  /** The call's journal step (unique within the workflow). */
  step: string;
}

/** A person's answer: run (with replaced arguments when given), or do not run and tell the model why. */
export type ToolApproval = { approved: true; arguments?: Record<string, unknown> } | { approved: false; message: string };

export interface AgentSpec {
  agentId: string;
  messages: ChatMessage[];
  tier: Tier;
  model?: string;
  provider?: string;
  /** Tools this agent may call (the role's allowlist); empty: a plain model call. */
  tools: string[];
  /** The role lists a dangerous tool (developer: bash). */
  allowDangerous?: boolean;
  maxIterations: number;
  /** The session's UUID, for workspace file tools. */
  sessionId?: string;
  userId?: string;
  taskId: string;
  /** Prefix of this agent's journal steps (unique within the workflow). */
  stepPrefix: string;
  /**
   * This agent's answer is the task's result: its LLM_PARTIAL and LLM_OUTPUT events carry
   * `final_answer: true`, which is how a reader of the event stream (the `/v1` layer) tells the
   * answer's text from every other agent's.
   */
  finalAnswer?: boolean;
  /**
   * Before each model turn of the tool loop (a swarm agent reads its mailbox here): messages
   * added to the conversation first. It must give the same messages on a replay (a journaled step).
   */
  beforeTurn?: (iteration: number) => Promise<ChatMessage[]>;
  /** Inside the agent's first step, before AGENT_STARTED (e.g. DEPENDENCY_SATISFIED). */
  onStart?: () => void;
  /** Inside the agent's last step, after AGENT_COMPLETED. */
  onComplete?: () => void;
}

export const ZERO_USAGE: LlmUsage = { inputTokens: 0, outputTokens: 0, totalTokens: 0, costUsd: 0 };

export const addUsage = (a: LlmUsage, b: LlmUsage): LlmUsage => ({
  inputTokens: a.inputTokens + b.inputTokens,
  outputTokens: a.outputTokens + b.outputTokens,
  totalTokens: a.totalTokens + b.totalTokens,
  costUsd: a.costUsd + b.costUsd,
});
