/**
 * The swarm benchmark's zero-latency model and its in-memory references.
 *
 * `SwarmModel`: answers at once, from the conversation alone. The lead's plan (system prompt
 * "You lead a swarm") is `agents` tasks; an agent (its task prompt "You are agent-N") messages
 * its neighbour with send_message on turns 1..K-1 and answers on turn K (K from "turns=K" in
 * the request): its only tool is the swarm's own, so no tool's work is counted as the swarm's;
 * the synthesis ("Combine the results") answers.
 * It counts its calls and the wall time during which at least one call was under way.
 *
 * `MemBox`: the honest best in-memory mailbox (an array and a waiter woken on push), and
 * `memorySwarm`: the same exchange as the service's swarm with no durability: the lead's plan,
 * 10 agents running the same agent loop (src/agents runAgentLoop on an EphemeralContext) at
 * once, a mailbox read before every turn, send_message into the neighbour's MemBox, results to
 * the lead's MemBox, then the synthesis.
 */
import { EphemeralContext, runAgentLoop, type AgentDeps } from '../../src/agents/index.js';
import type { LlmProvider, LlmRequest, LlmResult } from '../../src/llm/index.js';
import { ToolRegistry, type Tool } from '../../src/tools/index.js';

const usage = { inputTokens: 1, outputTokens: 1, totalTokens: 2, costUsd: 0 };
const reply = (text: string, extra: Partial<LlmResult> = {}): LlmResult => ({ text, model: 'zero', provider: 'bench', finishReason: 'stop', usage, ...extra });

export class SwarmModel implements LlmProvider {
  readonly name = 'bench';
  calls = 0;
  agentTurns = 0;
  private inFlight = 0;
  private since = 0;
  /** ms during which at least one model call was under way. */
  busyMs = 0;

  constructor(private readonly agents: number) {}

  async complete(req: LlmRequest): Promise<LlmResult> {
    this.calls++;
    if (this.inFlight++ === 0) this.since = performance.now();
    try {
      return this.answer(req);
    } finally {
      if (--this.inFlight === 0) this.busyMs += performance.now() - this.since;
    }
  }

  private answer(req: LlmRequest): LlmResult {
    const first = String(req.messages[0]?.content ?? '');
    if (first.startsWith('You lead a swarm')) {
      return reply(JSON.stringify(Array.from({ length: this.agents }, (_, i) => ({ id: `t${i + 1}`, description: `part ${i + 1}` }))));
    }
    const last = String(req.messages.at(-1)?.content ?? '');
    if (last.startsWith('Combine the results')) return reply('done');
    const prompt = req.messages.map((m) => String(m.content ?? '')).join('\n');
    const name = /You are (agent-\d+)/.exec(prompt)?.[1];
    if (!name) return reply('unexpected');
    this.agentTurns++;
    const k = Number(/turns=(\d+)/.exec(prompt)?.[1] ?? 1);
    const turn = 1 + req.messages.filter((m) => m.role === 'assistant').length;
    const tools = new Set((req.tools ?? []).map((t) => t.name));
    if (turn < k && tools.has('send_message')) {
      const n = Number(name.slice(6));
      const to = `agent-${(n % this.agents) + 1}`;
      return reply('', {
        finishReason: 'tool_calls',
        toolCalls: [{ id: `m${turn}`, name: 'send_message', arguments: JSON.stringify({ to, text: `note ${turn} from ${name}` }) }],
      });
    }
    return reply(`result of ${name}`);
  }
}

/** An in-memory mailbox: push wakes the one waiting reader. */
export class MemBox<T> {
  private buf: T[] = [];
  private wake?: () => void;
  push(m: T): void {
    this.buf.push(m);
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }
  take(): T[] {
    return this.buf.splice(0);
  }
  async wait(): Promise<void> {
    if (this.buf.length) return;
    await new Promise<void>((r) => (this.wake = r));
  }
}

type Note = { from: string; text: string };

/** The mailboxes of the in-memory swarm running now. */
let current: { boxes: Map<string, MemBox<Note>>; lead: MemBox<Note & { result?: boolean }> } | undefined;

/** One registry per agent name, kept across runs (its argument validator compiled once, as the best in-memory version would). */
const registries = new Map<string, ToolRegistry>();
function toolsOf(name: string): ToolRegistry {
  let r = registries.get(name);
  if (r) return r;
  const send: Tool = {
    name: 'send_message',
    description: 'send a message',
    category: 'swarm',
    version: '1.0.0',
    parameters: { type: 'object', properties: { to: { type: 'string' }, text: { type: 'string' } }, required: ['to', 'text'], additionalProperties: false },
    timeoutMs: 30_000,
    costPerUse: 0,
    dangerous: false,
    retryable: true,
    async run(args) {
      const to = String(args.to);
      (to === 'lead' ? current!.lead : current!.boxes.get(to))!.push({ from: name, text: String(args.text) });
      return { output: { delivered: true }, text: `message delivered to ${to}` };
    },
  };
  r = new ToolRegistry([send]);
  registries.set(name, r);
  return r;
}

/** The same swarm exchange in memory: returns its wall time (ms). */
export async function memorySwarm(model: SwarmModel, agents: number, turns: number): Promise<number> {
  const t0 = performance.now();
  const query = `agents=${agents} turns=${turns}`;
  const plan = await model.complete({
    messages: [
      { role: 'system', content: 'You lead a swarm (in memory)' },
      { role: 'user', content: query },
    ],
  } as LlmRequest);
  const tasks = JSON.parse(plan.text) as { id: string; description: string }[];
  const names = tasks.map((_, i) => `agent-${i + 1}`);
  const boxes = new Map(names.map((n) => [n, new MemBox<Note>()]));
  const lead = new MemBox<Note & { result?: boolean }>();
  current = { boxes, lead };
  const results: string[] = [];
  const runOne = async (name: string, task: { id: string; description: string }) => {
    const deps: AgentDeps = { llm: model, tools: toolsOf(name), parallelism: 1, maxTokens: 100, temperature: 0, partialChunkChars: 512 };
    const box = boxes.get(name)!;
    const out = await runAgentLoop(new EphemeralContext(), deps, {
      agentId: name,
      stepPrefix: name,
      messages: [{ role: 'user', content: `You are ${name}, one agent of a swarm working on: ${query}\n\nYour task (${task.id}): ${task.description}` }],
      tier: 'small',
      tools: ['send_message'],
      maxIterations: 25,
      taskId: '00000000-0000-4000-8000-000000000000',
      beforeTurn: async () => box.take().map((m) => ({ role: 'user' as const, content: `Message from ${m.from}: ${m.text}` })),
    });
    lead.push({ from: name, text: out.text, result: true });
  };
  const running = tasks.map((t, i) => runOne(names[i]!, t));
  while (results.length < tasks.length) {
    await lead.wait();
    for (const m of lead.take()) if (m.result) results.push(`${m.from}: ${m.text}`);
  }
  await Promise.all(running);
  await model.complete({
    messages: [{ role: 'user', content: `Combine the results of the swarm's agents into one answer to: ${query}\n\n${results.join('\n')}` }],
  } as LlmRequest);
  return performance.now() - t0;
}
