/**
 * Benchmark: the agent runtime's orchestration overhead per agent step, with a zero-latency
 * model. A standard-mode task whose model asks for the calculator K-1 times and then answers
 * has 2K-1 agent steps (K model turns, K-1 tool calls). Tasks run one at a time through the
 * whole service (submission, worker, journal in NATS KV, events in JetStream, PostgreSQL
 * records); the per-step time is the slope between K = 1 and K = 9 (so submission and the
 * task's fixed steps cancel out). Reference, same run: the same agent loop (src/agents) on an
 * in-memory context (no journal, no events, no records): the algorithm without its durability.
 * Also CPU per step with 50 tasks at once. Target: < 1 ms of service time per step.
 *
 * Everything runs in one process (service and clients share the CPU), against a throwaway
 * nats-server and PostgreSQL. Many tasks streaming at once are the live benchmark's (live.ts).
 */
import { EphemeralContext, runAgentLoop, type AgentDeps } from '../src/agents/index.js';
import type { LlmProvider, LlmRequest, LlmResult } from '../src/llm/index.js';
import { ToolRegistry } from '../src/tools/index.js';
import { calculatorTool } from '../src/tools/calculator.js';
import { inProcessService, type Nats, type Pg } from './lib/infra.js';
import { fmtRatio, table, verdict } from './lib/report.js';

const usage = (n: number) => ({ inputTokens: n, outputTokens: n, totalTokens: 2 * n, costUsd: 0 });

/** Zero latency: `turns` (from the query "turns=K") model turns, the first K-1 asking for the calculator. */
class ScriptedModel implements LlmProvider {
  readonly name = 'bench';
  async complete(req: LlmRequest, onDelta?: (d: string) => void): Promise<LlmResult> {
    const first = req.messages.find((m) => m.role === 'user')?.content ?? '';
    const k = Number(/turns=(\d+)/.exec(first)?.[1] ?? 1);
    const done = req.messages.filter((m) => m.role === 'tool').length;
    if (req.tools?.length && done < k - 1) {
      return {
        text: '',
        model: 'zero',
        provider: 'bench',
        finishReason: 'tool_calls',
        usage: usage(1),
        toolCalls: [{ id: `c${done}`, name: 'calculator', arguments: '{"expression":"6*7"}' }],
      };
    }
    onDelta?.('42');
    return { text: '42', model: 'zero', provider: 'bench', finishReason: 'stop', usage: usage(1) };
  }
}

/** Runs a task and waits for its STREAM_END over SSE (exact end time, no polling). */
async function runTaskSse(base: string, query: string): Promise<number> {
  const t0 = performance.now();
  const r = await fetch(`${base}/api/v1/tasks/stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, mode: 'standard' }),
  });
  const { workflow_id } = (await r.json()) as { workflow_id: string };
  const res = await fetch(`${base}/api/v1/stream/sse?workflow_id=${workflow_id}`);
  const reader = res.body!.getReader();
  let buf = '';
  const dec = new TextDecoder();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    if (buf.includes('event: STREAM_END') || buf.includes('event: done')) break;
  }
  await reader.cancel().catch(() => {});
  return performance.now() - t0;
}

const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;

async function stepOverhead(nats: Nats, pg: Pg, quick: boolean, log: (s: string) => void) {
  const { app, base } = await inProcessService(nats, pg, 'bench_agents_steps', new ScriptedModel());
  const reps = quick ? 15 : 40;
  try {
    // Warm-up.
    for (let i = 0; i < 10; i++) await runTaskSse(base, `warm turns=5 ${i}`);
    const times = { 1: [] as number[], 9: [] as number[] };
    for (let i = 0; i < reps; i++) {
      times[1].push(await runTaskSse(base, `turns=1 #${i}`));
      times[9].push(await runTaskSse(base, `turns=9 #${i}`));
    }
    const t1 = median(times[1]);
    const t9 = median(times[9]);
    const steps9 = 2 * 9 - 1;
    const perStep = (t9 - t1) / (steps9 - 1);
    log(`steps: one-turn task ${t1.toFixed(2)} ms, nine-turn task ${t9.toFixed(2)} ms`);

    // CPU per step with 50 tasks at once (this process hosts the whole service and the clients,
    // which follow each task over SSE rather than polling).
    const n = quick ? 100 : 300;
    const cpu0 = process.cpuUsage();
    const w0 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 50 }, async () => {
        while (next < n) {
          const i = next++;
          await runTaskSse(base, `turns=5 load ${i}`);
        }
      }),
    );
    const cpu = process.cpuUsage(cpu0);
    const wall = performance.now() - w0;
    const cpuMsPerStep = (cpu.user + cpu.system) / 1000 / (n * 9);

    // Reference: the same loop without durability.
    const tools = new ToolRegistry([calculatorTool()]);
    const deps: AgentDeps = { llm: new ScriptedModel(), tools, parallelism: 1, maxTokens: 100, temperature: 0, partialChunkChars: 512 };
    const ref = async (k: number) => {
      const t0 = performance.now();
      await runAgentLoop(new EphemeralContext(), deps, {
        agentId: 'a',
        stepPrefix: 'a',
        messages: [{ role: 'user', content: `turns=${k}` }],
        tier: 'small',
        tools: ['calculator'],
        maxIterations: 10,
        taskId: '00000000-0000-4000-8000-000000000000',
      });
      return performance.now() - t0;
    };
    for (let i = 0; i < 50; i++) await ref(9);
    const r1: number[] = [];
    const r9: number[] = [];
    for (let i = 0; i < reps * 5; i++) {
      r1.push(await ref(1));
      r9.push(await ref(9));
    }
    const refPerStep = (median(r9) - median(r1)) / (steps9 - 1);
    return { perStepMs: perStep, oneTurnMs: t1, nineTurnMs: t9, cpuMsPerStep, tasksPerSecond: (n * 1000) / wall, refPerStepMs: refPerStep };
  } finally {
    await app.stop();
  }
}

export async function runAgents(o: { nats: Nats; pg: Pg; quick: boolean; log: (s: string) => void }) {
  o.log('agents: per-step overhead (zero-latency model)');
  const s = await stepOverhead(o.nats, o.pg, o.quick, o.log);
  const results = { steps: s };
  const report =
    table(
      'Agent steps (zero-latency model, one task at a time, whole service)',
      ['measure', 'service', 'in-memory loop (reference)', 'ratio', 'target'],
      [
        [
          'time per agent step (ms)',
          s.perStepMs.toFixed(3),
          s.refPerStepMs.toFixed(3),
          fmtRatio(s.perStepMs / s.refPerStepMs),
          `< 1 ms: ${verdict(s.perStepMs < 1)}`,
        ],
        ['one-turn task, submit to STREAM_END (ms)', s.oneTurnMs.toFixed(2), '', '', ''],
        ['nine-turn task (17 steps) (ms)', s.nineTurnMs.toFixed(2), '', '', ''],
        ['CPU per step, 50 tasks at once (ms)', s.cpuMsPerStep.toFixed(3), '', '', ''],
        ['tasks/s, 50 at once (5 turns + 4 tool calls each)', s.tasksPerSecond.toFixed(1), '', '', ''],
      ],
      ['per-step time = (median nine-turn task - median one-turn task) / 16 steps; CPU covers the whole process (gateway, worker, archiver, clients).'],
    ) + '\n';
  return { results, report };
}
