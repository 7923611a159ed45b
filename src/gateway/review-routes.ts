/**
 * /api/v1/tasks/{workflow_id}/review: the plan review of a research task that waits for a
 * person (owner only), its JSON shapes and its openapi entries. GET reads the Review state
 * (ETag = its version); POST gives feedback or approves. `If-Match` is optional and may carry
 * the version bare, quoted or weak (3, "3", W/"3"). The rules live in the ReviewService; a
 * failure behind it (the model, the store) is a 502 with the spec's message.
 */
import { Type } from '@sinclair/typebox';
import type { TemplatedApp } from 'uWebSockets.js';
import { badRequest, isUuid, notFound, type Principal } from '../kernel/index.js';
import { REVIEW_NOT_FOUND, ReviewUpstreamError, type ReviewService } from '../workflows/index.js';
import { errorReply, parseJsonBody, route, type Reply, type Req } from './http.js';
import { admittedReply, type RouteDeps } from './route-deps.js';

const Turn = Type.Object({
  role: Type.String({ enum: ['assistant', 'user'] }),
  message: Type.String(),
  timestamp: Type.String({ format: 'date-time' }),
});

export const ReviewState = Type.Object({
  status: Type.String({ enum: ['reviewing', 'approved'] }),
  round: Type.Integer({ minimum: 1, description: 'Current round, starts at 1 (the first plan); at most 10' }),
  version: Type.Integer({ minimum: 1, description: 'Monotonic version for optimistic concurrency (ETag, If-Match)' }),
  current_plan: Type.String({ description: 'Latest actionable plan; may be empty while the model is asking questions' }),
  rounds: Type.Array(Turn),
  query: Type.String({ description: 'The task query' }),
});

export const ReviewRequest = Type.Object({
  action: Type.String({ enum: ['feedback', 'approve'] }),
  message: Type.Optional(Type.String({ description: 'Required for feedback; at most 10 KB (UTF-8 bytes)' })),
});

export const ReviewFeedbackResponse = Type.Object({
  status: Type.String({ enum: ['reviewing'] }),
  plan: Type.Object({
    message: Type.String({ description: 'The updated plan (intent ready) or the questions the model asks (intent feedback)' }),
    round: Type.Integer(),
    version: Type.Integer(),
    intent: Type.String({ enum: ['ready', 'feedback'] }),
  }),
});

export const ReviewApproveResponse = Type.Object({ status: Type.String({ enum: ['approved'] }), message: Type.String() });

/**
 * The version an If-Match names: absent or `*` is no condition; `3`, `"3"` and `W/"3"` are 3;
 * anything else names no version there is (a mismatch).
 */
export function ifMatchOf(h: string | undefined): number | undefined {
  const v = h?.trim();
  if (!v || v === '*') return undefined;
  const m = /^(?:W\/)?"?(\d{1,15})"?$/.exec(v);
  return m ? Number(m[1]) : -1;
}

/** 502 for what failed behind the review; the gateway's answer otherwise. */
const reviewErrors = (err: unknown, log: RouteDeps['log']): Reply =>
  err instanceof ReviewUpstreamError ? { status: 502, body: { error: err.message } } : errorReply(err, log);

export function registerReviewRoutes(app: TemplatedApp, d: RouteDeps, review: ReviewService): void {
  const idOf = (req: Req) => {
    const id = req.params[0] ?? '';
    if (!isUuid(id)) throw notFound(REVIEW_NOT_FOUND);
    return id.toLowerCase();
  };

  const get = async (req: Req, p: Principal): Promise<Reply> => {
    const s = await review.get(p, idOf(req));
    return { status: 200, headers: { ETag: String(s.version) }, body: s };
  };

  const post = async (req: Req, p: Principal): Promise<Reply> => {
    const id = idOf(req);
    const b = parseJsonBody(req);
    const body = (b !== null && typeof b === 'object' && !Array.isArray(b) ? b : {}) as Record<string, unknown>;
    const ifMatch = ifMatchOf(req.headers['if-match']);
    if (body.action === 'feedback') {
      const r = await review.feedback(p, id, body.message, ifMatch);
      return { status: 200, headers: { ETag: String(r.plan.version) }, body: r };
    }
    if (body.action === 'approve') return { status: 200, body: await review.approve(p, id, ifMatch) };
    throw badRequest("action must be 'feedback' or 'approve'");
  };

  route(app, 'get', '/api/v1/tasks/:id/review', admittedReply(d.admit, get), d.ctx, { errors: reviewErrors });
  route(app, 'post', '/api/v1/tasks/:id/review', admittedReply(d.admit, post), d.ctx, { body: true, errors: reviewErrors });
}

