/**
 * agent: a catalogue agent (context.agent, or POST /api/v1/agents/{id}) runs its tool once
 * through the registry, with the input validated and defaulted at submission (the start
 * message carries it, and the tool, pinned), as one journaled step: AGENT_STARTED,
 * TOOL_INVOKED, TOOL_OBSERVATION, AGENT_COMPLETED under the agent's id. The tool's `output`
 * object, as JSON text, is the task's result; its cost is the task's cost.
 *
 * A recorded run is never run again after a crash; a tool that is not safe to run twice and
 * was cut off by one is not run again either (the task fails saying so). A tool policy that
 * holds the tool asks a person first. The run is bounded by AGENT_TIMEOUT_SECONDS (a one-step
 * agent: its clock starts with the step): past it the tool is aborted and the task fails with
 * the timeout error. A tool failure fails the task with an error naming the agent and tool.
 */
import { startAgentClock } from '../agents/index.js';
import { AppError, Code } from '../kernel/index.js';
import { DEFAULT_AGENT_TIMEOUT_MS, type Workflow } from './workflow.js';

/** The task's metadata.execution_mode for a catalogue agent. */
export const AGENT_EXECUTION_MODE = 'agent';

/** Longest tool output a TOOL_OBSERVATION event carries. */
const OBSERVATION_CHARS = 2000;

interface AgentRun {
  success: boolean;
  output: Record<string, unknown>;
  error: string | null;
  costUsd: number;
  executionTimeMs: number;
}

export const agent: Workflow = async (ctx, p) => {
  const { t, deps, base } = p;
  const a = t.agent;
  if (!a) throw new AppError(Code.FailedPrecondition, 'the agent workflow needs a task with context.agent');
  const tool = deps.tools?.get(a.tool);
  if (!tool) throw new AppError(Code.FailedPrecondition, `agent ${a.id}: tool ${a.tool} is not available in this worker`);
  const step = 'agent-run';
  if (!tool.retryable) {
    if (!ctx.isRecorded(step) && ctx.isRecorded(`${step}-started`)) {
      throw new AppError(
        Code.FailedPrecondition,
        `agent ${a.id} was interrupted by a worker stop while ${a.tool} ran; ${a.tool} is not safe to run twice, so it was not run again`,
      );
    }
  }
  // A tool policy may hold the call for a person; refused, the agent cannot run.
  let args: Record<string, unknown> = a.input;
  if (p.agent.approveTool && !ctx.isRecorded(step)) {
    const verdict = await p.agent.approveTool({ tool: a.tool, arguments: args, callId: a.id, agentId: a.id, step });
    if (verdict && !verdict.approved) throw new AppError(Code.FailedPrecondition, `approval rejected: ${verdict.message}`);
    if (verdict?.arguments) args = verdict.arguments;
  }
  if (!tool.retryable && !ctx.isRecorded(step)) await ctx.step(`${step}-started`, async () => true, { stored: true });
  const timeoutMs = deps.agentTimeoutMs ?? DEFAULT_AGENT_TIMEOUT_MS;
  const clock = ctx.isRecorded(step) ? undefined : await startAgentClock(ctx, a.id, timeoutMs);
  const actx = clock?.ctx ?? ctx;
  let run: AgentRun;
  try {
    run = await actx.step(step, async (): Promise<AgentRun> => {
      actx.emit('AGENT_STARTED', a.id, `Agent ${a.id} started`, { agent_id: a.id, tool: a.tool });
      actx.emit('TOOL_INVOKED', a.id, `Calling ${a.tool}`, { tool: a.tool, call_id: a.id, arguments: args });
      // The task's tenant goes with its user: what the tool stores (a screenshot blob) belongs to both.
      const e = await deps.tools!.execute(a.tool, args, {
        signal: actx.signal,
        sessionId: base.sessionId,
        userId: base.userId,
        tenantId: t.tenant_id,
        taskId: base.taskId,
      });
      actx.checkpoint(); // cancelled, handed back or out of time while the tool ran: nothing is recorded
      const text = e.success ? JSON.stringify(e.output) : `error: ${e.error}`;
      actx.emit('TOOL_OBSERVATION', a.id, e.success ? `${a.tool} succeeded` : `${a.tool} failed: ${e.error}`, {
        tool: a.tool,
        call_id: a.id,
        success: e.success,
        output: text.length > OBSERVATION_CHARS ? `${text.slice(0, OBSERVATION_CHARS)}… [${text.length - OBSERVATION_CHARS} more characters]` : text,
        execution_time_ms: e.executionTimeMs,
      });
      if (e.success) actx.emit('AGENT_COMPLETED', a.id, `Agent ${a.id} completed`, { agent_id: a.id, cost_usd: e.costUsd });
      return { success: e.success, output: e.output, error: e.error, costUsd: e.costUsd, executionTimeMs: e.executionTimeMs };
    });
  } catch (err) {
    throw clock ? clock.failure(err) : err;
  } finally {
    clock?.stop();
  }
  if (!run.success) throw new AppError(Code.FailedPrecondition, `agent ${a.id} failed: ${a.tool}: ${run.error}`);
  return {
    final: { text: JSON.stringify(run.output), model: '', provider: '' },
    outputs: [{ text: '', model: '', provider: '', usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0, costUsd: 0 }, calls: [], toolCalls: 1 }],
    agentsUsed: 1,
    costUsd: run.costUsd,
    metadata: { agent_id: a.id, execution_mode: AGENT_EXECUTION_MODE, tool: a.tool, tool_execution_time_ms: run.executionTimeMs },
  };
};
