/**
 * Workflow definitions. A workflow is deterministic code between journaled steps: all
 * contact with the outside world (model calls, tools, the database) happens inside
 * ctx.step(), and every event is emitted inside a step, so replay after a crash skips what
 * was done and repeats nothing.
 *
 * simple: one model call, no tools.
 * standard: one agent with a tool loop (the role's tools, up to max_iterations rounds).
 * complex: a planner decomposes the request into a DAG of subtasks (id, description,
 *   dependencies, required tools, model tier); each runs as a tool-loop agent once its
 *   dependencies finished (DEPENDENCY_SATISFIED), at most max_concurrent_agents at a time;
 *   a synthesizer combines the results (skipped for a single result when
 *   WORKFLOW_SYNTH_BYPASS_SINGLE).
 * supervisor: complex, run by a supervisor that recruits a team (TEAM_RECRUITED), assigns
 *   roles (ROLE_ASSIGNED) and delegates (DELEGATION), reports progress (TEAM_STATUS) and
 *   retires the team (TEAM_RETIRED).
 */
import {
  Budget,
  allOrStop,
  modelTurn,
  runAgentLoop,
  scopedContext,
  type AgentDeps,
  type AgentOutput,
  type AgentSpec,
  type BudgetLimits,
  type ModelCall,
} from '../agents/index.js';
import { AppError, Code, isTier, rolePreset, roleTools, type Tier } from '../kernel/index.js';
import type { ChatMessage, LlmProvider, LlmUsage, ModelCallRecord, UsageStore } from '../llm/index.js';
import type { WorkflowContext } from '../runtime/index.js';
import { applyWindow, loadTurns, summaryPrompt, type SessionDirectory, turnsToMessages, windowSettings, withSummary } from '../sessions/index.js';
import type { SkillCatalog } from '../skills/index.js';
import { conversationHistoryOf, taskModelSettings, type TaskOutcome, type TaskStart, type TaskStore } from '../tasks/index.js';
import { planTemplate, type TemplateCatalog } from '../templates/index.js';
import type { ToolRegistry } from '../tools/index.js';

export interface WorkflowDeps {
  tasks: TaskStore;
  sessions: SessionDirectory;
  llm: LlmProvider;
  tools?: ToolRegistry;
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
  /** Tool rounds when the task names no max_iterations. */
  defaultMaxIterations?: number;
  /** Workflow templates (`template`) and skills (`skill`). */
  templates?: TemplateCatalog;
  skills?: SkillCatalog;
}

export const DEFAULT_MAX_ITERATIONS = 10;
/** Most subtasks a plan may have. */
export const MAX_SUBTASKS = 8;

const DEFAULT_SYSTEM = "You are a helpful, precise assistant. Answer the user's request directly.";

export function systemPrompt(t: Pick<TaskStart, 'context'>): string {
  const ctx = t.context;
  let prompt = typeof ctx.system_prompt === 'string' && ctx.system_prompt ? ctx.system_prompt : DEFAULT_SYSTEM;
  const params = (ctx.prompt_params && typeof ctx.prompt_params === 'object' ? ctx.prompt_params : {}) as Record<string, unknown>;
  // Own keys only: `${constructor}` must stay as written, not become Object's source text.
  prompt = prompt.replace(/\$\{(\w+)\}/g, (m, k: string) => (Object.hasOwn(params, k) ? String(params[k]) : m));
  return prompt;
}

const sumUsage = (us: LlmUsage[]): LlmUsage =>
  us.reduce(
    (a, u) => ({
      inputTokens: a.inputTokens + u.inputTokens,
      outputTokens: a.outputTokens + u.outputTokens,
      totalTokens: a.totalTokens + u.totalTokens,
      costUsd: a.costUsd + u.costUsd,
    }),
    { inputTokens: 0, outputTokens: 0, totalTokens: 0, costUsd: 0 },
  );

/**
 * The session's earlier turns this task sees (window, primers, recents, compression), and
 * the session's UUID (its workspace); a journaled step, so a replay reads the same history
 * and never pays for a second summary.
 */
