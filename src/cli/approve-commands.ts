/**
 * `taskorch approve`: the human-in-the-loop approvals of the caller. Without arguments it
 * lists the pending ones (a task submitted with context.require_approval, or a tool call a
 * tool policy holds); `taskorch approve <approval_id> --yes|--no [--feedback "<text>"]`
 * decides one. The decision endpoint needs the approval's task (workflow_id) too: --task
 * names it, else it is looked up in the pending list.
 */
import { jsonObject, onlyOptions, parse, positiveInt } from './args.js';
import { CliError } from './errors.js';
import { HELP } from './help.js';
import { call, connOf, type Conn } from './http.js';
import { err, oneLine, out, paint, printJson, table, when } from './output.js';

/** The gateway's most pending approvals in one answer. */
const MAX_LIMIT = 100;

export async function cmdApprove(args: string[]): Promise<number> {
  const { values, positionals } = parse('approve', args, {
    yes: { type: 'boolean', short: 'y' },
    no: { type: 'boolean', short: 'n' },
    feedback: { type: 'string' },
    task: { type: 'string' },
    'modified-action': { type: 'string' },
    session: { type: 'string' },
    limit: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (values.help) return (out(HELP.approve), 0);
  if (positionals.length === 0) {
    if (values.yes || values.no)
      throw new CliError('approve --yes/--no needs the approval: taskorch approve <approval_id> --yes (taskorch approve lists them)', 2);
    onlyOptions('approve (list)', values, ['session', 'limit']);
    return list(connOf(values), values);
  }
  if (positionals.length > 1)
    throw new CliError(`approve decides one approval at a time: taskorch approve <approval_id> --yes|--no (see taskorch approve --help)`, 2);
  onlyOptions('approve <approval_id>', values, ['yes', 'no', 'feedback', 'task', 'modified-action']);
  if (values.yes === values.no) throw new CliError('approve <approval_id> needs one of --yes (approve) or --no (refuse) (see taskorch approve --help)', 2);
  const modified = values['modified-action'] !== undefined ? jsonObject('--modified-action', values['modified-action']) : undefined;
  if (modified && values.no) throw new CliError('--modified-action goes with --yes (the tool runs with these arguments)', 2);
  return decide(connOf(values), positionals[0].trim(), {
    approved: values.yes === true,
    feedback: values.feedback,
    task: values.task?.trim(),
    modified,
    json: values.json === true,
  });
}

async function pending(conn: Conn, q: URLSearchParams): Promise<any> {
  q.set('status', 'pending');
  return (await call(conn, 'GET', `/api/v1/approvals?${q}`, 'pending approvals')).body;
}

async function list(conn: Conn, values: { session?: string; limit?: string; json?: boolean }): Promise<number> {
  const q = new URLSearchParams();
  const limit = positiveInt('limit', values.limit);
  if (limit !== undefined) q.set('limit', String(limit));
  if (values.session) q.set('session_id', values.session);
  const body = await pending(conn, q);
  if (values.json) return (printJson(body), 0);
  const approvals: any[] = body.approvals ?? [];
  if (!approvals.length) return (err('no pending approvals\n'), 0);
  table(
    ['APPROVAL ID', 'TASK ID', 'REQUESTED', 'ACTION'],
    approvals.map((a) => [String(a.approval_id), String(a.workflow_id), when(a.requested_at), actionText(a)]),
  );
  err(paint('2', `${approvals.length} pending; decide with: taskorch approve <approval_id> --yes|--no [--feedback "<text>"]\n`));
  return 0;
}

/** What an approval asks for, on one line: a tool call or the whole task. */
function actionText(a: any): string {
  const p = a.proposed_action ?? {};
  if (typeof p.tool === 'string') return `tool ${p.tool} ${JSON.stringify(p.arguments ?? {})}`;
  if (p.action === 'run_task') return `run task: ${oneLine(p.query ?? a.query)}${p.mode ? ` (${String(p.mode).toLowerCase()})` : ''}`;
  return oneLine(a.reason || JSON.stringify(p));
}

interface Decision {
  approved: boolean;
  feedback?: string;
  /** The approval's task, when the caller names it (else looked up in the pending list). */
  task?: string;
  modified?: Record<string, unknown>;
  json: boolean;
}

async function decide(conn: Conn, approvalId: string, d: Decision): Promise<number> {
  let workflowId = d.task;
  if (!workflowId) {
    const found = ((await pending(conn, new URLSearchParams({ limit: String(MAX_LIMIT) }))).approvals ?? []).find((a: any) => a.approval_id === approvalId);
    if (!found)
      throw new CliError(
        `approval ${approvalId} is not pending (already decided, timed out, or not yours): taskorch approve lists the pending ones; --task <task_id> names its task`,
      );
    workflowId = String(found.workflow_id);
  }
  const request: Record<string, unknown> = { approval_id: approvalId, workflow_id: workflowId, approved: d.approved };
  if (d.feedback !== undefined) request.feedback = d.feedback;
  if (d.modified) request.modified_action = d.modified;
  const { body } = await call(conn, 'POST', '/api/v1/approvals/decision', `approval ${approvalId}`, request);
  if (d.json) return (printJson(body), 0);
  out(`${body.status ?? (body.success ? 'decided' : 'not decided')}: approval ${body.approval_id ?? approvalId} (task ${body.workflow_id ?? workflowId})\n`);
  err(paint('2', `follow the task: taskorch status ${body.workflow_id ?? workflowId}\n`));
  return body.success === false ? 1 : 0;
}
