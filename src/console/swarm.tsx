/**
 * The swarm view of a task submitted with context.force_swarm: its agents (id, role, status,
 * iterations), its task list (status, assignee), the messages of the swarm (the lead's
 * decisions, the person's messages they answer, the agents' reports), all live as the stream
 * goes (swarm-state.ts), and a form that sends the lead a message
 * (POST /api/v1/swarm/{workflow_id}/message), the service's refusal shown as it comes. The
 * three lists scroll inside boxes of a reserved size (swarm-sessions.css), so events arriving
 * do not move the form.
 */
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { ok } from '../client/index.js';
import { TERMINAL, shortName, time } from './format.js';
import { href } from './router.js';
import { call, messageOf } from './session.js';
import { LEAD, PERSON, useSwarm, type SwarmMessage, type SwarmView } from './swarm-state.js';
import { useLatest } from './use-latest.js';

/** The longest message the service takes (SwarmMessageRequest.message). */
const MAX_MESSAGE = 10_000;

async function fetchStatus(id: string) {
  return call(async (api) => ok(await api.GET('/api/v1/tasks/{id}', { params: { path: { id } } })));
}
type Status = Awaited<ReturnType<typeof fetchStatus>>;

/** A status as a word with its colour class (the word alone says it; the colour only helps). */
function StatusWord({ value }: { value: string }) {
  return <span class={`sw-status sw-${value.toLowerCase()}`}>{value}</span>;
}

const who = (name: string) => (name === PERSON ? 'You' : name === LEAD ? 'Lead' : name === 'team' ? 'Team' : name);

