/**
 * The agent loop (DESIGN.md, "Agent loop"): model turns and tool calls, each a journaled
 * step of the workflow, so a replay after a crash pays for no recorded model call and runs
 * no recorded tool call again.
 *
 * One agent: AGENT_STARTED; per turn the model streams (LLM_PARTIAL deltas) and either
 * answers (LLM_OUTPUT, AGENT_COMPLETED) or asks for tools: its text before the calls is
 * AGENT_THINKING, each call is TOOL_INVOKED then TOOL_OBSERVATION, and the results go back
 * to the model as `tool` messages. Calls of one turn run `parallelism` at a time. After
 * `maxIterations` turns with tool calls the model is asked to answer without tools.
 *
 * With AgentDeps.timeoutMs (AGENT_TIMEOUT_SECONDS) the whole loop runs on the agent's clock
 * (timeout.ts): its deadline runs from its first model call's journaled start (a re-activation
 * continues it), waits for a person about a held call do not count,
 * and when it passes the call under way is aborted and the agent fails with AgentTimedOut.
 */
import type { ChatMessage, LlmToolCall } from '../llm/index.js';
import type { AgentContext } from './context.js';
import { modelTurn, type Turn } from './model-turn.js';
import { runLimited } from './parallel.js';
import { ZERO_USAGE, addUsage, type AgentDeps, type AgentOutput, type AgentSpec, type ModelCall } from './spec.js';
import { startAgentClock, type AgentClock } from './timeout.js';
import { approveCalls, llmToolsOf, toolStep } from './tool-step.js';

/** Runs one agent to its answer (on its own clock when AgentDeps.timeoutMs is set). */
export async function runAgentLoop(ctx: AgentContext, deps: AgentDeps, spec: AgentSpec): Promise<AgentOutput> {
  if (!deps.timeoutMs) return loop(ctx, deps, spec);
  const clock = startAgentClock(ctx, spec.agentId, deps.timeoutMs);
  try {
    // The turns run on the loop's clock, not each on one of its own.
    return await loop(clock.ctx, { ...deps, timeoutMs: undefined }, spec, clock);
  } catch (err) {
    throw clock.failure(err);
  } finally {
    clock.stop();
  }
}

async function loop(ctx: AgentContext, deps: AgentDeps, spec: AgentSpec, clock?: AgentClock): Promise<AgentOutput> {
  const tools = llmToolsOf(deps.tools, spec.tools);
  const messages: ChatMessage[] = [...spec.messages];
  const calls: ModelCall[] = [];
  let usage = ZERO_USAGE;
  let toolCalls = 0;
  let last: Turn | undefined;
  for (let i = 1; i <= spec.maxIterations + 1; i++) {
    const forced = i > spec.maxIterations;
    const step = `${spec.stepPrefix}-turn-${i}`;
    if (spec.beforeTurn) messages.push(...(await spec.beforeTurn(i)));
    if (forced) {
      messages.push({ role: 'user', content: `You have used all ${spec.maxIterations} tool rounds. Answer now with what you have, without calling tools.` });
    }
    const before = usage;
    // `spec` carries `finalAnswer` into every turn, not only the last: a turn's text streams
    // before the model has said whether tool calls follow, so it cannot be held back until
    // then. Text a model writes before its tool calls (narration) is therefore part of the
    // streamed answer of a final-answer agent, while the task's result is the last turn's text.
    const turn = await modelTurn(ctx, deps, spec, step, messages, forced ? undefined : tools, {
      before:
        i === 1
          ? () => {
              spec.onStart?.();
              ctx.emit('AGENT_STARTED', spec.agentId, `Agent ${spec.agentId} started`);
            }
          : undefined,
      after: (t) => {
        if (t.toolCalls?.length && !forced) {
          if (t.text.trim()) ctx.emit('AGENT_THINKING', spec.agentId, t.text, { iteration: i });
          return;
        }
        ctx.emit('AGENT_COMPLETED', spec.agentId, `Agent ${spec.agentId} completed`, {
          total_tokens: before.totalTokens + t.usage.totalTokens,
          tool_calls: toolCalls,
          iterations: i,
        });
        spec.onComplete?.();
      },
    });
    calls.push({
      agentId: spec.agentId,
      step,
      tier: turn.tier ?? spec.tier,
      model: turn.model,
      provider: turn.provider,
      usage: turn.usage,
      ...(turn.cacheHit ? { cacheHit: true, cacheScore: turn.cacheScore } : {}),
    });
    usage = addUsage(usage, turn.usage);
    last = turn;
    if (i === 1) clock?.anchor(turn.startedAt);
    if (!turn.toolCalls?.length || forced) break;
    messages.push({ role: 'assistant', content: turn.text, toolCalls: turn.toolCalls });
    const steps = turn.toolCalls.map((_, j) => `${step}-tool-${j + 1}`);
    // Every call a tool policy holds is decided before any call of the turn runs. The hook
    // asks on the workflow's own context, which does not know this agent's parallel group:
    // checking ours first opens no question for a group that has already failed.
    const asking = deps.approveTool;
    const checked: AgentDeps = asking
      ? {
          ...deps,
          approveTool: (c) => {
            ctx.checkpoint();
            return asking(c);
          },
        }
      : deps;
    const ask = () => approveCalls(ctx, checked, spec, turn.toolCalls!, steps);
    // The clock stands still while a person is asked about a held call.
    const verdicts = asking && clock ? await clock.paused(step, turn.endedAt, ask, (v) => v.some((x) => x !== undefined)) : await ask();
    const call = (sc: AgentContext, c: LlmToolCall, j: number) => toolStep(sc, deps, spec, c, steps[j], verdicts[j]);
    // A lone call needs no group (nothing beside it to stop when it fails): no scoped signal, no limiter.
    const results = turn.toolCalls.length === 1 ? [await call(ctx, turn.toolCalls[0], 0)] : await runLimited(ctx, turn.toolCalls, deps.parallelism, call);
    toolCalls += results.length;
    for (const r of results) messages.push({ role: 'tool', toolCallId: r.callId, content: r.content });
  }
  return { text: last!.text, model: last!.model, provider: last!.provider, usage, calls, toolCalls };
}
