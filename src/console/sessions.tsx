/**
 * Sessions: `#/sessions` lists the caller's sessions, most recently active first, 20 a page
 * (GET /api/v1/sessions: title, tasks, the latest task, last activity, created, tokens);
 * `#/sessions/<id>` shows one session (sessions-detail.tsx).
 */
import { useEffect, useState } from 'preact/hooks';
import { ok } from '../client/index.js';
import { shortName, time } from './format.js';
import { href } from './router.js';
import { call, messageOf } from './session.js';
import { SessionDetail } from './sessions-detail.js';
import { Pager } from './pager.js';
import { useLatest } from './use-latest.js';

const PAGE = 20;

async function list(offset: number) {
  return call(async (api) => ok(await api.GET('/api/v1/sessions', { params: { query: { limit: PAGE, offset } } })));
}
type Page = Awaited<ReturnType<typeof list>>;

function SessionList() {
  const [offset, setOffset] = useState(0);
  const [page, setPage] = useState<Page>();
  const [error, setError] = useState<string>();
  const latest = useLatest();

  useEffect(() => {
    setError(undefined);
    latest(list(offset)).then(setPage, (err) => setError(messageOf(err)));
  }, [offset]);

  const total = page?.total_count ?? 0;
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>
        Sessions
      </h1>
      <p class="error ss-tight" role="alert">
        {error ?? ''}
      </p>
      <div class="table-wrap">
        <table data-testid="sessions">
          <caption class="visually-hidden">Sessions, most recently active first</caption>
          <thead>
            <tr>
              <th scope="col">Title</th>
              <th scope="col">Tasks</th>
              <th scope="col">Latest task</th>
              <th scope="col">Last activity</th>
              <th scope="col">Created</th>
              <th scope="col">Tokens</th>
            </tr>
          </thead>
          <tbody>
            {page?.sessions.map((s) => (
              <tr key={s.id} data-session={s.id}>
                <td>
                  <a href={href.session(s.session_id)}>{s.title || s.session_id}</a>
                  {s.is_active ? <span class="muted"> (active)</span> : null}
                </td>
                <td>{s.task_count}</td>
                <td>
                  {s.latest_task_query ?? ''}
                  {s.latest_task_status ? <span class="muted"> · {shortName(s.latest_task_status)}</span> : null}
                </td>
                <td>{time(s.last_activity_at)}</td>
                <td>{time(s.created_at)}</td>
                <td>{s.tokens_used}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {page === undefined && !error ? <p class="muted">Loading…</p> : null}
      {page && !page.sessions.length ? <p class="muted">No sessions yet: a task starts one (or joins the one its session id names).</p> : null}
      <Pager offset={offset} size={PAGE} total={total} onOffset={setOffset} />
    </section>
  );
}

export function SessionsPage({ id }: { id?: string }) {
  return id ? <SessionDetail id={id} /> : <SessionList />;
}
