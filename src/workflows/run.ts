/**
 * A task's run: prepared once, handed to its workflow, verified when asked, and turned into
 * the task's outcome. Deterministic code between journaled steps: all contact with the
 * outside world happens inside ctx.step(), and every event is emitted inside a step, so a
 * replay after a crash skips what was done and repeats nothing.
 *
 * A research task verifies its own answer against the sources it read (the spec's
 * verification shape) and carries unified_response; other tasks get the generic verifier.
 */
import type { WorkflowContext } from '../runtime/index.js';
import type { TaskOutcome, TaskStart } from '../tasks/index.js';
import { outcomeOf } from './outcome.js';
import { prepare } from './preparation.js';
import { workflowNameOf, workflowOf } from './registry.js';
import { unifiedResponse } from './research-unified.js';
import { verify } from './verification.js';
import type { WorkflowDeps } from './workflow.js';

/** Runs the workflow body and returns its successful outcome; failures throw. */
export async function runWorkflow(ctx: WorkflowContext, deps: WorkflowDeps, t: TaskStart): Promise<TaskOutcome> {
  const p = await prepare(ctx, deps, t);
  const name = workflowNameOf(t, p);
  const result = await workflowOf(name)(ctx, p);
  let verification: Record<string, unknown> | undefined;
  if (t.enable_verification && name !== 'research') {
    const v = await verify(ctx, p, result.final.text);
    result.outputs.push(v.out);
    verification = v.info;
  }
  const outcome = outcomeOf(p, result, verification);
  if (name === 'research') outcome.metadata = { ...outcome.metadata, unified_response: unifiedResponse(t, outcome) };
  return outcome;
}
