/**
 * POST /api/v1/swarm/{workflow_id}/message: a person's message to the lead of a running swarm
 * (a task submitted with context.force_swarm). It is stored in the lead's mailbox; the lead
 * reads it at its next decision and acts on it (a model call that may add tasks: a
 * LEAD_DECISION names the message). Owner only: another user's swarm, one whose lead
 * synthesises or that has ended, and an unknown id are all 404 `Swarm not found`. The rules live in the SwarmMessenger (swarm/).
 */
import { Type } from '@sinclair/typebox';
import type { TemplatedApp } from 'uWebSockets.js';
import { isUuid, notFound, type Principal } from '../kernel/index.js';
import { MAX_PERSON_MESSAGE_CHARS, SWARM_NOT_FOUND, type SwarmMessenger } from '../swarm/index.js';
import { parseJsonBody, route, type Req } from './http.js';
import { admitted, type RouteDeps } from './route-deps.js';

export const SwarmMessageRequest = Type.Object({
  message: Type.String({ minLength: 1, maxLength: MAX_PERSON_MESSAGE_CHARS, description: 'What the person tells the lead (non-empty)' }),
});

export const SwarmMessageResponse = Type.Object({
  success: Type.Boolean(),
  status: Type.String({ enum: ['delivered'], description: 'Stored in the lead’s mailbox; the lead acts on it at its next decision' }),
});

const plain = (x: unknown) => JSON.parse(JSON.stringify(x)) as Record<string, unknown>;

export const swarmSchemas = { SwarmMessageRequest: plain(SwarmMessageRequest), SwarmMessageResponse: plain(SwarmMessageResponse) };

export function registerSwarmRoutes(app: TemplatedApp, d: RouteDeps, swarm: SwarmMessenger): void {
  const post = async (req: Req, p: Principal) => {
    const id = req.params[0] ?? '';
    if (!isUuid(id)) throw notFound(SWARM_NOT_FOUND);
    const b = parseJsonBody(req);
    const body = (b !== null && typeof b === 'object' && !Array.isArray(b) ? b : {}) as Record<string, unknown>;
    return swarm.deliver(p, id.toLowerCase(), body.message);
  };
  route(app, 'post', '/api/v1/swarm/:id/message', admitted(d.admit, post), d.ctx, { body: true });
}

const err = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } });

export const swarmPaths = {
  '/api/v1/swarm/{workflow_id}/message': {
    post: {
      summary: 'Send a message to the lead of a running swarm (owner only)',
      description:
        'The message lands in the lead’s mailbox (stream MAILBOXES, durable). At its next decision the lead asks its model which tasks the ' +
        'message calls for (with a model that gives no task list, the message itself becomes a task), emits LEAD_DECISION naming the ' +
        'message and TASKLIST_UPDATED, and recruits agents for new tasks (within max_agents). A swarm is a task submitted with ' +
        'context.force_swarm: true.',
      operationId: 'sendSwarmMessage',
      security: [{ ApiKeyAuth: [] }, { BearerAuth: [] }],
      parameters: [{ name: 'workflow_id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }],
      requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/SwarmMessageRequest' } } } },
      responses: {
        200: { description: 'Delivered', content: { 'application/json': { schema: { $ref: '#/components/schemas/SwarmMessageResponse' } } } },
        400: err(`message is required (a non-empty string) / message must be at most ${MAX_PERSON_MESSAGE_CHARS} characters / invalid JSON`),
        401: err('Not authenticated'),
        404: err('Swarm not found: no running swarm of that id that the caller owns (also once its lead synthesises or it ended)'),
      },
    },
  },
};
