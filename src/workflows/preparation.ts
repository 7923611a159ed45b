/**
 * What every workflow starts from: the agents' settings (the task's sampling over the
 * service's, budgets, usage recording), the system prompt, the session's history, the skill,
 * the role and the tools it allows. A task that asked for approval (require_approval) waits
 * for it here, before its first action (no model call, no tool); the agents get the hook that
 * holds the tool calls a tool policy names for a person.
 */
import type { AgentDeps } from '../agents/index.js';
import { AppError, Code, rolePreset, roleTools } from '../kernel/index.js';
import { Budget, type ChatMessage } from '../llm/index.js';
import type { WorkflowContext } from '../runtime/index.js';
import { taskModelSettings, type TaskStart } from '../tasks/index.js';
import { approveTask, toolApprover } from './approval.js';
import { sessionHistory } from './history.js';
import { recordOf } from './usage.js';
import { DEFAULT_AGENT_TIMEOUT_MS, DEFAULT_MAX_ITERATIONS, type BaseSpec, type Prepared, type WorkflowDeps } from './workflow.js';

const DEFAULT_SYSTEM = "You are a helpful, precise assistant. Answer the user's request directly.";

export function systemPrompt(t: Pick<TaskStart, 'context'>): string {
  const ctx = t.context;
  let prompt = typeof ctx.system_prompt === 'string' && ctx.system_prompt ? ctx.system_prompt : DEFAULT_SYSTEM;
  const params = (ctx.prompt_params && typeof ctx.prompt_params === 'object' ? ctx.prompt_params : {}) as Record<string, unknown>;
  // Own keys only: `${constructor}` must stay as written, not become Object's source text.
  prompt = prompt.replace(/\$\{(\w+)\}/g, (m, k: string) => (Object.hasOwn(params, k) ? String(params[k]) : m));
  return prompt;
}

/** Makes the task ready for its workflow; reads the session's history (a journaled step). */
export async function prepare(ctx: WorkflowContext, shared: WorkflowDeps, t: TaskStart): Promise<Prepared> {
  await approveTask(ctx, t, shared.approvals);
  // The owner's tools: the built-in ones and the MCP servers' and OpenAPI documents' they may use.
  const own = shared.toolsFor ? await shared.toolsFor(t.user_id) : shared.tools;
  const deps = own === shared.tools ? shared : { ...shared, tools: own };
  const budget = deps.budgets ? new Budget(deps.budgets) : undefined;
  const recordedHere = new Set<string>();
  const settings = taskModelSettings(t.context);
  const agent: AgentDeps = {
    llm: deps.llm,
    tools: deps.tools,
    parallelism: deps.toolParallelism ?? 1,
    // The task's own sampling settings (context.model_settings) win over the service's.
    maxTokens: settings.maxTokens ?? deps.maxTokens,
    temperature: settings.temperature ?? deps.temperature,
    sampling: { topP: settings.topP, stop: settings.stop, presencePenalty: settings.presencePenalty, frequencyPenalty: settings.frequencyPenalty },
    partialChunkChars: deps.partialChunkChars,
    // AGENT_TIMEOUT_SECONDS: every agent of the task (tool loops and one-call agents) runs on its own clock.
    timeoutMs: deps.agentTimeoutMs ?? DEFAULT_AGENT_TIMEOUT_MS,
    budget,
    onModelCall: deps.usage
      ? async (c) => {
          recordedHere.add(c.step);
          deps.usage!.recordModelCall(recordOf(t, c));
        }
      : undefined,
  };
  const sys: ChatMessage = { role: 'system', content: systemPrompt(t) };
  const hist = await sessionHistory(ctx, deps, t, agent);
  if (hist.summaryCall) budget?.afterCall(undefined, 'history', hist.summaryCall.usage);
  const skill = t.skill ? deps.skills?.get(t.skill.name, t.skill.version) : undefined;
  if (t.skill && !skill) throw new AppError(Code.FailedPrecondition, `skill ${t.skill.name} is not available in this worker`);
  // A skill's role applies unless the task names one.
  const role = rolePreset(t.context.role ?? skill?.role);
  agent.approveTool = toolApprover(ctx, t, role.name, deps.approvals);
  // Tools the operator has not enabled (bash without TOOLS_ENABLE_BASH) are not offered.
  const registered = deps.tools
    ? deps.tools
        .names()
        .map((n) => deps.tools!.get(n)!)
        .filter((x) => x.available !== false)
        .map((x) => ({ name: x.name, dangerous: x.dangerous }))
    : [];
  const allowedTools = roleTools(role, registered);
  // A skill narrows the role's tools to the ones it lists.
  const tools = skill && skill.tools.length ? allowedTools.filter((n) => skill.tools.includes(n)) : allowedTools;
  const base: BaseSpec = {
    tier: skill?.modelTier && !t.model_override && !t.provider_override ? skill.modelTier : t.model_tier,
    model: t.model_override,
    provider: t.provider_override,
    maxIterations: t.max_iterations ?? deps.defaultMaxIterations ?? DEFAULT_MAX_ITERATIONS,
    sessionId: hist.sessionUuid,
    userId: t.user_id,
    taskId: t.task_id,
    allowDangerous: role.allowDangerous,
  };
  return {
    deps,
    t,
    agent,
    budget,
    base,
    sys,
    past: hist.messages,
    user: { role: 'user', content: t.query },
    role,
    tools,
    skill,
    history: { info: hist.info, summaryCall: hist.summaryCall },
    recordedHere,
  };
}
