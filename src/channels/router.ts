/**
 * Routing of inbound channel messages: a durable consumer (`channel-router`, shared by every
 * gateway) on the CHANNEL_INBOX stream offers each stored message to its channel owner's
 * daemon connections (DaemonHub.dispatch: claim-once, re-offered when a claim expires), then
 * acknowledges it. A message is acknowledged only once it is handed to the daemon layer, so
 * a gateway that dies in between leaves it for another.
 *
 * Not built yet (the rest of issue 9, section 2.3): with no daemon connected, waiting the
 * pending TTL then running the default agent route, and posting the result back to the thread
 * through the platform's API with an outbox.
 */
import { AckPolicy, DeliverPolicy, type ConsumerMessages } from '@nats-io/jetstream';
import { CONSUMERS, STREAMS, type Bus } from '../bus/index.js';
import type { DaemonHub } from '../daemon/index.js';
import type { Logger } from '../kernel/index.js';
import type { InboundMessage } from './index.js';

export class ChannelRouter {
  private messages?: ConsumerMessages;
  private loop?: Promise<void>;

  constructor(
    private readonly bus: Bus,
    private readonly hub: DaemonHub,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    await this.bus.jsm.consumers
      .add(STREAMS.channelInbox, {
        durable_name: CONSUMERS.channelRouter,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ack_wait: 30_000_000_000,
      })
      .catch(() => undefined); // exists already (another gateway created it)
    const consumer = await this.bus.js.consumers.get(STREAMS.channelInbox, CONSUMERS.channelRouter);
    const messages = await consumer.consume({ max_messages: 256 });
    this.messages = messages;
    this.loop = (async () => {
      for await (const m of messages) {
        try {
          const inbound = m.json<InboundMessage>();
          await this.hub.dispatch(
            {
              message_id: inbound.message_id,
              channel: inbound.channel_type,
              channel_id: inbound.channel_id,
              channel_type: inbound.channel_type,
              thread_id: inbound.thread_id,
              sender: inbound.sender,
              text: inbound.text,
              ...(inbound.agent_name ? { agent_name: inbound.agent_name } : {}),
              ...(inbound.reply_token ? { reply_token: inbound.reply_token } : {}),
              timestamp: inbound.timestamp,
            },
            { tenantId: inbound.tenant_id, userId: inbound.user_id },
          );
          m.ack();
        } catch (err) {
          this.log.warn({ err }, 'channel message not dispatched; redelivered later');
          m.nak(5000);
        }
      }
    })();
  }

  async stop(): Promise<void> {
    await this.messages?.close();
    await this.loop?.catch(() => {});
  }
}
