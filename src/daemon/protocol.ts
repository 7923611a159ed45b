/**
 * The daemon protocol (GET /v1/ws/messages): what is offered to daemons, the frames exchanged
 * with them, and the names routing uses. Frames are JSON envelopes `{type, message_id, payload}`.
 * - Server to daemon: `connected` on open; `message` (an offered message, routing fields kept
 *   server-side); `claim_ack {granted}`; `system` (e.g. a reply refused).
 * - Daemon to server: `claim`, `progress` (extends the lease), `reply {text, format, channel?,
 *   thread_id?}`, `disconnect`. Invalid JSON and unknown types are ignored.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { ClaimMeta } from './claims.js';

/** What is offered to daemons (the `message` payload, with routing fields kept server-side). */
export interface DaemonMessage {
  message_id: string;
  channel: string;
  thread_id: string;
  sender: string;
  text: string;
  agent_name?: string;
  timestamp: string;
  channel_id?: string;
  channel_type?: string;
  reply_token?: string;
  /** The platform's conversation (channel, group or user id) a reply is posted to. */
  conversation?: string;
  workflow_id?: string;
  workflow_run_id?: string;
  /** When it was first dispatched (ms), carried to every gateway offering it. */
  dispatched_at?: number;
}

export interface Owner {
  tenantId: string | null;
  userId: string | null;
}

/** A daemon's `reply`, with the claim it ends (where it goes). */
export interface DaemonReply {
  message_id: string;
  claim: ClaimMeta;
  owner: Owner;
  channel: string;
  thread_id: string;
  text: string;
  format: 'text' | 'markdown';
}

/** One WebSocket as the hub sees it. */
export interface DaemonSocket {
  readonly id: string;
  readonly owner: Owner;
  /** Sends one JSON frame; false when the socket is backed up (the caller may drop it). */
  send(frame: unknown): boolean;
  close(code: number, reason: string): void;
  /** Bytes accepted by `send` and not yet written to the network. */
  buffered?(): number;
}

/** A frame from a daemon, as far as it could be read (fields of the wrong type are absent). */
export interface ClientFrame {
  type: unknown;
  /** '' when absent or not a string. */
  message_id: string;
  payload: unknown;
}

export const newConnId = () => randomUUID();

/** The owner's routing token: a hash of tenant and user (a subject token, no client text in it). */
export const ownerToken = (o: Owner) =>
  createHash('sha256')
    .update(`${o.tenantId ?? ''}|${o.userId ?? ''}`)
    .digest('hex')
    .slice(0, 32);

/** The affinity key of one owner's thread. */
export const threadKey = (o: Owner, threadId: string) => `${ownerToken(o)}.${createHash('sha256').update(threadId).digest('hex').slice(0, 32)}`;

export const connectedFrame = () => ({ type: 'connected', payload: {} });

export const messageFrame = (m: DaemonMessage) => ({
  type: 'message',
  message_id: m.message_id,
  payload: { channel: m.channel, thread_id: m.thread_id, sender: m.sender, text: m.text, agent_name: m.agent_name ?? '', timestamp: m.timestamp },
});

export const claimAckFrame = (id: string, granted: boolean) => ({ type: 'claim_ack', message_id: id, payload: { granted } });

export const notHolderFrame = (id: string) => ({
  type: 'system',
  message_id: id,
  payload: { text: 'reply not delivered: this connection does not hold the claim (not granted, expired, or already replied)' },
});

export const replyFailedFrame = (id: string) => ({
  type: 'system',
  message_id: id,
  payload: { text: 'reply not delivered: the service could not store it; send it again while the claim is held' },
});

/** A daemon's frame; undefined (ignored) when it is not a JSON object. */
export function parseFrame(raw: string): ClientFrame | undefined {
  let f: { type?: unknown; message_id?: unknown; payload?: unknown };
  try {
    f = JSON.parse(raw) as typeof f;
  } catch {
    return undefined;
  }
  if (!f || typeof f !== 'object') return undefined;
  return { type: f.type, message_id: typeof f.message_id === 'string' ? f.message_id : '', payload: f.payload };
}

/** The reply a `reply` frame stands for, its missing fields taken from the claim. */
export function replyOf(id: string, claim: ClaimMeta, owner: Owner, payload: unknown): DaemonReply {
  const p = (payload && typeof payload === 'object' ? payload : {}) as Record<string, unknown>;
  return {
    message_id: id,
    claim,
    owner,
    channel: typeof p.channel === 'string' ? p.channel : (claim.channel_type ?? ''),
    thread_id: typeof p.thread_id === 'string' && p.thread_id ? p.thread_id : (claim.thread_id ?? ''),
    text: typeof p.text === 'string' ? p.text : '',
    format: p.format === 'markdown' ? 'markdown' : 'text',
  };
}

const dec = new TextDecoder();

/** A dispatched message off the bus; undefined (ignored) when it is not one. */
export function parseMessage(data: Uint8Array): DaemonMessage | undefined {
  try {
    const m = JSON.parse(dec.decode(data)) as DaemonMessage;
    return m && typeof m === 'object' && typeof m.message_id === 'string' ? m : undefined;
  } catch {
    return undefined;
  }
}
