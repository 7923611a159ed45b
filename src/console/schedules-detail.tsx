/**
 * One schedule (GET /api/v1/schedules/{id}): its details; pause with an optional reason
 * (POST .../pause) and resume (POST .../resume); delete, after a confirm step (DELETE), back to the list
 * saying so; and its runs, newest first, 20 a page (GET .../runs), each linking to its task.
 */
import { useEffect, useState } from 'preact/hooks';
import { ok } from '../client/index.js';
import { json, shortName, time } from './format.js';
import { go, href } from './router.js';
import { ConfirmDelete } from './confirm-delete.js';
import { inZone } from './schedules-cron.js';
import { call, messageOf } from './session.js';
import { Pager } from './pager.js';
import { useLatest } from './use-latest.js';

const RUNS_PAGE = 20;

async function loadSchedule(id: string) {
  return call(async (api) => ok(await api.GET('/api/v1/schedules/{id}', { params: { path: { id } } })));
}
async function loadRuns(id: string, page: number) {
  return call(async (api) => ok(await api.GET('/api/v1/schedules/{id}/runs', { params: { path: { id }, query: { page, page_size: RUNS_PAGE } } })));
}
type Schedule = Awaited<ReturnType<typeof loadSchedule>>;
type Runs = Awaited<ReturnType<typeof loadRuns>>;

/** What the list says once, after this page deleted a schedule and went back to it. */
let deleted: string | undefined;
export function takeDeletedNotice(): string | undefined {
  const d = deleted;
  deleted = undefined;
  return d;
}

/** A moment in the schedule's timezone, and in the browser's when it differs. */
function When({ iso, tz }: { iso: string | null | undefined; tz: string }) {
  if (!iso) return <span class="muted">none</span>;
  const d = new Date(iso);
  const there = inZone(d, tz);
  const here = time(iso);
  return (
    <time dateTime={iso}>
      {there} ({tz}){here ? <span class="muted"> · here: {here}</span> : null}
    </time>
  );
}

