/**
 * One session (`#/sessions/<id>`, the UUID or the name its client gave it): its facts
 * (GET /api/v1/sessions/{sessionId}), its title, changed with PATCH {title}, its history turn by
 * turn (GET .../history: each task's query and result, oldest first, the last 100 unless all are
 * asked for), its workspace files (sessions-files.tsx), and deleting it (DELETE, asked twice).
 */
import { useEffect, useState } from 'preact/hooks';
import { ok } from '../client/index.js';
import { TERMINAL, shortName, time } from './format.js';
import { Markdown } from './markdown.js';
import { go, href } from './router.js';
import { call, messageOf } from './session.js';
import { SessionFiles } from './sessions-files.js';
import { useLatest } from './use-latest.js';
import { ConfirmDelete } from './confirm-delete.js';

/** Turns read at first; "Show all turns" reads up to the service's maximum. */
const FIRST_TURNS = 100;
const ALL_TURNS = 1000;
/** The longest title the service takes. */
const MAX_TITLE = 255;

async function loadSession(sessionId: string) {
  return call(async (api) => ok(await api.GET('/api/v1/sessions/{sessionId}', { params: { path: { sessionId } } })));
}
type Session = Awaited<ReturnType<typeof loadSession>>;

async function loadHistory(sessionId: string, limit: number) {
  return call(async (api) => ok(await api.GET('/api/v1/sessions/{sessionId}/history', { params: { path: { sessionId }, query: { limit } } })));
}
type History = Awaited<ReturnType<typeof loadHistory>>;
type Turn = History['tasks'][number];

const seconds = (ms: number | null) => (ms === null ? '' : `${(ms / 1000).toFixed(1)} s`);

function TitleForm({ session, onSaved }: { session: Session; onSaved: (s: Session) => void }) {
  const [title, setTitle] = useState(session.title);
  const [error, setError] = useState<string>();
  const [notice, setNotice] = useState<string>();
  const [busy, setBusy] = useState(false);
  const save = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    setNotice(undefined);
    setBusy(true);
    try {
      const body = { title };
      const s = await call(async (api) => ok(await api.PATCH('/api/v1/sessions/{sessionId}', { params: { path: { sessionId: session.id } }, body })));
      setTitle(s.title);
      setNotice('Title saved.');
      onSaved(s);
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="form" onSubmit={save}>
      <div class="ss-title-form">
        <div>
          <label for="session-title">Title</label>
          <input id="session-title" maxLength={MAX_TITLE} value={title} onInput={(e) => setTitle(e.currentTarget.value)} />
        </div>
        <button type="submit" disabled={busy || title === session.title}>
          Save title
        </button>
      </div>
      <p class="error ss-tight" role="alert">
        {error ?? ''}
      </p>
      <p class="notice-line ss-tight" role="status">
        {notice ?? ''}
      </p>
    </form>
  );
}

function TurnItem({ t, n }: { t: Turn; n: number }) {
  const status = shortName(t.status);
  const done = TERMINAL.has(status);
  return (
    <li data-task={t.task_id}>
      <h3>
        Turn {n} <span class={`s-${status.toLowerCase()}`}>· {status}</span>
      </h3>
      <p class="turn-query">{t.query}</p>
      {t.result ? (
        <div class="turn-answer" tabIndex={0} role="region" aria-label={`Answer of turn ${n}`}>
          <Markdown text={t.result} />
        </div>
      ) : (
        <p class="muted">{done ? 'No result.' : 'No result yet.'}</p>
      )}
      {t.error_message ? <p class="error">Error: {t.error_message}</p> : null}
      <p class="turn-meta">
        {time(t.created_at)}
        {t.duration_ms !== null ? ` · ${seconds(t.duration_ms)}` : ''} · {t.total_tokens} tokens ·{' '}
        <a href={done ? href.detail(t.task_id) : href.live(t.task_id)}>{done ? 'task details' : 'live view'}</a>
      </p>
    </li>
  );
}

