/** simple: one model call, no tools; its text is the answer. */
import { modelTurn } from '../agents/index.js';
import { asOutput } from './usage.js';
import type { Workflow } from './workflow.js';

export const simple: Workflow = async (ctx, p) => {
  const turn = await modelTurn(ctx, p.agent, { ...p.base, agentId: 'simple-agent', finalAnswer: true }, 'agent', [p.sys, ...p.past, p.user], undefined, {
    emitOutput: true,
    announce: true,
  });
  return { final: turn, outputs: [asOutput('simple-agent', 'agent', turn)], agentsUsed: 1 };
};