async function sessionHistory(ctx: WorkflowContext, deps: WorkflowDeps, t: TaskStart, agent: AgentDeps) {
  return ctx.step('history', async () => {
    const owner = t.user_id ?? null;
    // The workspace of the caller's own session only: a UUID naming another user's session gives
    // none. A session generated for this task (new_session) is the caller's by construction.
    const sessionUuid = t.new_session ? t.session_id : await deps.sessions.ownedSessionId(t.session_id, owner);
    const w = windowSettings(t.context, deps.history);
    // A session the service generated for this task has no earlier turns: no query.
    // A conversation the client holds itself (context.conversation_history, e.g. the messages of
    // an OpenAI-compatible request) is the history instead of the session's earlier turns.
    const held = conversationHistoryOf(t.context);
    const turns = t.new_session || held ? [] : await loadTurns(deps, t, w.window);
    const win = applyWindow(held ?? turnsToMessages(turns), w);
    const info = { total: win.total, kept: win.messages.length, dropped: win.dropped, window: w.window, preset: w.preset };
    // disable_ai: no model call at all, so the middle of a long history is dropped, not summarised.
    if (win.toCompress && t.disable_ai) {
      return { messages: win.messages, info: { ...info, dropped: win.toCompress.length }, sessionUuid, summaryCall: undefined as ModelCall | undefined };
    }
    if (!win.toCompress) return { messages: win.messages, info, sessionUuid, summaryCall: undefined as ModelCall | undefined };
    const target = Math.max(1, Math.floor(w.targetRatio * w.window) - win.messages.length);
    ctx.emit('PROGRESS', 'orchestrator', `Compressing ${win.toCompress.length} earlier messages of the session`, {
      stage: 'history_compression',
      messages: win.toCompress.length,
    });
    agent.budget?.beforeCall(ctx, 'history');
    const r = await deps.llm.complete({
      messages: summaryPrompt(win.toCompress, target),
      tier: 'small',
      budget: { taskId: t.task_id, agentId: 'history' },
      maxTokens: Math.min(deps.maxTokens, 1024),
      temperature: 0.2,
      signal: ctx.signal,
    });
    const call: ModelCall = { agentId: 'history', step: 'history', tier: 'small', model: r.model, provider: r.provider, usage: r.usage };
    agent.budget?.afterCall(ctx, 'history', r.usage);
    await agent.onModelCall?.(call);
    const messages = withSummary(win, w, r.text);
    const record = {
      summary: r.text,
      compressed_messages: win.toCompress.length,
      upto_task_id: turns.at(-1)?.task_id,
      at: new Date().toISOString(),
      model: r.model,
    };
    await deps.sessions.recordHistorySummary(t.session_id, owner, record);
    return { messages, info: { ...info, kept: messages.length, compressed: win.toCompress.length, summary: r.text }, sessionUuid, summaryCall: call };
  });
}

export interface Subtask {
  id: string;
  description: string;
  dependencies: string[];
  requiredTools: string[];
  modelTier?: Tier;
}

/**
 * The plan of a planner's answer: a JSON array (or {subtasks: [...]}) of subtasks. Ids are
 * made unique; a dependency must name an earlier subtask (so the graph has no cycle);
 * unknown tools and tiers are dropped. Falls back to one subtask: the request itself.
 */
export function parseSubtasks(text: string, query: string): Subtask[] {
  let parsed: unknown;
  try {
    const m = /\[[\s\S]*\]/.exec(text);
    parsed = m ? JSON.parse(m[0]) : undefined;
  } catch {
    parsed = undefined;
  }
  const list: Subtask[] = [];
  const seen = new Set<string>();
  if (Array.isArray(parsed)) {
    for (const [i, x] of parsed.entries()) {
      const o = (typeof x === 'string' ? { description: x } : (x ?? {})) as Record<string, unknown>;
      const description = typeof o.description === 'string' ? o.description.trim() : '';
      if (!description) continue;
      let id = typeof o.id === 'string' && o.id.trim() ? o.id.trim() : `subtask-${i + 1}`;
      if (seen.has(id)) id = `${id}-${i + 1}`;
      const deps = Array.isArray(o.dependencies) ? o.dependencies.filter((d): d is string => typeof d === 'string' && seen.has(d)) : [];
      const tools = Array.isArray(o.required_tools) ? o.required_tools.filter((d): d is string => typeof d === 'string') : [];
      const tier = typeof o.model_tier === 'string' && isTier(o.model_tier) ? o.model_tier : undefined;
      seen.add(id);
      list.push({ id, description, dependencies: [...new Set(deps)], requiredTools: tools, ...(tier ? { modelTier: tier } : {}) });
      if (list.length >= MAX_SUBTASKS) break;
    }
  }
  return list.length ? list : [{ id: 'subtask-1', description: query, dependencies: [], requiredTools: [] }];
}

