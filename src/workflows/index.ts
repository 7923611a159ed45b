/**
 * Workflow definitions. A workflow is deterministic code between journaled steps: all
 * contact with the outside world (LLM calls, the database) happens inside ctx.step(), so
 * replay after a crash skips what was done and repeats nothing.
 *
 * simple: one agent, one LLM call.
 * standard: plan -> one agent step per subtask, in order -> synthesis.
 * complex / supervisor: plan -> subtasks in parallel -> synthesis.
 */
import type { TaskOutcome, TaskStart, TaskStore } from '../tasks/index.js';
import type { ChatMessage, LlmProvider, LlmResult } from '../llm/index.js';
import type { WorkflowContext } from '../runtime/index.js';
import { applyWindow, loadTurns, summaryPrompt, type SessionDirectory, turnsToMessages, windowSettings, withSummary } from '../sessions/index.js';

export interface WorkflowDeps {
  tasks: TaskStore;
  sessions: SessionDirectory;
  llm: LlmProvider;
  partialChunkChars: number;
  maxTokens: number;
  temperature: number;
  synthBypassSingle: boolean;
  history: { windowMessages: number; debugWindowMessages: number; triggerRatio: number };
}

interface AgentOutput {
  text: string;
  model: string;
  provider: string;
  usage: LlmResult['usage'];
}

const DEFAULT_SYSTEM = "You are a helpful, precise assistant. Answer the user's request directly.";

export function systemPrompt(t: Pick<TaskStart, 'context'>): string {
  const ctx = t.context;
  let prompt = typeof ctx.system_prompt === 'string' && ctx.system_prompt ? ctx.system_prompt : DEFAULT_SYSTEM;
  const params = (ctx.prompt_params && typeof ctx.prompt_params === 'object' ? ctx.prompt_params : {}) as Record<string, unknown>;
  // Own keys only: `${constructor}` must stay as written, not become Object's source text.
  prompt = prompt.replace(/\$\{(\w+)\}/g, (m, k: string) => (Object.hasOwn(params, k) ? String(params[k]) : m));
  return prompt;
}

/** One agent turn: AGENT_STARTED, LLM_PARTIAL deltas in chunks, LLM_OUTPUT, AGENT_COMPLETED. */
async function runAgent(ctx: WorkflowContext, deps: WorkflowDeps, t: TaskStart, agentId: string, messages: ChatMessage[]): Promise<AgentOutput> {
  ctx.emit('AGENT_STARTED', agentId, `Agent ${agentId} started`);
  let buf = '';
  const chunk = deps.partialChunkChars;
  const r = await deps.llm.complete(
    { messages, tier: t.model_tier, model: t.model_override, maxTokens: deps.maxTokens, temperature: deps.temperature, signal: ctx.signal },
    (delta) => {
      buf += delta;
      while (buf.length >= chunk) {
        // Never split a surrogate pair (an emoji) across two deltas.
        let n = chunk;
        const c = buf.charCodeAt(n - 1);
        if (c >= 0xd800 && c <= 0xdbff) n = n > 1 ? n - 1 : n + 1;
        if (n > buf.length) break;
        const piece = buf.slice(0, n);
        ctx.emit('LLM_PARTIAL', agentId, piece, { delta: piece });
        buf = buf.slice(n);
      }
    },
  );
  if (buf) ctx.emit('LLM_PARTIAL', agentId, buf, { delta: buf });
  ctx.emit('LLM_OUTPUT', agentId, r.text, {
    model: r.model,
    provider: r.provider,
    usage: { input_tokens: r.usage.inputTokens, output_tokens: r.usage.outputTokens, total_tokens: r.usage.totalTokens, cost_usd: r.usage.costUsd },
  });
  ctx.emit('AGENT_COMPLETED', agentId, `Agent ${agentId} completed`, { total_tokens: r.usage.totalTokens });
  return { text: r.text, model: r.model, provider: r.provider, usage: r.usage };
}

function sumUsage(outs: AgentOutput[]) {
  return outs.reduce(
    (a, o) => ({
      inputTokens: a.inputTokens + o.usage.inputTokens,
      outputTokens: a.outputTokens + o.usage.outputTokens,
      totalTokens: a.totalTokens + o.usage.totalTokens,
      costUsd: a.costUsd + o.usage.costUsd,
    }),
    { inputTokens: 0, outputTokens: 0, totalTokens: 0, costUsd: 0 },
  );
}

/** Runs the workflow body and returns its successful outcome; failures throw. */
/**
 * The session's earlier turns this task sees (window, primers, recents, compression); a
 * journaled step, so a replay reads the same history and never pays for a second summary.
 */