function HistoryList({ sessionId }: { sessionId: string }) {
  const [limit, setLimit] = useState(FIRST_TURNS);
  const [history, setHistory] = useState<History>();
  const [error, setError] = useState<string>();
  const latest = useLatest();
  useEffect(() => {
    latest(loadHistory(sessionId, limit)).then(setHistory, (err) => setError(messageOf(err)));
  }, [sessionId, limit]);
  const turns = history?.tasks ?? [];
  const total = history?.total ?? 0;
  const first = total - turns.length + 1;
  return (
    <>
      <h2>History</h2>
      <p class="error ss-tight" role="alert">
        {error ?? ''}
      </p>
      {history === undefined ? (
        error ? null : (
          <p class="muted">Loading…</p>
        )
      ) : turns.length === 0 ? (
        <p class="muted">No turns yet.</p>
      ) : (
        <>
          {total > turns.length ? (
            <div class="toolbar">
              <p class="muted">
                The last {turns.length} of {total} turns.
              </p>
              {limit < ALL_TURNS ? (
                <button type="button" onClick={() => setLimit(ALL_TURNS)}>
                  Show all turns
                </button>
              ) : null}
            </div>
          ) : null}
          <ol class="turns" aria-label="Turns" data-testid="turns">
            {turns.map((t, i) => (
              <TurnItem key={t.task_id} t={t} n={first + i} />
            ))}
          </ol>
        </>
      )}
    </>
  );
}

function DeleteSession({ session }: { session: Session }) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const remove = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await call(async (api) => ok(await api.DELETE('/api/v1/sessions/{sessionId}', { params: { path: { sessionId: session.id } } })));
      go(href.sessions);
    } catch (err) {
      setError(messageOf(err));
      setBusy(false);
    }
  };
  return (
    <div class="ss-danger">
      <h2>Delete</h2>
      <p class="muted">Deleting hides the session and its history from every list; its tasks stay.</p>
      <ConfirmDelete
        what="session"
        busy={busy}
        question="Delete this session permanently? It leaves every list with its history; its tasks stay."
        onConfirm={() => void remove()}
      />
      <p class="error ss-tight" role="alert">
        {error ?? ''}
      </p>
    </div>
  );
}

export function SessionDetail({ id }: { id: string }) {
  const [session, setSession] = useState<Session>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    loadSession(id).then(setSession, (err) => setError(messageOf(err)));
  }, [id]);
  const s = session;
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>
        Session
      </h1>
      <p class="task-id">
        <code>{id}</code> · <a href={href.sessions}>all sessions</a>
      </p>
      <p class="error ss-tight" role="alert">
        {error ?? ''}
      </p>
      {s ? (
        <>
          <TitleForm session={s} onSaved={setSession} key={s.id} />
          <dl class="facts" data-testid="session-facts">
            <dt>Session id</dt>
            <dd>
              <code>{s.session_id}</code>
              {s.external_id ? <span class="muted"> (UUID {s.id})</span> : null}
            </dd>
            <dt>Tasks</dt>
            <dd>
              {s.task_count} ({s.successful_tasks} completed, {s.failed_tasks} failed)
            </dd>
            <dt>Tokens</dt>
            <dd>{s.tokens_used}</dd>
            <dt>Cost</dt>
            <dd>${s.cost_usd.toFixed(4)}</dd>
            <dt>Created</dt>
            <dd>{time(s.created_at)}</dd>
            <dt>Last activity</dt>
            <dd>
              {time(s.last_activity_at)}
              {s.is_active ? ' (active)' : ''}
            </dd>
          </dl>
          <HistoryList sessionId={s.id} />
          <SessionFiles sessionId={s.id} />
          <DeleteSession session={s} />
        </>
      ) : error ? null : (
        <p class="muted">Loading…</p>
      )}
    </section>
  );
}