const PLANNER_PROMPT = (tools: string[]) =>
  `Decompose the user request into 1 to ${MAX_SUBTASKS} subtasks that agents can carry out. Respond with a JSON array of subtasks: ` +
  '[{"id": "short-id", "description": "what to do", "dependencies": ["ids of subtasks whose results it needs"], ' +
  `"required_tools": [tool names], "model_tier": "small|medium|large"}]. Available tools: ${tools.join(', ') || 'none'}.`;

/** Runs the workflow body and returns its successful outcome; failures throw. */
export async function runWorkflow(ctx: WorkflowContext, deps: WorkflowDeps, t: TaskStart): Promise<TaskOutcome> {
  const budget = deps.budgets ? new Budget(deps.budgets) : undefined;
  /** Model calls made (and queued to llm_calls) by this activation; replayed ones are not in it. */
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
  const past = hist.messages;
  const skill = t.skill ? deps.skills?.get(t.skill.name, t.skill.version) : undefined;
  if (t.skill && !skill) throw new AppError(Code.FailedPrecondition, `skill ${t.skill.name} is not available in this worker`);
  // A skill's role applies unless the task names one.
  const role = rolePreset(t.context.role ?? skill?.role);
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
  const roleToolNames = skill && skill.tools.length ? allowedTools.filter((n) => skill.tools.includes(n)) : allowedTools;
  const base = {
    tier: skill?.modelTier && !t.model_override && !t.provider_override ? skill.modelTier : t.model_tier,
    model: t.model_override,
    provider: t.provider_override,
    maxIterations: t.max_iterations ?? deps.defaultMaxIterations ?? DEFAULT_MAX_ITERATIONS,
    sessionId: hist.sessionUuid,
    userId: t.user_id,
    taskId: t.task_id,
    allowDangerous: role.allowDangerous,
  } satisfies Partial<AgentSpec>;
  const user: ChatMessage = { role: 'user', content: t.query };
  const outputs: AgentOutput[] = [];
  let final: { text: string; model: string; provider: string };
  let agentsUsed = 1;

  let template: Record<string, unknown> | undefined;
  let research: Record<string, unknown> | undefined;
  if (t.research) {
    const r = await runResearch(ctx, deps, agent, t, base, { sys, past, user, tools: roleToolNames, researchTools: researchToolsOf(roleToolNames, t) });
    final = r.final;
    outputs.push(...r.outputs);
    research = r.info;
    agentsUsed = r.agents;
  } else if (t.template) {
    const r = await runTemplate(ctx, deps, agent, t, base);
    final = r.final;
    outputs.push(...r.outputs);
    template = r.info;
  } else if (skill) {
    const skillSys: ChatMessage = { role: 'system', content: `${skill.instructions}\n\n${sys.content}` };
    const out = await runAgentLoop(ctx, agent, {
      ...base,
      agentId: 'skill-agent',
      stepPrefix: 'agent',
      messages: [skillSys, ...past, user],
      tools: roleToolNames,
    });
    final = out;
    outputs.push(out);
  } else if (t.mode === 'simple') {
    const turn = await modelTurn(ctx, agent, { ...base, agentId: 'simple-agent' }, 'agent', [sys, ...past, user], undefined, {
      emitOutput: true,
      announce: true,
    });
    final = turn;
    outputs.push(asOutput('simple-agent', 'agent', turn));
  } else if (t.mode === 'standard') {
    const out = await runAgentLoop(ctx, agent, {
      ...base,
      agentId: 'standard-agent',
      stepPrefix: 'agent',
      messages: [sys, ...past, user],
      tools: roleToolNames,
    });
    final = out;
    outputs.push(out);
  } else {
    const supervisor = t.mode === 'supervisor';
    const lead = supervisor ? 'supervisor' : 'planner';
    const planRecorded = ctx.isRecorded('plan');
    const plan = await ctx.step('plan', async () => {
      const turn = await modelTurnInStep(ctx, agent, { ...base, agentId: lead }, 'plan', [
        { role: 'system', content: PLANNER_PROMPT(roleToolNames) },
        ...past,
        user,
      ]);
      const subtasks = parseSubtasks(turn.text, t.query);
      ctx.emit('PROGRESS', lead, `Planned ${subtasks.length} subtasks`, {
        subtasks: subtasks.map((s) => ({ id: s.id, description: s.description, dependencies: s.dependencies, required_tools: s.requiredTools })),
      });
      if (supervisor) {
        ctx.emit('TEAM_RECRUITED', lead, `Recruited a team of ${subtasks.length}`, {
          team: subtasks.map((s, i) => ({ agent_id: `agent-${i + 1}`, role: role.name, subtask: s.id })),
        });
      }
      return { subtasks, out: asOutput(lead, 'plan', turn) };
    });
    if (planRecorded) budget?.afterCall(undefined, lead, plan.out.usage);
    outputs.push(plan.out);
    const subtasks = plan.subtasks;
    const limit = Math.max(1, t.max_concurrent_agents ?? MAX_SUBTASKS);
    const slots = new Semaphore(limit);
    const results = new Map<string, Promise<AgentOutput>>();
    // One scope for the plan's agents: a failing subtask stops the others.
    const group = scopedContext(ctx);
    const done = new Set<string>();
    const runSub = (s: Subtask, i: number): Promise<AgentOutput> => {
      const agentId = `agent-${i + 1}`;
      return (async () => {
        const needed = await Promise.all(s.dependencies.map((d) => results.get(d)!));
        await slots.acquire();
        try {
          const tools = deps.enableToolSelection && s.requiredTools.length ? roleToolNames.filter((n) => s.requiredTools.includes(n)) : roleToolNames;
          const context = needed.length
            ? `\n\nResults of the subtasks it depends on:\n${needed.map((o, j) => `[${s.dependencies[j]}] ${o.text}`).join('\n\n')}`
            : '';
          const out = await runAgentLoop(group.ctx, agent, {
            ...base,
            ...(s.modelTier && !t.model_override ? { tier: s.modelTier } : {}),
            agentId,
            stepPrefix: `subtask-${i + 1}`,
            messages: [sys, { role: 'user', content: `Overall request: ${t.query}\n\nYour subtask: ${s.description}${context}` }],
            tools,
            onStart: () => {
              if (s.dependencies.length) {
                ctx.emit('DEPENDENCY_SATISFIED', agentId, `Dependencies of ${s.id} satisfied: ${s.dependencies.join(', ')}`, {
                  subtask: s.id,
                  dependencies: s.dependencies,
                });
              }
              if (supervisor) {
                ctx.emit('ROLE_ASSIGNED', lead, `${agentId} is the ${role.name} for ${s.id}`, { agent_id: agentId, role: role.name, subtask: s.id });
                ctx.emit('DELEGATION', lead, `Delegated ${s.id} to ${agentId}`, { agent_id: agentId, subtask: s.id, description: s.description });
              }
            },
            onComplete: supervisor
              ? () => {
                  // Counted from the subtasks done so far, replayed ones included.
                  done.add(s.id);
                  const completed = done.size;
                  ctx.emit('TEAM_STATUS', lead, `${completed} of ${subtasks.length} subtasks done`, { completed, total: subtasks.length, last: s.id });
                }
              : undefined,
          });
          done.add(s.id);
          return out;
        } finally {
          slots.release();
        }
      })();
    };
    subtasks.forEach((s, i) => results.set(s.id, runSub(s, i)));
    const subOuts = await allOrStop(
      subtasks.map((s) => results.get(s.id)!),
      (reason) => group.abort(reason),
    );
    outputs.push(...subOuts);
    agentsUsed = subOuts.length;
    if (subOuts.length === 1 && deps.synthBypassSingle) {
      final = subOuts[0]!;
      if (supervisor) await ctx.step('retire', async () => void ctx.emit('TEAM_RETIRED', lead, 'Team retired', { team_size: 1 }));
    } else {
      const turn = await modelTurn(
        ctx,
        agent,
        { ...base, agentId: 'synthesizer' },
        'synthesize',
        [
          sys,
          ...past,
          {
            role: 'user',
            content: `Combine these subtask results into one answer to: ${t.query}\n\n${subOuts.map((o, i) => `[${i + 1}] ${o.text}`).join('\n\n')}`,
          },
        ],
        undefined,
        {
          emitOutput: true,
          announce: true,
          after: supervisor ? () => void ctx.emit('TEAM_RETIRED', lead, 'Team retired', { team_size: subOuts.length }) : undefined,
        },
      );
      final = turn;
      outputs.push(asOutput('synthesizer', 'synthesize', turn));
    }
  }

  let verification: Record<string, unknown> | undefined;
  if (t.enable_verification) {
    const v = await verify(ctx, agent, base, t, final.text);
    outputs.push(v.out);
    verification = v.info;
  }

  const calls = [...(hist.summaryCall ? [hist.summaryCall] : []), ...outputs.flatMap((o) => o.calls)];
  // Usage and the breakdown are summed from the task's model calls: the journaled list that is
  // also written to llm_calls (each call was queued as it happened; calls replayed from the
  // journal are queued again here, so none is missing after a crash; rows that exist are left
  // alone). No database round trip on the way to the answer.
  if (deps.usage) for (const c of calls) if (!recordedHere.has(c.step)) deps.usage.recordModelCall(recordOf(t, c));
  const usage = sumUsage(calls.map((c) => c.usage));
  const toolCalls = outputs.reduce((n, o) => n + o.toolCalls, 0);
  return {
    status: 'TASK_STATUS_COMPLETED',
    result: final.text,
    modelUsed: final.model,
    provider: final.provider,
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    totalTokens: usage.totalTokens,
    costUsd: usage.costUsd,
    metadata: {
      agents_used: agentsUsed,
      history: hist.info,
      model_breakdown: breakdown(calls),
      role: role.name,
      tool_calls: toolCalls,
      ...(template ? { template } : {}),
      ...(research ? { research } : {}),
      ...(skill ? { skill: { name: skill.name, version: skill.version, key: skill.key, content_hash: skill.contentHash } } : {}),
      ...(verification ? { verification } : {}),
      ...(t.complexity_score !== undefined ? { mode_selection: { auto: true, mode: t.mode, complexity_score: t.complexity_score } } : {}),
      ...(calls.some((c) => c.cacheHit)
        ? { cache_hits: calls.filter((c) => c.cacheHit).length, cache_score: Math.max(...calls.map((c) => c.cacheScore ?? 0)) }
        : {}),
    },
  };
}