async function sessionHistory(ctx: WorkflowContext, deps: WorkflowDeps, t: TaskStart) {
  return ctx.step('history', async () => {
    const w = windowSettings(t.context, deps.history);
    // A session the service generated for this task has no earlier turns: no query.
    const turns = t.new_session ? [] : await loadTurns(deps, t, w.window);
    const win = applyWindow(turnsToMessages(turns), w);
    const info = { total: win.total, kept: win.messages.length, dropped: win.dropped, window: w.window, preset: w.preset };
    if (!win.toCompress) return { messages: win.messages, info, summaryUsage: undefined as AgentOutput | undefined };
    const target = Math.max(1, Math.floor(w.targetRatio * w.window) - win.messages.length);
    ctx.emit('PROGRESS', 'orchestrator', `Compressing ${win.toCompress.length} earlier messages of the session`, {
      stage: 'history_compression',
      messages: win.toCompress.length,
    });
    const r = await deps.llm.complete({
      messages: summaryPrompt(win.toCompress, target),
      tier: 'small',
      maxTokens: Math.min(deps.maxTokens, 1024),
      temperature: 0.2,
      signal: ctx.signal,
    });
    const messages = withSummary(win, w, r.text);
    const record = {
      summary: r.text,
      compressed_messages: win.toCompress.length,
      upto_task_id: turns.at(-1)?.task_id,
      at: new Date().toISOString(),
      model: r.model,
    };
    await deps.sessions.recordHistorySummary(t.session_id, t.user_id ?? null, record);
    return {
      messages,
      info: { ...info, kept: messages.length, compressed: win.toCompress.length, summary: r.text },
      summaryUsage: { text: r.text, model: r.model, provider: r.provider, usage: r.usage } as AgentOutput | undefined,
    };
  });
}

export async function runWorkflow(ctx: WorkflowContext, deps: WorkflowDeps, t: TaskStart): Promise<TaskOutcome> {
  const sys: ChatMessage = { role: 'system', content: systemPrompt(t) };
  const hist = await sessionHistory(ctx, deps, t);
  const past = hist.messages;
  let outputs: AgentOutput[];
  let final: AgentOutput;
  let agentsUsed = 1;

  if (t.mode === 'simple') {
    final = await ctx.step('agent', () => runAgent(ctx, deps, t, 'simple-agent', [sys, ...past, { role: 'user', content: t.query }]));
    outputs = [final];
  } else {
    const plan = await ctx.step('plan', async () => {
      const r = await runAgent(ctx, deps, t, 'planner', [
        {
          role: 'system',
          content: 'Decompose the user request into 2 to 4 independent subtasks. Respond with a JSON array of subtasks: [{"id","description"}].',
        },
        ...past,
        { role: 'user', content: t.query },
      ]);
      const subtasks = parseSubtasks(r.text, t.query, t.max_concurrent_agents);
      ctx.emit('PROGRESS', 'planner', `Planned ${subtasks.length} subtasks`, { subtasks });
      return { subtasks, out: r };
    });
    const runSub = (s: { id: string; description: string }, i: number) =>
      ctx.step(`subtask-${i + 1}`, () =>
        runAgent(ctx, deps, t, `agent-${i + 1}`, [sys, { role: 'user', content: `Overall request: ${t.query}\n\nYour subtask: ${s.description}` }]),
      );
    const subOuts =
      t.mode === 'standard'
        ? await plan.subtasks.reduce<Promise<AgentOutput[]>>(async (acc, s, i) => [...(await acc), await runSub(s, i)], Promise.resolve([]))
        : await Promise.all(plan.subtasks.map(runSub));
    agentsUsed = subOuts.length;
    outputs = [plan.out, ...subOuts];
    if (subOuts.length === 1 && deps.synthBypassSingle) {
      final = subOuts[0];
    } else {
      final = await ctx.step('synthesize', () =>
        runAgent(ctx, deps, t, 'synthesizer', [
          sys,
          ...past,
          {
            role: 'user',
            content: `Combine these subtask results into one answer to: ${t.query}\n\n${subOuts.map((o, i) => `[${i + 1}] ${o.text}`).join('\n\n')}`,
          },
        ]),
      );
      outputs.push(final);
    }
  }

  if (hist.summaryUsage) outputs.push(hist.summaryUsage);
  const usage = sumUsage(outputs);
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
      model_breakdown: breakdown(outputs),
    },
  };
}

function breakdown(outs: AgentOutput[]) {
  const m = new Map<string, { model: string; provider: string; executions: number; tokens: number; cost_usd: number }>();
  for (const o of outs) {
    const k = `${o.provider}/${o.model}`;
    const e = m.get(k) ?? { model: o.model, provider: o.provider, executions: 0, tokens: 0, cost_usd: 0 };
    e.executions++;
    e.tokens += o.usage.totalTokens;
    e.cost_usd += o.usage.costUsd;
    m.set(k, e);
  }
  return [...m.values()];
}

function parseSubtasks(text: string, query: string, max?: number): { id: string; description: string }[] {
  let parsed: unknown;
  try {
    const m = /\[[\s\S]*\]/.exec(text);
    parsed = m ? JSON.parse(m[0]) : undefined;
  } catch {
    parsed = undefined;
  }
  let list = Array.isArray(parsed)
    ? parsed
        .map((x, i) => ({
          id: typeof (x as { id?: unknown })?.id === 'string' ? (x as { id: string }).id : `subtask-${i + 1}`,
          description: typeof x === 'string' ? x : String((x as { description?: unknown })?.description ?? ''),
        }))
        .filter((s) => s.description)
    : [];
  if (!list.length) list = [{ id: 'subtask-1', description: query }];
  const cap = max && max > 0 ? Math.min(max, 8) : 8;
  return list.slice(0, cap);
}
