/**
 * Outbound posts to the chat platforms (daemon replies, results of the default agent route),
 * through an outbox: a post is stored in the CHANNEL_OUTBOX stream (WorkQueue) before what
 * produced it is let go (the daemon's claim, the channel task's record), and a durable consumer
 * shared by every gateway (`channel-sender`) posts it through the platform's API, removing it
 * only once the platform accepted it. A gateway dying mid-post leaves the post for another;
 * nothing acknowledged is lost.
 *
 * - De-duplicated by what produced it (`reply:<message_id>`, `result:<workflow_id>`, within an
 *   hour): a reply handed on twice is posted once.
 * - Retries: a network error, a 5xx, a 429 (its Retry-After honoured) or a platform_a
 *   `ratelimited` answer is retried with exponential backoff and jitter (1 s doubling to 60 s),
 *   up to OUTBOX_MAX_ATTEMPTS; any other refusal (bad token, unknown conversation) is final
 *   and logged, as is a post whose channel was deleted or disabled meanwhile.
 * - platform_a: POST <PLATFORM_A_API_URL>/chat.postMessage, `Authorization: Bearer <bot_token>`,
 *   `{channel, text, thread_ts, mrkdwn}`; the answer's `ok` must be true. Text over 40,000
 *   characters is cut there.
 * - platform_b: POST <PLATFORM_B_API_URL>/v2/bot/message/push, `Authorization: Bearer
 *   <channel_access_token>`, `{to, messages}` (the reply token is spent on the immediate
 *   acknowledgement); text in messages of at most 5,000 characters, at most 5 of them.
 */
import type { JsMsg } from '@nats-io/jetstream';
import { CONSUMERS, STREAMS, startDurableWorker, subjects, type Bus, type DurableWorker } from '../bus/index.js';
import { backoffDelay, type Logger } from '../kernel/index.js';
import type { ChannelStore, ChannelType } from './store.js';

/** One post waiting in the outbox. */
export interface OutboundPost {
  /** What produced it, the de-duplication id: `reply:<message_id>` or `result:<workflow_id>`. */
  id: string;
  channel_id: string;
  channel_type: ChannelType;
  /** The platform's conversation (platform_a channel, platform_b user, group or room). */
  conversation: string;
  thread_id: string;
  text: string;
  format: 'text' | 'markdown';
}

export interface OutboxConfig {
  platformAApiUrl: string;
  platformBApiUrl: string;
}

export const OUTBOX_MAX_ATTEMPTS = 10;
const MAX_BACKOFF_MS = 60_000;
/** 1 s doubling to 60 s, anywhere in the upper half of that (retries of many posts spread apart). */
const BACKOFF = { baseMs: 1000, capMs: MAX_BACKOFF_MS, jitter: 'equal' } as const;
const POST_TIMEOUT_MS = 10_000;
const PLATFORM_A_MAX_TEXT = 40_000;
const PLATFORM_B_MAX_TEXT = 5_000;
const PLATFORM_B_MAX_MESSAGES = 5;
/** What is posted for an empty reply (the platforms refuse empty text). */
const EMPTY_TEXT = '(empty reply)';
/** Posts in progress at once per gateway. */
const SENDERS = 16;

