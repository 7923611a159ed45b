/**
 * A reply whose claim reads as absent is refused only after the claim was read again: a
 * leader elected a moment ago may not have applied a grant its predecessor acknowledged. A
 * reply whose storing fails (a NATS request timing out, a stream without a leader) is tried
 * again, for about 10 s by default.
 */
import { describe, expect, it } from 'vitest';
import { createLogger } from '../kernel/index.js';
import type { ClaimBoard, ClaimMeta } from './claims.js';
import type { PendingStore } from './pending.js';
import type { DaemonReply, DaemonSocket } from './protocol.js';
import { REPLY_RETRY_MS, Replies } from './replies.js';
import type { WorkflowSignals } from '../runtime/index.js';

const meta: ClaimMeta = { conn_id: 'conn-1', thread_id: 't1', channel_type: 'platform_a', timestamp: new Date().toISOString() };

type Read = { meta: ClaimMeta; revision: number } | undefined | Error;

function setup(reads: Read[]) {
  const got: string[] = [];
  const delivered: DaemonReply[] = [];
  const frames: unknown[] = [];
  let n = 0;
  const board = {
    get: async (id: string) => {
      got.push(id);
      const r = reads[Math.min(n++, reads.length - 1)];
      if (r instanceof Error) throw r;
      return r;
    },
    end: async () => true,
  } as unknown as ClaimBoard;
  const pending = { delete: async () => {} } as unknown as PendingStore;
  // Two short waits: three tries in all, quickly.
  const replies = new Replies(board, pending, {} as WorkflowSignals, async (r) => void delivered.push(r), createLogger({ level: 'silent' }), [5, 5]);
  const sock: DaemonSocket = { id: 'conn-1', owner: { tenantId: 't', userId: 'u' }, send: (f) => (frames.push(f), true), close: () => {} };
  return { replies, sock, got, delivered, frames };
}

describe('Replies', () => {
  it("accepts the holder's reply at the first read, reading once", async () => {
    const s = setup([{ meta, revision: 1 }]);
    expect(await s.replies.reply(s.sock, 'm1', { text: 'hi' })).toBe(true);
    expect(s.got).toEqual(['m1']);
    expect(s.delivered.map((r) => r.text)).toEqual(['hi']);
    expect(s.frames).toEqual([]);
  });

  it('accepts the reply when the claim appears on a later read (a new leader catching up)', async () => {
    const s = setup([undefined, { meta, revision: 1 }]);
    expect(await s.replies.reply(s.sock, 'm1', { text: 'hi' })).toBe(true);
    expect(s.got).toHaveLength(2);
    expect(s.delivered).toHaveLength(1);
    expect(s.frames).toEqual([]);
  });

  it('refuses a connection that does not hold the claim, after reading it again', async () => {
    const s = setup([{ meta: { ...meta, conn_id: 'conn-2' }, revision: 1 }]);
    expect(await s.replies.reply(s.sock, 'm1', { text: 'hi' })).toBe(false);
    expect(s.got).toHaveLength(3);
    expect(s.delivered).toEqual([]);
    expect(s.frames).toEqual([expect.objectContaining({ type: 'system', message_id: 'm1' })]);
  });

  it('tries a reply again when storing it fails, and accepts it', async () => {
    const s = setup([new Error('timeout'), { meta, revision: 1 }]);
    expect(await s.replies.reply(s.sock, 'm1', { text: 'hi' })).toBe(true);
    expect(s.got).toHaveLength(2);
    expect(s.delivered).toHaveLength(1);
    expect(s.frames).toEqual([]);
  });

  it('tells the daemon when every attempt failed', async () => {
    const s = setup([new Error('timeout')]);
    await expect(s.replies.reply(s.sock, 'm1', { text: 'hi' })).rejects.toThrow('timeout');
    expect(s.got).toHaveLength(3);
    expect(s.delivered).toEqual([]);
    expect(s.frames).toEqual([expect.objectContaining({ type: 'system', message_id: 'm1', payload: { text: expect.stringMatching(/send it again/) } })]);
  });

  it('keeps trying for longer than an R3 stream takes to elect a new leader (about 6 s in the drill)', () => {
    expect(REPLY_RETRY_MS.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(8000);
  });
});
