/**
 * The plan review of a research task that waits for a person (context.require_review): the
 * current plan as sanitised markdown, the rounds so far, feedback (at most 10 KB) and approval.
 * Both are sent with If-Match: the version shown; a 409 (the plan changed, someone's feedback is
 * being answered, no rounds left) is shown with the way forward. Approved: back to the live view.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, ok } from '../client/index.js';
import { time } from './format.js';
import { Markdown } from './markdown.js';
import { go, href } from './router.js';
import { call, messageOf } from './session.js';
import { TaskHeading } from './task-heading.js';

const MAX_FEEDBACK_BYTES = 10 * 1024;
const MAX_ROUNDS = 10;

async function load(id: string) {
  return call(async (api) => {
    const r = await api.GET('/api/v1/tasks/{workflow_id}/review', { params: { path: { workflow_id: id } } });
    const body = ok(r);
    const m = /^(?:W\/)?"?(\d+)"?$/.exec((r.response.headers.get('etag') ?? '').trim());
    return { ...body, version: m ? Number(m[1]) : body.version };
  });
}
type Review = Awaited<ReturnType<typeof load>>;

/** A 409/412 as what happened and what to do next. */
function conflict(err: unknown): string {
  const msg = messageOf(err);
  if (!(err instanceof ApiError) || (err.status !== 409 && err.status !== 412)) return msg;
  if (/in progress/i.test(msg)) return `${msg} Someone's feedback is being answered: reload the plan in a moment.`;
  if (/maximum review rounds/i.test(msg)) return `${msg} Only approval is left.`;
  return `${msg} The plan changed since you read it: reload the plan, read it, then try again.`;
}

export function ReviewPage({ id }: { id: string }) {
  const [review, setReview] = useState<Review>();
  const [error, setError] = useState<string>();
  const [notice, setNotice] = useState<string>();
  const [feedback, setFeedback] = useState('');
  const [busy, setBusy] = useState<'feedback' | 'approve'>();

  const reload = () => {
    setError(undefined);
    load(id).then(setReview, (err) => setError(messageOf(err)));
  };
  useEffect(reload, [id]);

  const bytes = new TextEncoder().encode(feedback).length;
  const send = async (action: 'feedback' | 'approve') => {
    if (!review) return;
    setBusy(action);
    setError(undefined);
    setNotice(undefined);
    try {
      const body = action === 'approve' ? { action } : { action, message: feedback };
      await call(async (api) =>
        ok(
          await api.POST('/api/v1/tasks/{workflow_id}/review', {
            params: { path: { workflow_id: id }, header: { 'If-Match': String(review.version) } },
            body,
          }),
        ),
      );
      if (action === 'approve') return go(href.live(id));
      setFeedback('');
      setNotice('Feedback sent: the plan below is the updated one.');
      setReview(await load(id));
    } catch (err) {
      setError(conflict(err));
    } finally {
      setBusy(undefined);
    }
  };

  const reviewing = review?.status === 'reviewing';
  return (
    <section aria-labelledby="page-title">
      <TaskHeading title="Plan review" id={id} link={{ href: href.live(id), text: 'live view' }} />
      <p class="error" role="alert" data-testid="review-error">
        {error ?? ''}
      </p>
      {error ? (
        <button type="button" onClick={reload}>
          Reload the plan
        </button>
      ) : null}
      <p class="notice-line" role="status">
        {notice ?? ''}
      </p>
      {review ? (
        <>
          <dl class="facts">
            <dt>Query</dt>
            <dd>{review.query}</dd>
            <dt>Status</dt>
            <dd data-testid="review-status">{review.status}</dd>
            <dt>Round</dt>
            <dd>
              {review.round} of {MAX_ROUNDS}
            </dd>
            <dt>Version</dt>
            <dd data-testid="review-version">{review.version}</dd>
          </dl>
          <h2>Current plan</h2>
          <div class="answer" tabIndex={0} role="region" aria-label="Current plan" data-testid="plan">
            {review.current_plan ? <Markdown text={review.current_plan} /> : <p class="muted">No plan yet: the model asks questions (see the rounds).</p>}
          </div>
          {reviewing ? (
            <form
              class="form"
              onSubmit={(e) => {
                e.preventDefault();
                void send('feedback');
              }}
            >
              <label for="feedback">Feedback on the plan</label>
              <textarea id="feedback" rows={4} value={feedback} aria-describedby="feedback-limit" onInput={(e) => setFeedback(e.currentTarget.value)} />
              <p id="feedback-limit" class={bytes > MAX_FEEDBACK_BYTES ? 'error' : 'muted'}>
                {bytes} of {MAX_FEEDBACK_BYTES} bytes (at most 10 KB)
              </p>
              <div class="buttons">
                <button type="submit" disabled={!!busy || !feedback.trim() || bytes > MAX_FEEDBACK_BYTES || review.round >= MAX_ROUNDS}>
                  {busy === 'feedback' ? 'Sending…' : 'Send feedback'}
                </button>
                <button type="button" class="primary" disabled={!!busy || !review.current_plan} onClick={() => void send('approve')}>
                  {busy === 'approve' ? 'Approving…' : `Approve version ${review.version}`}
                </button>
              </div>
            </form>
          ) : (
            <p>
              The plan is approved: <a href={href.live(id)}>follow the task</a>.
            </p>
          )}
          <h2>Rounds</h2>
          <ol class="rounds" aria-label="Rounds">
            {review.rounds.map((r, i) => (
              <li key={i} class={`round r-${r.role}`}>
                <p class="muted">
                  {r.role === 'user' ? 'Feedback' : 'Model'} · {time(r.timestamp)}
                </p>
                <Markdown text={r.message} />
              </li>
            ))}
          </ol>
        </>
      ) : error ? null : (
        <p class="muted">Loading…</p>
      )}
    </section>
  );
}
