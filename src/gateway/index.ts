/**
 * Gateway: the public HTTP surface on uWebSockets.js — REST /api/v1, SSE and WebSocket streams,
 * the OpenAI-compatible /v1 layer, health, readiness and /openapi.json.
 *
 * Guarantees: stateless (the orchestrator only through Connect clients, events only through
 * NATS, sessions, schedules and channels only through the domain objects it is given), so any
 * number of gateways can run; it reads no environment variable (everything comes from its
 * config); every request body is validated by one TypeBox schema that also documents it in
 * /openapi.json; errors carry the gateway's `{error}` shape, OpenAI's shape under /v1.
 */
export { Gateway } from './server.js';
export type { GatewayConfig, GatewayDeps } from './server.js';
export type { GatewayDomains, SessionLookup } from './route-deps.js';
export type { SseConn } from './stream-routes.js';
export { DEFAULT_OPENAI_CONFIG } from './openai/handlers.js';
export type { OpenAiConfig } from './openai/handlers.js';
export { DEFAULT_MODEL_TABLE, loadModelTable } from './openai/models.js';
export type { OpenAiModel, OpenAiModelTable } from './openai/models.js';
