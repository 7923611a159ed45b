/**
 * Plan review (issue 15 §2) against a scripted OpenAI-compatible model and a local search
 * backend and page: a research task with require_review waits after its plan; feedback
 * rounds update the plan (or ask), approval resumes it and the research follows the approved
 * plan; every error of the spec's review table; expiry; the review timeout; ownership; cancel
 * while waiting; the submission's review keys.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ifMatchOf } from '../src/gateway/review-routes.js';
import { ANONYMOUS, createLogger } from '../src/kernel/index.js';
import { WaitStore } from '../src/tasks/index.js';
import { ReviewService, ReviewStore } from '../src/workflows/index.js';
import { json, readSse, startTestApp, waitFor, type TestApp } from './helpers/app.js';
import { colleagueOf as colleagueIn, registerUser, type TestUser } from './helpers/users.js';
import { scriptedProvider, startOpenAiServer, type OpenAiTestServer, type RecordedRequest, type Reply } from './helpers/openai-server.js';
import { startResearchWeb, type ResearchWeb } from './helpers/research-web.js';

let t: TestApp;
let llm: OpenAiTestServer;
let web: ResearchWeb;
let reviews: ReviewStore;

const system = (r: RecordedRequest) => String((r.messages ?? []).find((m) => m.role === 'system')?.content ?? '');
const lastUser = (r: RecordedRequest) => String([...(r.messages ?? [])].reverse().find((m) => m.role === 'user')?.content ?? '');
const REVIEWER = 'You help a person review a research plan';

/** The scripted model: planner, reviewer (by the feedback's words), researchers, coverage, report. */
function script(r: RecordedRequest): Reply {
  const sys = system(r);
  if (sys.startsWith('Break the research question')) return { type: 'completion', content: '["Original question one?", "Original question two?"]' };
  if (sys.startsWith(REVIEWER)) {
    const fb = lastUser(r);
    if (fb.includes('slow')) return { type: 'completion', content: '{"intent": "ready", "message": "1. Slow plan"}', delayMs: 1500 };
    if (fb.includes('break')) return { type: 'error', status: 400, message: 'bad request' };
    if (fb.includes('unclear')) return { type: 'completion', content: '{"intent": "feedback", "message": "Which years should the research cover?"}' };
    return { type: 'completion', content: '{"intent": "ready", "message": "1. Approved question alpha\\n2. Approved question beta"}' };
  }
  if (sys.startsWith('You are a research agent')) {
    return (r.messages ?? []).some((m) => m.role === 'tool')
      ? { type: 'completion', content: `Counters reset per window (${web.pageUrl}).` }
      : { type: 'completion', content: '', toolCalls: [{ id: 'f1', name: 'web_fetch', arguments: JSON.stringify({ url: web.pageUrl }) }] };
  }
  if (sys.startsWith('You check research coverage')) return { type: 'completion', content: '{"complete": true, "gaps": []}' };
  return { type: 'completion', content: 'A fixed window counter resets at the end of its window [1].' };
}

beforeAll(async () => {
  llm = await startOpenAiServer();
  web = await startResearchWeb();
  t = await startTestApp(
    {
      ...web.env,
      GATEWAY_SKIP_AUTH: '0',
      PASSWORD_SCRYPT_N: '1024',
      JWT_SECRET: 'review-test-secret-0123456789abcdefghij',
      RATE_LIMIT_REQUESTS: '100000',
      RATE_LIMIT_TASK_LIST_BURST: '100000',
      MAX_TOKENS_PER_REQUEST: '0',
      MAX_COST_PER_REQUEST: '0',
    },
    { llm: scriptedProvider(llm) },
  );
  reviews = await ReviewStore.open(t.app.bus);
});
afterAll(async () => {
  await t?.stop();
  await llm?.close();
});
beforeEach(() => {
  llm.reset();
  llm.setDefault(script);
});

type User = TestUser;
const register = () => registerUser(t.base, 'rv');
const colleagueOf = (u: User) => colleagueIn(t.app.store.sql, u);

const post = (path: string, body: unknown, h: Record<string, string>) =>
  fetch(t.base + path, { method: 'POST', headers: { 'content-type': 'application/json', ...h }, body: JSON.stringify(body) });
