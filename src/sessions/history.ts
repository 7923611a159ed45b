/**
 * Multi-turn context: which earlier messages of a session a new task sees.
 *
 * The session's earlier turns (each task's query and, when it has one, its result) form the
 * history, oldest first. With W = history_window_size, P = primers_count, R = recents_count:
 * - the first P (primers) and the last R (recents) are always kept verbatim;
 * - when the history exceeds compression_trigger_ratio x W messages (so never more than W),
 *   the middle (everything
 *   between the primers and the recents) is summarised by the LLM into one message, so the
 *   context shrinks to about compression_target_ratio x W; the summary is recorded in the
 *   session's context (`history_summary`) and in the task's metadata.
 *
 * `use_case_preset` picks defaults (explicit context keys win):
 *   default: W = HISTORY_WINDOW_MESSAGES (50), P 5, R 15
 *   debugging: W = HISTORY_WINDOW_DEBUG_MESSAGES (75), P 10, R 25
 *   short: W 10, P 2, R 6   (chat widgets, cheap models)
 *   long_context: W 200, P 10, R 60
 */
import type { ChatMessage } from '../llm/index.js';
import { recognisedNumber, type SessionRegistry, type TaskStore } from '../tasks/index.js';

export interface WindowSettings {
  window: number;
  primers: number;
  recents: number;
  triggerRatio: number;
  targetRatio: number;
  preset: string;
}

export const PRESETS = ['default', 'debugging', 'short', 'long_context'] as const;

export function windowSettings(
  context: Record<string, unknown>,
  defaults: { windowMessages: number; debugWindowMessages: number; triggerRatio: number },
): WindowSettings {
  const preset =
    typeof context.use_case_preset === 'string' && (PRESETS as readonly string[]).includes(context.use_case_preset) ? context.use_case_preset : 'default';
  const base =
    preset === 'debugging'
      ? { window: defaults.debugWindowMessages, primers: 10, recents: 25 }
      : preset === 'short'
        ? { window: 10, primers: 2, recents: 6 }
        : preset === 'long_context'
          ? { window: 200, primers: 10, recents: 60 }
          : { window: defaults.windowMessages, primers: 5, recents: 15 };
  // The submission refuses values out of range; a task stored before it checked them falls back.
  const window = recognisedNumber(context, 'history_window_size') ?? base.window;
  const primers = Math.min(recognisedNumber(context, 'primers_count') ?? base.primers, window);
  const recents = Math.min(recognisedNumber(context, 'recents_count') ?? base.recents, Math.max(0, window - primers));
  const triggerRatio = recognisedNumber(context, 'compression_trigger_ratio') ?? defaults.triggerRatio;
  const targetRatio = Math.min(recognisedNumber(context, 'compression_target_ratio') ?? 0.5, triggerRatio);
  return { window, primers, recents, triggerRatio, targetRatio, preset };
}

export interface Turn {
  task_id: string;
  query: string;
  result: string | null;
}

/** Earlier turns of the task's session (same owner), oldest first. */
export async function loadTurns(
  d: { tasks: TaskStore; sessions: SessionRegistry },
  t: { task_id: string; session_id: string; user_id?: string },
  limit: number,
): Promise<Turn[]> {
  const owner = t.user_id ?? null;
  return d.tasks.earlierTurns(t.task_id, await d.sessions.namesOf(t.session_id, owner), owner, limit);
}

export function turnsToMessages(turns: Turn[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const t of turns) {
    out.push({ role: 'user', content: t.query });
    if (t.result) out.push({ role: 'assistant', content: t.result });
  }
  return out;
}

export interface Windowed {
  messages: ChatMessage[];
  /** The middle messages to summarise, when compression is due. */
  toCompress?: ChatMessage[];
  dropped: number;
  total: number;
}

/**
 * Applies the window. When compression is due, returns the middle to summarise; the caller
 * replaces it with one summary message (see withSummary).
 */
export function applyWindow(all: ChatMessage[], w: WindowSettings): Windowed {
  const total = all.length;
  if (total === 0) return { messages: [], dropped: 0, total };
  const primers = all.slice(0, Math.min(w.primers, total));
  const recents = all.slice(Math.max(primers.length, total - w.recents));
  const middle = all.slice(primers.length, total - recents.length);
  if (total > w.triggerRatio * w.window && middle.length > 0) {
    return { messages: [...primers, ...recents], toCompress: middle, dropped: 0, total };
  }
  // Not over trigger x window (<= the window itself): everything fits.
  return { messages: all, dropped: 0, total };
}

export function withSummary(win: Windowed, w: WindowSettings, summary: string): ChatMessage[] {
  const primers = win.messages.slice(0, Math.min(w.primers, win.messages.length));
  const recents = win.messages.slice(primers.length);
  return [...primers, { role: 'system', content: `Summary of ${win.toCompress!.length} earlier messages of this conversation: ${summary}` }, ...recents];
}

export function summaryPrompt(middle: ChatMessage[], targetMessages: number): ChatMessage[] {
  const transcript = middle.map((m) => `${m.role}: ${m.content}`).join('\n');
  return [
    {
      role: 'system',
      content: `Summarise this part of a conversation so it can replace ${middle.length} messages; keep facts, decisions, names and open questions. Aim for the length of about ${Math.max(1, targetMessages)} short messages.`,
    },
    { role: 'user', content: transcript },
  ];
}