type BaseSpec = Pick<AgentSpec, 'tier' | 'model' | 'provider' | 'maxIterations' | 'sessionId' | 'userId' | 'taskId' | 'allowDangerous'>;

/**
 * Runs a workflow template: each step a journaled step, in order. `text` steps render their
 * text; `tool` steps run the tool through the registry; `llm` steps call the model, unless
 * disable_ai, where the task fails at the first such step, naming it (no model is called).
 */
async function runTemplate(ctx: WorkflowContext, deps: WorkflowDeps, agent: AgentDeps, t: TaskStart, base: BaseSpec) {
  const tpl = deps.templates?.get(t.template!.name, t.template!.version);
  if (!tpl) throw new AppError(Code.FailedPrecondition, `template ${t.template!.name} is not available in this worker`);
  const params = (t.context.prompt_params && typeof t.context.prompt_params === 'object' ? t.context.prompt_params : {}) as Record<string, unknown>;
  const plan = planTemplate(tpl, { query: t.query, params });
  const outputs: Record<string, string> = {};
  const agentOuts: AgentOutput[] = [];
  let last: { text: string; model: string; provider: string } = { text: '', model: '', provider: '' };
  for (const step of plan.steps) {
    const name = `template-${step.index + 1}`;
    const agentId = `template:${step.id}`;
    if (step.type === 'llm') {
      if (t.disable_ai) {
        throw new AppError(Code.FailedPrecondition, `disable_ai: template ${tpl.key} step "${step.id}" needs a model, and disable_ai forbids model calls`);
      }
      const { prompt, system } = step.render(outputs);
      const turn = await modelTurn(
        ctx,
        agent,
        { ...base, agentId, ...(step.modelTier && !t.model_override && !t.provider_override ? { tier: step.modelTier } : {}) },
        name,
        [...(system ? [{ role: 'system' as const, content: system }] : []), { role: 'user', content: prompt }],
        undefined,
        { announce: true },
      );
      outputs[step.id] = turn.text;
      agentOuts.push(asOutput(agentId, name, turn));
      last = turn;
    } else {
      const tool = step.type === 'tool' ? deps.tools?.get(step.tool) : undefined;
      if (step.type === 'tool' && !tool) throw new AppError(Code.FailedPrecondition, `template ${tpl.key} step "${step.id}": unknown tool ${step.tool}`);
      // A tool that is not safe to run twice, cut off by a crash, is not run again.
      if (tool && !tool.retryable) {
        if (!ctx.isRecorded(name) && ctx.isRecorded(`${name}-started`)) {
          throw new AppError(
            Code.FailedPrecondition,
            `template ${tpl.key} step "${step.id}" was interrupted by a worker stop; ${tool.name} is not safe to run twice, so the task stops here`,
          );
        }
        await ctx.step(`${name}-started`, async () => true);
      }
      const text = await ctx.step(name, async () => {
        ctx.emit('PROGRESS', agentId, `Template ${tpl.key}: step ${step.id}`, { stage: 'template_step', template: tpl.key, step: step.id, type: step.type });
        if (step.type === 'text') return step.render(outputs).text;
        const args = step.render(outputs).arguments;
        ctx.emit('TOOL_INVOKED', agentId, `Calling ${step.tool}`, { tool: step.tool, call_id: step.id, arguments: args });
        const e = await deps.tools!.execute(step.tool, args, { signal: ctx.signal, sessionId: base.sessionId, userId: base.userId, taskId: base.taskId });
        ctx.emit('TOOL_OBSERVATION', agentId, e.success ? `${step.tool} succeeded` : `${step.tool} failed: ${e.error}`, {
          tool: step.tool,
          call_id: step.id,
          success: e.success,
          output: (e.success ? e.text : `error: ${e.error}`).slice(0, 2000),
          execution_time_ms: e.executionTimeMs,
        });
        if (!e.success) throw new AppError(Code.FailedPrecondition, `template ${tpl.key} step "${step.id}": ${step.tool} failed: ${e.error}`);
        return e.text;
      });
      outputs[step.id] = text;
    }
  }
  const finalText = outputs[plan.output] ?? '';
  return {
    final: { text: finalText, model: last.model, provider: last.provider },
    outputs: agentOuts,
    info: { name: tpl.name, version: tpl.version, key: tpl.key, content_hash: tpl.contentHash, steps: plan.steps.length, disable_ai: !!t.disable_ai },
  };
}

