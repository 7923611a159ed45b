/** standard: one agent with a tool loop (the role's tools, up to max_iterations rounds); its answer is the task's. */
import { runAgentLoop } from '../agents/index.js';
import type { Workflow } from './workflow.js';

export const standard: Workflow = async (ctx, p) => {
  // finalAnswer marks every turn's stream, narration before tool calls included (agents/loop.ts says why).
  const out = await runAgentLoop(ctx, p.agent, {
    ...p.base,
    agentId: 'standard-agent',
    stepPrefix: 'agent',
    messages: [p.sys, ...p.past, p.user],
    tools: p.tools,
    finalAnswer: true,
  });
  return { final: out, outputs: [out], agentsUsed: 1 };
};
