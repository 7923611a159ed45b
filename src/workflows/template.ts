/**
 * A workflow template: each step a journaled step, in order. `text` steps render their text;
 * `tool` steps run the tool through the registry; `llm` steps call the model, unless
 * disable_ai, where the task fails at the first such step, naming it (no model is called).
 * The template's output step is the answer: when it is an `llm` step, its stream is the
 * final answer's.
 */
import { modelTurn, type AgentOutput } from '../agents/index.js';
import { AppError, Code } from '../kernel/index.js';
import { planTemplate } from '../templates/index.js';
import { asOutput } from './usage.js';
import type { Workflow } from './workflow.js';

export const template: Workflow = async (ctx, p) => {
  const { t, deps, agent, base } = p;
  const tpl = deps.templates?.get(t.template!.name, t.template!.version);
  if (!tpl) throw new AppError(Code.FailedPrecondition, `template ${t.template!.name} is not available in this worker`);
  const params = (t.context.prompt_params && typeof t.context.prompt_params === 'object' ? t.context.prompt_params : {}) as Record<string, unknown>;
  const plan = planTemplate(tpl, { query: t.query, params });
  const outputs: Record<string, string> = {};
  const agentOuts: AgentOutput[] = [];
  let last: { text: string; model: string; provider: string } = { text: '', model: '', provider: '' };
  for (const step of plan.steps) {
    const name = `template-${step.index + 1}`;
    const agentId = `template:${step.id}`;
    if (step.type === 'llm') {
      if (t.disable_ai) {
        throw new AppError(Code.FailedPrecondition, `disable_ai: template ${tpl.key} step "${step.id}" needs a model, and disable_ai forbids model calls`);
      }
      const { prompt, system } = step.render(outputs);
      const turn = await modelTurn(
        ctx,
        agent,
        {
          ...base,
          agentId,
          ...(step.modelTier && !t.model_override && !t.provider_override ? { tier: step.modelTier } : {}),
          ...(step.id === plan.output ? { finalAnswer: true } : {}),
        },
        name,
        [...(system ? [{ role: 'system' as const, content: system }] : []), { role: 'user', content: prompt }],
        undefined,
        { announce: true },
      );
      outputs[step.id] = turn.text;
      agentOuts.push(asOutput(agentId, name, turn));
      last = turn;
    } else {
      const tool = step.type === 'tool' ? deps.tools?.get(step.tool) : undefined;
      // A step already recorded needs no tool (its source may be down while the task replays).
      if (step.type === 'tool' && !tool && !ctx.isRecorded(name))
        throw new AppError(Code.FailedPrecondition, `template ${tpl.key} step "${step.id}": unknown tool ${step.tool}`);
      // A tool policy holds the step for a person; refused, the template cannot go on.
      const verdict =
        step.type === 'tool' && agent.approveTool && !ctx.isRecorded(name)
          ? await agent.approveTool({ tool: step.tool, arguments: step.render(outputs).arguments, callId: step.id, agentId, step: name })
          : undefined;
      if (verdict && !verdict.approved) throw new AppError(Code.FailedPrecondition, `approval rejected: ${verdict.message}`);
      // A tool that is not safe to run twice, cut off by a crash, is not run again.
      if (tool && !tool.retryable) {
        if (!ctx.isRecorded(name) && ctx.isRecorded(`${name}-started`)) {
          throw new AppError(
            Code.FailedPrecondition,
            `template ${tpl.key} step "${step.id}" was interrupted by a worker stop; ${tool.name} is not safe to run twice, so the task stops here`,
          );
        }
        await ctx.step(`${name}-started`, async () => true, { stored: true });
      }
      const text = await ctx.step(name, async () => {
        ctx.emit('PROGRESS', agentId, `Template ${tpl.key}: step ${step.id}`, { stage: 'template_step', template: tpl.key, step: step.id, type: step.type });
        if (step.type === 'text') return step.render(outputs).text;
        const args = verdict?.arguments ?? step.render(outputs).arguments;
        ctx.emit('TOOL_INVOKED', agentId, `Calling ${step.tool}`, { tool: step.tool, call_id: step.id, arguments: args });
        const e = await deps.tools!.execute(step.tool, args, { signal: ctx.signal, sessionId: base.sessionId, userId: base.userId, taskId: base.taskId });
        ctx.emit('TOOL_OBSERVATION', agentId, e.success ? `${step.tool} succeeded` : `${step.tool} failed: ${e.error}`, {
          tool: step.tool,
          call_id: step.id,
          success: e.success,
          output: (e.success ? e.text : `error: ${e.error}`).slice(0, 2000),
          execution_time_ms: e.executionTimeMs,
        });
        if (!e.success) throw new AppError(Code.FailedPrecondition, `template ${tpl.key} step "${step.id}": ${step.tool} failed: ${e.error}`);
        return e.text;
      });
      outputs[step.id] = text;
    }
  }
  return {
    final: { text: outputs[plan.output] ?? '', model: last.model, provider: last.provider },
    outputs: agentOuts,
    agentsUsed: 1,
    metadata: {
      template: { name: tpl.name, version: tpl.version, key: tpl.key, content_hash: tpl.contentHash, steps: plan.steps.length, disable_ai: !!t.disable_ai },
    },
  };
};
