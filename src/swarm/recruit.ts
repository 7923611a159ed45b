/**
 * Recruiting an agent: its start message on the SWARM_AGENTS work queue, de-duplicated by
 * (workflow, agent), so the lead's recruiting step run again after a crash starts it once.
 */
import { subjects, type PipelinedPublisher } from '../bus/index.js';
import type { AgentStart } from './agent-run.js';

export const agentStartSubject = (workflowId: string, name: string) => subjects.swarmStart(workflowId, name);

const enc = new TextEncoder();

/** Queues the agent's start (resolves once stored). */
export async function recruitAgent(publisher: PipelinedPublisher, s: AgentStart, deadlineMs = 30_000): Promise<void> {
  await publisher.publish(agentStartSubject(s.workflow_id, s.name), enc.encode(JSON.stringify(s)), { msgId: `${s.workflow_id}:${s.name}`, deadlineMs });
}
