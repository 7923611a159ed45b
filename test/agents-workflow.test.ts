/**
 * The agent workflow over an in-memory journal: a recorded run is replayed, never run again; a
 * tool that is not safe to run twice and was cut off is not run again; a tool policy's refusal
 * stops it; AGENT_TIMEOUT_SECONDS aborts the tool and records nothing.
 */
import { describe, expect, it } from 'vitest';
import type { WorkflowContext } from '../src/runtime/index.js';
import { ToolRegistry, type Tool } from '../src/tools/index.js';
import { WORKFLOWS, type Prepared } from '../src/workflows/index.js';

/** What the workflow needs of its context, journaled in a Map (values round-tripped as JSON, as the journal stores them). */
class MemoryContext {
  readonly journal = new Map<string, string>();
  readonly events: { type: string; agentId: string; payload?: Record<string, unknown> }[] = [];
  readonly ac = new AbortController();
  async step<T>(name: string, fn: () => Promise<T>): Promise<T> {
    if (this.journal.has(name)) return JSON.parse(this.journal.get(name)!) as T;
    const v = await fn();
    this.journal.set(name, JSON.stringify(v));
    return v;
  }
  isRecorded(name: string) {
    return this.journal.has(name);
  }
  emit(type: string, agentId: string, _message: string, payload?: Record<string, unknown>) {
    this.events.push({ type, agentId, payload });
  }
  checkpoint() {
    if (this.ac.signal.aborted) throw this.ac.signal.reason;
  }
  get signal() {
    return this.ac.signal;
  }
}

function countingTool(o: { retryable: boolean; delayMs?: number; fail?: boolean }): Tool & { calls: number; owners: { userId?: string; tenantId?: string }[] } {
  const tool = {
    name: 'counter',
    description: 'Counts its calls',
    category: 'test',
    version: '1.0.0',
    parameters: { type: 'object' as const, properties: { n: { type: 'integer' } }, required: ['n'], additionalProperties: false },
    timeoutMs: 30_000,
    costPerUse: 0.25,
    dangerous: false,
    retryable: o.retryable,
    calls: 0,
    owners: [] as { userId?: string; tenantId?: string; sessionId?: string }[],
    async run(args: Record<string, unknown>, ctx: { signal: AbortSignal; userId?: string; tenantId?: string; sessionId?: string }) {
      tool.calls++;
      tool.owners.push({ userId: ctx.userId, tenantId: ctx.tenantId, sessionId: ctx.sessionId });
      if (o.delayMs) await new Promise((r, j) => (setTimeout(r, o.delayMs), ctx.signal.addEventListener('abort', () => j(ctx.signal.reason))));
      if (o.fail) throw new Error('vendor down');
      return { output: { doubled: (args.n as number) * 2, call: tool.calls }, text: 'ok', costUsd: 0.5 };
    },
  };
  return tool;
}

function prepared(tool: Tool, o: { timeoutMs?: number; refuse?: boolean } = {}): Prepared {
  return {
    t: { task_id: 't1', user_id: 'u1', tenant_id: 'tenant-1', agent: { id: 'doubler', tool: tool.name, input: { n: 21 } } },
    deps: { tools: new ToolRegistry([tool]), agentTimeoutMs: o.timeoutMs ?? 5000 },
    base: { sessionId: 's1', userId: 'u1', taskId: 't1' },
    agent: o.refuse ? { approveTool: async () => ({ approved: false, message: 'not today' }) } : {},
  } as unknown as Prepared;
}

const run = (ctx: MemoryContext, p: Prepared) => WORKFLOWS.agent(ctx as unknown as WorkflowContext, p);

describe('the agent workflow', () => {
  it('runs the tool once with the input, the output as JSON text, the tool cost as the cost; a replay runs nothing again', async () => {
    const tool = countingTool({ retryable: false });
    const ctx = new MemoryContext();
    const r = await run(ctx, prepared(tool));
    expect(tool.calls).toBe(1);
    expect(JSON.parse(r.final.text)).toEqual({ doubled: 42, call: 1 });
    expect(r.costUsd).toBe(0.5);
    expect(r.metadata).toMatchObject({ agent_id: 'doubler', execution_mode: 'agent', tool: 'counter' });
    expect(ctx.events.map((e) => e.type)).toEqual(['AGENT_STARTED', 'TOOL_INVOKED', 'TOOL_OBSERVATION', 'AGENT_COMPLETED']);
    expect(ctx.events.every((e) => e.agentId === 'doubler')).toBe(true);
    // The tool runs as the task's user and tenant: what it stores (a screenshot blob) is theirs.
    expect(tool.owners).toEqual([{ userId: 'u1', tenantId: 'tenant-1', sessionId: 's1' }]);
    // A re-activation after a crash past the recorded step: the same result, no second call.
    const again = new MemoryContext();
    for (const [k, v] of ctx.journal) again.journal.set(k, v);
    const r2 = await run(again, prepared(tool));
    expect(tool.calls).toBe(1);
    expect(r2.final.text).toBe(r.final.text);
    expect(again.events).toEqual([]);
  });

  it('a tool that is not safe to run twice, cut off by a crash (started, not recorded), is not run again', async () => {
    const tool = countingTool({ retryable: false });
    const ctx = new MemoryContext();
    ctx.journal.set('agent-run-started', 'true');
    await expect(run(ctx, prepared(tool))).rejects.toThrow(
      'agent doubler was interrupted by a worker stop while counter ran; counter is not safe to run twice',
    );
    expect(tool.calls).toBe(0);
    // A retryable one simply runs again.
    const safe = countingTool({ retryable: true });
    const ctx2 = new MemoryContext();
    ctx2.journal.set('agent-run-started', 'true');
    await run(ctx2, prepared(safe));
    expect(safe.calls).toBe(1);
  });

  it('a tool failure is recorded and fails the run naming the agent and the tool; a replay fails the same way without calling it', async () => {
    const tool = countingTool({ retryable: true, fail: true });
    const ctx = new MemoryContext();
    await expect(run(ctx, prepared(tool))).rejects.toThrow('agent doubler failed: counter: tool failed: vendor down');
    expect(ctx.events.map((e) => e.type)).toEqual(['AGENT_STARTED', 'TOOL_INVOKED', 'TOOL_OBSERVATION']);
    await expect(run(ctx, prepared(tool))).rejects.toThrow('agent doubler failed');
    expect(tool.calls).toBe(1);
  });

  it('a refusal by a tool policy stops the agent before its tool runs', async () => {
    const tool = countingTool({ retryable: true });
    await expect(run(new MemoryContext(), prepared(tool, { refuse: true }))).rejects.toThrow('approval rejected: not today');
    expect(tool.calls).toBe(0);
  });

  it('past AGENT_TIMEOUT_SECONDS the tool is aborted, nothing is recorded and the run fails with the timeout error', async () => {
    const tool = countingTool({ retryable: true, delayMs: 5000 });
    const ctx = new MemoryContext();
    const t0 = Date.now();
    await expect(run(ctx, prepared(tool, { timeoutMs: 200 }))).rejects.toThrow(
      'agent doubler timed out: its execution took longer than AGENT_TIMEOUT_SECONDS (0.2 s)',
    );
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(ctx.isRecorded('agent-run')).toBe(false);
  });
});
