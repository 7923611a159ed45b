/**
 * The agent catalogue (GET /api/v1/agents): each single-purpose agent with its description,
 * category, the tool it runs and its cost per call, filtered by category and by text (the API
 * lists them all; the filters are the page's). One agent, its form and Run: agents-run.tsx.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { ok } from '../client/index.js';
import { CatalogueFilters } from './catalogue-filters.js';
import { AgentRunPage } from './agents-run.js';
import { href } from './router.js';
import { call, messageOf } from './session.js';
import { usd } from './format.js';

async function loadAgents() {
  return call(async (api) => ok(await api.GET('/api/v1/agents')).agents);
}
type Agent = Awaited<ReturnType<typeof loadAgents>>[number];

function matches(a: Agent, category: string, text: string): boolean {
  if (category && a.category !== category) return false;
  const q = text.trim().toLowerCase();
  return !q || [a.id, a.name, a.description, a.tool].some((s) => s.toLowerCase().includes(q));
}

function AgentCard({ a }: { a: Agent }) {
  return (
    <li class="card" data-testid="agent" data-id={a.id}>
      <h2>
        <a href={href.agent(a.id)}>{a.name}</a>
      </h2>
      <p class="card-text">{a.description}</p>
      <dl class="facts">
        <dt>Id</dt>
        <dd>
          <code>{a.id}</code>
        </dd>
        <dt>Category</dt>
        <dd>{a.category}</dd>
        <dt>Tool</dt>
        <dd>
          <a href={href.tool(a.tool)}>{a.tool}</a>
        </dd>
        <dt>Cost per call</dt>
        <dd>{usd(a.cost_per_call, 'free')}</dd>
      </dl>
    </li>
  );
}

function AgentCatalogue() {
  const [agents, setAgents] = useState<Agent[]>();
  const [error, setError] = useState<string>();
  const [category, setCategory] = useState('');
  const [text, setText] = useState('');

  useEffect(() => {
    loadAgents().then(setAgents, (err) => setError(messageOf(err)));
  }, []);
  const categories = useMemo(() => [...new Set((agents ?? []).map((a) => a.category))].sort(), [agents]);
  const shown = (agents ?? []).filter((a) => matches(a, category, text));

  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>
        Agents
      </h1>
      <p class="muted">Single-purpose agents: each runs one tool with a checked input, as a task you can follow live.</p>
      <CatalogueFilters id="agent" what="agents" categories={categories} category={category} text={text} onCategory={setCategory} onText={setText} />
      <p class="error" role="alert">
        {error ?? ''}
      </p>
      <p class="notice-line" role="status">
        {agents ? `${shown.length} of ${agents.length} agents` : ''}
      </p>
      {agents === undefined ? (
        error ? null : (
          <p class="muted">Loading…</p>
        )
      ) : shown.length === 0 ? (
        <p class="muted">{agents.length ? 'No agent matches.' : 'The catalogue is empty (AGENT_CATALOG_DIR).'}</p>
      ) : (
        <ul class="catalogue" aria-label="Agents">
          {shown.map((a) => (
            <AgentCard key={a.id} a={a} />
          ))}
        </ul>
      )}
    </section>
  );
}

export function AgentsPage({ id }: { id?: string }) {
  return id ? <AgentRunPage id={id} /> : <AgentCatalogue />;
}
