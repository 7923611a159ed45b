/**
 * How a task ended, as a completion reports it: from the outcome events of its feed
 * (WORKFLOW_COMPLETED, written after the task's row, carries the result and usage), or from the
 * task's status when the feed cannot tell.
 */
import type { Client } from '@connectrpc/connect';
import type { WorkflowEvent } from '../../bus/index.js';
import type { OrchestratorService } from '../../gen/svc/v1/orchestrator_pb.js';
import { TASK_STATUS_NAME, callAs, callerOfPrincipal, type Principal } from '../../kernel/index.js';
import type { Encoded, Feed, Subscriber } from '../streams.js';
import type { Usage } from './responses.js';

/** The events that tell how a task ended (their payloads carry the result, the error, the usage). */
export const OUTCOME_EVENTS: ReadonlySet<string> = new Set(['WORKFLOW_COMPLETED', 'ERROR_OCCURRED', 'WORKFLOW_CANCELLED']);

export interface Outcome {
  status: 'completed' | 'failed' | 'cancelled';
  result: string;
  error: string;
  usage: Usage;
}

const ZERO_USAGE: Usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };

/** What an outcome event says (undefined for other events). */
export function outcomeOf(e: WorkflowEvent): Outcome | undefined {
  const p = (e.payload ?? {}) as Record<string, unknown>;
  if (e.type === 'WORKFLOW_COMPLETED') {
    const u = (p.usage ?? {}) as Record<string, unknown>;
    const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
    return {
      status: 'completed',
      result: typeof p.result === 'string' ? p.result : '',
      error: '',
      usage: { prompt_tokens: n(u.input_tokens), completion_tokens: n(u.output_tokens), total_tokens: n(u.total_tokens) },
    };
  }
  if (e.type === 'ERROR_OCCURRED') return { status: 'failed', result: '', error: e.message || 'the task failed', usage: ZERO_USAGE };
  if (e.type === 'WORKFLOW_CANCELLED') {
    const reason = typeof p.reason === 'string' && p.reason ? `: ${p.reason}` : '';
    return { status: 'cancelled', result: '', error: `the task was cancelled${reason}`, usage: ZERO_USAGE };
  }
  return undefined;
}

/** Waits for a task's outcome on its event feed (non-streaming requests). */
export class OutcomeWatch implements Subscriber {
  cursor = 0;
  readonly filter: ReadonlySet<string> = OUTCOME_EVENTS;
  backpressured = false;
  closed = false;
  feed?: Feed;
  outcome?: Outcome;
  readonly done: Promise<void>;
  private resolve!: () => void;
  constructor() {
    this.done = new Promise((r) => (this.resolve = r));
  }
  write(events: Encoded[]): boolean {
    for (const e of events) this.outcome = outcomeOf(JSON.parse(e.json) as WorkflowEvent) ?? this.outcome;
    return true;
  }
  end(): void {
    this.stop();
  }
  drop(): void {
    this.stop();
  }
  stop(): void {
    if (this.closed) return;
    this.closed = true;
    this.feed?.remove(this);
    this.resolve();
  }
}

/** The outcome from the task's status (when the feed could not tell); undefined while it runs. */
export async function statusOutcome(client: Client<typeof OrchestratorService>, p: Principal, taskId: string): Promise<Outcome | undefined> {
  const s = await client.getTaskStatus({ taskId }, callAs(callerOfPrincipal(p)));
  const u = s.usage;
  const usage = { prompt_tokens: u?.promptTokens ?? 0, completion_tokens: u?.completionTokens ?? 0, total_tokens: u?.totalTokens ?? 0 };
  switch (TASK_STATUS_NAME[s.status]) {
    case 'TASK_STATUS_COMPLETED':
      return { status: 'completed', result: s.result, error: '', usage };
    case 'TASK_STATUS_FAILED':
    case 'TASK_STATUS_TIMEOUT':
      return { status: 'failed', result: '', error: s.errorMessage || 'the task failed', usage };
    case 'TASK_STATUS_CANCELLED':
      return { status: 'cancelled', result: '', error: 'the task was cancelled', usage };
    default:
      return undefined;
  }
}
