/**
 * Deciding and listing approvals for a caller: the ownership rule of tasks (another tenant's
 * approval is not found, another user's in the same tenant is forbidden), one decision per
 * approval (a second one is a conflict), and the caller's inbox of pending approvals.
 * The decision is stored through the wait store, which wakes the waiting workflow; the
 * workflow emits APPROVAL_DECISION when it resumes.
 */
import { badRequest, conflict, forbidden, isUuid, notFound, type RpcCaller } from '../kernel/index.js';
import type { WaitRow, WaitStore } from '../tasks/index.js';
import { APPROVAL_KIND, parseModifiedAction, type ApprovalRequest, type DecisionInput } from './model.js';

export interface Decided {
  approvalId: string;
  workflowId: string;
  status: 'approved' | 'rejected';
}

/** One pending approval as the inbox lists it. */
export interface PendingApproval {
  approval_id: string;
  workflow_id: string;
  query: string;
  proposed_action: Record<string, unknown>;
  reason: string;
  requested_at: string;
  metadata: Record<string, unknown>;
}

export const MAX_PENDING_LIMIT = 100;

const NOT_FOUND = 'Approval not found';

/** The caller as the approval's owner would be recorded (anonymous: no user, no tenant). */
function ownerOf(c: RpcCaller, named?: string): { userId: string | null; tenantId: string | null } {
  if (c.kind === 'user') return { userId: c.userId, tenantId: c.tenantId ?? null };
  if (c.kind === 'system' && named) return { userId: named, tenantId: null };
  return { userId: null, tenantId: null };
}

export class ApprovalService {
  constructor(private readonly waits: WaitStore) {}

  /** The approval, if the caller may act on it (404 / 403 otherwise, as for tasks). */
  private async owned(c: RpcCaller, approvalId: string, workflowId?: string): Promise<WaitRow> {
    if (!approvalId) throw badRequest('approval_id is required');
    const row = await this.waits.byId(approvalId);
    // A UUID is the same in either case (Postgres hands it back lower-cased).
    if (!row || row.kind !== APPROVAL_KIND || (workflowId && row.task_id.toLowerCase() !== workflowId.toLowerCase())) throw notFound(NOT_FOUND);
    if (c.kind === 'user') {
      if ((row.tenant_id ?? '') !== (c.tenantId ?? '')) throw notFound(NOT_FOUND);
      if ((row.user_id ?? '') !== c.userId) throw forbidden('Forbidden: not the task owner');
    }
    return row;
  }

  /** Stores the decision once; the workflow resumes with it. */
  async decide(c: RpcCaller, d: DecisionInput): Promise<Decided> {
    if (d.workflowId !== undefined && d.workflowId !== '' && !isUuid(d.workflowId)) throw notFound(NOT_FOUND);
    const modified = parseModifiedAction(d.modifiedAction);
    const row = await this.owned(c, d.approvalId, d.workflowId || undefined);
    if (modified) checkModified(row, modified);
    if (row.status !== 'pending') throw conflict('Approval already decided');
    const approvedBy = d.approvedBy?.trim() || (c.kind === 'user' ? c.userId : c.kind);
    const decision = {
      approved: d.approved,
      feedback: d.feedback ?? '',
      ...(modified ? { modified_action: modified } : {}),
      approved_by: approvedBy,
    };
    const r = await this.waits.decide(row.id, decision, { by: approvedBy });
    // Decided by someone else (or by the timer) between the read and the write.
    if (!r.changed) throw conflict('Approval already decided');
    return { approvalId: row.id, workflowId: row.task_id, status: d.approved ? 'approved' : 'rejected' };
  }

  /**
   * The caller's pending approvals, oldest first. `userId` (gRPC's user_id): empty, or the
   * caller's own id; a system caller may name the user it lists for.
   */
  async pending(c: RpcCaller, o: { userId?: string; sessionId?: string; limit?: number } = {}): Promise<PendingApproval[]> {
    if (o.userId && c.kind === 'user' && o.userId !== c.userId) throw forbidden('Forbidden: user_id is not the caller');
    if (o.userId && c.kind === 'system' && !isUuid(o.userId)) throw badRequest('user_id must be a UUID');
    const limit = o.limit ?? MAX_PENDING_LIMIT;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PENDING_LIMIT) throw badRequest(`limit must be between 1 and ${MAX_PENDING_LIMIT}`);
    const owner = ownerOf(c, o.userId);
    const rows = await this.waits.pending(APPROVAL_KIND, { ...owner, ...(o.sessionId ? { sessionIds: [o.sessionId] } : {}), limit });
    return rows.map(pendingOf);
  }
}

/**
 * `modified_action` only replaces a tool call's arguments: on a task approval there is nothing
 * it could change, and naming another tool would not run that tool; either is a 400 rather
 * than a 200 that silently drops it.
 */
function checkModified(row: WaitRow, m: Record<string, unknown>): void {
  const r = row.request as Partial<ApprovalRequest>;
  if (r.scope !== 'tool') throw badRequest('modified_action applies to tool approvals only');
  const proposed = r.proposed_action?.tool;
  if (Object.hasOwn(m, 'tool') && Object.hasOwn(m, 'arguments') && m.tool !== proposed) {
    throw badRequest(`modified_action.tool ${JSON.stringify(m.tool)} is not the proposed tool ${JSON.stringify(proposed)}; only its arguments can be changed`);
  }
}

function pendingOf(w: WaitRow): PendingApproval {
  const r = w.request as Partial<ApprovalRequest>;
  const iso = (d: Date | string) => new Date(d).toISOString();
  return {
    approval_id: w.id,
    workflow_id: w.task_id,
    query: r.query ?? '',
    proposed_action: r.proposed_action ?? {},
    reason: r.reason ?? '',
    requested_at: iso(w.created_at),
    metadata: {
      scope: r.scope ?? 'task',
      ...(r.agent_id ? { agent_id: r.agent_id } : {}),
      timeout_seconds: r.timeout_seconds ?? 0,
      expires_at: iso(w.due_at),
      session_id: w.session_id,
    },
  };
}
