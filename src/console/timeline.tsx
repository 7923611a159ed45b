/**
 * A task's timeline drawn as bars over time (GET /api/v1/tasks/{id}/timeline): one row per step
 * with its agent, a bar from the step's start to its end on the task's time axis (a running
 * step reaches "now"), and its duration, status and retries in words, so the picture is never
 * the only way to read it.
 */
import type { components } from '../client/index.js';
import { ms } from './format.js';

/** A task's timeline and one of its steps, as the API gives them. */
export type TimelineData = components['schemas']['Timeline'];
export type TimelineStep = TimelineData['steps'][number];

const at = (iso: string | null | undefined): number | undefined => {
  const t = iso ? Date.parse(iso) : NaN;
  return Number.isNaN(t) ? undefined : t;
};

const MIN_WIDTH = 0.5;

/** Each step's offset and length on the axis, in percent of the task's span (at least a sliver). */
export function layout(t: TimelineData, now = Date.now()): { step: TimelineStep; left: number; width: number; offsetMs: number }[] {
  const starts = t.steps.map((s) => at(s.started_at)).filter((v): v is number => v !== undefined);
  const t0 = at(t.started_at) ?? at(t.created_at) ?? (starts.length ? Math.min(...starts) : now);
  const ends = t.steps.map((s) => at(s.ended_at) ?? (s.status === 'running' ? now : at(s.started_at)));
  const t1 = Math.max(at(t.ended_at) ?? now, ...ends.filter((v): v is number => v !== undefined), t0 + 1);
  const span = t1 - t0;
  return t.steps.map((step, i) => {
    const start = at(step.started_at) ?? t0;
    const end = Math.max(ends[i] ?? start, start);
    // A step of no length still shows as a sliver, inside the axis even at its very end.
    const width = Math.max(((end - start) / span) * 100, MIN_WIDTH);
    const left = Math.min(((start - t0) / span) * 100, 100 - width);
    return { step, left, width, offsetMs: start - t0 };
  });
}

export function Timeline({ data }: { data: TimelineData }) {
  if (!data.steps.length) return <p class="muted">No steps recorded.</p>;
  const rows = layout(data);
  return (
    <>
      <p class="muted">
        {data.steps.length} steps{data.duration_ms !== null ? `, ${ms(data.duration_ms)} in all` : ''}
        {data.source === 'events' ? ' (derived from the events: the step journal has expired)' : ''}
      </p>
      <ol class="timeline" aria-label="Timeline">
        {rows.map(({ step, left, width, offsetMs }, i) => (
          <li key={`${step.name}-${i}`} class={`t-${step.status}`} data-step={step.name}>
            <span class="t-label">
              <span class="t-name">{step.name}</span>
              {step.agent ? <span class="agent"> · {step.agent}</span> : null}
            </span>
            <span class="t-track" aria-hidden="true">
              <span class="t-bar" style={{ left: `${left}%`, width: `${width}%` }} />
            </span>
            <span class="t-facts">
              +{ms(offsetMs)}, {step.duration_ms !== null ? ms(step.duration_ms) : 'running'} · {step.status}
              {step.retries ? ` · ${step.retries} ${step.retries === 1 ? 'retry' : 'retries'}` : ''}
            </span>
          </li>
        ))}
      </ol>
    </>
  );
}
