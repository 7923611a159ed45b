/**
 * Schedules: `#/schedules` lists the caller's schedules (GET /api/v1/schedules: name, cron,
 * timezone, status, next run, runs; filtered by status, 50 a page) above the new-schedule form
 * (schedules-form.tsx); `#/schedules/<id>` is one schedule (schedules-detail.tsx).
 */
import { useEffect, useState } from 'preact/hooks';
import { ok } from '../client/index.js';
import { time } from './format.js';
import { href } from './router.js';
import { inZone } from './schedules-cron.js';
import { ScheduleDetail, takeDeletedNotice } from './schedules-detail.js';
import { ScheduleForm } from './schedules-form.js';
import { call, messageOf } from './session.js';
import { Pager } from './pager.js';
import { useLatest } from './use-latest.js';

const PAGE = 50;
const STATUSES = ['', 'ACTIVE', 'PAUSED'] as const;
type StatusFilter = (typeof STATUSES)[number];

async function list(status: StatusFilter, page: number) {
  const query = { page, page_size: PAGE, ...(status ? { status } : {}) };
  return call(async (api) => ok(await api.GET('/api/v1/schedules', { params: { query } })));
}
type Page = Awaited<ReturnType<typeof list>>;

function ScheduleList() {
  const [status, setStatus] = useState<StatusFilter>('');
  const [page, setPage] = useState(1);
  const [data, setData] = useState<Page>();
  const [error, setError] = useState<string>();
  const [notice, setNotice] = useState(takeDeletedNotice);
  const [created, setCreated] = useState<{ id: string; name: string }>();

  const latest = useLatest();
  const refresh = () => {
    latest(list(status, page)).then(
      (d) => {
        setData(d);
        setError(undefined);
      },
      (err) => setError(messageOf(err)),
    );
  };
  useEffect(refresh, [status, page]);

  const total = data?.total ?? 0;
  const first = (page - 1) * PAGE;
  return (
    <section aria-labelledby="page-title" class="sc-page">
      <h1 id="page-title" tabIndex={-1}>
        Schedules
      </h1>
      <p class="muted">
        Each schedule runs its task query as a new task at the times of its cron expression.{' '}
        <button type="button" class="link" onClick={() => document.getElementById('schedule-name')?.focus()}>
          New schedule
        </button>
      </p>
      <div class="toolbar">
        <div class="inline-field">
          <label for="schedule-status-filter">Status</label>
          <select
            id="schedule-status-filter"
            value={status}
            onChange={(e) => {
              setPage(1);
              setStatus(e.currentTarget.value as StatusFilter);
            }}
          >
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s ? s.toLowerCase() : 'any'}
              </option>
            ))}
          </select>
        </div>
        <button type="button" onClick={refresh}>
          Refresh
        </button>
      </div>
      <p class="notice-line" role="status" data-testid="schedules-notice">
        {created ? (
          <>
            Schedule <a href={href.schedule(created.id)}>{created.name}</a> created.
          </>
        ) : (
          (notice ?? '')
        )}
      </p>
      <p class="error" role="alert">
        {error ?? ''}
      </p>
      {data && !data.schedules.length ? <p class="muted">{status ? `No ${status.toLowerCase()} schedules.` : 'No schedules yet.'}</p> : null}
      {data?.schedules.length ? (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">Your schedules</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Cron</th>
                <th scope="col">Timezone</th>
                <th scope="col">Status</th>
                <th scope="col">Next run</th>
                <th scope="col">Runs (ok / failed)</th>
              </tr>
            </thead>
            <tbody>
              {data.schedules.map((s) => (
                <tr key={s.id} data-testid="schedule-row" data-id={s.id}>
                  <td>
                    <a href={href.schedule(s.id)}>{s.name}</a>
                  </td>
                  <td>
                    <code>{s.cron_expression}</code>
                  </td>
                  <td>{s.timezone}</td>
                  <td class={`st-${s.status.toLowerCase()}`}>{s.status}</td>
                  <td>
                    {s.status === 'PAUSED' || !s.next_run_at ? (
                      <span class="muted">none</span>
                    ) : (
                      <time dateTime={s.next_run_at} title={time(s.next_run_at)}>
                        {inZone(new Date(s.next_run_at), s.timezone)}
                      </time>
                    )}
                  </td>
                  <td>
                    {s.total_runs} ({s.successful_runs} / {s.failed_runs})
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {total > PAGE ? <Pager offset={first} size={PAGE} total={total} onOffset={(o) => setPage(o / PAGE + 1)} /> : null}
      <ScheduleForm
        onCreated={(id, name) => {
          setNotice(undefined);
          setCreated({ id, name });
          refresh();
        }}
      />
    </section>
  );
}

export function SchedulesPage({ id }: { id?: string }) {
  return id ? <ScheduleDetail id={id} /> : <ScheduleList />;
}