function Agents({ view }: { view: SwarmView }) {
  return (
    <div class="table-wrap swarm-box" tabIndex={0} role="region" aria-labelledby="swarm-agents">
      {view.agents.length ? (
        <table data-testid="swarm-agents">
          <caption class="visually-hidden">Agents of the swarm</caption>
          <thead>
            <tr>
              <th scope="col">Agent</th>
              <th scope="col">Role</th>
              <th scope="col">Status</th>
              <th scope="col">Iterations</th>
            </tr>
          </thead>
          <tbody>
            {view.agents.map((a) => (
              <tr key={a.id} data-agent={a.id}>
                <td>
                  <code>{a.id}</code>
                </td>
                <td>{a.task ? `${a.task}: ${a.role}` : a.role}</td>
                <td>
                  <StatusWord value={a.status} />
                </td>
                <td>{a.id === LEAD ? '' : a.iterations}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p class="muted">{view.ended ? 'No agents.' : 'Waiting for the lead to plan…'}</p>
      )}
    </div>
  );
}

function Tasks({ view }: { view: SwarmView }) {
  return (
    <div class="table-wrap swarm-box" tabIndex={0} role="region" aria-labelledby="swarm-tasks">
      {view.tasks.length ? (
        <table data-testid="swarm-tasks">
          <caption class="visually-hidden">Task list of the swarm</caption>
          <thead>
            <tr>
              <th scope="col">Task</th>
              <th scope="col">Description</th>
              <th scope="col">Status</th>
              <th scope="col">Assignee</th>
            </tr>
          </thead>
          <tbody>
            {view.tasks.map((t) => (
              <tr key={t.id} data-task={t.id}>
                <td>
                  <code>{t.id}</code>
                </td>
                <td>
                  {t.description}
                  {t.source === 'person' ? <span class="muted"> (your message)</span> : null}
                  {t.note ? <div class="muted">{t.note}</div> : null}
                </td>
                <td>
                  <StatusWord value={t.status} />
                </td>
                <td>{t.agent ? <code>{t.agent}</code> : <span class="muted">none</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p class="muted">{view.ended ? 'No task list.' : 'No task list yet.'}</p>
      )}
    </div>
  );
}

/** A message this page delivered that the lead has not acted on yet. */
interface Pending {
  key: string;
  text: string;
  at: string;
}

/** The page's delivered messages that no person-message decision of the stream names yet (oldest matched first). */
function unanswered(sent: Pending[], messages: SwarmMessage[]): Pending[] {
  const acted = messages.filter((m) => m.person).map((m) => m.text);
  return sent.filter((p) => {
    const i = acted.indexOf(p.text);
    if (i < 0) return true;
    acted.splice(i, 1);
    return false;
  });
}

function Messages({ view, pending }: { view: SwarmView; pending: Pending[] }) {
  const box = useRef<HTMLDivElement>(null);
  const atEnd = useRef(true);
  const count = view.messages.length + pending.length;
  // New messages keep the box at its end while the reader is there (not when they scrolled back).
  useLayoutEffect(() => {
    const el = box.current;
    if (el && atEnd.current) el.scrollTop = el.scrollHeight;
  }, [count]);
  const onScroll = () => {
    const el = box.current;
    if (el) atEnd.current = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
  };
  return (
    <div class="swarm-messages" ref={box} onScroll={onScroll} tabIndex={0} role="region" aria-labelledby="swarm-msgs">
      {count ? (
        <ol class="sw-msgs" aria-label="Messages" data-testid="swarm-messages">
          {view.messages.map((m) => (
            <li key={m.key} class={m.from === PERSON ? 'sw-msg sw-person' : 'sw-msg'} data-seq={m.seq}>
              <div class="sw-route">
                <strong>{who(m.from)}</strong> <span aria-hidden="true">→</span>
                <span class="visually-hidden">to</span> <strong>{who(m.to)}</strong>
                {m.at ? <span class="muted"> · {time(m.at)}</span> : null}
              </div>
              <div class="message">{m.text}</div>
              {m.detail ? <div class="muted message">{m.detail}</div> : null}
            </li>
          ))}
          {pending.map((p) => (
            <li key={p.key} class="sw-msg sw-person sw-pending" data-testid="swarm-pending">
              <div class="sw-route">
                <strong>You</strong> <span aria-hidden="true">→</span>
                <span class="visually-hidden">to</span> <strong>Lead</strong>
                <span class="muted"> · {time(p.at)}</span>
              </div>
              <div class="message">{p.text}</div>
              <div class="muted">Delivered: the lead reads it at its next decision.</div>
            </li>
          ))}
        </ol>
      ) : (
        <p class="muted">No messages yet.</p>
      )}
    </div>
  );
}

function MessageForm({ id, over, onSent }: { id: string; over: boolean; onSent: (p: Pending) => void }) {
  const [text, setText] = useState('');
  const [error, setError] = useState<string>();
  const [notice, setNotice] = useState<string>();
  const [busy, setBusy] = useState(false);
  const send = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    setNotice(undefined);
    if (!text.trim()) return setError('Write a message first.');
    setBusy(true);
    try {
      const body = { message: text };
      const r = await call(async (api) => ok(await api.POST('/api/v1/swarm/{workflow_id}/message', { params: { path: { workflow_id: id } }, body })));
      onSent({ key: `sent-${Date.now()}`, text: text.trim(), at: new Date().toISOString() });
      setNotice(`Message ${r.status}: the lead acts on it at its next decision.`);
      setText('');
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="form sw-form" onSubmit={send}>
      <label for="swarm-message">Message to the lead</label>
      <textarea
        id="swarm-message"
        rows={3}
        maxLength={MAX_MESSAGE}
        aria-describedby="swarm-message-hint"
        value={text}
        onInput={(e) => setText(e.currentTarget.value)}
      />
      <p class="muted sw-hint" id="swarm-message-hint">
        {over
          ? 'The swarm has ended: its lead takes no more messages.'
          : `The lead may add tasks for it and recruit agents. ${text.length} of ${MAX_MESSAGE} characters.`}
      </p>
      <p class="error" role="alert" data-testid="swarm-send-error">
        {error ?? ''}
      </p>
      <div class="buttons">
        <button type="submit" class="primary" disabled={busy}>
          Send to the lead
        </button>
      </div>
      <p class="notice-line" role="status" data-testid="swarm-send-notice">
        {notice ?? ''}
      </p>
    </form>
  );
}

export function SwarmPage({ id }: { id: string }) {
  const { view, error } = useSwarm(id);
  const [status, setStatus] = useState<Status>();
  const [statusError, setStatusError] = useState<string>();
  const [sent, setSent] = useState<Pending[]>([]);

  // The stored status at first, at every change of phase and at the end of the stream (the final word on the outcome).
  const latest = useLatest();
  useEffect(() => {
    latest(fetchStatus(id)).then(
      (s) => {
        setStatus(s);
        setStatusError(undefined);
      },
      (err) => setStatusError(messageOf(err)),
    );
  }, [id, view.ended, view.phase]);

  const stored = shortName(status?.status);
  const shown = stored || view.phase.toUpperCase();
  const over = view.ended || TERMINAL.has(stored);
  const notSwarm = over && !view.isSwarm && status?.metadata?.workflow_type !== 'swarm';
  const count = (s: string) => view.agents.filter((a) => a.id !== LEAD && a.status === s).length;
  const pending = unanswered(sent, view.messages);

  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>
        Swarm
      </h1>
      <p class="task-id">
        <code>{id}</code> · <a href={href.live(id)}>live view</a> · <a href={href.detail(id)}>details and raw events</a>
      </p>
      <p class="sw-query">{status?.query ?? ''}</p>
      <div class="toolbar">
        <p class="status-line">
          Status:{' '}
          <strong class={`status s-${shown.toLowerCase()}`} data-testid="swarm-status" aria-live="polite">
            {shown}
          </strong>
          {over ? null : <span class="spinner" aria-hidden="true" />}
        </p>
        <p class="muted sw-counts" data-testid="swarm-counts">
          {count('recruited') + count('running')} working · {count('done')} done · {count('failed')} failed
        </p>
      </div>
      <p class="error" role="alert">
        {error ?? statusError ?? ''}
      </p>
      {notSwarm ? (
        <p class="banner" data-testid="not-swarm">
          This task did not run as a swarm: see its <a href={href.live(id)}>live view</a>.
        </p>
      ) : null}
      <div class="sw-grid">
        <div>
          <h2 id="swarm-agents">Agents</h2>
          <Agents view={view} />
        </div>
        <div>
          <h2 id="swarm-tasks">Tasks</h2>
          <Tasks view={view} />
        </div>
      </div>
      <h2 id="swarm-msgs">Messages</h2>
      <Messages view={view} pending={pending} />
      <h2>Message the lead</h2>
      <MessageForm id={id} over={over} onSent={(p) => setSent((s) => [...s, p])} />
    </section>
  );
}
