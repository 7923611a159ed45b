/**
 * The record of an accepted inbound channel message, as CHANNEL_INBOX holds it: written by the
 * webhook (service.ts), or by the daemon sweeper's hand-off to the agent route (router.ts).
 */
import type { ChannelType } from './store.js';

/** What CHANNEL_INBOX holds per accepted message (JSON). */
export interface InboundMessage {
  message_id: string;
  channel_id: string;
  channel_type: ChannelType;
  user_id: string | null;
  tenant_id: string | null;
  /** The platform's event id (the de-duplication id). */
  event_id: string;
  event_type: string;
  thread_id: string;
  sender: string;
  text: string;
  /** config.agent_name of the channel; null: default agent routing. */
  agent_name: string | null;
  reply_token: string | null;
  /** The platform's conversation (channel, group, room or user id). */
  conversation: string | null;
  timestamp: string;
  /** Set when the message comes back for the default agent route (no daemon claimed it). */
  route?: 'agent';
}
