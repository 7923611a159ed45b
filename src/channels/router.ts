/**
 * Routing of inbound channel messages: a durable consumer (`channel-router`, shared by every
 * gateway) on the CHANNEL_INBOX stream, up to ROUTER_CONCURRENCY messages at once per gateway.
 * - A message from a webhook is offered to its channel owner's daemon connections
 *   (DaemonHub.dispatch: claim-once, re-offered when a claim expires, kept pending until replied).
 * - A message no daemon claimed within the pending-message TTL comes back through the same
 *   stream marked `route: "agent"` (`toAgent`, called by the daemon sweeper; de-duplicated by
 *   message id) and runs on the default agent route (ChannelAgentRoute).
 * - A daemon's reply goes into the outbox (`deliverReply`, the hub's hook).
 * A message is acknowledged only once handed on, so a gateway that dies in between leaves it
 * for another; a failed hand-off is redelivered after 5 s.
 */
import type { JsMsg } from '@nats-io/jetstream';
import { CONSUMERS, STREAMS, startDurableWorker, subjects, type Bus, type DurableWorker } from '../bus/index.js';
import type { DaemonHub, DaemonMessage, DaemonReply, Owner } from '../daemon/index.js';
import type { Logger } from '../kernel/index.js';
import type { ChannelAgentRoute } from './agent-route.js';
import type { InboundMessage } from './inbound.js';
import type { ChannelOutbox } from './outbox.js';

const ROUTER_CONCURRENCY = 64;

export class ChannelRouter {
  private worker?: DurableWorker;

  constructor(
    private readonly bus: Pick<Bus, 'js' | 'jsm'>,
    private readonly hub: Pick<DaemonHub, 'dispatch'>,
    private readonly agents: Pick<ChannelAgentRoute, 'run'>,
    private readonly outbox: Pick<ChannelOutbox, 'enqueue'>,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    this.worker = await startDurableWorker(this.bus, {
      stream: STREAMS.channelInbox,
      durable: CONSUMERS.channelRouter,
      ackWaitMs: 30_000,
      concurrency: ROUTER_CONCURRENCY,
      handle: (m) => this.route(m),
      log: this.log,
    });
  }

  private async route(m: JsMsg): Promise<void> {
    let inbound: InboundMessage;
    try {
      inbound = m.json<InboundMessage>();
    } catch {
      this.log.error({ subject: m.subject, seq: m.seq }, 'channel inbox entry is not a message: dropped');
      m.term();
      return;
    }
    try {
      if (inbound.route === 'agent') await this.agents.run(inbound);
      else await this.hub.dispatch(daemonMessageOf(inbound), { tenantId: inbound.tenant_id, userId: inbound.user_id });
      m.ack();
    } catch (err) {
      this.log.warn({ err, message_id: inbound.message_id, attempt: m.info.deliveryCount }, 'channel message not routed; redelivered in 5 s');
      m.nak(5000);
    }
  }

  /**
   * The daemon sweeper's `unclaimed` hook: a channel message no daemon claimed in time goes back
   * through CHANNEL_INBOX to the agent route (stored once however often this is called). A
   * message that came from no channel has nowhere to post a result: dropped, logged.
   */
  async toAgent(msg: DaemonMessage, owner: Owner): Promise<void> {
    if (!msg.channel_id || (msg.channel_type !== 'platform_a' && msg.channel_type !== 'platform_b')) {
      this.log.warn({ message_id: msg.message_id }, 'unclaimed daemon message from no channel: dropped');
      return;
    }
    const inbound: InboundMessage = {
      message_id: msg.message_id,
      channel_id: msg.channel_id,
      channel_type: msg.channel_type,
      user_id: owner.userId,
      tenant_id: owner.tenantId,
      event_id: `agent:${msg.message_id}`,
      event_type: 'unclaimed',
      thread_id: msg.thread_id,
      sender: msg.sender,
      text: msg.text,
      agent_name: msg.agent_name ?? null,
      reply_token: msg.reply_token ?? null,
      conversation: msg.conversation ?? null,
      timestamp: msg.timestamp,
      route: 'agent',
    };
    await this.bus.js.publish(subjects.channelInbox(msg.channel_id), new TextEncoder().encode(JSON.stringify(inbound)), { msgID: `agent:${msg.message_id}` });
  }

  /**
   * The daemon hub's `deliverReply` hook: a reply to a channel message goes into the outbox
   * (posted to the message's thread). A reply to a message from no channel has nowhere to go:
   * logged, and the claim ends.
   */
  async deliverReply(r: DaemonReply): Promise<void> {
    const c = r.claim;
    if (!c.channel_id || (c.channel_type !== 'platform_a' && c.channel_type !== 'platform_b')) {
      this.log.warn({ message_id: r.message_id }, 'daemon reply to a message from no channel: not posted');
      return;
    }
    await this.outbox.enqueue({
      id: `reply:${r.message_id}`,
      channel_id: c.channel_id,
      channel_type: c.channel_type,
      conversation: c.conversation ?? '',
      thread_id: r.thread_id,
      text: r.text,
      format: r.format,
    });
  }

  async stop(): Promise<void> {
    await this.worker?.stop();
  }
}

export function daemonMessageOf(inbound: InboundMessage): DaemonMessage {
  return {
    message_id: inbound.message_id,
    channel: inbound.channel_type,
    channel_id: inbound.channel_id,
    channel_type: inbound.channel_type,
    thread_id: inbound.thread_id,
    sender: inbound.sender,
    text: inbound.text,
    ...(inbound.agent_name ? { agent_name: inbound.agent_name } : {}),
    ...(inbound.reply_token ? { reply_token: inbound.reply_token } : {}),
    ...(inbound.conversation ? { conversation: inbound.conversation } : {}),
    timestamp: inbound.timestamp,
  };
}
