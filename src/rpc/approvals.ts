/**
 * OrchestratorService.ApproveTask and GetPendingApprovals: Connect adapters over the approvals
 * domain. The caller is the one the internal RPC interceptor authenticated (never a body
 * field): ownership is the task rule (another tenant's approval NotFound, another user's
 * PermissionDenied), a second decision is AlreadyExists (HTTP 409).
 */
import { create, type JsonObject } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { HandlerContext } from '@connectrpc/connect';
import type { ApprovalService } from '../approvals/index.js';
import { PendingApprovalSchema, type ApproveTaskRequest, type GetPendingApprovalsRequest } from '../gen/svc/v1/orchestrator_pb.js';
import { badRequest } from '../kernel/index.js';
import { callerOf } from './auth.js';

export function approvalHandlers(svc: ApprovalService) {
  return {
    async approveTask(req: ApproveTaskRequest, ctx: HandlerContext) {
      if (!req.approvalId) throw badRequest('approval_id is required');
      if (!req.workflowId) throw badRequest('workflow_id is required');
      const r = await svc.decide(callerOf(ctx), {
        approvalId: req.approvalId,
        workflowId: req.workflowId,
        approved: req.approved,
        feedback: req.feedback,
        modifiedAction: req.modifiedAction,
        approvedBy: req.approvedBy,
      });
      return { success: true, message: `Approval ${r.status}` };
    },

    async getPendingApprovals(req: GetPendingApprovalsRequest, ctx: HandlerContext) {
      const list = await svc.pending(callerOf(ctx), { userId: req.userId || undefined, sessionId: req.sessionId || undefined });
      return {
        approvals: list.map((a) =>
          create(PendingApprovalSchema, {
            approvalId: a.approval_id,
            workflowId: a.workflow_id,
            query: a.query,
            proposedAction: JSON.stringify(a.proposed_action),
            reason: a.reason,
            requestedAt: timestampFromDate(new Date(a.requested_at)),
            metadata: a.metadata as JsonObject,
          }),
        ),
      };
    },
  };
}
