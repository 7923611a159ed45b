/**
 * /api/v1/channels: the caller's messaging channels (owner-only: another user's channel is 403,
 * an unknown one 404, a duplicate name per type 409; credentials write-only), and the inbound
 * webhook POST /api/v1/channels/{channel_id}/webhook: no authentication, the platform's
 * signature over the raw body bytes instead (401 when it fails), answered `{status:
 * "dispatched"}` once the message is stored in CHANNEL_INBOX (src/channels), 503 with
 * Retry-After when it cannot be stored. A disabled or unknown channel's webhook answers 404.
 */
import type { TemplatedApp } from 'uWebSockets.js';
import type { Owner } from '../channels/index.js';
import type { Principal } from '../kernel/index.js';
import { parseJsonBody, route } from './http.js';
import { admitted, type RouteDeps } from './route-deps.js';

const ownerOf = (p: Principal): Owner => ({ userId: p.userId ?? null, tenantId: p.tenantId ?? null });

export function registerChannelRoutes(app: TemplatedApp, d: RouteDeps): void {
  const { store } = d.domains.channels;
  route(
    app,
    'post',
    '/api/v1/channels',
    admitted(d.admit, async (req, p) => store.create(ownerOf(p), parseJsonBody(req))),
    d.ctx,
    { body: true },
  );
  route(
    app,
    'get',
    '/api/v1/channels',
    admitted(d.admit, async (_req, p) => store.list(ownerOf(p))),
    d.ctx,
  );
  route(
    app,
    'get',
    '/api/v1/channels/:id',
    admitted(d.admit, async (req, p) => store.get(ownerOf(p), req.params[0]!)),
    d.ctx,
  );
  route(
    app,
    'put',
    '/api/v1/channels/:id',
    admitted(d.admit, async (req, p) => store.update(ownerOf(p), req.params[0]!, parseJsonBody(req))),
    d.ctx,
    { body: true },
  );
  route(
    app,
    'del',
    '/api/v1/channels/:id',
    admitted(d.admit, async (req, p) => {
      await store.remove(ownerOf(p), req.params[0]!);
      return { message: 'Channel deleted' };
    }),
    d.ctx,
  );
  // No admission: the platform calls it; its signature over the raw bytes is the authentication.
  route(
    app,
    'post',
    '/api/v1/channels/:id/webhook',
    async (req) => ({ status: 200, body: await d.domains.channels.webhook(req.params[0]!, req.headers, req.body ?? Buffer.alloc(0)) }),
    d.ctx,
    {
      body: true,
    },
  );
}

const security = [{ ApiKeyAuth: [] }, { BearerAuth: [] }];
const ok = (schema: unknown, description = 'OK') => ({ description, content: { 'application/json': { schema } } });
const errorResponse = (description: string) => ok({ $ref: '#/components/schemas/Error' }, description);
const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' }, description: 'Channel id' };
const webhookParam = { name: 'channel_id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' }, description: 'Channel id' };
const ChannelSchema = {
  type: 'object',
  description: 'A messaging channel; credentials are write-only and never returned',
  required: ['id', 'user_id', 'type', 'name', 'config', 'enabled', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    user_id: { type: 'string', format: 'uuid', nullable: true },
    type: { type: 'string', enum: ['platform_a', 'platform_b'] },
    name: { type: 'string' },
    config: { type: 'object', additionalProperties: true, description: 'Optional; agent_name routes messages to a named agent' },
    enabled: { type: 'boolean' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
};
const credentials = {
  type: 'object',
  description: 'platform_a: signing_secret, bot_token, app_id; platform_b: channel_secret, channel_access_token (all required strings). Write-only.',
  additionalProperties: { type: 'string' },
};
const CreateSchema = {
  type: 'object',
  required: ['type', 'name', 'credentials'],
  properties: {
    type: { type: 'string', enum: ['platform_a', 'platform_b'] },
    name: { type: 'string' },
    credentials,
    config: { type: 'object', additionalProperties: true },
  },
};
const UpdateSchema = {
  type: 'object',
  properties: { name: { type: 'string' }, credentials, config: { type: 'object', additionalProperties: true }, enabled: { type: 'boolean' } },
};
const body = (schema: unknown) => ({ required: true, content: { 'application/json': { schema } } });

/** OpenAPI path items of the channel routes: spread into openapi.ts's `paths`. */
export const channelPaths = {
  '/api/v1/channels': {
    post: {
      summary: 'Create a messaging channel (credentials validated per type, encrypted at rest, never returned)',
      operationId: 'createChannel',
      security,
      requestBody: body(CreateSchema),
      responses: {
        200: ok(ChannelSchema),
        400: errorResponse('Missing or invalid field or credential'),
        409: errorResponse('Duplicate channel (same user, type, name)'),
      },
    },
    get: {
      summary: "The caller's channels, newest first",
      operationId: 'listChannels',
      security,
      responses: { 200: ok({ type: 'array', items: ChannelSchema }) },
    },
  },
  '/api/v1/channels/{id}': {
    get: {
      summary: 'One channel',
      operationId: 'getChannel',
      security,
      parameters: [idParam],
      responses: { 200: ok(ChannelSchema), 403: errorResponse("Another user's channel"), 404: errorResponse('Channel not found') },
    },
    put: {
      summary: 'Update any of name, credentials, config, enabled',
      operationId: 'updateChannel',
      security,
      parameters: [idParam],
      requestBody: body(UpdateSchema),
      responses: {
        200: ok(ChannelSchema),
        400: errorResponse('Invalid field or credential'),
        403: errorResponse("Another user's channel"),
        404: errorResponse('Channel not found'),
        409: errorResponse('Duplicate channel (same user, type, name)'),
      },
    },
    delete: {
      summary: 'Delete a channel permanently',
      operationId: 'deleteChannel',
      security,
      parameters: [idParam],
      responses: {
        200: ok({ type: 'object', required: ['message'], properties: { message: { type: 'string' } } }),
        403: errorResponse("Another user's channel"),
        404: errorResponse('Channel not found'),
      },
    },
  },
  '/api/v1/channels/{channel_id}/webhook': {
    post: {
      summary:
        'Inbound platform webhook (no authentication: X-PlatformA-Signature with X-PlatformA-Request-Timestamp, or X-PlatformB-Signature). ' +
        "The message is stored durably (de-duplicated by the platform event id) and processed asynchronously: offered to the owner's " +
        "daemon connections (GET /v1/ws/messages); if none claims it within DAEMON_PENDING_TTL_SECONDS (90) it runs as the owner's task " +
        '(config.agent_name: the skill it runs) and the result is posted to the thread through the platform API (PLATFORM_A_API_URL, PLATFORM_B_API_URL).',
      operationId: 'channelWebhook',
      security: [],
      parameters: [webhookParam],
      requestBody: body({ type: 'object', additionalProperties: true, description: 'The platform-specific payload, verified over its raw bytes' }),
      responses: {
        200: ok(
          {
            type: 'object',
            properties: {
              status: { type: 'string', enum: ['dispatched', 'ignored'] },
              challenge: { type: 'string', description: 'platform_a URL verification' },
              reason: { type: 'string' },
            },
          },
          '{status: "dispatched"}; {challenge} for a URL verification; {status: "ignored", reason} for bot messages and other events',
        ),
        400: errorResponse('Body is not a JSON object'),
        401: errorResponse('Missing or invalid signature, or a platform_a timestamp more than 5 minutes from now'),
        404: errorResponse('Channel not found (or disabled)'),
        503: errorResponse('The message could not be stored (the message bus is unreachable); deliver it again after Retry-After'),
      },
    },
  },
};
