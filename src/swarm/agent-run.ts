/**
 * One swarm agent's work: the normal tool loop (runAgentLoop) on its task, on its own journaled
 * context. Before every model turn it reads its mailbox in a journaled step, recorded with the
 * turn in one journal write (messages from the lead and other agents become user messages; a
 * `stop` from the lead ends it) and reports the turn (PROGRESS, iteration, with its model calls
 * and tokens so far) to the lead. It may
 * message the swarm with `send_message`. At the end it reports its result (or its failure) to
 * the lead's mailbox in one journaled step; the lead posts it to the shared workspace.
 */
import { AgentTimedOut, runAgentLoop, type AgentDeps, type AgentOutput, type ModelCall } from '../agents/index.js';
import { AppError, Code, type Tier } from '../kernel/index.js';
import type { ChatMessage, LlmProvider, LlmRequest, ModelCallRecord, UsageStore } from '../llm/index.js';
import type { ToolRegistry } from '../tools/index.js';
import type { SwarmAgentContext } from './agent-context.js';
import type { SwarmBoard, WorkspaceEntry } from './board.js';
import { LEAD, type AgentReport, type MailReader, type Received } from './mailbox.js';
import { SEND_MESSAGE_TOOL, sendMessageTool } from './send-tool.js';

/** The start message of one agent (SWARM_AGENTS), built by the lead. */
export interface AgentStart {
  workflow_id: string;
  /** The agent's name: its mailbox and journal token (agent-1, agent-2, ...). */
  name: string;
  task: { id: string; description: string };
  /** The swarm's overall request. */
  query: string;
  system: string;
  /** The swarm's agents when this one was recruited. */
  team: string[];
  spec: {
    tier: Tier;
    model?: string;
    provider?: string;
    maxIterations: number;
    sessionId?: string;
    userId?: string;
    tools: string[];
    allowDangerous?: boolean;
  };
  /** `timeoutSetting`: the setting `timeoutMs` came from (the smaller of the swarm's agent_timeout_seconds and AGENT_TIMEOUT_SECONDS). */
  limits: { maxMessages: number; timeoutMs: number; timeoutSetting?: string; snippetChars: number; maxEntries: number };
  settings: { maxTokens: number; temperature: number; sampling?: Pick<LlmRequest, 'topP' | 'stop' | 'presencePenalty' | 'frequencyPenalty'> };
}

/** The lead told the agent to stop (a swarm limit, the swarm's end). */
export class SwarmStopped extends AppError {
  override name = 'SwarmStopped';
  constructor(reason: string) {
    super(Code.Aborted, `stopped by the lead: ${reason}`);
  }
}

/** The swarm is over (its task ended: completed, failed, timed out, cancelled): the agent stops without reporting. */
export class SwarmEnded extends Error {
  override name = 'SwarmEnded';
  constructor() {
    super('the swarm has ended');
  }
}

export interface AgentRunDeps {
  llm: LlmProvider;
  tools?: ToolRegistry;
  /** `tools` with what the swarm's owner may use besides (MCP servers, OpenAPI documents). */
  toolsFor?: (userId: string | undefined) => Promise<ToolRegistry>;
  parallelism: number;
  partialChunkChars: number;
  board: SwarmBoard;
  /** Where each model call is recorded as it happens (llm_calls, under the swarm's task): a swarm that is cancelled or times out keeps its agents' usage. */
  usage?: Pick<UsageStore, 'recordModelCall'>;
}

/** An agent's model call as a usage record of the swarm's task (the same row id, task and step, the lead writes at the end). */
const callRecord = (taskId: string, tier: Tier, c: ModelCall): ModelCallRecord => ({
  taskId,
  step: c.step,
  agentId: c.agentId,
  model: c.model,
  provider: c.provider,
  tier: c.tier ?? tier,
  inputTokens: c.usage.inputTokens,
  outputTokens: c.usage.outputTokens,
  totalTokens: c.usage.totalTokens,
  costUsd: c.usage.costUsd,
  cacheHit: !!c.cacheHit,
});

/** The journal step prefix of an agent's steps (unique within its task, for usage records too). */
export const agentPrefix = (name: string) => `swarm-${name}`;

