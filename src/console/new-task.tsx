/**
 * The new-task form: query, mode, model tier, research (strategy, verification, fact
 * extraction), a skill (from GET /api/v1/skills), a template (context.template) and the session
 * id; submitting opens the task's live view. Only fields the API defines are sent, and only when
 * set: an empty choice leaves the service's default.
 */
import { useEffect, useState } from 'preact/hooks';
import { ok } from '../client/index.js';
import { go, href } from './router.js';
import { call, messageOf } from './session.js';

const MODES = ['', 'simple', 'standard', 'complex', 'supervisor'] as const;
const TIERS = ['', 'small', 'medium', 'large'] as const;
const STRATEGIES = ['', 'quick', 'standard', 'deep', 'academic'] as const;
type Mode = Exclude<(typeof MODES)[number], ''>;
type Tier = Exclude<(typeof TIERS)[number], ''>;
type Strategy = Exclude<(typeof STRATEGIES)[number], ''>;

interface Choice<T extends string> {
  id: string;
  label: string;
  value: T | '';
  options: readonly (T | '')[];
  empty: string;
  onChange: (v: T | '') => void;
}

function Select<T extends string>({ id, label, value, options, empty, onChange }: Choice<T>) {
  return (
    <div>
      <label for={id}>{label}</label>
      <select id={id} name={id} value={value} onChange={(e) => onChange(e.currentTarget.value as T | '')}>
        {options.map((o) => (
          <option key={o} value={o}>
            {o || empty}
          </option>
        ))}
      </select>
    </div>
  );
}

export function NewTaskPage() {
  const [query, setQuery] = useState('');
  const [mode, setMode] = useState<Mode | ''>('');
  const [tier, setTier] = useState<Tier | ''>('');
  const [strategy, setStrategy] = useState<Strategy | ''>('');
  const [verify, setVerify] = useState(false);
  const [facts, setFacts] = useState(false);
  const [skill, setSkill] = useState('');
  const [skills, setSkills] = useState<string[]>([]);
  const [template, setTemplate] = useState('');
  const [session, setSession] = useState(() => sessionStorage.getItem('taskorch.session') ?? '');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    call(async (api) => ok(await api.GET('/api/v1/skills')).skills).then(
      (list) => setSkills(list.map((s) => s.name)),
      () => setSkills([]),
    );
  }, []);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const context = { ...(template.trim() ? { template: template.trim() } : {}), ...(facts && strategy ? { enable_fact_extraction: true } : {}) };
      const body = {
        query,
        ...(mode ? { mode } : {}),
        ...(tier ? { model_tier: tier } : {}),
        ...(strategy ? { research_strategy: strategy } : {}),
        ...(verify ? { enable_verification: true } : {}),
        ...(skill ? { skill } : {}),
        ...(Object.keys(context).length ? { context } : {}),
        ...(session.trim() ? { session_id: session.trim() } : {}),
      };
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
          <Select id="mode" label="Mode" value={mode} options={MODES} empty="auto-detect" onChange={setMode} />
          <Select id="model-tier" label="Model tier" value={tier} options={TIERS} empty="default (small)" onChange={setTier} />
          <div>
            <label for="session">Session id (optional)</label>
            <input id="session" name="session" value={session} onInput={(e) => setSession(e.currentTarget.value)} />
          </div>
        </div>
        <details class="more">
          <summary>Research, skill and template</summary>
          <div class="row">
            <Select id="research" label="Research strategy" value={strategy} options={STRATEGIES} empty="no research" onChange={setStrategy} />
            <div>
              <label for="skill">Skill</label>
              <select id="skill" name="skill" value={skill} onChange={(e) => setSkill(e.currentTarget.value)}>
                <option value="">none</option>
                {skills.map((s) => (
                  <option key={s} value={s}>
                    {s}
                  </option>
                ))}
              </select>
            </div>
            <div>
              <label for="template">Template (optional)</label>
              <input id="template" name="template" value={template} onInput={(e) => setTemplate(e.currentTarget.value)} />
            </div>
          </div>
          <div class="checks">
            <label>
              <input type="checkbox" checked={verify} onChange={(e) => setVerify(e.currentTarget.checked)} /> Verify the claims (enable_verification)
            </label>
            <label>
              <input type="checkbox" checked={facts && !!strategy} disabled={!strategy} onChange={(e) => setFacts(e.currentTarget.checked)} /> Extract the facts
              (context.enable_fact_extraction; research tasks only)
            </label>
          </div>
        </details>
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
