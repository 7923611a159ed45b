/**
 * complex: a planner decomposes the request into a DAG of subtasks (id, description,
 * dependencies, required tools, model tier); each runs as a tool-loop agent once its
 * dependencies finished (DEPENDENCY_SATISFIED), at most max_concurrent_agents at a time; a
 * failing subtask stops the others. A synthesizer combines the results (skipped for a single
 * result when WORKFLOW_SYNTH_BYPASS_SINGLE).
 *
 * supervisor: the same, run by a supervisor that recruits a team (TEAM_RECRUITED), assigns
 * roles (ROLE_ASSIGNED) and delegates (DELEGATION), reports progress (TEAM_STATUS) and
 * retires the team (TEAM_RETIRED).
 */
import { modelTurn, parallelGroup, runAgentLoop, type AgentOutput } from '../agents/index.js';
import { MAX_SUBTASKS, parseSubtasks, plannerPrompt, type Subtask } from './subtasks.js';
import { asOutput } from './usage.js';
import type { Workflow } from './workflow.js';

export function dag(o: { supervisor: boolean }): Workflow {
  const { supervisor } = o;
  return async (ctx, p) => {
    const { t, deps, agent, base, sys, past, user, role } = p;
    const lead = supervisor ? 'supervisor' : 'planner';
    const outputs: AgentOutput[] = [];
    const planRecorded = ctx.isRecorded('plan');
    const plan = await ctx.step('plan', async () => {
      // The planner's call runs inside the plan step: the plan and its events are one journal entry.
      const turn = await modelTurn(
        ctx,
        agent,
        { ...base, agentId: lead },
        'plan',
        [{ role: 'system', content: plannerPrompt(p.tools) }, ...past, user],
        undefined,
        { emitOutput: true, announce: true, inStep: true },
      );
      const subtasks = parseSubtasks(turn.text, t.query);
      ctx.emit('PROGRESS', lead, `Planned ${subtasks.length} subtasks`, {
        subtasks: subtasks.map((s) => ({ id: s.id, description: s.description, dependencies: s.dependencies, required_tools: s.requiredTools })),
      });
      if (supervisor) {
        ctx.emit('TEAM_RECRUITED', lead, `Recruited a team of ${subtasks.length}`, {
          team: subtasks.map((s, i) => ({ agent_id: `agent-${i + 1}`, role: role.name, subtask: s.id })),
        });
      }
      return { subtasks, out: asOutput(lead, 'plan', turn) };
    });
    if (planRecorded) p.budget?.afterCall(undefined, lead, plan.out.usage);
    outputs.push(plan.out);
    const subtasks = plan.subtasks;
    // A single subtask's answer is the task's when the synthesis is bypassed: then that agent's
    // stream is the final answer; otherwise the synthesizer's is.
    const bypass = subtasks.length === 1 && deps.synthBypassSingle;
    const results = new Map<string, Promise<AgentOutput>>();
    // One group for the plan's agents: a failing subtask stops the others.
    const group = parallelGroup(ctx, t.max_concurrent_agents ?? MAX_SUBTASKS);
    const done = new Set<string>();
    const runSub = async (s: Subtask, i: number): Promise<AgentOutput> => {
      const agentId = `agent-${i + 1}`;
      const needed = await Promise.all(s.dependencies.map((d) => results.get(d)!));
      return group.run(async (gctx) => {
        const tools = deps.enableToolSelection && s.requiredTools.length ? p.tools.filter((n) => s.requiredTools.includes(n)) : p.tools;
        const context = needed.length
          ? `\n\nResults of the subtasks it depends on:\n${needed.map((o, j) => `[${s.dependencies[j]}] ${o.text}`).join('\n\n')}`
          : '';
        const out = await runAgentLoop(gctx, agent, {
          ...base,
          ...(s.modelTier && !t.model_override ? { tier: s.modelTier } : {}),
          agentId,
          stepPrefix: `subtask-${i + 1}`,
          messages: [sys, { role: 'user', content: `Overall request: ${t.query}\n\nYour subtask: ${s.description}${context}` }],
          tools,
          ...(bypass ? { finalAnswer: true } : {}),
          onStart: () => {
            if (s.dependencies.length) {
              ctx.emit('DEPENDENCY_SATISFIED', agentId, `Dependencies of ${s.id} satisfied: ${s.dependencies.join(', ')}`, {
                subtask: s.id,
                dependencies: s.dependencies,
              });
            }
            if (supervisor) {
              ctx.emit('ROLE_ASSIGNED', lead, `${agentId} is the ${role.name} for ${s.id}`, { agent_id: agentId, role: role.name, subtask: s.id });
              ctx.emit('DELEGATION', lead, `Delegated ${s.id} to ${agentId}`, { agent_id: agentId, subtask: s.id, description: s.description });
            }
          },
          onComplete: supervisor
            ? () => {
                // Counted from the subtasks done so far, replayed ones included.
                done.add(s.id);
                const completed = done.size;
                ctx.emit('TEAM_STATUS', lead, `${completed} of ${subtasks.length} subtasks done`, { completed, total: subtasks.length, last: s.id });
              }
            : undefined,
        });
        done.add(s.id);
        return out;
      });
    };
    subtasks.forEach((s, i) => results.set(s.id, runSub(s, i)));
    const subOuts = await group.all(subtasks.map((s) => results.get(s.id)!));
    outputs.push(...subOuts);
    if (bypass) {
      if (supervisor) await ctx.step('retire', async () => void ctx.emit('TEAM_RETIRED', lead, 'Team retired', { team_size: 1 }));
      return { final: subOuts[0]!, outputs, agentsUsed: subOuts.length };
    }
    const turn = await modelTurn(
      ctx,
      agent,
      { ...base, agentId: 'synthesizer', finalAnswer: true },
      'synthesize',
      [
        sys,
        ...past,
        {
          role: 'user',
          content: `Combine these subtask results into one answer to: ${t.query}\n\n${subOuts.map((o, i) => `[${i + 1}] ${o.text}`).join('\n\n')}`,
        },
      ],
      undefined,
      {
        emitOutput: true,
        announce: true,
        after: supervisor ? () => void ctx.emit('TEAM_RETIRED', lead, 'Team retired', { team_size: subOuts.length }) : undefined,
      },
    );
    outputs.push(asOutput('synthesizer', 'synthesize', turn));
    return { final: turn, outputs, agentsUsed: subOuts.length };
  };
}
