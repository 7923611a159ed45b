/**
 * The session's earlier turns a task sees: the window, primers and recents, and the middle of
 * a long history compressed into a summary by a model call (once: the step is journaled).
 */
import type { AgentDeps, ModelCall } from '../agents/index.js';
import type { ChatMessage } from '../llm/index.js';
import type { WorkflowContext } from '../runtime/index.js';
import { applyWindow, loadTurns, summaryPrompt, turnsToMessages, windowSettings, withSummary } from '../sessions/index.js';
import { conversationHistoryOf, type TaskStart } from '../tasks/index.js';
import type { WorkflowDeps } from './workflow.js';

export interface SessionHistory {
  messages: ChatMessage[];
  info: Record<string, unknown>;
  /** The session's UUID (its workspace), when the caller owns it. */
  sessionUuid: string | undefined;
  /** The summary's model call, when this task compressed the history. */
  summaryCall: ModelCall | undefined;
}

/**
 * The session's earlier turns this task sees (window, primers, recents, compression), and
 * the session's UUID (its workspace); a journaled step, so a replay reads the same history
 * and never pays for a second summary.
 */
export async function sessionHistory(ctx: WorkflowContext, deps: WorkflowDeps, t: TaskStart, agent: AgentDeps): Promise<SessionHistory> {
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
      return { messages: win.messages, info: { ...info, dropped: win.toCompress.length }, sessionUuid, summaryCall: undefined };
    }
    if (!win.toCompress) return { messages: win.messages, info, sessionUuid, summaryCall: undefined };
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
