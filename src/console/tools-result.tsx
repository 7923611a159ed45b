/**
 * The result of a tool execution (POST /api/v1/tools/{name}/execute): whether it succeeded, the
 * error the tool reported, its time and usage (tokens, cost), the text a model would read, the
 * structured output as JSON and the metadata (tool, version and what the tool reports).
 */
import type { components } from '../client/index.js';
import { json, ms, usd } from './format.js';

export type Execution = components['schemas']['ToolExecution'];

export function ToolResult({ r }: { r: Execution }) {
  return (
    <section class="tool-result" aria-labelledby="tool-result-title" data-testid="tool-result">
      <h2 id="tool-result-title" tabIndex={-1}>
        Result
      </h2>
      <dl class="facts">
        <dt>Outcome</dt>
        <dd>
          <strong class={r.success ? 's-completed' : 's-failed'} data-testid="tool-outcome">
            {r.success ? 'Succeeded' : 'Failed'}
          </strong>
        </dd>
        <dt>Time</dt>
        <dd>{ms(r.execution_time_ms)}</dd>
        <dt>Tokens</dt>
        <dd>{r.usage?.tokens ?? ''}</dd>
        <dt>Cost</dt>
        <dd>{usd(r.usage?.cost_usd)}</dd>
      </dl>
      {r.error ? (
        <p class="error" data-testid="tool-reported-error">
          Error: {r.error}
        </p>
      ) : null}
      {r.text ? (
        <>
          <h3>Text</h3>
          <pre class="wrap" tabIndex={0} aria-label="Text of the result" data-testid="tool-text">
            {r.text}
          </pre>
        </>
      ) : null}
      <h3>Output</h3>
      <pre class="wrap" tabIndex={0} aria-label="Output (JSON)" data-testid="tool-output">
        {json(r.output)}
      </pre>
      <details>
        <summary>Metadata</summary>
        <pre class="wrap" tabIndex={0} aria-label="Metadata (JSON)">
          {json(r.metadata)}
        </pre>
      </details>
    </section>
  );
}
