/**
 * The words of a plan review: the plan as a person reads it (numbered sub-questions), the
 * prompt of a feedback round, how the model's answer is read (an updated plan, intent
 * `ready`, or questions back, intent `feedback`), and the sub-questions of an approved plan.
 */
import type { ChatMessage } from '../llm/index.js';
import type { ReviewTurn } from './review-store.js';

/** Rounds a review may take; the last one asks the model for a definitive plan. */
export const MAX_REVIEW_ROUNDS = 10;

/** The plan's sub-questions as the first review round shows them. */
export function planMessage(query: string, questions: string[]): string {
  return `Research plan for: ${query}\n\n${questions.map((q, i) => `${i + 1}. ${q}`).join('\n')}`;
}

const ITEM = /^\s*(?:\d+[.)]|[-*•])\s+(.+?)\s*$/;

/**
 * The sub-questions of an approved plan: its numbered or bulleted lines; a plan written as
 * prose is one question (the query with the plan to follow).
 */
export function questionsOfPlan(plan: string, query: string, max: number): string[] {
  const items = plan
    .split('\n')
    .map((l) => ITEM.exec(l)?.[1])
    .filter((x): x is string => !!x && x.length > 0);
  return (items.length ? items : [`${query}\n\nFollow this research plan:\n${plan.trim()}`]).slice(0, Math.max(1, max));
}

const SYSTEM =
  'You help a person review a research plan before the research starts. The plan is a numbered list of sub-questions that together answer the research question. ' +
  'Given the conversation so far and the latest feedback, either answer with an updated plan (intent "ready"; the message is the whole plan as a numbered list, one sub-question per line) ' +
  'or, when the feedback is unclear, ask what you need to know (intent "feedback"; the message is your questions). ' +
  'Respond with JSON only: {"intent": "ready" | "feedback", "message": "..."}.';

const FINAL = 'This is the last review round: produce a definitive plan now (intent "ready"), asking no more questions.';

/** The messages of a feedback round: the question, the conversation so far and the new feedback. */
export function feedbackPrompt(query: string, rounds: ReviewTurn[], feedback: string, lastRound: boolean): ChatMessage[] {
  return [
    { role: 'system', content: lastRound ? `${SYSTEM}\n\n${FINAL}` : SYSTEM },
    { role: 'user', content: `Research question: ${query}` },
    ...rounds.map((r): ChatMessage => ({ role: r.role, content: r.message })),
    { role: 'user', content: feedback },
  ];
}

/**
 * The model's answer: JSON {intent, message} (anywhere in its text); anything else is the
 * message itself, a plan unless it only asks (ends with a question mark). A last round is
 * always a plan.
 */
export function readReply(text: string, lastRound: boolean): { intent: 'ready' | 'feedback'; message: string } {
  let intent: 'ready' | 'feedback' | undefined;
  let message = text.trim();
  try {
    const m = /\{[\s\S]*\}/.exec(text);
    const v = m ? (JSON.parse(m[0]) as { intent?: unknown; message?: unknown }) : undefined;
    if (v && typeof v.message === 'string' && v.message.trim()) {
      message = v.message.trim();
      if (v.intent === 'ready' || v.intent === 'feedback') intent = v.intent;
    }
  } catch {
    /* not JSON: the text is the message */
  }
  intent ??= message.endsWith('?') ? 'feedback' : 'ready';
  return { intent: lastRound ? 'ready' : intent, message };
}