const ok = (name: string) => ({
  description: 'OK',
  headers: { ETag: { description: 'The review version (bare number)', schema: { type: 'string' } } },
  content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } },
});
const err = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } });
const security = [{ ApiKeyAuth: [] }, { BearerAuth: [] }];
const params = [
  { name: 'workflow_id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } },
  {
    name: 'If-Match',
    in: 'header',
    required: false,
    schema: { type: 'string' },
    description: 'The version last seen (3, "3" or W/"3"); a different current version is 409',
  },
];

/** The review's openapi entries (paths); its schemas are `reviewSchemas`. */
export const reviewPaths = {
  '/api/v1/tasks/{workflow_id}/review': {
    get: {
      summary: 'The plan review of a research task waiting for approval (owner only)',
      description:
        'A research task submitted with context.require_review: true (or context.review_plan: "manual"; review implies the research workflow) ' +
        'emits RESEARCH_PLAN_READY {plan, round, version} and waits (TASK_STATUS_PAUSED) for approval within context.review_timeout seconds ' +
        '(1-86400, default 900; not approved in time: the task ends FAILED). The review lives for that timeout plus 5 minutes; then 404.',
      operationId: 'getReview',
      security,
      parameters: params.slice(0, 1),
      responses: {
        200: ok('ReviewState'),
        403: err('Forbidden: not the task owner'),
        404: err("Review session not found or expired (also another tenant's task)"),
      },
    },
    post: {
      summary: 'Give feedback on the research plan, or approve it (owner only)',
      description:
        'feedback: the model answers with an updated plan (intent ready) or questions (intent feedback); round and version +1; events ' +
        'REVIEW_USER_FEEDBACK and RESEARCH_PLAN_UPDATED. Round 10 is the last: the model is told to give a definitive plan, and further ' +
        "feedback is 409. One feedback model call at a time per review (a distributed lock). The rounds' token usage counts in the task's. " +
        'approve: the waiting task resumes with the confirmed plan (RESEARCH_PLAN_APPROVED) and researches its sub-questions.',
      operationId: 'postReview',
      security,
      parameters: params,
      requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/ReviewRequest' } } } },
      responses: {
        200: {
          description: 'feedback: ReviewFeedbackResponse (ETag = the new version); approve: ReviewApproveResponse',
          headers: { ETag: { description: 'The new review version (feedback)', schema: { type: 'string' } } },
          content: {
            'application/json': {
              schema: { oneOf: [{ $ref: '#/components/schemas/ReviewFeedbackResponse' }, { $ref: '#/components/schemas/ReviewApproveResponse' }] },
            },
          },
        },
        400: err(
          "message is required for feedback | message exceeds maximum length (10KB) | action must be 'feedback' or 'approve' | " +
            'No research plan to approve. Please provide feedback to generate a plan first.',
        ),
        403: err('Forbidden: not the task owner'),
        404: err('Review session not found or expired'),
        409: err(
          'Conflict: state has been modified (feedback, If-Match) | Conflict: plan has been updated. Please review the latest version. ' +
            '(approve, If-Match) | Another feedback request is in progress. Please wait. | A feedback request is in progress. Please wait ' +
            'and try again. | Maximum review rounds reached. Please approve the plan.',
        ),
        502: err('Failed to generate updated plan | Failed to approve review'),
      },
    },
  },
};

const plain = (s: unknown) => JSON.parse(JSON.stringify(s)) as Record<string, unknown>;

/** The review's openapi schemas (components). */
export const reviewSchemas = {
  ReviewState: plain(ReviewState),
  ReviewRequest: plain(ReviewRequest),
  ReviewFeedbackResponse: plain(ReviewFeedbackResponse),
  ReviewApproveResponse: plain(ReviewApproveResponse),
};