const reviewUrl = (id: string) => `${t.base}/api/v1/tasks/${id}/review`;
const getReview = (u: User, id: string) => fetch(reviewUrl(id), { headers: u.h });
const act = (u: User, id: string, body: unknown, ifMatch?: string) =>
  post(`/api/v1/tasks/${id}/review`, body, { ...u.h, ...(ifMatch !== undefined ? { 'If-Match': ifMatch } : {}) });

async function expectError(r: Response, status: number, error: string) {
  expect({ status: r.status, body: await json(r) }).toEqual({ status, body: { error } });
}

/** Submits a research task asking for review and waits until it waits for the review (PAUSED). */
async function waitingTask(u: User, context: Record<string, unknown> = {}): Promise<string> {
  const r = await post('/api/v1/tasks', { query: 'How does a fixed window rate limiter work?', context: { require_review: true, ...context } }, u.h);
  const b = await json(r);
  expect(r.status, JSON.stringify(b)).toBe(200);
  await waitFor(async () => (await t.app.store.getTask(b.task_id))?.status === 'TASK_STATUS_PAUSED' && (await getReview(u, b.task_id)).status === 200, 30_000);
  return b.task_id;
}

async function finished(u: User, id: string) {
  return waitFor(async () => {
    const s = await json(await fetch(`${t.base}/api/v1/tasks/${id}`, { headers: u.h }));
    return /COMPLETED|FAILED|CANCELLED|TIMEOUT/.test(s.status) ? s : undefined;
  }, 30_000);
}

async function events(u: User, id: string) {
  const { events: evs } = await readSse(`${t.base}/api/v1/stream/sse?workflow_id=${id}`, { timeoutMs: 30_000, headers: u.h });
  return evs.filter((e) => e.event !== 'done').map((e) => JSON.parse(e.data) as { type: string; seq: number; payload?: any });
}

