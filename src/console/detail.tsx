/**
 * A task's detail: its status object (status, query, session, mode, model, usage, result as
 * markdown with its sources, error), its timeline as bars per step and agent
 * (GET /api/v1/tasks/{id}/timeline), its usage and cost per model (metadata.model_breakdown) and
 * its raw persisted events (GET /api/v1/tasks/{id}/events), each as JSON, a page of
 * EVENTS_PAGE at a time ("Load more events" reads the next after the last one shown).
 */
import { useEffect, useState } from 'preact/hooks';
import { ok } from '../client/index.js';
import { Citations } from './citations.js';
import { EVENTS_PAGE, eventsAfter } from './events-page.js';
import { citationsOf, linkCitations } from './citations-text.js';
import { json, shortName, time, usd } from './format.js';
import { Markdown } from './markdown.js';
import { href } from './router.js';
import { call, messageOf } from './session.js';
import { TaskHeading } from './task-heading.js';
import { Timeline } from './timeline.js';
import { UsageTable, modelBreakdown } from './usage.js';

async function load(id: string) {
  return call(async (api) => {
    const opts = { params: { path: { id } } };
    const [status, events, timeline] = await Promise.all([
      api.GET('/api/v1/tasks/{id}', opts),
      eventsAfter(id, 0),
      api.GET('/api/v1/tasks/{id}/timeline', opts),
    ]);
    return { status: ok(status), events, more: events.length === EVENTS_PAGE, timeline: ok(timeline) };
  });
}
type Detail = Awaited<ReturnType<typeof load>>;

export function DetailPage({ id }: { id: string }) {
  const [d, setD] = useState<Detail>();
  const [error, setError] = useState<string>();
  const [loadingMore, setLoadingMore] = useState(false);
  useEffect(() => {
    load(id).then(setD, (err) => setError(messageOf(err)));
  }, [id]);
  const loadMore = () => {
    if (!d || loadingMore) return;
    setLoadingMore(true);
    eventsAfter(id, d.events.at(-1)?.seq ?? 0)
      .then(
        (next) => setD((cur) => cur && { ...cur, events: [...cur.events, ...next], more: next.length === EVENTS_PAGE }),
        (err) => setError(messageOf(err)),
      )
      .finally(() => setLoadingMore(false));
  };
  const s = d?.status;
  return (
    <section aria-labelledby="page-title">
      <TaskHeading title="Task details" id={id} link={{ href: href.live(id), text: 'live view' }} />
      <p class="error" role="alert">
        {error ?? ''}
      </p>
      {s ? (
        <dl class="facts">
          <dt>Status</dt>
          <dd data-testid="detail-status">{shortName(s.status)}</dd>
          <dt>Query</dt>
          <dd>{s.query}</dd>
          <dt>Session</dt>
          <dd>
            <code>{s.session_id}</code>
          </dd>
          <dt>Mode</dt>
          <dd>{shortName(s.mode)}</dd>
          <dt>Model</dt>
          <dd>{[s.model_used, s.provider].filter(Boolean).join(' · ')}</dd>
          <dt>Tokens</dt>
          <dd>{s.usage.total_tokens}</dd>
          <dt>Cost</dt>
          <dd>{usd(s.usage.estimated_cost ?? 0)}</dd>
          <dt>Created</dt>
          <dd>{time(s.created_at)}</dd>
        </dl>
      ) : null}
      {s?.error ? <p class="error">Error: {s.error}</p> : null}
      <h2>Result</h2>
      {s?.result ? (
        <div class="answer" tabIndex={0} role="region" aria-label="Result">
          <Markdown text={linkCitations(s.result, citationsOf(s.metadata))} />
        </div>
      ) : (
        <p class="muted">No result yet.</p>
      )}
      <Citations items={citationsOf(s?.metadata)} />
      <h2>Timeline</h2>
      {d ? <Timeline data={d.timeline} /> : null}
      <h2>Usage per model</h2>
      {s ? <UsageTable rows={modelBreakdown(s.metadata)} /> : null}
      <h2>Raw events</h2>
      {d ? (
        <ol class="raw-events" aria-label="Raw events">
          {d.events.map((e) => (
            <li key={e.seq} data-seq={e.seq}>
              <details>
                <summary>
                  #{e.seq} {e.type} {e.agent_id ? `· ${e.agent_id}` : ''}
                </summary>
                <pre tabIndex={0}>{json(e)}</pre>
              </details>
            </li>
          ))}
        </ol>
      ) : null}
      {d?.more ? (
        <p>
          <span class="muted" data-testid="raw-events-shown">
            {d.events.length} events shown.{' '}
          </span>
          <button type="button" onClick={loadMore} disabled={loadingMore}>
            Load more events
          </button>
        </p>
      ) : null}
    </section>
  );
}
