/**
 * The live view of a task: its answer streaming as rendered (sanitised) markdown, its events
 * as they come, and pause, resume and cancel. The answer and event areas have a reserved size
 * (app.css), so text arriving does not move the controls. Reloading the page goes on from the
 * last event (live-state.ts).
 */
import { useEffect, useState } from 'preact/hooks';
import { ok } from '../client/index.js';
import { Citations } from './citations.js';
import { citationsOf, linkCitations } from './citations-text.js';
import { EventList } from './events.js';
import { TERMINAL, shortName } from './format.js';
import { useLiveTask } from './live-state.js';
import { Markdown } from './markdown.js';
import { href } from './router.js';
import { call, messageOf } from './session.js';
import { TaskHeading } from './task-heading.js';

type Control = 'pause' | 'resume' | 'cancel';

async function fetchStatus(id: string) {
  return call(async (api) => ok(await api.GET('/api/v1/tasks/{id}', { params: { path: { id } } })));
}
type Status = Awaited<ReturnType<typeof fetchStatus>>;

export function LivePage({ id }: { id: string }) {
  const { state, error } = useLiveTask(id);
  const [status, setStatus] = useState<Status>();
  const [busy, setBusy] = useState<Control>();
  const [notice, setNotice] = useState<string>();

  // The stored status at first and again at the end of the stream (the final word on the outcome).
  useEffect(() => {
    fetchStatus(id).then(setStatus, (err) => setNotice(messageOf(err)));
  }, [id, state.ended, state.phase]);

  const control = async (action: Control) => {
    setBusy(action);
    setNotice(undefined);
    try {
      const r = await call(async (api) => {
        const opts = { params: { path: { id } } };
        if (action === 'pause') return ok(await api.POST('/api/v1/tasks/{id}/pause', opts));
        if (action === 'resume') return ok(await api.POST('/api/v1/tasks/{id}/resume', opts));
        return ok(await api.POST('/api/v1/tasks/{id}/cancel', opts));
      });
      setNotice(r.message || `${action} requested`);
      setStatus(await fetchStatus(id));
    } catch (err) {
      setNotice(messageOf(err));
    } finally {
      setBusy(undefined);
    }
  };

  const shown = shortName(status?.status) || state.phase.toUpperCase();
  const over = TERMINAL.has(shortName(status?.status)) || state.ended;
  const paused = shortName(status?.status) === 'PAUSED' || state.phase === 'paused';
  const seen = (type: string) => state.events.some((e) => e.type === type);
  const awaitsReview = !over && (seen('RESEARCH_PLAN_READY') || seen('RESEARCH_PLAN_UPDATED')) && !seen('RESEARCH_PLAN_APPROVED');
  const awaitsApproval = !over && seen('APPROVAL_REQUESTED') && !seen('APPROVAL_DECISION');
  return (
    <section aria-labelledby="page-title">
      <TaskHeading title="Task" id={id} link={{ href: href.detail(id), text: 'details and raw events' }} />
      <div class="toolbar">
        <p class="status-line">
          Status:{' '}
          <strong class={`status s-${shown.toLowerCase()}`} data-testid="status" aria-live="polite">
            {shown}
          </strong>
          {state.ended ? null : <span class="spinner" aria-hidden="true" />}
        </p>
        <div class="buttons">
          <button type="button" onClick={() => control('pause')} disabled={over || paused || !!busy}>
            Pause
          </button>
          <button type="button" onClick={() => control('resume')} disabled={over || !paused || !!busy}>
            Resume
          </button>
          <button type="button" class="danger" onClick={() => control('cancel')} disabled={over || !!busy}>
            Cancel
          </button>
        </div>
      </div>
      {awaitsReview ? (
        <p class="banner" data-testid="awaits-review">
          This task waits for its plan to be reviewed: <a href={href.review(id)}>review the plan</a>
        </p>
      ) : null}
      {awaitsApproval ? (
        <p class="banner" data-testid="awaits-approval">
          This task waits for an approval: <a href={href.approvals}>open the approvals</a>
        </p>
      ) : null}
      {state.events.some((e) => e.agent_id.startsWith('swarm-')) || status?.metadata?.workflow_type === 'swarm' ? (
        <p class="banner" data-testid="swarm-link">
          This task runs as a swarm: <a href={href.swarm(id)}>open the swarm view</a>
        </p>
      ) : null}
      <p class="notice-line" role="status">
        {notice ?? error ?? ''}
      </p>
      <h2>Answer</h2>
      <div class="answer" data-testid="answer" aria-busy={!state.ended} tabIndex={0} role="region" aria-label="Answer">
        {state.answer ? (
          <Markdown text={state.ended ? linkCitations(state.answer, citationsOf(status?.metadata)) : state.answer} />
        ) : (
          <p class="muted">{over ? 'No streamed answer.' : 'Waiting for the answer…'}</p>
        )}
      </div>
      {state.ended && status?.result && status.result !== state.answer ? (
        <>
          <h2>Result</h2>
          <div class="answer" tabIndex={0} role="region" aria-label="Result">
            <Markdown text={linkCitations(status.result, citationsOf(status.metadata))} />
          </div>
        </>
      ) : null}
      {status?.error ? <p class="error">Error: {status.error}</p> : null}
      {state.ended ? <Citations items={citationsOf(status?.metadata)} /> : null}
      <h2>Events</h2>
      <div class="event-box" tabIndex={0} role="region" aria-label="Events of this task">
        <EventList events={state.events} label="Events" />
      </div>
    </section>
  );
}
