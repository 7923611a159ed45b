/**
 * One agent of the catalogue (GET /api/v1/agents/{id}): what it does, the tool it runs, its
 * cost, and its input as a form built from its input_schema (schema-form.tsx), with an optional
 * session. Run: POST /api/v1/agents/{id} {input, session_id?}, then the task's live view, which
 * streams the run to its result. The service's refusal (a 400 naming the field) stays on the form.
 */
import { useEffect, useState } from 'preact/hooks';
import { ok } from '../client/index.js';
import { go, href } from './router.js';
import { SchemaForm } from './schema-form.js';
import { call, messageOf } from './session.js';
import { usd } from './format.js';
import { SessionField } from './session-field.js';

async function loadAgent(id: string) {
  return call(async (api) => ok(await api.GET('/api/v1/agents/{id}', { params: { path: { id } } })));
}
type Agent = Awaited<ReturnType<typeof loadAgent>>;

export function AgentRunPage({ id }: { id: string }) {
  const [agent, setAgent] = useState<Agent>();
  const [error, setError] = useState<string>();
  const [session, setSession] = useState('');

  useEffect(() => {
    loadAgent(id).then(setAgent, (err) => setError(messageOf(err)));
  }, [id]);

  const run = async (input: Record<string, unknown>) => {
    const sessionId = session.trim();
    const r = await call(async (api) =>
      ok(await api.POST('/api/v1/agents/{id}', { params: { path: { id } }, body: { input, ...(sessionId ? { session_id: sessionId } : {}) } })),
    );
    go(href.live(r.task_id));
  };

  return (
    <section aria-labelledby="page-title">
      {/* The heading is there from the start, so it has the focus when the page opens. */}
      <h1 id="page-title" tabIndex={-1}>
        {agent?.name ?? 'Agent'}
      </h1>
      <p class="task-id">
        <code>{id}</code> · <a href={href.agents}>all agents</a>
      </p>
      <p class="error" role="alert">
        {error ?? ''}
      </p>
      {agent ? (
        <>
          <p>{agent.description}</p>
          <dl class="facts">
            <dt>Category</dt>
            <dd>{agent.category}</dd>
            <dt>Tool</dt>
            <dd>
              <a href={href.tool(agent.tool)}>{agent.tool}</a>
            </dd>
            <dt>Cost per call</dt>
            <dd>{usd(agent.cost_per_call, 'free')}</dd>
          </dl>
          <h2 id="agent-input">Input</h2>
          <SchemaForm schema={agent.input_schema} idPrefix="agent-in" label={`Input of ${agent.name}`} submitLabel="Run" busyLabel="Starting…" onSubmit={run}>
            <SessionField
              id="agent-session"
              help="The run joins this session (its id or name); a new session when empty."
              value={session}
              onInput={setSession}
            />
          </SchemaForm>
        </>
      ) : error ? null : (
        <p class="muted">Loading…</p>
      )}
    </section>
  );
}
