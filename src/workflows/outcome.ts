/**
 * The task's successful outcome: the answer, the usage summed from every model call of the
 * task (each one queued to llm_calls), and the metadata clients read (agents, history,
 * model_breakdown, role, tool calls, the workflow's own, verification, mode selection, cache).
 */
import type { TaskOutcome } from '../tasks/index.js';
import { breakdown, recordOf, sumUsage } from './usage.js';
import type { Prepared, WorkflowResult } from './workflow.js';

export function outcomeOf(p: Prepared, r: WorkflowResult, verification: Record<string, unknown> | undefined): TaskOutcome {
  const { t, deps, skill } = p;
  const calls = [...(p.history.summaryCall ? [p.history.summaryCall] : []), ...r.outputs.flatMap((o) => o.calls)];
  // Usage and the breakdown are summed from the task's model calls: the journaled list that is
  // also written to llm_calls (each call was queued as it happened; calls replayed from the
  // journal are queued again here, so none is missing after a crash; rows that exist are left
  // alone). No database round trip on the way to the answer.
  if (deps.usage) for (const c of calls) if (!p.recordedHere.has(c.step)) deps.usage.recordModelCall(recordOf(t, c));
  const usage = sumUsage(calls.map((c) => c.usage));
  const toolCalls = r.outputs.reduce((n, o) => n + o.toolCalls, 0);
  return {
    status: 'TASK_STATUS_COMPLETED',
    result: r.final.text,
    modelUsed: r.final.model,
    provider: r.final.provider,
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    totalTokens: usage.totalTokens,
    costUsd: usage.costUsd + (r.costUsd ?? 0),
    metadata: {
      agents_used: r.agentsUsed,
      history: p.history.info,
      model_breakdown: breakdown(calls),
      role: p.role.name,
      tool_calls: toolCalls,
      ...r.metadata,
      ...(skill ? { skill: { name: skill.name, version: skill.version, key: skill.key, content_hash: skill.contentHash } } : {}),
      ...(verification ? { verification } : {}),
      ...(t.complexity_score !== undefined ? { mode_selection: { auto: true, mode: t.mode, complexity_score: t.complexity_score } } : {}),
      ...(calls.some((c) => c.cacheHit)
        ? { cache_hits: calls.filter((c) => c.cacheHit).length, cache_score: Math.max(...calls.map((c) => c.cacheScore ?? 0)) }
        : {}),
    },
  };
}
