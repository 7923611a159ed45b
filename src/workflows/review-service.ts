/**
 * The plan review a person holds with the model while the research task waits (owner only):
 * read the review, give feedback (the model answers with an updated plan or questions), approve.
 *
 * - Every change is compare-and-set on the stored review's revision, and `If-Match` (the
 *   version a client saw) is checked against the stored version.
 * - One feedback model call at a time per review, across gateways: a lock in KV with a lease
 *   (review-store.ts). While it is held, feedback and approval are refused (409), never queued.
 * - The feedback's events (REVIEW_USER_FEEDBACK, RESEARCH_PLAN_UPDATED) join the waiting
 *   workflow's own stream in its seq (runtime's appendExternalEvents); its model call is
 *   recorded in the task's usage (id `<task>:review-<round>`) and travels with the approval
 *   into the task's final usage and cost.
 * - Approval decides the workflow's durable wait with the confirmed plan and the conversation;
 *   the workflow resumes on any worker and emits RESEARCH_PLAN_APPROVED itself.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ModelCall } from '../agents/index.js';
import type { Bus } from '../bus/index.js';
import {
  AppError,
  Code,
  TERMINAL_STATUSES,
  backoffDelay,
  badRequest,
  conflict,
  forbidden,
  notFound,
  unauthenticated,
  type Logger,
  type Principal,
} from '../kernel/index.js';
import type { LlmProvider, UsageStore } from '../llm/index.js';
import { appendExternalEvents } from '../runtime/index.js';
import { startMessage, taskModelSettings, type TaskStore, type WaitStore } from '../tasks/index.js';
import type { ReviewStore, StoredReview } from './review-store.js';
import { MAX_REVIEW_ROUNDS, feedbackPrompt, readReply } from './review-text.js';
import { REVIEW_WAIT_KEY, type ReviewDecision } from './review-wait.js';
import { recordOf } from './usage.js';

export const REVIEW_NOT_FOUND = 'Review session not found or expired';
/** The longest feedback message, in bytes. */
export const MAX_FEEDBACK_BYTES = 10 * 1024;

/** A failure of something behind the review (the model, the store): the gateway answers 502. */
export class ReviewUpstreamError extends AppError {
  override name = 'ReviewUpstreamError';
  constructor(message: string, cause?: unknown) {
    super(Code.Unavailable, message, { cause, isPublic: true });
  }
}

/** The Review state as the interface shows it. */
export interface ReviewView {
  status: 'reviewing' | 'approved';
  round: number;
  version: number;
  current_plan: string;
  rounds: StoredReview['rounds'];
  query: string;
}

export interface FeedbackResult {
  status: 'reviewing';
  plan: { message: string; round: number; version: number; intent: 'ready' | 'feedback' };
}

export interface ReviewServiceDeps {
  reviews: ReviewStore;
  waits: WaitStore;
  tasks: TaskStore;
  bus: Bus;
  llm: LlmProvider;
  usage?: UsageStore;
  /** MAX_TOKENS and TEMPERATURE, unless the task's model_settings say otherwise. */
  maxTokens: number;
  temperature: number;
  log: Logger;
}

const REVIEWER = 'research-reviewer';
/** How long a call waits for the wait of a review just stored to open. */
const WAIT_OPEN_MS = 5000;
const TERMINAL = new Set<string>(TERMINAL_STATUSES);

const viewOf = (s: StoredReview): ReviewView => ({
  status: s.status,
  round: s.round,
  version: s.version,
  current_plan: s.current_plan,
  rounds: s.rounds,
  query: s.query,
});

export class ReviewService {
  constructor(private readonly d: ReviewServiceDeps) {}

  /** The review if the caller owns its task: another tenant's is missing (404), another user's 403. */
  private async owned(p: Principal, taskId: string): Promise<{ state: StoredReview; revision: number }> {
    const r = await this.d.reviews.get(taskId);
    if (!r) throw notFound(REVIEW_NOT_FOUND);
    if (!p.anonymous) {
      if (!p.userId) throw unauthenticated('principal without a user id');
      if ((r.state.tenant_id ?? '') !== (p.tenantId ?? '')) throw notFound(REVIEW_NOT_FOUND);
      if ((r.state.user_id ?? '') !== p.userId) throw forbidden('Forbidden: not the task owner');
    }
    return r;
  }