describe('plan review', () => {
  it('If-Match: bare, quoted or weak; * or absent is no condition; anything else matches no version', () => {
    expect(['3', '"3"', 'W/"3"', ' 3 '].map(ifMatchOf)).toEqual([3, 3, 3, 3]);
    expect([undefined, '', '*'].map(ifMatchOf)).toEqual([undefined, undefined, undefined]);
    expect(['abc', '3.5', '"3'].map(ifMatchOf)).toEqual([-1, -1, 3]);
  });

  it('feedback rounds update the plan or ask, approval resumes the task, and the research follows the approved plan', async () => {
    const u = await register();
    const id = await waitingTask(u, { review_timeout: '600' });
    const g = await getReview(u, id);
    expect(g.headers.get('etag')).toBe('1');
    const first = await json(g);
    expect(first).toMatchObject({ status: 'reviewing', round: 1, version: 1, query: 'How does a fixed window rate limiter work?' });
    expect(first.current_plan).toContain('1. Original question one?');
    expect(first.rounds).toEqual([{ role: 'assistant', message: first.current_plan, timestamp: expect.any(String) }]);
    expect(Object.keys(first).sort()).toEqual(['current_plan', 'query', 'round', 'rounds', 'status', 'version']);

    const f1 = await act(u, id, { action: 'feedback', message: 'Focus on alpha and beta' }, '"1"');
    expect(f1.status).toBe(200);
    expect(f1.headers.get('etag')).toBe('2');
    expect(await json(f1)).toEqual({
      status: 'reviewing',
      plan: { message: '1. Approved question alpha\n2. Approved question beta', round: 2, version: 2, intent: 'ready' },
    });
    const f2 = await act(u, id, { action: 'feedback', message: 'Something unclear' }, '2');
    expect(await json(f2)).toEqual({
      status: 'reviewing',
      plan: { message: 'Which years should the research cover?', round: 3, version: 3, intent: 'feedback' },
    });
    const mid = await json(await getReview(u, id));
    // Questions do not replace the latest actionable plan.
    expect(mid).toMatchObject({ round: 3, version: 3, current_plan: '1. Approved question alpha\n2. Approved question beta' });
    expect(mid.rounds.map((x: { role: string }) => x.role)).toEqual(['assistant', 'user', 'assistant', 'user', 'assistant']);
    // The model saw the conversation so far with the new feedback last.
    const asked = llm.requests.filter((r) => system(r).startsWith(REVIEWER)).at(-1)!;
    expect(JSON.stringify(asked.messages)).toContain('Focus on alpha and beta');

    const a = await act(u, id, { action: 'approve' }, 'W/"3"');
    expect(a.status).toBe(200);
    expect(await json(a)).toEqual({ status: 'approved', message: expect.any(String) });
    const s = await finished(u, id);
    expect(s.status, s.error).toBe('TASK_STATUS_COMPLETED');
    // The researchers worked on the approved plan's sub-questions.
    const subs = llm.requests.filter((r) => system(r).startsWith('You are a research agent')).map((r) => /Your sub-question: (.*)/.exec(lastUser(r))?.[1]);
    expect([...new Set(subs)].sort()).toEqual(['Approved question alpha', 'Approved question beta']);
    expect(s.metadata.research.questions.map((q: { question: string }) => q.question)).toEqual(['Approved question alpha', 'Approved question beta']);
    expect(s.metadata.review).toMatchObject({ plan: '1. Approved question alpha\n2. Approved question beta', rounds: 3, version: 3 });
    expect(s.metadata.review.conversation).toHaveLength(5);

    const evs = await events(u, id);
    expect(evs.map((e) => e.seq)).toEqual(evs.map((_, i) => i + 1));
    const review = evs.filter((e) => /RESEARCH_PLAN|REVIEW_USER/.test(e.type));
    expect(review.map((e) => e.type)).toEqual([
      'RESEARCH_PLAN_READY',
      'REVIEW_USER_FEEDBACK',
      'RESEARCH_PLAN_UPDATED',
      'REVIEW_USER_FEEDBACK',
      'RESEARCH_PLAN_UPDATED',
      'RESEARCH_PLAN_APPROVED',
    ]);
    expect(review[0]!.payload).toEqual({ plan: first.current_plan, round: 1, version: 1 });
    expect(review[2]!.payload).toMatchObject({ plan: '1. Approved question alpha\n2. Approved question beta', round: 2, version: 2, intent: 'ready' });
    expect(review[5]!.payload).toMatchObject({ plan: '1. Approved question alpha\n2. Approved question beta', round: 3, version: 3 });
    expect(evs.some((e) => e.type === 'ERROR_RECOVERY')).toBe(false);

    // The review rounds' usage is recorded (one record per round) and counted in the task's.
    const calls = await t.app.store.sql<{ id: string; total_tokens: number }[]>`SELECT id, total_tokens FROM llm_calls WHERE task_id = ${id}::uuid`;
    expect(calls.map((c) => c.id)).toEqual(expect.arrayContaining([`${id}:review-2`, `${id}:review-3`]));
    const row = (await t.app.store.getTask(id))!;
    expect(Number(row.total_tokens)).toBe(calls.reduce((n, c) => n + Number(c.total_tokens), 0));

    // Approved: GET shows it; a second approval changes nothing.
    expect(await json(await getReview(u, id))).toMatchObject({ status: 'approved' });
    expect((await act(u, id, { action: 'approve' })).status).toBe(200);
  }, 60_000);

  it('feedback as soon as the review exists, while the workflow still runs: its events wait for it and keep the seq gap-free', async () => {
    const u = await register();
    const r = await post('/api/v1/tasks', { query: 'How does a fixed window rate limiter work?', context: { require_review: true } }, u.h);
    const { task_id: id } = await json(r);
    await waitFor(async () => (await getReview(u, id)).status === 200, 30_000, 5);
    const f = await act(u, id, { action: 'feedback', message: 'Focus on alpha and beta' });
    expect(f.status).toBe(200);
    expect((await act(u, id, { action: 'approve' })).status).toBe(200);
    const s = await finished(u, id);
    expect(s.status, s.error).toBe('TASK_STATUS_COMPLETED');
    const evs = await events(u, id);
    expect(evs.map((e) => e.seq)).toEqual(evs.map((_, i) => i + 1));
    expect(evs.some((e) => e.type === 'ERROR_RECOVERY')).toBe(false);
    const types = evs.map((e) => e.type);
    expect(types.indexOf('RESEARCH_PLAN_READY')).toBeLessThan(types.indexOf('REVIEW_USER_FEEDBACK'));
  }, 60_000);

  it('every error of the review table', async () => {
    const u = await register();
    const id = await waitingTask(u);
    await expectError(await act(u, id, { action: 'maybe' }), 400, "action must be 'feedback' or 'approve'");
    await expectError(await act(u, id, {}), 400, "action must be 'feedback' or 'approve'");
    await expectError(await act(u, id, { action: 'feedback' }), 400, 'message is required for feedback');
    await expectError(await act(u, id, { action: 'feedback', message: '   ' }), 400, 'message is required for feedback');
    await expectError(await act(u, id, { action: 'feedback', message: 'é'.repeat(5121) }), 400, 'message exceeds maximum length (10KB)');
    expect((await act(u, id, { action: 'feedback', message: 'x'.repeat(10 * 1024 - 20) + ' alpha beta ok' })).status).toBe(200);
    await expectError(await act(u, id, { action: 'feedback', message: 'more' }, '1'), 409, 'Conflict: state has been modified');
    await expectError(await act(u, id, { action: 'approve' }, '"1"'), 409, 'Conflict: plan has been updated. Please review the latest version.');
    // The model fails: 502, and the review is as it was.
    await expectError(await act(u, id, { action: 'feedback', message: 'break it' }), 502, 'Failed to generate updated plan');
    expect(await json(await getReview(u, id))).toMatchObject({ round: 2, version: 2 });
    // A feedback model call holds the lock: another feedback and an approval are refused meanwhile.
    const slow = act(u, id, { action: 'feedback', message: 'slow please' });
    await waitFor(async () => llm.requests.some((r) => lastUser(r).includes('slow please')), 10_000);
    await expectError(await act(u, id, { action: 'feedback', message: 'me too' }), 409, 'Another feedback request is in progress. Please wait.');
    await expectError(await act(u, id, { action: 'approve' }), 409, 'A feedback request is in progress. Please wait and try again.');
    expect((await slow).status).toBe(200);
    // No plan to approve (the model only asked so far).
    const cur = (await reviews.get(id))!;
    expect(await reviews.update({ ...cur.state, current_plan: '' }, cur.revision)).toBe(true);
    await expectError(await act(u, id, { action: 'approve' }), 400, 'No research plan to approve. Please provide feedback to generate a plan first.');
    const back = (await reviews.get(id))!;
    await reviews.update({ ...back.state, current_plan: '1. Back' }, back.revision);
    // Rounds 4..10; round 10 asks for a definitive plan; then only approval.
    for (let round = (await json(await getReview(u, id))).round + 1; round <= 10; round++) {
      const r = await act(u, id, { action: 'feedback', message: `round ${round}` });
      expect((await json(r)).plan.round).toBe(round);
    }
    const prompts = llm.requests.filter((r) => system(r).startsWith(REVIEWER));
    expect(system(prompts.at(-1)!)).toContain('last review round');
    expect(system(prompts.at(-2)!)).not.toContain('last review round');
    await expectError(await act(u, id, { action: 'feedback', message: 'one more' }), 409, 'Maximum review rounds reached. Please approve the plan.');
    await expectError(await getReview(u, randomUUID()), 404, 'Review session not found or expired');
    await expectError(await act(u, 'not-a-uuid', { action: 'approve' }), 404, 'Review session not found or expired');
    expect((await act(u, id, { action: 'approve' })).status).toBe(200);
    expect((await finished(u, id)).status).toBe('TASK_STATUS_COMPLETED');
  }, 90_000);

  it('an approval that cannot be stored is a 502 Failed to approve review, and the review stays as it was', async () => {
    const u = await register();
    const id = await waitingTask(u);
    const waits = new WaitStore(t.app.store.sql, t.app.store, t.app.bus);
    const failing = Object.assign(Object.create(waits) as WaitStore, { decide: () => Promise.reject(new Error('database down')) });
    const service = new ReviewService({
      reviews,
      waits: failing,
      tasks: t.app.store,
      bus: t.app.bus,
      llm: scriptedProvider(llm),
      maxTokens: 100,
      temperature: 0,
      log: createLogger({ level: 'silent' }),
    });
    await expect(service.approve(ANONYMOUS, id)).rejects.toMatchObject({ name: 'ReviewUpstreamError', message: 'Failed to approve review' });
    const g = await getReview(u, id);
    expect(await json(g)).toMatchObject({ status: 'reviewing' });
    const a = await act(u, id, { action: 'approve' }, g.headers.get('etag')!);
    expect(a.status).toBe(200);
    expect((await finished(u, id)).status).toBe('TASK_STATUS_COMPLETED');
  }, 60_000);

  it('owner only: another user of the tenant 403, another tenant 404', async () => {
    const u = await register();
    const id = await waitingTask(u);
    const colleague = await colleagueOf(u);
    const stranger = await register();
    for (const r of [await getReview(colleague, id), await act(colleague, id, { action: 'approve' })])
      await expectError(r, 403, 'Forbidden: not the task owner');
    for (const r of [await getReview(stranger, id), await act(stranger, id, { action: 'feedback', message: 'hi' })]) {
      await expectError(r, 404, 'Review session not found or expired');
    }
    expect((await act(u, id, { action: 'approve' })).status).toBe(200);
    expect((await finished(u, id)).status).toBe('TASK_STATUS_COMPLETED');
  }, 60_000);

  it('the review expires at its timeout plus 5 minutes (404); not approved within review_timeout the task fails', async () => {
    const u = await register();
    const id = await waitingTask(u, { review_timeout: 2 });
    const r = (await reviews.get(id))!;
    expect(Date.parse(r.state.expires_at) - Date.now()).toBeGreaterThan(4 * 60_000);
    expect(Date.parse(r.state.expires_at) - Date.now()).toBeLessThanOrEqual(5 * 60_000 + 2000);
    const s = await finished(u, id);
    expect(s.status).toBe('TASK_STATUS_FAILED');
    expect(s.error).toBe('plan review timed out: the plan was not approved within 2 seconds');
    // Timed out: no approval is taken any more; past its expiry the review is gone.
    await expectError(await act(u, id, { action: 'approve' }), 404, 'Review session not found or expired');
    const cur = (await reviews.get(id))!;
    await reviews.update({ ...cur.state, expires_at: new Date(Date.now() - 1000).toISOString() }, cur.revision);
    await expectError(await getReview(u, id), 404, 'Review session not found or expired');
    await expectError(await act(u, id, { action: 'feedback', message: 'late' }), 404, 'Review session not found or expired');
  }, 60_000);

  it('cancel while the task waits for review ends it CANCELLED at once', async () => {
    const u = await register();
    const id = await waitingTask(u);
    const at = Date.now();
    expect((await post(`/api/v1/tasks/${id}/cancel`, {}, u.h)).status).toBe(200);
    const s = await finished(u, id);
    expect(s.status).toBe('TASK_STATUS_CANCELLED');
    expect(Date.now() - at).toBeLessThan(5000);
    await expectError(await act(u, id, { action: 'approve' }), 404, 'Review session not found or expired');
  }, 60_000);

  it('submission: review_plan manual asks for review; other values and bad timeouts are 400s naming the key', async () => {
    const u = await register();
    const bad = async (context: Record<string, unknown>, error: string) => expectError(await post('/api/v1/tasks', { query: 'q', context }, u.h), 400, error);
    await bad({ review_plan: 'sometimes' }, 'context.review_plan must be one of: manual, auto, none');
    await bad({ require_review: 'yes' }, 'context.require_review must be a boolean');
    await bad({ require_review: true, review_timeout: 0 }, 'context.review_timeout must be an integer from 1 to 86400');
    await bad({ require_review: true, review_timeout: 86_401 }, 'context.review_timeout must be an integer from 1 to 86400');
    const id = await waitingTask(u, { require_review: 'false', review_plan: 'manual' });
    expect((await t.app.store.getTask(id))!.mode).toBe('EXECUTION_MODE_COMPLEX');
    expect((await act(u, id, { action: 'approve' })).status).toBe(200);
    expect((await finished(u, id)).status).toBe('TASK_STATUS_COMPLETED');
    // review_plan auto: no review.
    const r = await post('/api/v1/tasks', { query: 'Plain question', mode: 'simple', context: { review_plan: 'auto' } }, u.h);
    const s = await finished(u, (await json(r)).task_id);
    expect(s.status).toBe('TASK_STATUS_COMPLETED');
    expect((await getReview(u, s.task_id)).status).toBe(404);
  }, 60_000);
});
