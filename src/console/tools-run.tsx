/**
 * One tool (GET /api/v1/tools/{name}): what it does, its version, time limit and cost, and its
 * arguments as a form built from its parameters schema (schema-form.tsx), with an optional
 * session (whose workspace file tools use). Execute: POST /api/v1/tools/{name}/execute
 * {arguments, session_id?}; the result (success, output, text, error, time, usage) is shown
 * below (tools-result.tsx). The service's refusals stay on the page as it words them: a tool not
 * available for direct execution (403), arguments it does not accept (400, next to the field
 * too), a backend without credentials (502), a rate limit (429).
 */
import { useEffect, useState } from 'preact/hooks';
import { ok } from '../client/index.js';
import { href } from './router.js';
import { SchemaForm } from './schema-form.js';
import { call, messageOf } from './session.js';
import { usd } from './format.js';
import { ToolResult, type Execution } from './tools-result.js';
import { SessionField } from './session-field.js';

async function loadTool(name: string) {
  return call(async (api) => ok(await api.GET('/api/v1/tools/{name}', { params: { path: { name } } })));
}
type Tool = Awaited<ReturnType<typeof loadTool>>;

export function ToolRunPage({ name }: { name: string }) {
  const [tool, setTool] = useState<Tool>();
  const [error, setError] = useState<string>();
  const [session, setSession] = useState('');
  const [result, setResult] = useState<Execution>();

  useEffect(() => {
    loadTool(name).then(setTool, (err) => setError(messageOf(err)));
  }, [name]);

  const execute = async (args: Record<string, unknown>) => {
    setResult(undefined);
    const sessionId = session.trim();
    const r = await call(async (api) =>
      ok(
        await api.POST('/api/v1/tools/{name}/execute', {
          params: { path: { name } },
          body: { arguments: args, ...(sessionId ? { session_id: sessionId } : {}) },
        }),
      ),
    );
    setResult(r);
    // The result is announced by its heading; move there so keyboard and screen-reader users land on it.
    requestAnimationFrame(() => document.getElementById('tool-result-title')?.focus());
  };

  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>
        {name}
      </h1>
      <p class="task-id">
        <a href={href.tools}>all tools</a>
      </p>
      <p class="error" role="alert" data-testid="tool-error">
        {error ?? ''}
      </p>
      {tool ? (
        <>
          <p class="card-text">{tool.description}</p>
          <dl class="facts">
            <dt>Category</dt>
            <dd>{tool.category}</dd>
            <dt>Version</dt>
            <dd>{tool.version}</dd>
            <dt>Time limit</dt>
            <dd>{tool.timeout_seconds} s</dd>
            <dt>Cost per use</dt>
            <dd>{usd(tool.cost_per_use, 'free')}</dd>
          </dl>
          <h2>Arguments</h2>
          <SchemaForm
            schema={tool.parameters}
            idPrefix="tool-arg"
            label={`Arguments of ${tool.name}`}
            submitLabel="Execute"
            busyLabel="Executing…"
            onSubmit={execute}
          >
            <SessionField
              id="tool-session"
              help="The tool runs in this session (its id or name): file tools use its workspace."
              value={session}
              onInput={setSession}
            />
          </SchemaForm>
          {result ? <ToolResult r={result} /> : null}
        </>
      ) : error ? null : (
        <p class="muted">Loading…</p>
      )}
    </section>
  );
}
