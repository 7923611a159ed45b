/**
 * What a workflow is: a function from the prepared task (its agents' settings, history, role
 * and tools) to its answer and the outputs of every agent that worked on it. The registry
 * (registry.ts) names one per kind of task.
 */
import type { AgentDeps, AgentOutput, AgentSpec, ModelCall } from '../agents/index.js';
import type { RolePreset } from '../kernel/index.js';
import type { Budget, BudgetLimits, ChatMessage, LlmProvider, UsageStore } from '../llm/index.js';
import type { WorkflowContext } from '../runtime/index.js';
import type { SessionDirectory } from '../sessions/index.js';
import type { Skill, SkillCatalog } from '../skills/index.js';
import type { TaskStart, TaskStore } from '../tasks/index.js';
import type { TemplateCatalog } from '../templates/index.js';
import type { ToolRegistry } from '../tools/index.js';
import type { ApprovalSettings } from './approval.js';
import type { ReviewStore } from './review-store.js';
import type { SwarmRuntime } from './swarm-state.js';

export interface WorkflowDeps {
  tasks: TaskStore;
  sessions: SessionDirectory;
  llm: LlmProvider;
  tools?: ToolRegistry;
  /**
   * `tools` with what the task's owner may use besides (the operator's MCP servers, the
   * owner's MCP servers and OpenAPI documents); absent: `tools` for every task.
   */
  toolsFor?: (userId: string | undefined) => Promise<ToolRegistry>;
  /** Where model calls are recorded (usage and model_breakdown are read back from it). */
  usage?: UsageStore;
  partialChunkChars: number;
  maxTokens: number;
  temperature: number;
  synthBypassSingle: boolean;
  history: { windowMessages: number; debugWindowMessages: number; triggerRatio: number };
  /** TOOL_PARALLELISM */
  toolParallelism?: number;
  /** ENABLE_TOOL_SELECTION: a subtask's agent gets only the tools the planner named for it. */
  enableToolSelection?: boolean;
  budgets?: BudgetLimits;
  /**
   * AGENT_TIMEOUT_SECONDS in ms: the longest one agent's execution may take (a mode's agent,
   * a swarm agent, a catalogue agent); it then ends with a timeout error. Absent: 600 s.
   */
  agentTimeoutMs?: number;
  /** Tool rounds when the task names no max_iterations. */
  defaultMaxIterations?: number;
  /** Workflow templates (`template`) and skills (`skill`). */
  templates?: TemplateCatalog;
  skills?: SkillCatalog;
  /** APPROVAL_TIMEOUT_SECONDS and the tool policies of config/features.yaml. */
  approvals?: ApprovalSettings;
  /** Where plan reviews are kept (review-store.ts); without it a task asking for review fails. */
  reviews?: ReviewStore;
  /** The swarm's mailboxes, board and limits (swarm-state.ts); without it a swarm task fails. */
  swarm?: SwarmRuntime;
}

/** AGENT_TIMEOUT_SECONDS's default, in ms. */
export const DEFAULT_AGENT_TIMEOUT_MS = 600_000;

/** Tool rounds of an agent when neither the task nor the service names a number. */
export const DEFAULT_MAX_ITERATIONS = 10;

/** What every agent of a task shares: its model settings, its session and its role's rights. */
export type BaseSpec = Pick<AgentSpec, 'tier' | 'model' | 'provider' | 'maxIterations' | 'sessionId' | 'userId' | 'taskId' | 'allowDangerous'>;

/** A task made ready for its workflow (preparation.ts). */
export interface Prepared {
  deps: WorkflowDeps;
  t: TaskStart;
  agent: AgentDeps;
  budget?: Budget;
  base: BaseSpec;
  /** The task's system prompt, the session's earlier turns as the task sees them, and its request. */
  sys: ChatMessage;
  past: ChatMessage[];
  user: ChatMessage;
  role: RolePreset;
  /** The tools the task's agents may call: the role's, narrowed by a skill's list. */
  tools: string[];
  skill?: Skill;
  history: { info: Record<string, unknown>; summaryCall?: ModelCall };
  /** Steps whose model call this activation already queued to the usage store. */
  recordedHere: Set<string>;
}

export interface WorkflowResult {
  /** The answer (the task's result) and the model that gave it. */
  final: { text: string; model: string; provider: string };
  /** Every agent's output, for usage, model_breakdown and tool_calls. */
  outputs: AgentOutput[];
  /** metadata.agents_used */
  agentsUsed: number;
  /** The workflow's own metadata (e.g. `{template: ...}`), merged into the task's. */
  metadata?: Record<string, unknown>;
  /** Cost (USD) beyond the model calls' (a catalogue agent's tool), added to the task's usage. */
  costUsd?: number;
}

/** A workflow body: deterministic code between journaled steps. Failures throw. */
export type Workflow = (ctx: WorkflowContext, p: Prepared) => Promise<WorkflowResult>;
