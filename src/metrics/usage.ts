/**
 * Model and tool usage, counted where each call's record is made (llm/usage.ts,
 * tools/usage.ts). Models and tiers come from the configured catalogue and tools from the
 * registries, so their label values are bounded by configuration, not by traffic.
 */
import { counter } from './registry.js';

const llmCalls = counter(
  'taskorch_llm_calls_total',
  'Model calls, by model, tier and whether the response cache answered (cache="hit") or the provider did ("miss").',
  ['model', 'tier', 'cache'],
);
const llmTokens = counter('taskorch_llm_tokens_total', 'Tokens of the model calls the provider answered, by model, tier and kind (prompt, completion).', [
  'model',
  'tier',
  'kind',
]);
const llmCost = counter('taskorch_llm_cost_usd_total', 'Cost in US dollars of the model calls the provider answered, by model and tier.', ['model', 'tier']);
const toolCalls = counter('taskorch_tool_calls_total', 'Tool executions, by tool.', ['tool']);
const toolErrors = counter('taskorch_tool_errors_total', 'Tool executions that failed, by tool.', ['tool']);

export function countModelCall(c: { model: string; tier: string; inputTokens: number; outputTokens: number; costUsd: number; cacheHit: boolean }): void {
  const labels = { model: c.model || 'unknown', tier: c.tier || 'unknown' };
  llmCalls.inc({ ...labels, cache: c.cacheHit ? 'hit' : 'miss' });
  if (c.cacheHit) return;
  llmTokens.inc({ ...labels, kind: 'prompt' }, c.inputTokens);
  llmTokens.inc({ ...labels, kind: 'completion' }, c.outputTokens);
  llmCost.inc(labels, c.costUsd);
}

export function countToolCall(tool: string, success: boolean): void {
  toolCalls.inc({ tool });
  if (!success) toolErrors.inc({ tool });
}