/** Why a post did not go: retried (with a delay) or final. */
class PostFailed extends Error {
  constructor(
    message: string,
    readonly retry: boolean,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

export class ChannelOutbox {
  private worker?: DurableWorker;

  constructor(
    private readonly bus: Pick<Bus, 'js' | 'jsm'>,
    private readonly store: Pick<ChannelStore, 'withSecrets'>,
    private readonly cfg: OutboxConfig,
    private readonly log: Logger,
  ) {}

  /** Stores a post; resolved once JetStream has it (then it will be posted, or its failure logged). */
  async enqueue(post: OutboundPost): Promise<void> {
    await this.bus.js.publish(subjects.channelOutbox(post.channel_id), new TextEncoder().encode(JSON.stringify(post)), { msgID: post.id });
  }

  async start(): Promise<void> {
    this.worker = await startDurableWorker(this.bus, {
      stream: STREAMS.channelOutbox,
      durable: CONSUMERS.channelSender,
      ackWaitMs: 2 * POST_TIMEOUT_MS + 10_000,
      maxDeliver: OUTBOX_MAX_ATTEMPTS,
      concurrency: SENDERS,
      handle: (m) => this.handle(m),
      log: this.log,
    });
  }

  private async handle(m: JsMsg): Promise<void> {
    let post: OutboundPost;
    try {
      post = m.json<OutboundPost>();
    } catch {
      this.log.error({ subject: m.subject, seq: m.seq }, 'outbox entry is not a post: dropped');
      m.term();
      return;
    }
    const attempt = m.info.deliveryCount;
    try {
      await this.deliver(post);
      m.ack();
      this.log.debug({ post: post.id, channel_id: post.channel_id, attempt }, 'channel post delivered');
    } catch (err) {
      const f = err instanceof PostFailed ? err : new PostFailed((err as Error).message, true);
      const ctx = { post: post.id, channel_id: post.channel_id, channel_type: post.channel_type, attempt, error: f.message };
      if (!f.retry || attempt >= OUTBOX_MAX_ATTEMPTS) {
        this.log.error(ctx, f.retry ? `channel post dropped after ${attempt} attempts` : 'channel post refused by the platform: dropped');
        m.term();
        return;
      }
      // Whole milliseconds (backoffDelay rounds): a fractional delay would reach the server as a
      // fractional nanosecond count, which it does not parse (the message would come back at once).
      const delay = backoffDelay(BACKOFF, attempt, f.retryAfterMs);
      this.log.warn({ ...ctx, retry_in_ms: delay }, 'channel post failed; retried');
      m.nak(delay);
    }
  }

  /** One attempt at a post; throws PostFailed (retryable or not). */
  private async deliver(post: OutboundPost): Promise<void> {
    const found = await this.store.withSecrets(post.channel_id);
    if (!found || !found.channel.enabled) throw new PostFailed('channel deleted or disabled', false);
    const { credentials } = found;
    if (post.channel_type === 'platform_a') {
      const text = !post.text ? EMPTY_TEXT : post.text.length > PLATFORM_A_MAX_TEXT ? `${post.text.slice(0, PLATFORM_A_MAX_TEXT - 1)}…` : post.text;
      const body = await this.call(`${trimUrl(this.cfg.platformAApiUrl)}/chat.postMessage`, credentials.bot_token ?? '', {
        channel: post.conversation,
        text,
        ...(post.thread_id ? { thread_ts: post.thread_id } : {}),
        mrkdwn: post.format === 'markdown',
      });
      // platform_a answers 200 with {ok: false, error} for refusals.
      const b = body as { ok?: unknown; error?: unknown } | undefined;
      if (b && b.ok === false) {
        const error = typeof b.error === 'string' ? b.error : 'unknown error';
        throw new PostFailed(`platform_a: ${error}`, error === 'ratelimited' || error === 'internal_error' || error === 'service_unavailable');
      }
      return;
    }
    const chunks: string[] = [];
    for (let i = 0; i < post.text.length && chunks.length < PLATFORM_B_MAX_MESSAGES; i += PLATFORM_B_MAX_TEXT)
      chunks.push(post.text.slice(i, i + PLATFORM_B_MAX_TEXT));
    if (!chunks.length) chunks.push(EMPTY_TEXT);
    await this.call(`${trimUrl(this.cfg.platformBApiUrl)}/v2/bot/message/push`, credentials.channel_access_token ?? '', {
      to: post.conversation,
      messages: chunks.map((text) => ({ type: 'text', text })),
    });
  }

  private async call(url: string, token: string, body: unknown): Promise<unknown> {
    let r: Response;
    try {
      r = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8', authorization: `Bearer ${token}` },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(POST_TIMEOUT_MS),
      });
    } catch (err) {
      throw new PostFailed(`${(err as Error).message}`, true);
    }
    const text = await r.text().catch(() => '');
    if (!r.ok) {
      const retry = r.status >= 500 || r.status === 429 || r.status === 408;
      const ra = Number(r.headers.get('retry-after'));
      throw new PostFailed(
        `HTTP ${r.status}${text ? `: ${text.slice(0, 200)}` : ''}`,
        retry,
        Number.isFinite(ra) && ra > 0 ? Math.min(ra * 1000, MAX_BACKOFF_MS) : undefined,
      );
    }
    try {
      return text ? (JSON.parse(text) as unknown) : undefined;
    } catch {
      return undefined;
    }
  }

  async stop(): Promise<void> {
    await this.worker?.stop();
  }
}

const trimUrl = (u: string) => u.replace(/\/+$/, '');
