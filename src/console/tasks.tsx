/**
 * The task list: newest first, filtered by status and session, 20 a page.
 */
import { useEffect, useState } from 'preact/hooks';
import { ok } from '../client/index.js';
import { TERMINAL, shortName, time } from './format.js';
import { href } from './router.js';
import { call, messageOf } from './session.js';
import { Pager } from './pager.js';

const STATUSES = ['', 'QUEUED', 'RUNNING', 'PAUSED', 'COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT'] as const;
type StatusFilter = Exclude<(typeof STATUSES)[number], ''>;
const PAGE = 20;

async function list(status: StatusFilter | '', session: string, offset: number) {
  const query = { limit: PAGE, offset, ...(status ? { status } : {}), ...(session ? { session_id: session } : {}) };
  return call(async (api) => ok(await api.GET('/api/v1/tasks', { params: { query } })));
}
type Page = Awaited<ReturnType<typeof list>>;

export function TasksPage() {
  const [status, setStatus] = useState<StatusFilter | ''>('');
  const [session, setSession] = useState('');
  const [applied, setApplied] = useState('');
  const [offset, setOffset] = useState(0);
  const [page, setPage] = useState<Page>();
  const [error, setError] = useState<string>();

  useEffect(() => {
    setError(undefined);
    list(status, applied, offset).then(setPage, (err) => setError(messageOf(err)));
  }, [status, applied, offset]);

  const total = page?.total_count ?? 0;
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>
        Tasks
      </h1>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setOffset(0);
          setApplied(session.trim());
        }}
      >
        <div>
          <label for="status-filter">Status</label>
          <select
            id="status-filter"
            value={status}
            onChange={(e) => {
              setOffset(0);
              setStatus(e.currentTarget.value as StatusFilter | '');
            }}
          >
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s || 'any'}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label for="session-filter">Session</label>
          <input id="session-filter" value={session} onInput={(e) => setSession(e.currentTarget.value)} />
        </div>
        <button type="submit">Filter</button>
      </form>
      <p class="error" role="alert">
        {error ?? ''}
      </p>
      <div class="table-wrap">
        <table>
          <caption class="visually-hidden">Tasks, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Query</th>
              <th scope="col">Status</th>
              <th scope="col">Mode</th>
              <th scope="col">Created</th>
              <th scope="col">Tokens</th>
            </tr>
          </thead>
          <tbody>
            {page?.tasks.map((t) => (
              <tr key={t.task_id}>
                <td>
                  <a href={TERMINAL.has(shortName(t.status)) ? href.detail(t.task_id) : href.live(t.task_id)}>{t.query || t.task_id}</a>
                </td>
                <td>{shortName(t.status)}</td>
                <td>{shortName(t.mode)}</td>
                <td>{time(t.created_at)}</td>
                <td>{t.total_token_usage?.total_tokens ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {page && !page.tasks.length ? <p class="muted">No tasks match.</p> : null}
      <Pager offset={offset} size={PAGE} total={total} onOffset={setOffset} />
    </section>
  );
}
