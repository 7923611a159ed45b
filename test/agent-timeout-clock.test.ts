/**
 * AGENT_TIMEOUT_SECONDS inside the agent loop, on a journal kept in memory as a workflow's is
 * (a recorded step is returned, never run again): the running call is aborted when the time
 * is up, the time counts over the whole agent (not per call), a re-activation continues the
 * deadline of the journaled first turn instead of starting a fresh one, a finished agent
 * replays whatever the clock says, and a wait for a person about a held tool call does not
 * count.
 */
import { describe, expect, it } from 'vitest';
import { AgentTimedOut, modelTurn, runAgentLoop, type AgentContext, type AgentDeps, type AgentSpec } from '../src/agents/index.js';
import type { LlmProvider, LlmRequest, LlmResult } from '../src/llm/index.js';
import { ToolRegistry, type Tool } from '../src/tools/index.js';

/** A workflow's journal, in memory: what a crash keeps is `entries`. */
class Journal implements AgentContext {
  readonly ac = new AbortController();
  constructor(readonly entries = new Map<string, unknown>()) {}
  get signal() {
    return this.ac.signal;
  }
  async step<T>(name: string, fn: () => Promise<T>): Promise<T> {
    if (this.entries.has(name)) return this.entries.get(name) as T;
    this.checkpoint();
    const r = await fn();
    this.entries.set(name, structuredClone(r));
    return r;
  }
  isRecorded(name: string) {
    return this.entries.has(name);
  }
  emit() {}
  checkpoint() {
    if (this.signal.aborted) throw this.signal.reason;
  }
}

type Script = (req: LlmRequest, n: number) => 'hang' | { text?: string; tool?: string; afterMs?: number };

/** A model that answers from `script`; `hang` waits until the call is aborted. */
function model(script: Script) {
  const seen = { calls: 0, aborted: 0 };
  const llm: LlmProvider = {
    name: 'scripted',
    async complete(req): Promise<LlmResult> {
      const n = ++seen.calls;
      const s = script(req, n);
      const wait = s === 'hang' ? 3_600_000 : (s.afterMs ?? 0);
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => {
          clearTimeout(timer);
          seen.aborted++;
          reject(new Error('the request was aborted'));
        };
        const timer = setTimeout(() => {
          req.signal?.removeEventListener('abort', onAbort);
          resolve();
        }, wait);
        req.signal?.addEventListener('abort', onAbort, { once: true });
      });
      const r = s as { text?: string; tool?: string };
      return {
        text: r.text ?? '',
        model: 'm',
        provider: 'p',
        finishReason: r.tool ? 'tool_calls' : 'stop',
        usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2, costUsd: 0 },
        ...(r.tool ? { toolCalls: [{ id: `c${n}`, name: r.tool, arguments: '{}' }] } : {}),
      };
    },
  };
  return { llm, seen };
}

const toolRuns = { note: 0, slowAborted: 0 };
const tool = (name: string, run: Tool['run']): Tool => ({
  name,
  description: name,
  category: 'test',
  version: '1',
  parameters: { type: 'object', properties: {} } as Tool['parameters'],
  timeoutMs: 60_000,
  costPerUse: 0,
  dangerous: false,
  retryable: true,
  run,
});
const tools = new ToolRegistry([
  tool('note', async () => {
    toolRuns.note++;
    return { output: { ok: true }, text: 'noted' };
  }),
  tool(
    'slow',
    (_a, ctx) =>
      new Promise((_resolve, reject) =>
        ctx.signal.addEventListener('abort', () => {
          toolRuns.slowAborted++;
          reject(new Error('aborted'));
        }),
      ),
  ),
]);

const deps = (llm: LlmProvider, timeoutMs: number, extra: Partial<AgentDeps> = {}): AgentDeps => ({
  llm,
  tools,
  parallelism: 1,
  maxTokens: 100,
  temperature: 0,
  partialChunkChars: 64,
  timeoutMs,
  ...extra,
});
const spec: AgentSpec = {
  agentId: 'a1',
  messages: [{ role: 'user', content: 'go' }],
  tier: 'small',
  tools: ['note', 'slow'],
  maxIterations: 5,
  taskId: 't',
  stepPrefix: 'a1',
};

