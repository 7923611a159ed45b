/**
 * /api/v1/approvals: a person's decision on an approval (POST /decision) and the caller's
 * inbox of pending approvals (GET ?status=pending), with their JSON shapes and their
 * openapi entries. Both reach the orchestrator's ApproveTask / GetPendingApprovals as the
 * caller the principal names, so ownership is decided there (another tenant's approval 404,
 * another user's 403). The decision is stored once (a second is 409) and wakes the waiting
 * workflow, which emits APPROVAL_DECISION when it resumes.
 */
import { timestampDate } from '@bufbuild/protobuf/wkt';
import type { Client } from '@connectrpc/connect';
import { Type } from '@sinclair/typebox';
import type { TemplatedApp } from 'uWebSockets.js';
import type { OrchestratorService, PendingApproval } from '../gen/svc/v1/orchestrator_pb.js';
import { badRequest, callAs, callerOfPrincipal, type Principal } from '../kernel/index.js';
import type { Logger } from '../kernel/index.js';
import { intParam, parseJsonBody, route, type CorsPolicy, type Req } from './http.js';
import { admitted, type Admit } from './route-deps.js';
import { validator } from './schemas.js';

export const ApprovalDecisionRequest = Type.Object({
  approval_id: Type.String({ minLength: 1, description: 'The approval_id of the APPROVAL_REQUESTED event' }),
  workflow_id: Type.String({ minLength: 1, description: 'The waiting task (workflow) id' }),
  approved: Type.Boolean(),
  feedback: Type.Optional(Type.String({ description: 'Why; a refused tool call tells the model this, a refused task fails with it' })),
  // Any JSON here: the approvals domain takes an object or a JSON string of one, and words the 400.
  modified_action: Type.Optional(
    Type.Unknown({
      description: 'Replaces the tool call\'s arguments: {"arguments": {...}}, the arguments themselves, or a JSON string of either; null or absent: none',
    }),
  ),
  approved_by: Type.Optional(Type.String({ description: "Who decided; default the caller's user id" })),
});

export const ApprovalDecisionResponse = Type.Object({
  success: Type.Boolean(),
  approval_id: Type.String(),
  workflow_id: Type.String(),
  status: Type.String({ enum: ['approved', 'rejected'] }),
});

export const PendingApprovalObject = Type.Object({
  approval_id: Type.String(),
  workflow_id: Type.String(),
  query: Type.String(),
  proposed_action: Type.Object(
    {},
    { additionalProperties: true, description: 'A tool call: {tool, arguments}; a whole task: {action: "run_task", query, mode}' },
  ),
  reason: Type.String(),
  requested_at: Type.String({ format: 'date-time' }),
  metadata: Type.Object({}, { additionalProperties: true, description: 'scope (task|tool), agent_id, timeout_seconds, expires_at, session_id' }),
});

export const PendingApprovalList = Type.Object({ approvals: Type.Array(PendingApprovalObject), count: Type.Integer() });

const validateDecision = validator(ApprovalDecisionRequest);

export const DEFAULT_PENDING_LIMIT = 50;

function pendingJson(a: PendingApproval) {
  let proposed: unknown;
  try {
    proposed = a.proposedAction ? JSON.parse(a.proposedAction) : {};
  } catch {
    proposed = { action: a.proposedAction };
  }
  return {
    approval_id: a.approvalId,
    workflow_id: a.workflowId,
    query: a.query,
    proposed_action: proposed,
    reason: a.reason,
    requested_at: a.requestedAt ? timestampDate(a.requestedAt).toISOString() : null,
    metadata: a.metadata ?? {},
  };
}

export interface ApprovalRouteDeps {
  ctx: { cors: CorsPolicy; log: Logger };
  admit: Admit;
  orchestrator: Client<typeof OrchestratorService>;
}