/** Sub-questions per round by research strategy. */
const RESEARCH_QUESTIONS: Readonly<Record<string, number>> = Object.freeze({ quick: 2, standard: 3, deep: 4, academic: 5 });

/** The research agents' tools: the research role's, within what the task's role allows (generalist: all of them). */
function researchToolsOf(roleToolNames: string[], t: TaskStart): string[] {
  const research = ['web_search', 'web_fetch', 'web_subpage_fetch', 'web_crawl'];
  if (t.context.role) return roleToolNames;
  return roleToolNames.filter((n) => research.includes(n));
}

/** A JSON array of strings from a model's answer (the first array in it), or undefined. */
function stringsOf(text: string): string[] | undefined {
  try {
    const m = /\[[\s\S]*\]/.exec(text);
    const v = m ? (JSON.parse(m[0]) as unknown) : undefined;
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x.trim().length > 0).map((x) => x.trim()) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The deep-research workflow (research_strategy / context.force_research): the question is
 * broken into sub-questions; research agents (the research tools, citing their sources)
 * answer them in parallel (max_concurrent_agents at a time); with iterative research a
 * coordinator checks coverage after each round and the gaps become the next round's
 * sub-questions, up to the strategy's rounds; a synthesizer writes the cited report; with
 * enable_fact_extraction, facts with their sources go into metadata.
 */
async function runResearch(
  ctx: WorkflowContext,
  deps: WorkflowDeps,
  agent: AgentDeps,
  t: TaskStart,
  base: BaseSpec,
  c: { sys: ChatMessage; past: ChatMessage[]; user: ChatMessage; tools: string[]; researchTools: string[] },
) {
  const opts = t.research!;
  const perRound = RESEARCH_QUESTIONS[opts.strategy] ?? 3;
  const rounds = opts.iterative ? opts.maxIterations : 1;
  const outs: AgentOutput[] = [];
  const plan = await modelTurn(
    ctx,
    agent,
    { ...base, agentId: 'research-planner' },
    'research-plan',
    [
      {
        role: 'system',
        content: `Break the research question into at most ${perRound} focused sub-questions that together answer it. Respond with a JSON array of strings.`,
      },
      ...c.past,
      c.user,
    ],
    undefined,
    { announce: true, emitOutput: false },
  );
  outs.push(asOutput('research-planner', 'research-plan', plan));
  let questions = (stringsOf(plan.text) ?? [t.query]).slice(0, perRound);
  const findings: { question: string; answer: string; round: number }[] = [];
  const coverage: { round: number; complete: boolean; gaps: string[] }[] = [];
  const slots = new Semaphore(Math.max(1, t.max_concurrent_agents ?? perRound));
  let agents = 0;
  let roundsRun = 0;
  const group = scopedContext(ctx);
  for (let round = 1; round <= rounds && questions.length; round++) {
    roundsRun = round;
    const answers = await allOrStop(
      questions.map(async (q, i) => {
        await slots.acquire();
        try {
          const agentId = `researcher-${round}-${i + 1}`;
          return await runAgentLoop(group.ctx, agent, {
            ...base,
            agentId,
            stepPrefix: `research-${round}-${i + 1}`,
            tools: c.researchTools,
            messages: [
              {
                role: 'system',
                content:
                  'You are a research agent. Find reliable sources for your sub-question with the tools you have (search, then read the pages), ' +
                  'and answer it with the facts you found, citing each source by its URL. Say plainly what you could not find.',
              },
              { role: 'user', content: `Research question: ${t.query}\n\nYour sub-question: ${q}` },
            ],
            onStart: () => ctx.emit('PROGRESS', agentId, `Researching: ${q}`, { stage: 'research', round, question: q }),
          });
        } finally {
          slots.release();
        }
      }),
      (reason) => group.abort(reason),
    );
    agents += answers.length;
    outs.push(...answers);
    answers.forEach((a, i) => findings.push({ question: questions[i]!, answer: a.text, round }));
    if (round === rounds) break;
    const check = await modelTurn(
      ctx,
      agent,
      { ...base, agentId: 'research-coordinator' },
      `research-coverage-${round}`,
      [
        {
          role: 'system',
          content: `You check research coverage. Given the question and the findings so far, respond with JSON: {"complete": true|false, "gaps": [at most ${perRound} sub-questions still unanswered]}.`,
        },
        { role: 'user', content: `Question: ${t.query}\n\nFindings:\n${findings.map((f) => `- ${f.question}: ${f.answer}`).join('\n')}` },
      ],
      undefined,
      { announce: true, emitOutput: false },
    );
    outs.push(asOutput('research-coordinator', `research-coverage-${round}`, check));
    let complete = true;
    let gaps: string[] = [];
    try {
      const m = /\{[\s\S]*\}/.exec(check.text);
      const v = m ? (JSON.parse(m[0]) as { complete?: unknown; gaps?: unknown }) : undefined;
      complete = v?.complete !== false;
      gaps = Array.isArray(v?.gaps) ? v.gaps.filter((g): g is string => typeof g === 'string' && g.trim().length > 0).slice(0, perRound) : [];
    } catch {
      /* not JSON: treated as complete */
    }
    coverage.push({ round, complete, gaps });
    if (complete || !gaps.length) break;
    questions = gaps;
  }
  const report = await modelTurn(
    ctx,
    agent,
    { ...base, agentId: 'synthesizer' },
    'research-synthesis',
    [
      c.sys,
      ...c.past,
      {
        role: 'user',
        content:
          `Write a research report that answers: ${t.query}\n` +
          `${opts.strategy === 'academic' ? 'Use an academic register and a references section. ' : ''}Cite the sources the findings name, by URL; do not add sources that are not in them.\n\n` +
          findings.map((f, i) => `[${i + 1}] ${f.question}\n${f.answer}`).join('\n\n'),
      },
    ],
    undefined,
    { announce: true },
  );
  outs.push(asOutput('synthesizer', 'research-synthesis', report));
  let facts: unknown[] | undefined;
  if (opts.factExtraction) {
    const f = await modelTurn(
      ctx,
      agent,
      { ...base, agentId: 'fact-extractor' },
      'research-facts',
      [
        { role: 'system', content: 'Extract the factual claims of the report as a JSON array of {"fact": "...", "source": "<URL or null>"}.' },
        { role: 'user', content: report.text },
      ],
      undefined,
      { announce: true, emitOutput: false },
    );
    outs.push(asOutput('fact-extractor', 'research-facts', f));
    try {
      const m = /\[[\s\S]*\]/.exec(f.text);
      const v = m ? (JSON.parse(m[0]) as unknown) : undefined;
      facts = Array.isArray(v) ? v : [];
    } catch {
      facts = [];
    }
  }
  return {
    final: report,
    outputs: outs,
    agents,
    info: {
      strategy: opts.strategy,
      rounds: roundsRun,
      max_rounds: rounds,
      questions: findings.map((f) => ({ round: f.round, question: f.question })),
      coverage,
      ...(facts ? { facts } : {}),
    },
  };
}

/** The verification step (enable_verification): the model checks the answer; findings go into metadata. */
async function verify(ctx: WorkflowContext, agent: AgentDeps, base: BaseSpec, t: TaskStart, answer: string) {
  const turn = await modelTurn(
    ctx,
    agent,
    { ...base, agentId: 'verifier' },
    'verify',
    [
      {
        role: 'system',
        content:
          'You verify answers. Check the answer against the request for factual errors, unsupported claims, omissions and contradictions. ' +
          'Respond with JSON: {"verdict": "pass" | "fail", "findings": ["..."]}.',
      },
      { role: 'user', content: `Request: ${t.query}\n\nAnswer to verify:\n${answer}` },
    ],
    undefined,
    { announce: true, emitOutput: false },
  );
  let verdict = 'unknown';
  let findings: string[] = [];
  try {
    const m = /\{[\s\S]*\}/.exec(turn.text);
    const parsed = m ? (JSON.parse(m[0]) as { verdict?: unknown; findings?: unknown }) : undefined;
    if (parsed && (parsed.verdict === 'pass' || parsed.verdict === 'fail')) verdict = parsed.verdict;
    if (parsed && Array.isArray(parsed.findings)) findings = parsed.findings.filter((f): f is string => typeof f === 'string');
  } catch {
    /* not JSON: the text is the finding */
  }
  if (!findings.length && verdict === 'unknown') findings = [turn.text];
  return { out: asOutput('verifier', 'verify', turn), info: { verdict, findings, model: turn.model, provider: turn.provider } };
}

const recordOf = (t: TaskStart, c: ModelCall): ModelCallRecord => ({
  taskId: t.task_id,
  step: c.step,
  agentId: c.agentId,
  model: c.model,
  provider: c.provider,
  tier: c.tier ?? t.model_tier,
  inputTokens: c.usage.inputTokens,
  outputTokens: c.usage.outputTokens,
  totalTokens: c.usage.totalTokens,
  costUsd: c.usage.costUsd,
  cacheHit: !!c.cacheHit,
});

/** A model call made inside a step that is already running (the planner's). */
function modelTurnInStep(
  ctx: WorkflowContext,
  agent: AgentDeps,
  spec: Pick<AgentSpec, 'agentId' | 'tier' | 'model'> & { taskId?: string },
  step: string,
  messages: ChatMessage[],
) {
  return modelTurn(ctx, agent, spec, step, messages, undefined, { emitOutput: true, announce: true, inStep: true });
}

function asOutput(
  agentId: string,
  step: string,
  t: { text: string; model: string; provider: string; usage: LlmUsage; cacheHit?: boolean; cacheScore?: number; tier?: Tier },
): AgentOutput {
  return {
    text: t.text,
    model: t.model,
    provider: t.provider,
    usage: t.usage,
    calls: [
      {
        agentId,
        step,
        ...(t.tier ? { tier: t.tier } : {}),
        model: t.model,
        provider: t.provider,
        usage: t.usage,
        ...(t.cacheHit ? { cacheHit: true, cacheScore: t.cacheScore } : {}),
      },
    ],
    toolCalls: 0,
  };
}

function breakdown(calls: ModelCall[]) {
  const m = new Map<
    string,
    { model: string; provider: string; executions: number; tokens: number; input_tokens: number; output_tokens: number; cost_usd: number; cache_hits: number }
  >();
  for (const c of calls) {
    const k = `${c.provider}/${c.model}`;
    const e = m.get(k) ?? { model: c.model, provider: c.provider, executions: 0, tokens: 0, input_tokens: 0, output_tokens: 0, cost_usd: 0, cache_hits: 0 };
    e.executions++;
    e.tokens += c.usage.totalTokens;
    e.input_tokens += c.usage.inputTokens;
    e.output_tokens += c.usage.outputTokens;
    e.cost_usd += c.usage.costUsd;
    if (c.cacheHit) e.cache_hits++;
    m.set(k, e);
  }
  return [...m.values()];
}

class Semaphore {
  private waiting: (() => void)[] = [];
  constructor(private free: number) {}
  async acquire(): Promise<void> {
    if (this.free > 0) {
      this.free--;
      return;
    }
    await new Promise<void>((r) => this.waiting.push(r));
  }
  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free++;
  }
}
