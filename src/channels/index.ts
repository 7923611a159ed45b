/**
 * Messaging channels: platform_a (a workplace chat platform) and platform_b (a messenger).
 * - ChannelStore (store.ts): the owner's channels in PostgreSQL, credentials validated per type
 *   and encrypted at rest (crypto.ts), never returned or logged.
 * - ChannelService.webhook: an inbound request verified against the channel's credentials
 *   (webhook.ts) and, when it carries a message, stored in the CHANNEL_INBOX stream (subject
 *   svc.channels.inbox.<channel_id>, de-duplicated by the platform's event id) BEFORE the
 *   answer `{status: "dispatched"}`: a gateway dying after answering loses nothing, and the
 *   platform's retries of one event are stored once.
 * - ChannelRouter (router.ts): the stored messages to the owner's daemons; one no daemon claims
 *   in time to the default agent route (agent-route.ts).
 * - ChannelOutbox (outbox.ts): daemon replies and agent results posted to the thread through
 *   the platform's API, stored first, retried with backoff.
 * - A disabled channel accepts nothing: its webhook answers 404 `Channel not found`, the same as
 *   an unknown id, so an unauthenticated caller learns nothing about which ids exist.
 * - platform_b's immediate short acknowledgement goes through the reply token
 *   (POST <PLATFORM_B_API_URL>/v2/bot/message/reply, Bearer channel_access_token): best effort,
 *   after the message is stored, never delaying the answer, one retry.
 */
export { ChannelService, PLATFORM_B_ACK_TEXT, type ChannelServiceConfig } from './service.js';
export type { InboundMessage } from './inbound.js';
export { ChannelRouter } from './router.js';
export { ChannelOutbox, OUTBOX_MAX_ATTEMPTS, type OutboundPost, type OutboxConfig } from './outbox.js';
export { ChannelAgentRoute, threadSessionId, type AgentRouteDeps, type ChannelTaskRequest, type TaskOutcome } from './agent-route.js';
export { CHANNEL_KEY_FILE, channelKeyOf, decryptCredentials, encryptCredentials, parseChannelKey } from './crypto.js';
export {
  CHANNEL_TYPES,
  CREDENTIAL_FIELDS,
  ChannelStore,
  checkCredentials,
  type Channel,
  type ChannelType,
  type ChannelWithSecrets,
  type Owner,
} from './store.js';
export {
  PLATFORM_A_MAX_SKEW_SECONDS,
  invalidSignature,
  parsePlatformA,
  parsePlatformB,
  platformASignature,
  platformBSignature,
  safeEqual,
  verifyPlatformA,
  verifyPlatformB,
  type Parsed,
} from './webhook.js';
