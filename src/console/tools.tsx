/**
 * The tools a client may execute directly (GET /api/v1/tools; dangerous tools are never
 * listed): name, description, category, version, time limit and cost. The category filter is
 * the API's (?category=), the text filter the page's. One tool, its form and Execute: tools-run.tsx.
 */
import { useEffect, useState } from 'preact/hooks';
import { ok } from '../client/index.js';
import { CatalogueFilters } from './catalogue-filters.js';
import { href } from './router.js';
import { call, messageOf } from './session.js';
import { ToolRunPage } from './tools-run.js';
import { usd } from './format.js';

async function loadTools(category: string) {
  return call(async (api) => ok(await api.GET('/api/v1/tools', { params: { query: category ? { category } : {} } })));
}
type Tool = Awaited<ReturnType<typeof loadTools>>[number];

function matches(t: Tool, text: string): boolean {
  const q = text.trim().toLowerCase();
  return !q || [t.name, t.description, t.category].some((s) => s.toLowerCase().includes(q));
}

function ToolCard({ t }: { t: Tool }) {
  return (
    <li class="card" data-testid="tool" data-name={t.name}>
      <h2>
        <a href={href.tool(t.name)}>{t.name}</a>
      </h2>
      <p class="card-text">{t.description}</p>
      <dl class="facts">
        <dt>Category</dt>
        <dd>{t.category}</dd>
        <dt>Version</dt>
        <dd>{t.version}</dd>
        <dt>Time limit</dt>
        <dd>{t.timeout_seconds} s</dd>
        <dt>Cost per use</dt>
        <dd>{usd(t.cost_per_use, 'free')}</dd>
      </dl>
    </li>
  );
}

function ToolList() {
  const [tools, setTools] = useState<Tool[]>();
  const [categories, setCategories] = useState<string[]>([]);
  const [category, setCategory] = useState('');
  const [text, setText] = useState('');
  const [error, setError] = useState<string>();

  useEffect(() => {
    let current = true;
    setError(undefined);
    loadTools(category).then(
      (list) => {
        if (!current) return;
        setTools(list);
        // The categories come from the whole list (the first answer, without a filter).
        if (!category) setCategories([...new Set(list.map((t) => t.category))].sort());
      },
      (err) => current && setError(messageOf(err)),
    );
    return () => {
      current = false;
    };
  }, [category]);
  const shown = (tools ?? []).filter((t) => matches(t, text));

  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>
        Tools
      </h1>
      <p class="muted">Tools you can execute directly with arguments of your own. Tools that are dangerous (a shell) are not listed.</p>
      <CatalogueFilters id="tool" what="tools" categories={categories} category={category} text={text} onCategory={setCategory} onText={setText} />
      <p class="error" role="alert">
        {error ?? ''}
      </p>
      <p class="notice-line" role="status">
        {tools ? `${shown.length} of ${tools.length} tools` : ''}
      </p>
      {tools === undefined ? (
        error ? null : (
          <p class="muted">Loading…</p>
        )
      ) : shown.length === 0 ? (
        <p class="muted">No tool matches.</p>
      ) : (
        <ul class="catalogue" aria-label="Tools">
          {shown.map((t) => (
            <ToolCard key={t.name} t={t} />
          ))}
        </ul>
      )}
    </section>
  );
}

export function ToolsPage({ name }: { name?: string }) {
  return name ? <ToolRunPage name={name} /> : <ToolList />;
}