/** Times `run` from before it starts (its synchronous start, which starts the agent's clock, counts). */
async function timed<T>(run: () => Promise<T>): Promise<{ ms: number; value?: T; err?: unknown }> {
  const t0 = Date.now();
  try {
    const value = await run();
    return { ms: Date.now() - t0, value };
  } catch (err) {
    return { ms: Date.now() - t0, err };
  }
}

describe('the agent clock (AGENT_TIMEOUT_SECONDS)', () => {
  it('aborts a model call that runs past it; the agent fails with a timeout naming the setting; the turn is not recorded', async () => {
    const { llm, seen } = model(() => 'hang');
    const j = new Journal();
    const r = await timed(() => runAgentLoop(j, deps(llm, 400), spec));
    expect(r.err).toBeInstanceOf(AgentTimedOut);
    expect((r.err as Error).message).toBe('agent a1 timed out: its execution took longer than AGENT_TIMEOUT_SECONDS (0.4 s)');
    expect(r.ms).toBeGreaterThanOrEqual(390);
    expect(r.ms).toBeLessThan(1500);
    expect(seen.aborted).toBe(1);
    expect([...j.entries.keys()]).toEqual([]); // nothing cut off is recorded
  });

  it('counts the whole agent, not each call: turns of 200 ms each pass a 900 ms limit together', async () => {
    const { llm, seen } = model(() => ({ tool: 'note', afterMs: 200 }));
    const j = new Journal();
    const r = await timed(() => runAgentLoop(j, deps(llm, 900), spec));
    expect(r.err).toBeInstanceOf(AgentTimedOut);
    expect(r.ms).toBeLessThan(2500);
    // Every call alone was well within the limit; at least two of them were recorded.
    expect([...j.entries.keys()].filter((k) => /^a1-turn-\d+$/.test(k)).length).toBeGreaterThanOrEqual(2);
    expect(seen.aborted).toBe(1);
  });

  it('aborts a tool call that runs past it; the tool step is not recorded', async () => {
    const before = toolRuns.slowAborted;
    const { llm } = model(() => ({ tool: 'slow' }));
    const j = new Journal();
    const r = await timed(() => runAgentLoop(j, deps(llm, 300), spec));
    expect(r.err).toBeInstanceOf(AgentTimedOut);
    expect(toolRuns.slowAborted).toBe(before + 1);
    expect(j.isRecorded('a1-turn-1')).toBe(true);
    expect(j.isRecorded('a1-turn-1-tool-1')).toBe(false);
  });

  it('a re-activation (after a crash) continues the deadline of the journaled first turn instead of a fresh one', async () => {
    const { llm } = model((_r, n) => (n === 1 ? { tool: 'note' } : 'hang'));
    const first = new Journal();
    const p1 = timed(() => runAgentLoop(first, deps(llm, 1000), spec));
    await new Promise((r) => setTimeout(r, 600));
    first.ac.abort(new Error('worker stopped')); // the process goes away; its journal stays
    const r1 = await p1;
    expect(r1.err).not.toBeInstanceOf(AgentTimedOut);
    expect(first.isRecorded('a1-turn-1')).toBe(true);
    const again = new Journal(first.entries);
    const r2 = await timed(() => runAgentLoop(again, deps(llm, 1000), spec));
    expect(r2.err).toBeInstanceOf(AgentTimedOut);
    // What was left of the first deadline (~400 ms), not another 1000 ms.
    expect(r2.ms).toBeLessThan(800);
    expect(again.isRecorded('a1-turn-2')).toBe(false);
  });

  it('a deadline that passed while the workflow was down fails the next live step at once', async () => {
    const { llm } = model((_r, n) => (n === 1 ? { tool: 'note' } : 'hang'));
    const first = new Journal();
    await timed(() => runAgentLoop(first, deps(llm, 300), spec));
    expect(first.isRecorded('a1-turn-1')).toBe(true);
    await new Promise((r) => setTimeout(r, 350)); // the workflow is down past the deadline
    const { llm: late, seen } = model(() => 'hang');
    const r = await timed(() => runAgentLoop(new Journal(first.entries), deps(late, 300), spec));
    expect(r.err).toBeInstanceOf(AgentTimedOut);
    expect(r.ms).toBeLessThan(150);
    expect(seen.calls).toBe(0);
  });

  it('a finished agent replays after its deadline: recorded steps are never failed by the clock', async () => {
    const { llm } = model((_r, n) => (n === 1 ? { tool: 'note' } : { text: 'done' }));
    const j = new Journal();
    const out = await runAgentLoop(j, deps(llm, 300), spec);
    expect(out.text).toBe('done');
    await new Promise((r) => setTimeout(r, 400));
    const { llm: never, seen } = model(() => 'hang');
    const replay = await runAgentLoop(new Journal(j.entries), deps(never, 300), spec);
    expect(replay.text).toBe('done');
    expect(seen.calls).toBe(0);
  });

  it('time waiting for a person about a held tool call does not count (the moved deadline is journaled)', async () => {
    const waits = { passivates: true };
    const { llm } = model((_r, n) => (n === 1 ? { tool: 'note', afterMs: 100 } : { text: 'after the wait', afterMs: 200 }));
    const first = new Journal();
    // The first activation opens a wait for a person and passivates.
    const r1 = await timed(() =>
      runAgentLoop(
        first,
        deps(llm, 500, {
          approveTool: async () => {
            throw waits;
          },
        }),
        spec,
      ),
    );
    expect(r1.err).toBe(waits);
    // The person answers long after the agent's whole time.
    await new Promise((r) => setTimeout(r, 700));
    const again = new Journal(first.entries);
    const out = await runAgentLoop(again, deps(llm, 500, { approveTool: async () => ({ approved: true }) }), spec);
    expect(out.text).toBe('after the wait');
    const moved = again.entries.get('a1-turn-1-clock') as number;
    const start = (first.entries.get('a1-turn-1') as { startedAt: number }).startedAt;
    expect(moved).toBeGreaterThan(start + 500 + 700);
    // A replay of that activation reads the same moved deadline.
    const replay = await runAgentLoop(new Journal(again.entries), deps(model(() => 'hang').llm, 500, { approveTool: async () => ({ approved: true }) }), spec);
    expect(replay.text).toBe('after the wait');
  });

  it('without a person asked, the time spent asking counts as usual (no step is journaled for it)', async () => {
    const { llm } = model((_r, n) => (n === 1 ? { tool: 'note' } : { text: 'ok' }));
    const j = new Journal();
    await runAgentLoop(j, deps(llm, 1000, { approveTool: async () => undefined }), spec);
    expect(j.isRecorded('a1-turn-1-clock')).toBe(false);
  });

  it('bounds a one-call agent (simple mode, a planner, a synthesis) too', async () => {
    const { llm, seen } = model(() => 'hang');
    const j = new Journal();
    const r = await timed(() =>
      modelTurn(j, deps(llm, 300), { agentId: 'simple-agent', tier: 'small' }, 'agent', [{ role: 'user', content: 'hi' }], undefined),
    );
    expect(r.err).toBeInstanceOf(AgentTimedOut);
    expect((r.err as Error).message).toContain('AGENT_TIMEOUT_SECONDS');
    expect(seen.aborted).toBe(1);
    expect(j.isRecorded('agent')).toBe(false);
  });

  it("bounds a one-call agent inside its caller's step too (the complex planner, the research synthesis)", async () => {
    const { llm, seen } = model(() => 'hang');
    const j = new Journal();
    const r = await timed(() =>
      j.step('plan', () =>
        modelTurn(j, deps(llm, 300), { agentId: 'planner', tier: 'small' }, 'plan', [{ role: 'user', content: 'plan' }], undefined, { inStep: true }),
      ),
    );
    expect(r.err).toBeInstanceOf(AgentTimedOut);
    expect((r.err as Error).message).toContain('agent planner timed out');
    expect(seen.aborted).toBe(1);
    expect(j.isRecorded('plan')).toBe(false);
  });

  it('without a timeout nothing changes: no limit, only the turns journaled', async () => {
    const { llm } = model(() => ({ text: 'fine', afterMs: 50 }));
    const j = new Journal();
    const out = await runAgentLoop(j, deps(llm, 0), spec);
    expect(out.text).toBe('fine');
    expect([...j.entries.keys()]).toEqual(['a1-turn-1']);
  });
});
