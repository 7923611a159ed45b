/**
 * skill: one tool-loop agent driven by the skill's instructions (before the task's system
 * prompt), with the skill's tools and tier (preparation.ts applies them); its answer is the task's.
 */
import { runAgentLoop } from '../agents/index.js';
import { AppError, Code } from '../kernel/index.js';
import type { ChatMessage } from '../llm/index.js';
import type { Workflow } from './workflow.js';

export const skill: Workflow = async (ctx, p) => {
  if (!p.skill) throw new AppError(Code.Internal, 'the skill workflow needs a skill');
  const skillSys: ChatMessage = { role: 'system', content: `${p.skill.instructions}\n\n${p.sys.content}` };
  // finalAnswer marks every turn's stream, narration before tool calls included (agents/loop.ts says why).
  const out = await runAgentLoop(ctx, p.agent, {
    ...p.base,
    agentId: 'skill-agent',
    stepPrefix: 'agent',
    messages: [skillSys, ...p.past, p.user],
    tools: p.tools,
    finalAnswer: true,
  });
  return { final: out, outputs: [out], agentsUsed: 1 };
};
