/**
 * The research plan: the question broken into the sub-questions the first round researches.
 * Its own step, so that a person can review the plan between planning and researching.
 */
import { modelTurn, type AgentOutput } from '../agents/index.js';
import type { WorkflowContext } from '../runtime/index.js';
import { researchSettingsOf } from './research-presets.js';
import { asOutput } from './usage.js';
import type { Prepared } from './workflow.js';

export interface ResearchPlan {
  /** The sub-questions of the first round (the question itself when the model gave none). */
  questions: string[];
  /** The planner's model call (usage). */
  output: AgentOutput;
}

/** A JSON array of strings from a model's answer (the first array in it), or undefined. */
export function stringsOf(text: string): string[] | undefined {
  try {
    const m = /\[[\s\S]*\]/.exec(text);
    const v = m ? (JSON.parse(m[0]) as unknown) : undefined;
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x.trim().length > 0).map((x) => x.trim()) : undefined;
  } catch {
    return undefined;
  }
}

export async function planResearch(ctx: WorkflowContext, p: Prepared): Promise<ResearchPlan> {
  const { questionsPerRound } = researchSettingsOf(p.t);
  const plan = await modelTurn(
    ctx,
    p.agent,
    { ...p.base, agentId: 'research-planner' },
    'research-plan',
    [
      {
        role: 'system',
        content: `Break the research question into at most ${questionsPerRound} focused sub-questions that together answer it. Respond with a JSON array of strings.`,
      },
      ...p.past,
      p.user,
    ],
    undefined,
    { announce: true, emitOutput: false },
  );
  const questions = (stringsOf(plan.text) ?? [p.t.query]).slice(0, questionsPerRound);
  return { questions: questions.length ? questions : [p.t.query], output: asOutput('research-planner', 'research-plan', plan) };
}