export function registerApprovalRoutes(app: TemplatedApp, d: ApprovalRouteDeps): void {
  const decide = async (req: Req, p: Principal) => {
    const b = parseJsonBody(req);
    if (b === null || typeof b !== 'object' || Array.isArray(b)) throw badRequest('request body must be a JSON object');
    const body = validateDecision(b);
    const m = body.modified_action;
    await d.orchestrator.approveTask(
      {
        approvalId: body.approval_id,
        workflowId: body.workflow_id,
        approved: body.approved,
        feedback: body.feedback ?? '',
        modifiedAction: m === undefined || m === null ? '' : typeof m === 'string' ? m : JSON.stringify(m),
        approvedBy: body.approved_by ?? '',
      },
      callAs(callerOfPrincipal(p)),
    );
    return { success: true, approval_id: body.approval_id, workflow_id: body.workflow_id, status: body.approved ? 'approved' : 'rejected' };
  };

  const pending = async (req: Req, p: Principal) => {
    const status = req.query.get('status') ?? 'pending';
    if (status !== 'pending') throw badRequest("status must be 'pending'");
    const limit = intParam(req.query, 'limit', DEFAULT_PENDING_LIMIT, 1, 100);
    const sessionId = req.query.get('session_id') ?? '';
    const r = await d.orchestrator.getPendingApprovals({ sessionId }, callAs(callerOfPrincipal(p)));
    const approvals = r.approvals.slice(0, limit).map(pendingJson);
    return { approvals, count: approvals.length };
  };

  route(app, 'post', '/api/v1/approvals/decision', admitted(d.admit, decide), d.ctx, { body: true });
  route(app, 'get', '/api/v1/approvals', admitted(d.admit, pending), d.ctx);
}

const ok = (name: string) => ({ description: 'OK', content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } } });
const err = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } });
const security = [{ ApiKeyAuth: [] }, { BearerAuth: [] }];

/** The approvals' openapi entries (paths); their schemas are `approvalSchemas`. */
export const approvalPaths = {
  '/api/v1/approvals/decision': {
    post: {
      summary: 'Decide a pending approval (the task waits, TASK_STATUS_PAUSED, until someone does)',
      description:
        'An approval is asked by APPROVAL_REQUESTED {approval_id, proposed_action, reason, timeout_seconds}: before a task with require_approval ' +
        '(gRPC SubmitTask field; context.require_approval over REST) runs, and before a tool named by a tool policy of config/features.yaml runs. ' +
        'Approved: the task or tool runs (a tool with modified_action as its arguments when given). Refused: the tool is not run and the model ' +
        'is told why (feedback); a refused task ends FAILED with "approval rejected: <feedback>". Not decided within APPROVAL_TIMEOUT_SECONDS ' +
        '(default 3600): refused with reason "timeout". APPROVAL_DECISION {approval_id, approved, feedback, modified_action, approved_by, reason} ' +
        'follows when the workflow resumes.',
      operationId: 'decideApproval',
      security,
      requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/ApprovalDecisionRequest' } } } },
      responses: {
        200: ok('ApprovalDecisionResponse'),
        400: err('Invalid JSON, a missing or invalid field (named), or modified_action not a JSON object'),
        403: err('Forbidden: not the task owner'),
        404: err('Approval not found (unknown, another workflow_id, or another tenant)'),
        409: err('Approval already decided'),
      },
    },
  },
  '/api/v1/approvals': {
    get: {
      summary: "The caller's pending approvals, oldest first",
      operationId: 'listApprovals',
      security,
      parameters: [
        { name: 'status', in: 'query', required: false, schema: { type: 'string', enum: ['pending'], default: 'pending' } },
        { name: 'session_id', in: 'query', required: false, schema: { type: 'string' }, description: "Only this session's approvals" },
        { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: DEFAULT_PENDING_LIMIT } },
      ],
      responses: { 200: ok('PendingApprovalList'), 400: err("status must be 'pending', or limit out of range") },
    },
  },
};

/** The approvals' openapi schemas (components). */
export const approvalSchemas = {
  ApprovalDecisionRequest: JSON.parse(JSON.stringify(ApprovalDecisionRequest)) as Record<string, unknown>,
  ApprovalDecisionResponse: JSON.parse(JSON.stringify(ApprovalDecisionResponse)) as Record<string, unknown>,
  PendingApproval: JSON.parse(JSON.stringify(PendingApprovalObject)) as Record<string, unknown>,
  PendingApprovalList: JSON.parse(JSON.stringify(PendingApprovalList)) as Record<string, unknown>,
};
