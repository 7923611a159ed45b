/**
 * What an approval is: the question a workflow puts to a person (stored as the request of a
 * wait of kind `approval`), the decision the person gives (stored as the wait's decision),
 * and how the workflow reads it back, a timeout included.
 */
import { badRequest } from '../kernel/index.js';

/** The kind of the waits that are approvals (task_waits.kind). */
export const APPROVAL_KIND = 'approval';

/** The reason of a decision nobody gave in time (APPROVAL_TIMEOUT_SECONDS). */
export const TIMEOUT_REASON = 'timeout';

/** `task`: the whole task (require_approval); `tool`: one tool call (a tool policy). */
export type ApprovalScope = 'task' | 'tool';

/** The question, as stored with the wait and listed to the person who must answer it. */
export interface ApprovalRequest {
  scope: ApprovalScope;
  /** The task's query. */
  query: string;
  proposed_action: Record<string, unknown>;
  reason: string;
  timeout_seconds: number;
  agent_id?: string;
}

/** A decision as the person sends it (POST /api/v1/approvals/decision, ApproveTask). */
export interface DecisionInput {
  approvalId: string;
  /** When given, it must be the approval's workflow. */
  workflowId?: string;
  approved: boolean;
  feedback?: string;
  /** Replaces a tool call's arguments: an object, or a JSON string of one. */
  modifiedAction?: unknown;
  approvedBy?: string;
}

/** A decision as the workflow reads it (and APPROVAL_DECISION carries it). */
export interface ApprovalOutcome {
  approved: boolean;
  feedback: string;
  modified_action?: Record<string, unknown>;
  approved_by: string;
  /** Why it was refused without a person: `timeout`. */
  reason?: string;
}

/**
 * `modified_action` as an object: absent, null or an empty string is none; an object or a JSON
 * string of one is taken; anything else is a 400 naming the field.
 */
export function parseModifiedAction(v: unknown): Record<string, unknown> | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  let o = v;
  if (typeof v === 'string') {
    try {
      o = JSON.parse(v);
    } catch {
      throw badRequest('modified_action must be a JSON object (or a string holding one)');
    }
  }
  if (o === null || typeof o !== 'object' || Array.isArray(o)) throw badRequest('modified_action must be a JSON object (or a string holding one)');
  return o as Record<string, unknown>;
}

/** The stored decision of a wait as the workflow reads it; a timed-out wait is a refusal with reason `timeout`. */
export function outcomeOf(d: { decision: Record<string, unknown>; timedOut: boolean; decidedBy?: string }): ApprovalOutcome {
  if (d.timedOut) return { approved: false, feedback: '', approved_by: TIMEOUT_REASON, reason: TIMEOUT_REASON };
  const x = d.decision;
  const modified =
    x.modified_action && typeof x.modified_action === 'object' && !Array.isArray(x.modified_action)
      ? (x.modified_action as Record<string, unknown>)
      : undefined;
  return {
    approved: x.approved === true,
    feedback: typeof x.feedback === 'string' ? x.feedback : '',
    ...(modified ? { modified_action: modified } : {}),
    approved_by: typeof x.approved_by === 'string' && x.approved_by ? x.approved_by : (d.decidedBy ?? ''),
  };
}

/** Why a refused approval refused (the feedback, else the reason), for the task's error and the model. */
export const refusalText = (o: ApprovalOutcome): string => o.feedback.trim() || o.reason || 'no reason given';
