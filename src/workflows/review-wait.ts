/**
 * Plan review inside the research workflow (context.require_review / review_plan "manual"):
 * after the plan, the review state is stored (round 1, version 1, the plan as its first
 * assistant turn), RESEARCH_PLAN_READY is emitted as the wait opens, and the workflow waits
 * for a person (a durable wait of kind `review`: it passivates, holding nothing). Feedback
 * rounds happen meanwhile through the ReviewService (review-service.ts), outside the
 * workflow. Approval decides the wait with the confirmed plan and the conversation; the
 * workflow resumes, emits RESEARCH_PLAN_APPROVED and researches the confirmed plan's
 * sub-questions. No approval within review_timeout: the task fails.
 */
import { AppError, Code } from '../kernel/index.js';
import { waitFor, type WorkflowContext } from '../runtime/index.js';
import type { ResearchPlan } from './research-plan.js';
import { researchSettingsOf } from './research-presets.js';
import { REVIEW_GRACE_MS, type ReviewTurn, type StoredReview } from './review-store.js';
import { planMessage, questionsOfPlan } from './review-text.js';
import { sumUsage } from './usage.js';
import type { Prepared } from './workflow.js';
import type { ModelCall } from '../agents/index.js';

/** The wait's kind in task_waits, and its key in the workflow. */
export const REVIEW_KIND = 'review';
export const REVIEW_WAIT_KEY = 'review';

/** What approval decides the wait with (review-service.ts writes it). */
export interface ReviewDecision {
  approved?: boolean;
  plan?: string;
  conversation?: ReviewTurn[];
  round?: number;
  version?: number;
  calls?: ModelCall[];
  approved_by?: string;
  timed_out?: boolean;
}

/** A plan after its review: the sub-questions of the confirmed plan, and what the review was. */
export interface ReviewedPlan extends ResearchPlan {
  review?: { plan: string; rounds: number; version: number; conversation: ReviewTurn[] };
}

export const reviewTimedOut = (seconds: number) => `plan review timed out: the plan was not approved within ${seconds} seconds`;

/** Waits for a person to approve the plan when the task asked for review; the plan as it is otherwise. */
export async function reviewPlan(ctx: WorkflowContext, p: Prepared, plan: ResearchPlan): Promise<ReviewedPlan> {
  const { t } = p;
  if (!t.review) return plan;
  const reviews = p.deps.reviews;
  if (!reviews) throw new AppError(Code.FailedPrecondition, 'plan review is not available: this worker has no review store');
  const seconds = t.review.timeoutSeconds;
  const opened = await ctx.step('review-open', async () => {
    const now = new Date();
    const message = planMessage(t.query, plan.questions);
    const state: StoredReview = {
      status: 'reviewing',
      round: 1,
      version: 1,
      current_plan: message,
      rounds: [{ role: 'assistant', message, timestamp: now.toISOString() }],
      query: t.query,
      intent: 'ready',
      task_id: t.task_id,
      user_id: t.user_id ?? null,
      tenant_id: t.tenant_id ?? null,
      timeout_seconds: seconds,
      expires_at: new Date(now.getTime() + seconds * 1000 + REVIEW_GRACE_MS).toISOString(),
      calls: [],
    };
    await reviews.create(state);
    return { message };
  });
  const d = await waitFor<ReviewDecision>(ctx, {
    key: REVIEW_WAIT_KEY,
    kind: REVIEW_KIND,
    timeoutMs: seconds * 1000,
    request: { plan: opened.message, round: 1, version: 1, timeout_seconds: seconds },
    owner: { userId: t.user_id, tenantId: t.tenant_id, sessionId: t.session_id },
    onOpen: () => {
      ctx.emit('RESEARCH_PLAN_READY', 'research-planner', 'Research plan ready for review', { plan: opened.message, round: 1, version: 1 });
    },
    onDecided: (w) => {
      const x = w.decision as ReviewDecision;
      if (w.timedOut || !x.plan) return;
      ctx.emit('RESEARCH_PLAN_APPROVED', 'orchestrator', 'Research plan approved', {
        plan: x.plan,
        round: x.round ?? 1,
        version: x.version ?? 1,
        ...(x.approved_by ? { approved_by: x.approved_by } : {}),
      });
    },
  });
  const x = d.decision;
  if (d.timedOut || !x.plan) throw new AppError(Code.FailedPrecondition, reviewTimedOut(seconds));
  const calls = x.calls ?? [];
  const { questionsPerRound } = researchSettingsOf(t);
  return {
    questions: questionsOfPlan(x.plan, t.query, questionsPerRound),
    output: { ...plan.output, usage: sumUsage([plan.output.usage, ...calls.map((c) => c.usage)]), calls: [...plan.output.calls, ...calls] },
    review: { plan: x.plan, rounds: x.round ?? 1, version: x.version ?? 1, conversation: x.conversation ?? [] },
  };
}
