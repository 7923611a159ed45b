/**
 * `send_message {to, text}`: the tool a swarm agent messages another agent of its swarm, or
 * the lead (`lead`), with. Offered to swarm agents only, through a view of the service's registry
 * (`ToolRegistry.withExtraTools`: its rate limits and usage records stay in force for every other tool). A send
 * is part of the tool call's journaled step (stored before the step counts as done, with an id
 * derived from the step), so it happens once; it counts against max_messages_per_agent, and a
 * send past that is refused with an error the model reads.
 */
import { ToolError, type Tool, type ToolParameters } from '../tools/index.js';
import type { SwarmAgentContext } from './agent-context.js';
import { LEAD } from './mailbox.js';

export const SEND_MESSAGE_TOOL = 'send_message';

/** Longest message text an agent may send. */
export const MAX_AGENT_MESSAGE_CHARS = 4000;

/** One schema object for every agent's tool: the registry compiles it once (its validators are cached by schema). */
const PARAMETERS: ToolParameters = {
  type: 'object',
  properties: {
    to: { type: 'string', description: `An agent's name (e.g. agent-2) or "${LEAD}"` },
    text: { type: 'string', minLength: 1, maxLength: MAX_AGENT_MESSAGE_CHARS },
  },
  required: ['to', 'text'],
  additionalProperties: false,
};

export interface SendToolOptions {
  ctx: SwarmAgentContext;
  maxMessages: number;
  /** The names of the swarm's agents that know `to` if it is one of them (for a clear refusal of an unknown one). */
  team: (to: string) => Promise<string[]>;
}

export function sendMessageTool(o: SendToolOptions): Tool {
  return {
    name: SEND_MESSAGE_TOOL,
    description:
      `Send a message to another agent of your swarm (it reads it before its next step), or to the lead ("${LEAD}"; what you tell the lead ` +
      `is given to it when it writes the swarm's final answer). Use it to share findings or ask a teammate for something. At most ${o.maxMessages} messages in all.`,
    category: 'swarm',
    version: '1.0.0',
    parameters: PARAMETERS,
    timeoutMs: 30_000,
    costPerUse: 0,
    dangerous: false,
    // A send run again after a crash carries the same id and is dropped as a duplicate.
    retryable: true,
    async run(args) {
      const to = String(args.to).trim();
      const text = String(args.text);
      const sent = o.ctx.messagesSent + o.ctx.sentInStep(args);
      if (sent >= o.maxMessages) {
        throw new ToolError(`message not sent: this agent has sent ${sent} messages, the swarm's max_messages_per_agent (${o.maxMessages})`, 'limit');
      }
      if (to === o.ctx.name) throw new ToolError('message not sent: an agent cannot message itself', 'bad_arguments');
      const team = to === LEAD ? [] : await o.team(to);
      if (to !== LEAD && !team.includes(to)) {
        throw new ToolError(
          `message not sent: no agent ${JSON.stringify(to)} in this swarm; known: ${[LEAD, ...team.filter((n) => n !== o.ctx.name)].join(', ')}`,
          'bad_arguments',
        );
      }
      await o.ctx.send(to, { kind: 'text', from: o.ctx.name, text }, true, args);
      return { output: { delivered: true, to, sent: sent + 1, limit: o.maxMessages }, text: `message delivered to ${to} (${sent + 1} of ${o.maxMessages})` };
    },
  };
}
