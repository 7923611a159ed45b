/**
 * The new-schedule form: name, description, cron expression and timezone (with the next five
 * runs previewed as they are typed, in that timezone, or the expression's error), the task's
 * query and context, budget and timeout per run. POST /api/v1/schedules with only the fields
 * given; the service's refusal (minimum interval, schedules per user, ...) is shown as it comes.
 */
import { useMemo, useState } from 'preact/hooks';
import { ok, type components } from '../client/index.js';
import { inZone, localTimezone, preview, timezones } from './schedules-cron.js';
import { call, messageOf } from './session.js';

type Body = components['schemas']['ScheduleCreate'];
const NAME_MAX = 255;

/** The preview of the next runs, or the expression's error. */
function CronPreview({ cron, tz }: { cron: string; tz: string }) {
  const p = useMemo(() => preview(cron, tz.trim()), [cron, tz]);
  if (!cron.trim()) {
    return (
      <p id="cron-preview" class="muted">
        Type an expression to see its next runs.
      </p>
    );
  }
  if (!p.ok) {
    return (
      <div id="cron-preview">
        <p class="error" role="alert" data-testid="cron-error">
          {p.error}
        </p>
      </div>
    );
  }
  const zone = tz.trim() || 'UTC';
  return (
    <div id="cron-preview" class="cron-preview">
      <p class="muted">Next 5 runs ({zone}):</p>
      <ol aria-label="Next runs" data-testid="cron-runs">
        {p.runs.map((d) => (
          <li key={d.getTime()}>
            <time dateTime={d.toISOString()}>{inZone(d, zone)}</time>
          </li>
        ))}
      </ol>
    </div>
  );
}

/** Parses the context textarea: empty is none; otherwise a JSON object. */
function contextOf(text: string): { value?: Record<string, unknown>; error?: string } {
  if (!text.trim()) return {};
  try {
    const v: unknown = JSON.parse(text);
    if (!v || typeof v !== 'object' || Array.isArray(v)) return { error: 'The task context must be a JSON object.' };
    return { value: v as Record<string, unknown> };
  } catch (err) {
    return { error: `The task context is not valid JSON: ${messageOf(err)}` };
  }
}

export function ScheduleForm({ onCreated }: { onCreated: (id: string, name: string, nextRunAt: string | null) => void }) {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [cron, setCron] = useState('0 9 * * 1-5');
  const [tz, setTz] = useState(localTimezone);
  const [query, setQuery] = useState('');
  const [context, setContext] = useState('');
  const [budget, setBudget] = useState('');
  const [timeout, setTimeoutSecs] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const zones = useMemo(timezones, []);

  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    const p = preview(cron, tz.trim(), 1);
    if (!p.ok) {
      setError(p.error);
      document.getElementById(p.field === 'cron' ? 'schedule-cron' : 'schedule-tz')?.focus();
      return;
    }
    const ctx = contextOf(context);
    if (ctx.error) {
      setError(ctx.error);
      document.getElementById('schedule-context')?.focus();
      return;
    }
    const body: Body = { name: name.trim(), cron_expression: cron.trim(), task_query: query };
    if (description.trim()) body.description = description.trim();
    if (tz.trim()) body.timezone = tz.trim();
    if (ctx.value) body.task_context = ctx.value;
    if (budget.trim()) body.max_budget_per_run_usd = Number(budget);
    if (timeout.trim()) body.timeout_seconds = Number(timeout);
    setBusy(true);
    try {
      const r = await call(async (api) => ok(await api.POST('/api/v1/schedules', { body })));
      onCreated(r.schedule_id, body.name, r.next_run_at);
      setName('');
      setDescription('');
      setQuery('');
      setContext('');
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="form schedule-form" onSubmit={submit} aria-labelledby="new-schedule">
      <h2 id="new-schedule">New schedule</h2>
      <label for="schedule-name">Name</label>
      <input id="schedule-name" required maxLength={NAME_MAX} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      <label for="schedule-description">Description (optional)</label>
      <input id="schedule-description" value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
      <div class="row">
        <div>
          <label for="schedule-cron">Cron expression</label>
          <input
            id="schedule-cron"
            class="mono"
            required
            autocomplete="off"
            spellcheck={false}
            aria-describedby="cron-help cron-preview"
            value={cron}
            onInput={(e) => setCron(e.currentTarget.value)}
          />
        </div>
        <div>
          <label for="schedule-tz">Timezone</label>
          <input
            id="schedule-tz"
            list="schedule-tz-list"
            autocomplete="off"
            spellcheck={false}
            aria-describedby="cron-preview"
            value={tz}
            onInput={(e) => setTz(e.currentTarget.value)}
          />
          <datalist id="schedule-tz-list">
            {zones.map((z) => (
              <option key={z} value={z} />
            ))}
          </datalist>
        </div>
      </div>
      <p id="cron-help" class="muted hint">
        Five fields: minute (0-59), hour (0-23), day of month (1-31), month (1-12), day of week (0-6, Sunday 0). For example <code>0 9 * * 1-5</code>: 09:00 on
        weekdays.
      </p>
      <CronPreview cron={cron} tz={tz} />
      <label for="schedule-query">Task query (run each time)</label>
      <textarea id="schedule-query" rows={3} required value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
      <label for="schedule-context">Task context (optional JSON object)</label>
      <textarea id="schedule-context" class="mono" rows={3} spellcheck={false} value={context} onInput={(e) => setContext(e.currentTarget.value)} />
      <div class="row">
        <div>
          <label for="schedule-budget">Budget per run, USD (optional, default 10)</label>
          <input
            id="schedule-budget"
            type="number"
            inputMode="decimal"
            min="0.01"
            step="0.01"
            value={budget}
            onInput={(e) => setBudget(e.currentTarget.value)}
          />
        </div>
        <div>
          <label for="schedule-timeout">Timeout per run, seconds (optional, default 600)</label>
          <input
            id="schedule-timeout"
            type="number"
            inputMode="numeric"
            min="1"
            step="1"
            value={timeout}
            onInput={(e) => setTimeoutSecs(e.currentTarget.value)}
          />
        </div>
      </div>
      <p class="error" role="alert" data-testid="schedule-form-error">
        {error ?? ''}
      </p>
      <button type="submit" class="primary" disabled={busy || !name.trim() || !query.trim()}>
        {busy ? 'Creating…' : 'Create schedule'}
      </button>
    </form>
  );
}
