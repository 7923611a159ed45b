/**
 * A task's usage and cost per model: the rows of metadata.model_breakdown (model, provider,
 * calls, input/output tokens, cost, cache hits) and their total, beside the task's own usage.
 */
import { metadataRecords, usd } from './format.js';

export interface ModelUsage {
  model: string;
  provider: string;
  executions: number;
  tokens: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  cache_hits: number;
}

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** The breakdown as the task's metadata holds it (anything malformed left out). */
export function modelBreakdown(metadata: Record<string, unknown> | undefined): ModelUsage[] {
  return metadataRecords(metadata, 'model_breakdown', 'model').map((r) => ({
    model: String(r.model),
    provider: typeof r.provider === 'string' ? r.provider : '',
    executions: num(r.executions),
    tokens: num(r.tokens),
    input_tokens: num(r.input_tokens),
    output_tokens: num(r.output_tokens),
    cost_usd: num(r.cost_usd),
    cache_hits: num(r.cache_hits),
  }));
}

export function UsageTable({ rows }: { rows: ModelUsage[] }) {
  if (!rows.length) return <p class="muted">No model calls recorded.</p>;
  const sum = (k: keyof ModelUsage) => rows.reduce((a, r) => a + (r[k] as number), 0);
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label="Usage per model">
      <table data-testid="usage">
        <thead>
          <tr>
            <th scope="col">Model</th>
            <th scope="col">Calls</th>
            <th scope="col">Input tokens</th>
            <th scope="col">Output tokens</th>
            <th scope="col">Cost</th>
            <th scope="col">Cache hits</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={`${r.provider}/${r.model}`}>
              <th scope="row">
                {r.model}
                {r.provider ? <span class="muted"> · {r.provider}</span> : null}
              </th>
              <td>{r.executions}</td>
              <td>{r.input_tokens}</td>
              <td>{r.output_tokens}</td>
              <td>{usd(r.cost_usd)}</td>
              <td>{r.cache_hits}</td>
            </tr>
          ))}
        </tbody>
        {rows.length > 1 ? (
          <tfoot>
            <tr>
              <th scope="row">Total</th>
              <td>{sum('executions')}</td>
              <td>{sum('input_tokens')}</td>
              <td>{sum('output_tokens')}</td>
              <td>{usd(sum('cost_usd'))}</td>
              <td>{sum('cache_hits')}</td>
            </tr>
          </tfoot>
        ) : null}
      </table>
    </div>
  );
}
