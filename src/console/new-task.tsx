/**
 * The new-task form: query, mode and session id; submitting opens the task's live view.
 */
import { useState } from 'preact/hooks';
import { ok } from '../client/index.js';
import { go, href } from './router.js';
import { call, messageOf } from './session.js';

const MODES = ['', 'simple', 'standard', 'complex', 'supervisor'] as const;
type Mode = Exclude<(typeof MODES)[number], ''>;

export function NewTaskPage() {
  const [query, setQuery] = useState('');
  const [mode, setMode] = useState<Mode | ''>('');
  const [session, setSession] = useState(() => sessionStorage.getItem('taskorch.session') ?? '');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const body = { query, ...(mode ? { mode } : {}), ...(session.trim() ? { session_id: session.trim() } : {}) };
      const r = await call(async (api) => {
        const res = await api.POST('/api/v1/tasks', { body });
        return { data: ok(res), session: res.response.headers.get('X-Session-ID') };
      });
      if (r.session) sessionStorage.setItem('taskorch.session', r.session);
      go(href.live(r.data.task_id));
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>
        New task
      </h1>
      <form class="form" onSubmit={submit}>
        <label for="query">Query</label>
        <textarea id="query" name="query" rows={5} required value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
        <div class="row">
          <div>
            <label for="mode">Mode</label>
            <select id="mode" name="mode" value={mode} onChange={(e) => setMode(e.currentTarget.value as Mode | '')}>
              {MODES.map((m) => (
                <option key={m} value={m}>
                  {m || 'auto-detect'}
                </option>
              ))}
            </select>
          </div>
          <div>
            <label for="session">Session id (optional)</label>
            <input id="session" name="session" value={session} onInput={(e) => setSession(e.currentTarget.value)} />
          </div>
        </div>
        <p class="error" role="alert">
          {error ?? ''}
        </p>
        <button type="submit" class="primary" disabled={busy || !query.trim()}>
          {busy ? 'Submitting…' : 'Submit task'}
        </button>
      </form>
    </section>
  );
}