function RunsSection({ id }: { id: string }) {
  const [page, setPage] = useState(1);
  const [runs, setRuns] = useState<Runs>();
  const [error, setError] = useState<string>();
  const latest = useLatest();
  const refresh = () => {
    latest(loadRuns(id, page)).then(
      (r) => {
        setRuns(r);
        setError(undefined);
      },
      (err) => setError(messageOf(err)),
    );
  };
  useEffect(refresh, [id, page]);
  const total = runs?.total_count ?? 0;
  const first = (page - 1) * RUNS_PAGE;
  return (
    <section aria-labelledby="runs-title">
      <div class="toolbar section-head">
        <h2 id="runs-title">Runs</h2>
        <button type="button" onClick={refresh}>
          Refresh runs
        </button>
      </div>
      <p class="error" role="alert">
        {error ?? ''}
      </p>
      {runs && !runs.runs.length ? <p class="muted">No runs yet.</p> : null}
      {runs?.runs.length ? (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">Runs, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Triggered</th>
                <th scope="col">Status</th>
                <th scope="col">Task</th>
                <th scope="col">Tokens</th>
                <th scope="col">Cost (USD)</th>
                <th scope="col">Duration</th>
              </tr>
            </thead>
            <tbody>
              {runs.runs.map((r) => (
                <tr key={`${r.workflow_id}-${r.triggered_at}`} data-testid="schedule-run">
                  <td>{time(r.triggered_at)}</td>
                  <td>
                    {shortName(r.status)}
                    {r.error_message ? <span class="run-error"> {r.error_message}</span> : null}
                  </td>
                  <td>{r.workflow_id ? <a href={href.detail(r.workflow_id)}>{r.query || r.workflow_id}</a> : <span class="muted">{r.query}</span>}</td>
                  <td>{r.total_tokens}</td>
                  <td>{r.total_cost_usd.toFixed(4)}</td>
                  <td>{r.duration_ms !== undefined ? `${(r.duration_ms / 1000).toFixed(1)} s` : ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {total > RUNS_PAGE ? <Pager offset={first} size={RUNS_PAGE} total={total} label="Pages of runs" onOffset={(o) => setPage(o / RUNS_PAGE + 1)} /> : null}
    </section>
  );
}

export function ScheduleDetail({ id }: { id: string }) {
  const [s, setS] = useState<Schedule>();
  const [error, setError] = useState<string>();
  const [notice, setNotice] = useState<string>();
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);

  const refresh = () => loadSchedule(id).then(setS, (err) => setError(messageOf(err)));
  useEffect(() => void refresh(), [id]);

  const act = async (fn: () => Promise<string>) => {
    setBusy(true);
    setError(undefined);
    setNotice(undefined);
    try {
      setNotice(await fn());
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
      await refresh();
    }
  };
  const body = reason.trim() ? { reason: reason.trim() } : {};
  const pause = () =>
    act(async () => {
      const r = await call(async (api) => ok(await api.POST('/api/v1/schedules/{id}/pause', { params: { path: { id } }, body })));
      setReason('');
      return `${r.message} at ${time(r.paused_at)}.`;
    });
  const resume = () =>
    act(async () => {
      // The service keeps a reason for a pause only: a resume sends none.
      const r = await call(async (api) => ok(await api.POST('/api/v1/schedules/{id}/resume', { params: { path: { id } } })));
      return `${r.message}; next run ${time(r.next_run_at)}.`;
    });
  const remove = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await call(async (api) => ok(await api.DELETE('/api/v1/schedules/{id}', { params: { path: { id } } })));
      deleted = `Schedule “${s?.name ?? id}” deleted.`;
      go(href.schedules);
    } catch (err) {
      setError(messageOf(err));
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="page-title" class="sc-page">
      <p class="back">
        <a href={href.schedules}>All schedules</a>
      </p>
      <h1 id="page-title" tabIndex={-1}>
        {s ? `Schedule: ${s.name}` : 'Schedule'}
      </h1>
      <p class="notice-line" role="status">
        {notice ?? ''}
      </p>
      <p class="error" role="alert">
        {error ?? ''}
      </p>
      {!s ? (
        error ? null : (
          <p class="muted">Loading…</p>
        )
      ) : (
        <>
          <dl class="facts">
            <dt>Status</dt>
            <dd>
              <span class={`sched-status st-${s.status.toLowerCase()}`} data-testid="schedule-status">
                {s.status}
              </span>
            </dd>
            {s.description ? (
              <>
                <dt>Description</dt>
                <dd>{s.description}</dd>
              </>
            ) : null}
            <dt>Cron</dt>
            <dd>
              <code>{s.cron_expression}</code>
            </dd>
            <dt>Timezone</dt>
            <dd>{s.timezone}</dd>
            <dt>Next run</dt>
            <dd data-testid="schedule-next">
              {s.status === 'PAUSED' ? <span class="muted">none while paused</span> : <When iso={s.next_run_at} tz={s.timezone} />}
            </dd>
            <dt>Last run</dt>
            <dd>
              <When iso={s.last_run_at} tz={s.timezone} />
            </dd>
            <dt>Task query</dt>
            <dd>{s.task_query}</dd>
            <dt>Budget per run</dt>
            <dd>{s.max_budget_per_run_usd} USD</dd>
            <dt>Timeout per run</dt>
            <dd>{s.timeout_seconds} s</dd>
            <dt>Runs</dt>
            <dd>
              {s.total_runs} ({s.successful_runs} succeeded, {s.failed_runs} failed)
            </dd>
            <dt>Created</dt>
            <dd>{time(s.created_at)}</dd>
            <dt>Updated</dt>
            <dd>{time(s.updated_at)}</dd>
          </dl>
          {Object.keys(s.task_context).length ? (
            <>
              <h2>Task context</h2>
              <pre tabIndex={0} aria-label="Task context">
                {json(s.task_context)}
              </pre>
            </>
          ) : null}
          <div class="schedule-actions">
            <label for="schedule-reason">Reason for pausing (optional)</label>
            <input id="schedule-reason" maxLength={1000} value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
            <div class="buttons">
              {s.status === 'PAUSED' ? (
                <button type="button" class="primary" disabled={busy} onClick={() => void resume()}>
                  Resume
                </button>
              ) : (
                <button type="button" class="primary" disabled={busy} onClick={() => void pause()}>
                  Pause
                </button>
              )}
            </div>
            <ConfirmDelete
              what="schedule"
              busy={busy}
              question={`Delete the schedule “${s.name}” permanently? It will not run again.`}
              onConfirm={() => void remove()}
            />
          </div>
          <RunsSection id={id} />
        </>
      )}
    </section>
  );
}
