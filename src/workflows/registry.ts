/**
 * Which workflow runs a task: one per mode, plus the kinds of task that replace a mode's
 * agents (research, a template, a skill, a catalogue agent). Adding a workflow is a file and a
 * line here.
 */
import { AppError, Code, type Mode } from '../kernel/index.js';
import type { TaskStart } from '../tasks/index.js';
import { agent } from './agent.js';
import { dag } from './dag.js';
import { research } from './research.js';
import { simple } from './simple.js';
import { skill } from './skill.js';
import { standard } from './standard.js';
import { swarmWorkflow } from './swarm.js';
import { template } from './template.js';
import type { Prepared, Workflow } from './workflow.js';

export type WorkflowName = Mode | 'research' | 'template' | 'skill' | 'agent' | 'swarm';

export const WORKFLOWS: Readonly<Record<WorkflowName, Workflow>> = Object.freeze({
  simple,
  standard,
  complex: dag({ supervisor: false }),
  supervisor: dag({ supervisor: true }),
  research,
  template,
  skill,
  agent,
  // A swarm whose every agent failed runs the task as normal routing would without force_swarm.
  swarm: swarmWorkflow((ctx, p) => workflowOf(workflowNameOf({ ...p.t, context: { ...p.t.context, force_swarm: false } }, p))(ctx, p)),
});

/** A catalogue agent, a swarm (context.force_swarm), research, then a template, then a skill take precedence over the task's mode. */
export function workflowNameOf(t: TaskStart, p: Pick<Prepared, 'skill'>): WorkflowName {
  if (t.agent) return 'agent';
  if (t.context.force_swarm === true) return 'swarm';
  if (t.research) return 'research';
  if (t.template) return 'template';
  if (p.skill) return 'skill';
  return t.mode;
}

export function workflowOf(name: WorkflowName): Workflow {
  const w = Object.hasOwn(WORKFLOWS, name) ? WORKFLOWS[name] : undefined;
  if (!w) throw new AppError(Code.FailedPrecondition, `no workflow for mode ${String(name)} in this worker`);
  return w;
}
