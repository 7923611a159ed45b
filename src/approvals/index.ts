/**
 * Approvals (human in the loop): a task that must be approved before its first action
 * (require_approval) and tool calls that a tool policy (config/features.yaml) holds for a
 * person. An approval is a wait of kind `approval` (tasks' WaitStore): the workflow
 * passivates until a person decides, a decision is stored once (a second one is 409), another
 * tenant's approval is not found and another user's forbidden, and an approval nobody decides
 * within APPROVAL_TIMEOUT_SECONDS is refused with reason `timeout`.
 */
export { APPROVAL_KIND, TIMEOUT_REASON, outcomeOf, parseModifiedAction, refusalText } from './model.js';
export type { ApprovalOutcome, ApprovalRequest, ApprovalScope, DecisionInput } from './model.js';
export { hasPolicies, needsApproval } from './policy.js';
export type { ToolPolicies } from './policy.js';
export { ApprovalService, MAX_PENDING_LIMIT } from './service.js';
export type { Decided, PendingApproval } from './service.js';
