/**
 * Inbound webhook verification and parsing, per platform. Pure functions over the raw body
 * bytes and the (lower-cased) request headers; the service (service.ts) stores what they accept.
 *
 * platform_a: `X-PlatformA-Request-Timestamp` within 5 minutes of now (either way) and
 * `X-PlatformA-Signature` = `v0=` + hex HMAC-SHA256(signing_secret, `v0:<timestamp>:<raw body>`),
 * compared in constant time; then the URL-verification challenge is answered, bot messages
 * (`bot_id`, subtype `bot_message`) and other event types are ignored, `message` and
 * `app_mention` become an inbound message identified by the payload's `event_id`.
 *
 * platform_b: `X-PlatformB-Signature` = base64 HMAC-SHA256(channel_secret, raw body), compared
 * in constant time; the first text message of `events[]` becomes an inbound message identified
 * by its `webhookEventId` (else the message id), carrying its reply token.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { AppError, Code, badRequest } from '../kernel/index.js';

/** How far a platform_a request timestamp may be from now, either way. */
export const PLATFORM_A_MAX_SKEW_SECONDS = 5 * 60;

export const invalidSignature = (why: string) => new AppError(Code.Unauthenticated, why);

/** What a verified request carries: an answer of its own (challenge, ignored) or one message. */
export type Parsed =
  | { kind: 'answer'; body: Record<string, unknown> }
  | {
      kind: 'message';
      /** The platform's id of the event: retries carry the same one (the de-duplication id). */
      eventId: string;
      threadId: string;
      sender: string;
      text: string;
      eventType: string;
      replyToken?: string;
      /** Platform-specific routing facts (the platform's conversation id). */
      conversation?: string;
    };

/** Constant-time comparison of two strings (false for different lengths, without a timing leak of the content). */
export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  if (x.length !== y.length) {
    timingSafeEqual(x, x); // the same work either way
    return false;
  }
  return timingSafeEqual(x, y);
}

export function platformASignature(signingSecret: string, timestamp: string, raw: Buffer): string {
  return 'v0=' + createHmac('sha256', signingSecret).update(`v0:${timestamp}:`).update(raw).digest('hex');
}

export function platformBSignature(channelSecret: string, raw: Buffer): string {
  return createHmac('sha256', channelSecret).update(raw).digest('base64');
}

function parseJson(raw: Buffer): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(raw));
  } catch {
    throw badRequest('invalid JSON body');
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw badRequest('request body must be a JSON object');
  return v as Record<string, unknown>;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);
const bodyHash = (raw: Buffer) => createHash('sha256').update(raw).digest('hex');
const ignored = (reason: string): Parsed => ({ kind: 'answer', body: { status: 'ignored', reason } });

export function verifyPlatformA(credentials: Record<string, string>, headers: Record<string, string>, raw: Buffer, nowMs: number): void {
  const ts = headers['x-platforma-request-timestamp'];
  const sig = headers['x-platforma-signature'];
  if (!ts || !/^\d{1,12}$/.test(ts)) throw invalidSignature('missing or invalid X-PlatformA-Request-Timestamp');
  if (Math.abs(nowMs / 1000 - Number(ts)) > PLATFORM_A_MAX_SKEW_SECONDS) throw invalidSignature('request timestamp is more than 5 minutes away from now');
  if (!sig) throw invalidSignature('missing X-PlatformA-Signature');
  if (!safeEqual(sig, platformASignature(credentials.signing_secret ?? '', ts, raw))) throw invalidSignature('invalid signature');
}

export function parsePlatformA(raw: Buffer): Parsed {
  const body = parseJson(raw);
  if (body.type === 'url_verification') {
    const challenge = str(body.challenge);
    if (!challenge) throw badRequest('challenge is required');
    return { kind: 'answer', body: { challenge } };
  }
  if (body.type !== 'event_callback') return ignored(`payload type ${JSON.stringify(body.type ?? null)}`);
  const ev = body.event;
  if (!ev || typeof ev !== 'object' || Array.isArray(ev)) throw badRequest('event must be a JSON object');
  const e = ev as Record<string, unknown>;
  if (e.type !== 'message' && e.type !== 'app_mention') return ignored(`event type ${JSON.stringify(e.type ?? null)}`);
  if (e.bot_id || e.subtype === 'bot_message') return ignored('bot message');
  const text = str(e.text);
  if (!text) return ignored('no text');
  const ts = str(e.ts) ?? '';
  return {
    kind: 'message',
    eventId: str(body.event_id) ?? `body-${bodyHash(raw)}`,
    threadId: str(e.thread_ts) ?? ts,
    sender: str(e.user) ?? '',
    text,
    eventType: e.type as string,
    conversation: str(e.channel),
  };
}

export function verifyPlatformB(credentials: Record<string, string>, headers: Record<string, string>, raw: Buffer): void {
  const sig = headers['x-platformb-signature'];
  if (!sig) throw invalidSignature('missing X-PlatformB-Signature');
  if (!safeEqual(sig, platformBSignature(credentials.channel_secret ?? '', raw))) throw invalidSignature('invalid signature');
}

export function parsePlatformB(raw: Buffer): Parsed {
  const body = parseJson(raw);
  const events = Array.isArray(body.events) ? (body.events as unknown[]) : [];
  for (const ev of events) {
    if (!ev || typeof ev !== 'object') continue;
    const e = ev as Record<string, unknown>;
    const m = e.message as Record<string, unknown> | undefined;
    if (e.type !== 'message' || !m || m.type !== 'text' || !str(m.text)) continue;
    const src = (e.source ?? {}) as Record<string, unknown>;
    const conversation = str(src.groupId) ?? str(src.roomId) ?? str(src.userId) ?? '';
    return {
      kind: 'message',
      eventId: str(e.webhookEventId) ?? str(m.id) ?? `body-${bodyHash(raw)}`,
      threadId: conversation,
      sender: str(src.userId) ?? '',
      text: m.text as string,
      eventType: 'message',
      replyToken: str(e.replyToken),
      conversation,
    };
  }
  return ignored('no text message');
}
