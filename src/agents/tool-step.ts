/**
 * One tool call as a journaled step: TOOL_INVOKED, the tool run through the registry,
 * TOOL_OBSERVATION, and the result the model gets back. A call that is not safe to run twice
 * and was cut off by a crash is not run again: the model is told it was interrupted. A call a
 * tool policy holds for a person (AgentDeps.approveTool) runs only once approved, with the
 * arguments the person gave if any; refused, it is not run and the model is told why.
 */
import { AppError, Code } from '../kernel/index.js';
import type { LlmTool, LlmToolCall } from '../llm/index.js';
import type { ToolExecution, ToolRegistry } from '../tools/index.js';
import type { AgentContext } from './context.js';
import type { AgentDeps, AgentSpec, ToolApproval } from './spec.js';

/** Longest tool output a TOOL_OBSERVATION event carries (the model gets more). */
export const OBSERVATION_EVENT_CHARS = 2000;
/** Longest tool output handed back to the model. */
export const OBSERVATION_MODEL_CHARS = 16_000;

const truncate = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}… [${s.length - n} more characters]` : s);

export interface ToolStepResult {
  callId: string;
  content: string;
  success: boolean;
}

/** A call's arguments: its JSON, or undefined when that is not valid JSON. */
function argumentsOf(call: LlmToolCall): unknown {
  try {
    return call.arguments.trim() ? JSON.parse(call.arguments) : {};
  } catch {
    return undefined;
  }
}

/**
 * Asks the tool policies (AgentDeps.approveTool) about every call of one turn, one after
 * another, before any of them runs: a call that waits for a person passivates the workflow
 * before a sibling starts, so no tool of the turn is cut off by the wait. Calls whose step is
 * recorded are not asked again (their answer is in their result).
 */
export async function approveCalls(
  ctx: AgentContext,
  deps: AgentDeps,
  spec: AgentSpec,
  calls: LlmToolCall[],
  steps: string[],
): Promise<(ToolApproval | undefined)[]> {
  const out: (ToolApproval | undefined)[] = [];
  for (const [i, call] of calls.entries()) {
    const args = argumentsOf(call);
    const asks = !!deps.approveTool && !!deps.tools?.get(call.name) && spec.tools.includes(call.name) && args !== undefined && !ctx.isRecorded(steps[i]);
    out.push(asks ? await deps.approveTool!({ tool: call.name, arguments: args, callId: call.id, agentId: spec.agentId, step: steps[i] }) : undefined);
  }
  return out;
}

/** Runs one call (`verdict`: a person's answer about it, from approveCalls). */
export async function toolStep(
  ctx: AgentContext,
  deps: AgentDeps,
  spec: AgentSpec,
  call: LlmToolCall,
  step: string,
  verdict?: ToolApproval,
): Promise<ToolStepResult> {
  const tool = deps.tools?.get(call.name);
  const allowed = !!tool && spec.tools.includes(call.name);
  // A tool that is not safe to run twice: was it started before a crash and never recorded?
  if (allowed && !tool.retryable && !ctx.isRecorded(step) && ctx.isRecorded(`${step}-started`)) {
    return ctx.step(step, async () => {
      const msg = `tool call interrupted: the worker running it stopped before it finished; ${call.name} is not safe to run twice, so it was not run again and may or may not have taken effect`;
      ctx.emit('TOOL_OBSERVATION', spec.agentId, msg, {
        tool: call.name,
        call_id: call.id,
        success: false,
        output: msg,
        execution_time_ms: 0,
        interrupted: true,
      });
      return { callId: call.id, content: msg, success: false };
    });
  }
  let args = argumentsOf(call);
  if (verdict && !verdict.approved) return refusedStep(ctx, spec, call, step, args, verdict.message);
  if (verdict?.arguments) args = verdict.arguments;
  // Stored before the tool runs: a crash then finds it and does not run the tool again.
  if (allowed && !tool.retryable) await ctx.step(`${step}-started`, async () => true, { stored: true });
  return ctx.step(step, async () => {
    ctx.emit('TOOL_INVOKED', spec.agentId, `Calling ${call.name}`, { tool: call.name, call_id: call.id, arguments: args ?? call.arguments });
    let exec: Pick<ToolExecution, 'success' | 'text' | 'error' | 'output' | 'executionTimeMs'>;
    if (!allowed) {
      exec = {
        success: false,
        text: '',
        error: `tool ${call.name} is not available to this agent; available: ${spec.tools.join(', ') || 'none'}`,
        output: {},
        executionTimeMs: 0,
      };
    } else if (args === undefined) {
      exec = { success: false, text: '', error: 'the arguments are not valid JSON', output: {}, executionTimeMs: 0 };
    } else {
      try {
        exec = await deps.tools!.execute(call.name, args, {
          signal: ctx.signal,
          sessionId: spec.sessionId,
          userId: spec.userId,
          taskId: spec.taskId,
          allowDangerous: spec.allowDangerous,
        });
      } catch (err) {
        // Refusals (bad arguments, rate limit) are told to the model, which may correct itself.
        if (err instanceof AppError && err.code !== Code.Internal) {
          exec = { success: false, text: '', error: err.message, output: {}, executionTimeMs: 0 };
        } else throw err;
      }
    }
    ctx.checkpoint(); // cancelled or handed back while the tool ran: do not record a cut-off result
    const content = exec.success ? exec.text || JSON.stringify(exec.output) : `error: ${exec.error}`;
    ctx.emit('TOOL_OBSERVATION', spec.agentId, exec.success ? `${call.name} succeeded` : `${call.name} failed: ${exec.error}`, {
      tool: call.name,
      call_id: call.id,
      success: exec.success,
      output: truncate(content, OBSERVATION_EVENT_CHARS),
      execution_time_ms: exec.executionTimeMs,
    });
    return { callId: call.id, content: truncate(content, OBSERVATION_MODEL_CHARS), success: exec.success };
  });
}

/** A call a person refused: not run; the model is told so, and why, as the call's result. */
function refusedStep(ctx: AgentContext, spec: AgentSpec, call: LlmToolCall, step: string, args: unknown, why: string): Promise<ToolStepResult> {
  return ctx.step(step, async () => {
    const msg = `the action was refused by a person and was not run: ${why}`;
    ctx.emit('TOOL_OBSERVATION', spec.agentId, `${call.name} refused: ${why}`, {
      tool: call.name,
      call_id: call.id,
      success: false,
      output: truncate(msg, OBSERVATION_EVENT_CHARS),
      execution_time_ms: 0,
      refused: true,
      arguments: args,
    });
    return { callId: call.id, content: msg, success: false };
  });
}

/** The tools of `names` as the model sees them (known ones only). */
export function llmToolsOf(registry: ToolRegistry | undefined, names: string[]): LlmTool[] {
  if (!registry) return [];
  return names.flatMap((n) => {
    const t = registry.get(n);
    return t ? [{ name: t.name, description: t.description, parameters: t.parameters as unknown as Record<string, unknown> }] : [];
  });
}
