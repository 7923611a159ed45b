/**
 * The approvals inbox: the caller's pending approvals (GET /api/v1/approvals?status=pending),
 * each with what it asks (a whole task, or a tool call with its arguments) and when. Approve,
 * refuse with feedback, or approve with modified arguments (JSON, checked before it is sent):
 * POST /api/v1/approvals/decision. The list is read again after every decision.
 */
import { useState } from 'preact/hooks';
import { ok } from '../client/index.js';
import { json, time } from './format.js';
import { href } from './router.js';
import { call, messageOf } from './session.js';
import { useList } from './use-list.js';

async function load() {
  return call(async (api) => ok(await api.GET('/api/v1/approvals', { params: { query: { status: 'pending', limit: 100 } } })).approvals);
}
type Approval = Awaited<ReturnType<typeof load>>[number];
type Decision = { approved: boolean; feedback?: string; modified_action?: unknown };

function asked(a: Approval): string {
  const p = a.proposed_action;
  if (typeof p.tool === 'string') return `Run the tool ${p.tool}`;
  if (p.action === 'run_task') return `Run the task: ${String(p.query ?? a.query)}${p.mode ? ` (${String(p.mode).toLowerCase()})` : ''}`;
  return a.reason || a.query;
}

function ApprovalItem({ a, onDecided }: { a: Approval; onDecided: (msg: string) => void }) {
  const isTool = typeof a.proposed_action.tool === 'string';
  const [feedback, setFeedback] = useState('');
  const [args, setArgs] = useState(() => json(a.proposed_action.arguments ?? {}));
  const [modify, setModify] = useState(false);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const fid = `fb-${a.approval_id}`;
  const aid = `args-${a.approval_id}`;

  const decide = async (d: Decision) => {
    setBusy(true);
    setError(undefined);
    try {
      const body = { approval_id: a.approval_id, workflow_id: a.workflow_id, ...d };
      const r = await call(async (api) => ok(await api.POST('/api/v1/approvals/decision', { body })));
      onDecided(`Approval ${a.approval_id}: ${r.status ?? (d.approved ? 'approved' : 'rejected')}.`);
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };
  const approveModified = () => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(args);
    } catch (err) {
      return setError(`The arguments are not valid JSON: ${messageOf(err)}`);
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return setError('The arguments must be a JSON object.');
    void decide({ approved: true, modified_action: { arguments: parsed }, ...(feedback.trim() ? { feedback } : {}) });
  };

  return (
    <li class="approval" data-testid="approval" data-task={a.workflow_id}>
      <h2>{asked(a)}</h2>
      <dl class="facts">
        <dt>Task</dt>
        <dd>
          <a href={href.live(a.workflow_id)}>{a.query || a.workflow_id}</a>
        </dd>
        <dt>Requested</dt>
        <dd>{time(a.requested_at)}</dd>
        {a.reason ? (
          <>
            <dt>Reason</dt>
            <dd>{a.reason}</dd>
          </>
        ) : null}
      </dl>
      {isTool && !modify ? (
        <pre tabIndex={0} aria-label="Tool arguments">
          {json(a.proposed_action.arguments ?? {})}
        </pre>
      ) : null}
      {modify ? (
        <>
          <label for={aid}>Arguments (JSON object)</label>
          <textarea id={aid} rows={6} class="mono" value={args} onInput={(e) => setArgs(e.currentTarget.value)} />
        </>
      ) : null}
      <label for={fid}>Feedback (required to refuse)</label>
      <textarea id={fid} rows={2} value={feedback} onInput={(e) => setFeedback(e.currentTarget.value)} />
      <p class="error" role="alert">
        {error ?? ''}
      </p>
      <div class="buttons">
        {modify ? (
          <button type="button" class="primary" disabled={busy} onClick={approveModified}>
            Approve with these arguments
          </button>
        ) : (
          <button type="button" class="primary" disabled={busy} onClick={() => void decide({ approved: true, ...(feedback.trim() ? { feedback } : {}) })}>
            Approve
          </button>
        )}
        <button
          type="button"
          class="danger"
          disabled={busy}
          onClick={() => (feedback.trim() ? void decide({ approved: false, feedback }) : setError('Say why in the feedback to refuse.'))}
        >
          Refuse
        </button>
        {isTool ? (
          <button type="button" aria-pressed={modify} disabled={busy} onClick={() => setModify(!modify)}>
            Modify
          </button>
        ) : null}
      </div>
    </li>
  );
}

export function ApprovalsPage() {
  const { list, error, refresh } = useList(load);
  const [notice, setNotice] = useState<string>();
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>
        Approvals
      </h1>
      <div class="toolbar">
        <p class="notice-line" role="status">
          {notice ?? ''}
        </p>
        <button type="button" onClick={refresh}>
          Refresh
        </button>
      </div>
      <p class="error" role="alert">
        {error ?? ''}
      </p>
      {list === undefined ? (
        <p class="muted">Loading…</p>
      ) : list.length === 0 ? (
        <p class="muted">No pending approvals.</p>
      ) : (
        <ul class="approvals" aria-label="Pending approvals">
          {list.map((a) => (
            <ApprovalItem
              key={a.approval_id}
              a={a}
              onDecided={(msg) => {
                setNotice(msg);
                refresh();
              }}
            />
          ))}
        </ul>
      )}
    </section>
  );
}
