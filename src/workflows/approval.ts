/**
 * Asking a person from inside a workflow: the whole task before its first action
 * (require_approval) and tool calls a tool policy names (config/features.yaml). Each question
 * is a durable wait (runtime's waitFor) of kind `approval`: APPROVAL_REQUESTED is emitted in
 * the step that opens it, the workflow passivates, and APPROVAL_DECISION is emitted in the
 * step that records the decision when a person (or the timer) decides. Wait keys derive from
 * journal step names, so a replay reaches the same wait.
 */
import {
  APPROVAL_KIND,
  hasPolicies,
  needsApproval,
  outcomeOf,
  refusalText,
  type ApprovalOutcome,
  type ApprovalRequest,
  type ToolPolicies,
} from '../approvals/index.js';
import type { AgentDeps } from '../agents/index.js';
import { AppError, Code } from '../kernel/index.js';
import { waitFor, type WorkflowContext } from '../runtime/index.js';
import type { TaskStart } from '../tasks/index.js';

/** APPROVAL_TIMEOUT_SECONDS and the tool policies. */
export interface ApprovalSettings {
  timeoutSeconds: number;
  policies?: ToolPolicies;
}

/** When nothing configured the timeout (tests, embedded use): the setting's default. */
const DEFAULT_TIMEOUT_SECONDS = 3600;

export const TASK_APPROVAL_REASON = 'approval required before the task runs';

interface Ask {
  key: string;
  scope: ApprovalRequest['scope'];
  proposed: Record<string, unknown>;
  reason: string;
  agentId: string;
}

/** Asks a person and returns the decision (passivating the workflow until there is one). */
async function ask(ctx: WorkflowContext, t: TaskStart, s: ApprovalSettings | undefined, a: Ask): Promise<ApprovalOutcome> {
  const timeoutSeconds = s?.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS;
  const request: ApprovalRequest = {
    scope: a.scope,
    query: t.query,
    proposed_action: a.proposed,
    reason: a.reason,
    timeout_seconds: timeoutSeconds,
    agent_id: a.agentId,
  };
  const d = await waitFor(ctx, {
    key: a.key,
    kind: APPROVAL_KIND,
    timeoutMs: timeoutSeconds * 1000,
    request: request as unknown as Record<string, unknown>,
    owner: { userId: t.user_id, tenantId: t.tenant_id, sessionId: t.session_id },
    onOpen: (row) => {
      ctx.emit('APPROVAL_REQUESTED', a.agentId, `Approval requested: ${a.reason}`, {
        approval_id: row.id,
        proposed_action: a.proposed,
        reason: a.reason,
        timeout_seconds: timeoutSeconds,
      });
    },
    onDecided: (w) => {
      const o = outcomeOf(w);
      ctx.emit('APPROVAL_DECISION', a.agentId, o.approved ? 'Approved' : `Rejected: ${refusalText(o)}`, { approval_id: w.waitId, ...o });
    },
  });
  return outcomeOf(d);
}

/**
 * require_approval: a person approves the task (its query) before anything runs; refused or
 * timed out, the task fails with `approval rejected: <feedback>` (or `: timeout`).
 */
export async function approveTask(ctx: WorkflowContext, t: TaskStart, s: ApprovalSettings | undefined): Promise<void> {
  if (!t.require_approval) return;
  const o = await ask(ctx, t, s, {
    key: 'approval-task',
    scope: 'task',
    proposed: { action: 'run_task', query: t.query, mode: t.mode },
    reason: TASK_APPROVAL_REASON,
    agentId: 'orchestrator',
  });
  if (!o.approved) throw new AppError(Code.FailedPrecondition, `approval rejected: ${refusalText(o)}`);
}

/** The arguments `modified_action` gives: `{arguments: {...}}` (the proposed action's shape) or the arguments themselves. */
function argumentsOf(m: Record<string, unknown>): Record<string, unknown> {
  const inner = m.arguments;
  return inner && typeof inner === 'object' && !Array.isArray(inner) ? (inner as Record<string, unknown>) : m;
}

/**
 * The agents' hook that holds a tool call named by a tool policy for a person. A question
 * already put (its wait opened) is answered from that wait whatever the policy says now: a
 * policy edited while the task waits must not turn a refused call into one that runs, nor
 * leave the decided wait unread.
 */
export function toolApprover(ctx: WorkflowContext, t: TaskStart, role: string, s: ApprovalSettings | undefined): AgentDeps['approveTool'] {
  const policies = s?.policies;
  const held = hasPolicies(policies);
  return async (call) => {
    const key = `approval-${call.step}`;
    if (!ctx.isRecorded(`wait-open-${key}`) && !(held && needsApproval(policies, role, call.tool))) return undefined;
    const o = await ask(ctx, t, s, {
      key,
      scope: 'tool',
      proposed: { tool: call.tool, arguments: call.arguments },
      reason: `tool ${call.tool} requires approval (tool policy)`,
      agentId: call.agentId,
    });
    if (!o.approved) return { approved: false, message: refusalText(o) };
    return o.modified_action ? { approved: true, arguments: argumentsOf(o.modified_action) } : { approved: true };
  };
}
