/**
 * A question already put is answered from its wait on every replay, whatever the tool policy
 * says by then: a policy removed while a task waits neither runs the refused call nor leaves
 * the decided wait unread.
 */
import { describe, expect, it, vi } from 'vitest';
import type { WorkflowContext } from '../runtime/index.js';
import type { TaskStart, WaitRow } from '../tasks/index.js';
import { toolApprover } from './approval.js';

const task = { task_id: 't1', session_id: 's1', query: 'q', context: {} } as unknown as TaskStart;
const call = { tool: 'calculator', arguments: { expression: '1+1' }, callId: 'c1', agentId: 'a1', step: 'turn-1-tool-1' };
const noPolicy = { timeoutSeconds: 60, policies: { tools: [], roles: {} } };

/** A workflow context over an in-memory journal and a wait store holding `row` (or nothing). */
function fakeCtx(journal: Map<string, unknown>, row?: Partial<WaitRow>) {
  const waits = {
    take: vi.fn(async () => row),
    open: vi.fn(async () => {
      throw new Error('no wait may be opened here');
    }),
  };
  const ctx = {
    workflowId: 't1',
    waits,
    signal: new AbortController().signal,
    isRecorded: (n: string) => journal.has(n),
    step: async (n: string, fn: () => Promise<unknown>) => {
      if (!journal.has(n)) journal.set(n, await fn());
      return journal.get(n);
    },
    emit: vi.fn(),
    checkpoint: () => {},
  };
  return { ctx: ctx as unknown as WorkflowContext, waits };
}

describe('a tool approval replayed after its policy was removed', () => {
  it('never asked: the call runs as asked, nothing is opened', async () => {
    const { ctx, waits } = fakeCtx(new Map());
    expect(await toolApprover(ctx, task, 'generalist', noPolicy)!(call)).toBeUndefined();
    expect(waits.take).not.toHaveBeenCalled();
  });

  it('asked and refused (the decision journaled): still refused', async () => {
    const journal = new Map<string, unknown>([
      ['wait-open-approval-turn-1-tool-1', { id: 'w1', opened_at: new Date().toISOString() }],
      ['wait-approval-turn-1-tool-1', { waitId: 'w1', decision: { approved: false, feedback: 'no' }, timedOut: false }],
    ]);
    const { ctx } = fakeCtx(journal);
    expect(await toolApprover(ctx, task, 'generalist', noPolicy)!(call)).toEqual({ approved: false, message: 'no' });
  });

  it('asked, decided while the task waited: the decision is taken (read and consumed) and journaled', async () => {
    const journal = new Map<string, unknown>([['wait-open-approval-turn-1-tool-1', { id: 'w1', opened_at: new Date().toISOString() }]]);
    const { ctx, waits } = fakeCtx(journal, { status: 'decided', decision: { approved: false, feedback: 'not now' }, timed_out: false });
    expect(await toolApprover(ctx, task, 'generalist', undefined)!(call)).toEqual({ approved: false, message: 'not now' });
    expect(waits.take).toHaveBeenCalledWith('t1', 'approval-turn-1-tool-1');
    expect(journal.has('wait-approval-turn-1-tool-1')).toBe(true);
  });
});