  /**
   * The workflow's wait for this review while it is pending (not timed out, the task not
   * ended: its open waits are closed just after its end is written). The review is stored a
   * step before the wait opens: a call in between waits for it (briefly).
   */
  private async waiting(taskId: string) {
    const end = Date.now() + WAIT_OPEN_MS;
    for (let attempt = 1; ; attempt++) {
      const [w, task] = await Promise.all([this.d.waits.byKey(taskId, REVIEW_WAIT_KEY), this.d.tasks.getTask(taskId)]);
      if (!task || TERMINAL.has(task.status)) return undefined;
      if (w || Date.now() >= end) return w?.status === 'pending' ? w : undefined;
      await sleep(backoffDelay({ baseMs: 25, capMs: 250 }, attempt));
    }
  }

  async get(p: Principal, taskId: string): Promise<ReviewView> {
    return viewOf((await this.owned(p, taskId)).state);
  }

  async feedback(p: Principal, taskId: string, message: unknown, ifMatch?: number): Promise<FeedbackResult> {
    if (typeof message !== 'string' || !message.trim()) throw badRequest('message is required for feedback');
    if (Buffer.byteLength(message, 'utf8') > MAX_FEEDBACK_BYTES) throw badRequest('message exceeds maximum length (10KB)');
    const first = await this.owned(p, taskId);
    if (first.state.status !== 'reviewing' || !(await this.waiting(taskId))) throw notFound(REVIEW_NOT_FOUND);
    if (ifMatch !== undefined && ifMatch !== first.state.version) throw conflict('Conflict: state has been modified');
    if (first.state.round >= MAX_REVIEW_ROUNDS) throw conflict('Maximum review rounds reached. Please approve the plan.');
    const holder = randomUUID();
    if (!(await this.d.reviews.lock(taskId, holder))) throw conflict('Another feedback request is in progress. Please wait.');
    try {
      // Read again under the lock: what the checks saw may have changed before it was taken.
      const cur = await this.d.reviews.get(taskId);
      if (!cur) throw notFound(REVIEW_NOT_FOUND);
      const s = cur.state;
      if (s.status !== 'reviewing') throw notFound(REVIEW_NOT_FOUND);
      if (s.version !== first.state.version) throw conflict('Conflict: state has been modified');
      const round = s.round + 1;
      const last = round >= MAX_REVIEW_ROUNDS;
      const { reply, call, task } = await this.ask(s, message, round, last);
      const now = new Date().toISOString();
      const next: StoredReview = {
        ...s,
        round,
        version: s.version + 1,
        intent: reply.intent,
        current_plan: reply.intent === 'ready' ? reply.message : s.current_plan,
        rounds: [...s.rounds, { role: 'user', message, timestamp: now }, { role: 'assistant', message: reply.message, timestamp: now }],
        calls: [...s.calls, call],
      };
      if (!(await this.d.reviews.update(next, cur.revision))) throw conflict('Conflict: state has been modified');
      this.d.usage?.recordModelCall(recordOf(task, call));
      await this.announce(taskId, message, next, reply.intent);
      return { status: 'reviewing', plan: { message: reply.message, round: next.round, version: next.version, intent: reply.intent } };
    } finally {
      await this.d.reviews.unlock(taskId, holder);
    }
  }

  /** The feedback round's model call, with the task's model settings. */
  private async ask(s: StoredReview, feedback: string, round: number, last: boolean) {
    const task = await this.d.tasks.getTask(s.task_id);
    if (!task) throw notFound(REVIEW_NOT_FOUND);
    const t = startMessage(task);
    const ms = taskModelSettings(t.context);
    try {
      const r = await this.d.llm.complete({
        messages: feedbackPrompt(s.query, s.rounds, feedback, last),
        tier: t.model_tier,
        model: t.model_override,
        provider: t.provider_override,
        maxTokens: ms.maxTokens ?? this.d.maxTokens,
        temperature: ms.temperature ?? this.d.temperature,
        ...(ms.topP !== undefined ? { topP: ms.topP } : {}),
        budget: { taskId: s.task_id, agentId: REVIEWER },
      });
      const call: ModelCall = {
        agentId: REVIEWER,
        step: `review-${round}`,
        tier: t.model_tier,
        model: r.model,
        provider: r.provider,
        usage: r.usage,
        ...(r.cacheHit ? { cacheHit: true, cacheScore: r.cacheScore } : {}),
      };
      return { reply: readReply(r.text, last), call, task: t };
    } catch (err) {
      this.d.log.warn({ err, workflow_id: s.task_id }, 'review feedback: the model call failed');
      throw new ReviewUpstreamError('Failed to generate updated plan', err);
    }
  }