/** An agent's result as the workspace shows it: cut to workspace_snippet_chars. */
export const workspaceSnippet = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}…` : s);

export function workspaceText(entries: WorkspaceEntry[]): string {
  return entries.length ? entries.map((e) => `- ${e.agent} (${e.task_id}): ${e.text}`).join('\n') : '(empty)';
}

/** The highest mailbox position the agent's journal records (its reader starts after it). */
export function recordedCursor(results: Iterable<unknown>): number {
  let last = 0;
  for (const r of results) {
    const v = r as { last?: unknown } | undefined;
    if (v && typeof v.last === 'number') last = Math.max(last, v.last);
  }
  return last;
}

/** Runs the agent to its report. Throws only when it must not report (stopped from outside: cancel, hand-back). */
export async function runSwarmAgent(ctx: SwarmAgentContext, d: AgentRunDeps, s: AgentStart, reader: MailReader, cursor: number): Promise<void> {
  const prefix = agentPrefix(s.name);
  const wf = s.workflow_id;
  const board = d.board;
  // The team it was recruited with; the task list is read only for a name not in it (an agent recruited later).
  const team = async (name: string) => (s.team.includes(name) ? s.team : ((await board.state(wf))?.tasks ?? []).flatMap((t) => (t.agent ? [t.agent] : [])));
  const own = d.toolsFor ? await d.toolsFor(s.spec.userId) : d.tools;
  const tools = own?.withExtraTools([sendMessageTool({ ctx, maxMessages: s.limits.maxMessages, team })]);
  const deps: AgentDeps = {
    llm: d.llm,
    tools,
    parallelism: d.parallelism,
    maxTokens: s.settings.maxTokens,
    temperature: s.settings.temperature,
    sampling: s.settings.sampling,
    partialChunkChars: d.partialChunkChars,
    timeoutMs: s.limits.timeoutMs,
    onModelCall: d.usage ? async (c) => d.usage!.recordModelCall(callRecord(wf, s.spec.tier, c)) : undefined,
  };
  let last = cursor;
  const progress = (i: number) => {
    const calls = ctx.calls;
    ctx.emit('PROGRESS', s.name, `${s.name}: iteration ${i}`, {
      iteration: i,
      llm_calls: calls.length,
      total_tokens: calls.reduce((n, c) => n + c.usage.totalTokens, 0),
      cost_usd: calls.reduce((n, c) => n + c.usage.costUsd, 0),
    });
  };
  // Every iteration's PROGRESS: the first right after AGENT_STARTED, the others when its mailbox is read.
  ctx.afterStarted = () => progress(1);
  let out: AgentOutput | undefined;
  let failure: string | undefined;
  try {
    // Deferred (recorded with the first model turn): a read that sends nothing.
    const shown = await ctx.step(`${prefix}-workspace`, async () => workspaceText(await board.entries(wf, s.limits.maxEntries)), { deferred: true });
    const messages: ChatMessage[] = [
      { role: 'system', content: s.system },
      {
        role: 'user',
        content:
          `You are ${s.name}, one agent of a swarm working on: ${s.query}\n\nYour task (${s.task.id}): ${s.task.description}\n\n` +
          `Your teammates: ${s.team.filter((n) => n !== s.name).join(', ') || 'none yet'}; the lead is "${LEAD}". You may message them with ${SEND_MESSAGE_TOOL}.\n\n` +
          `Shared workspace (latest results):\n${shown}\n\nAnswer with your task's result.`,
      },
    ];
    out = await runAgentLoop(ctx, deps, {
      agentId: s.name,
      messages,
      tier: s.spec.tier,
      model: s.spec.model,
      provider: s.spec.provider,
      tools: [...s.spec.tools, ...(tools ? [SEND_MESSAGE_TOOL] : [])],
      allowDangerous: s.spec.allowDangerous,
      maxIterations: s.spec.maxIterations,
      sessionId: s.spec.sessionId,
      userId: s.spec.userId,
      taskId: wf,
      stepPrefix: prefix,
      beforeTurn: async (i) => {
        // The swarm ended (its task over): no model call more.
        if (await board.ended(wf)) ctx.abort.abort(new SwarmEnded());
        ctx.checkpoint();
        // Deferred: recorded with the model turn that follows (one journal write); its PROGRESS goes to the lead now.
        const got = await ctx.step(
          `${prefix}-inbox-${i}`,
          async () => {
            const mails = reader.take().filter((m) => m.seq > last);
            if (i > 1) progress(i);
            return { mails, last: mails.reduce((n, m) => Math.max(n, m.seq), last) };
          },
          { deferred: true },
        );
        last = Math.max(last, got.last);
        const stop = got.mails.find((m): m is Received & { kind: 'stop' } => m.kind === 'stop');
        if (stop) throw new SwarmStopped(stop.reason);
        return got.mails.flatMap((m): ChatMessage[] => (m.kind === 'text' ? [{ role: 'user', content: `Message from ${m.from}: ${m.text}` }] : []));
      },
    });
  } catch (err) {
    // Stopped from outside (cancel, the worker handing the agent back, its lease lost): no report.
    if (ctx.signal.aborted) throw err;
    failure =
      err instanceof AgentTimedOut && s.limits.timeoutSetting
        ? `agent ${s.name} timed out: its execution took longer than ${s.limits.timeoutSetting} (${s.limits.timeoutMs / 1000} s)`
        : err instanceof Error
          ? err.message
          : String(err);
  }
  await ctx.step(`${prefix}-report`, async () => {
    const calls = out?.calls ?? ctx.calls;
    const report: AgentReport = {
      taskId: s.task.id,
      success: !!out,
      text: out?.text ?? '',
      ...(failure ? { error: failure } : {}),
      calls: calls.map((c) => ({ agentId: c.agentId, step: c.step, model: c.model, provider: c.provider, usage: c.usage })),
      toolCalls: out?.toolCalls ?? 0,
    };
    // The lead posts a result to the workspace when it retires the agent (one writer, one write per batch of results).
    if (!out) ctx.emit('AGENT_COMPLETED', s.name, `Agent ${s.name} failed: ${failure}`, { success: false, error: failure });
    ctx.hold(LEAD, { kind: 'result', from: s.name, report });
    return { success: !!out };
  });
}
