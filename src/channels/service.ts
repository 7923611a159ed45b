/**
 * Inbound webhooks of the owners' channels: a request verified against the channel's
 * credentials (webhook.ts) and, when it carries a message, stored in the CHANNEL_INBOX stream
 * (subject svc.channels.inbox.<channel_id>, de-duplicated by the platform's event id) BEFORE
 * the answer `{status: "dispatched"}`: a gateway dying after answering loses nothing, and the
 * platform's retries of one event are stored once. A disabled channel accepts nothing: its
 * webhook answers 404 `Channel not found`, the same as an unknown id, so an unauthenticated
 * caller learns nothing about which ids exist. platform_b's immediate short acknowledgement
 * goes through the reply token (POST <PLATFORM_B_API_URL>/v2/bot/message/reply, Bearer
 * channel_access_token): best effort, after the message is stored, never delaying the answer,
 * one retry. A message the bus cannot store is answered 503 with Retry-After (the platform
 * delivers it again).
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { subjects, type Bus } from '../bus/index.js';
import { notFound, unavailable, type Logger } from '../kernel/index.js';
import type { Sql } from '../store/index.js';
import { channelKeyOf } from './crypto.js';
import { ChannelStore, type Channel } from './store.js';
import type { InboundMessage } from './inbound.js';
import { parsePlatformA, parsePlatformB, verifyPlatformA, verifyPlatformB } from './webhook.js';

export interface ChannelServiceConfig {
  /** CHANNEL_SECRET_KEY (hex or base64, 32 bytes); unset: DATA_DIR/channel-secret.key. */
  secretKey?: string;
  dataDir: string;
  platformBApiUrl: string;
}

export const PLATFORM_B_ACK_TEXT = 'Received. Working on it…';

export class ChannelService {
  readonly store: ChannelStore;

  constructor(
    sql: Sql,
    private readonly bus: Pick<Bus, 'js'>,
    private readonly cfg: ChannelServiceConfig,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.store = new ChannelStore(sql, channelKeyOf(cfg.secretKey, cfg.dataDir));
  }

  /**
   * One inbound webhook request: verified, then answered (challenge, ignored) or stored in
   * CHANNEL_INBOX and answered `{status: "dispatched"}`. Verification failures throw
   * Unauthenticated (401); an unknown or disabled channel NotFound (404).
   */
  async webhook(channelId: string, headers: Record<string, string>, raw: Buffer): Promise<Record<string, unknown>> {
    const found = await this.store.withSecrets(channelId);
    if (!found || !found.channel.enabled) throw notFound('Channel not found');
    const { channel, credentials } = found;
    let parsed;
    if (channel.type === 'platform_a') {
      verifyPlatformA(credentials, headers, raw, this.now());
      parsed = parsePlatformA(raw);
    } else {
      verifyPlatformB(credentials, headers, raw);
      parsed = parsePlatformB(raw);
    }
    if (parsed.kind === 'answer') return parsed.body;
    const msg: InboundMessage = {
      message_id: randomUUID(),
      channel_id: channel.id,
      channel_type: channel.type,
      user_id: channel.user_id,
      tenant_id: found.tenantId,
      event_id: parsed.eventId,
      event_type: parsed.eventType,
      thread_id: parsed.threadId,
      sender: parsed.sender,
      text: parsed.text,
      agent_name: typeof channel.config.agent_name === 'string' && channel.config.agent_name ? channel.config.agent_name : null,
      reply_token: parsed.replyToken ?? null,
      conversation: parsed.conversation ?? null,
      timestamp: new Date(this.now()).toISOString(),
    };
    // A bus that cannot store the message is a dependency down, not a server fault: 503 with
    // Retry-After, which the platform honours by delivering the same event again.
    const ack = await this.bus.js
      .publish(subjects.channelInbox(channel.id), new TextEncoder().encode(JSON.stringify(msg)), { msgID: `${channel.id}:${parsed.eventId}` })
      .catch((err: unknown) => {
        throw unavailable('Service temporarily unavailable: the message could not be stored; retry', err);
      });
    if (!ack.duplicate && channel.type === 'platform_b' && parsed.replyToken) {
      void this.acknowledge(channel, credentials.channel_access_token ?? '', parsed.replyToken);
    }
    return { status: 'dispatched' };
  }

  /** platform_b's short acknowledgement through the reply token: best effort, one retry, never throws. */
  private async acknowledge(channel: Channel, accessToken: string, replyToken: string): Promise<void> {
    const url = `${this.cfg.platformBApiUrl.replace(/\/+$/, '')}/v2/bot/message/reply`;
    const body = JSON.stringify({ replyToken, messages: [{ type: 'text', text: PLATFORM_B_ACK_TEXT }] });
    for (let attempt = 1; attempt <= 2; attempt++) {
      try {
        const r = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${accessToken}` },
          body,
          signal: AbortSignal.timeout(5000),
        });
        await r.arrayBuffer().catch(() => undefined);
        if (r.ok) return;
        // 4xx other than 429: the token is spent or refused; a retry cannot help.
        if (r.status < 500 && r.status !== 429) {
          this.log.warn({ channel_id: channel.id, status: r.status }, 'platform_b acknowledgement refused');
          return;
        }
        this.log.warn({ channel_id: channel.id, status: r.status, attempt }, 'platform_b acknowledgement failed');
      } catch (err) {
        this.log.warn({ channel_id: channel.id, attempt, error: (err as Error).message }, 'platform_b acknowledgement failed');
      }
      if (attempt === 1) await sleep(500);
    }
  }
}