  /** The round's events, in the waiting workflow's stream; the review itself is already stored. */
  private async announce(taskId: string, feedback: string, s: StoredReview, intent: 'ready' | 'feedback'): Promise<void> {
    try {
      await appendExternalEvents(this.d.bus, taskId, [
        { type: 'REVIEW_USER_FEEDBACK', agentId: 'user', message: feedback, payload: { message: feedback, round: s.round, version: s.version } },
        {
          type: 'RESEARCH_PLAN_UPDATED',
          agentId: REVIEWER,
          message: intent === 'ready' ? 'Research plan updated' : 'The planner has questions about the plan',
          payload: { plan: s.rounds.at(-1)!.message, round: s.round, version: s.version, intent },
        },
      ]);
    } catch (err) {
      this.d.log.warn({ err, workflow_id: taskId }, 'review feedback: its events could not be appended');
    }
  }

  async approve(p: Principal, taskId: string, ifMatch?: number): Promise<{ status: 'approved'; message: string }> {
    const first = await this.owned(p, taskId);
    if (first.state.status === 'approved') return { status: 'approved', message: 'Research plan already approved' };
    const wait = await this.waiting(taskId);
    if (!wait) throw notFound(REVIEW_NOT_FOUND);
    if (ifMatch !== undefined && ifMatch !== first.state.version) throw conflict('Conflict: plan has been updated. Please review the latest version.');
    if (!first.state.current_plan.trim()) throw badRequest('No research plan to approve. Please provide feedback to generate a plan first.');
    // Holding the feedback lock while approving: no feedback round can start meanwhile.
    const holder = randomUUID();
    if (!(await this.d.reviews.lock(taskId, holder))) throw conflict('A feedback request is in progress. Please wait and try again.');
    try {
      const cur = await this.d.reviews.get(taskId);
      if (!cur) throw notFound(REVIEW_NOT_FOUND);
      const s = cur.state;
      if (s.version !== first.state.version) throw conflict('Conflict: plan has been updated. Please review the latest version.');
      const approved: StoredReview = { ...s, status: 'approved', version: s.version + 1 };
      if (!(await this.d.reviews.update(approved, cur.revision))) throw conflict('Conflict: plan has been updated. Please review the latest version.');
      const by = p.userId ?? 'anonymous';
      const decision: ReviewDecision = {
        approved: true,
        plan: s.current_plan,
        conversation: s.rounds,
        round: s.round,
        version: s.version,
        calls: s.calls,
        approved_by: by,
      };
      let changed: boolean;
      try {
        changed = (await this.d.waits.decide(wait.id, decision as Record<string, unknown>, { by })).changed;
      } catch (err) {
        await this.revert(s, approved);
        throw new ReviewUpstreamError('Failed to approve review', err);
      }
      if (!changed) {
        // The timer (or the task's end) decided the wait first: this review is over.
        await this.revert(s, approved);
        throw notFound(REVIEW_NOT_FOUND);
      }
      return { status: 'approved', message: 'Research plan approved; the research is starting.' };
    } finally {
      await this.d.reviews.unlock(taskId, holder);
    }
  }

  /** Puts back the review an approval could not complete (under the lock, so nothing else changed it). */
  private async revert(before: StoredReview, approved: StoredReview): Promise<void> {
    const now = await this.d.reviews.get(before.task_id).catch(() => undefined);
    if (now && now.state.version === approved.version) await this.d.reviews.update({ ...before, version: approved.version + 1 }, now.revision).catch(() => {});
  }
}
