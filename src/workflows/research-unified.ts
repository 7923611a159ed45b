/**
 * metadata.unified_response of a research task: the task's outcome restated in one object
 * of the spec's fields. execution_time_ms runs from submission to completion, less the time
 * the task waited for people.
 */
import { EXECUTION_MODE } from '../kernel/index.js';
import type { TaskOutcome, TaskStart } from '../tasks/index.js';

export function unifiedResponse(t: TaskStart, o: TaskOutcome, now = Date.now()): Record<string, unknown> {
  const submitted = Date.parse(t.submitted_at);
  return {
    task_id: t.task_id,
    session_id: t.session_id,
    status: o.status,
    result: o.result ?? '',
    metadata: {
      model: o.modelUsed ?? '',
      execution_mode: EXECUTION_MODE[t.mode] ?? 'EXECUTION_MODE_COMPLEX',
      complexity_score: t.complexity_score ?? null,
      agents_used: typeof o.metadata?.agents_used === 'number' ? o.metadata.agents_used : 0,
    },
    usage: {
      input_tokens: o.inputTokens ?? 0,
      output_tokens: o.outputTokens ?? 0,
      total_tokens: o.totalTokens ?? 0,
      cost_usd: o.costUsd ?? 0,
    },
    performance: { execution_time_ms: Number.isFinite(submitted) ? Math.max(0, now - submitted - (t.waited_ms ?? 0)) : 0 },
    stop_reason: o.status === 'TASK_STATUS_COMPLETED' ? 'completed' : o.status.replace('TASK_STATUS_', '').toLowerCase(),
    error: o.error ?? '',
    timestamp: new Date(now).toISOString(),
  };
}
