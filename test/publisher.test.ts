/** PipelinedPublisher against a real nats-server: stored in order, de-duplicated, errors surfaced, nothing lost through a restart. */
import { connect, nanos, type NatsConnection } from '@nats-io/transport-node';
import { StorageType, jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PipelinedPublisher } from '../src/bus/publisher.js';
import { startTestNats } from './harness/nats.js';

let stop: () => Promise<void>;
let nc: NatsConnection;
let jsm: JetStreamManager;
let pub: PipelinedPublisher;

beforeAll(async () => {
  const srv = await startTestNats();
  stop = srv.stop;
  nc = await connect({ servers: srv.url });
  jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: 'P', subjects: ['p.>'] });
  pub = new PipelinedPublisher(nc, { deadlineMs: 1000 });
});
afterAll(async () => {
  pub?.close();
  await nc?.close();
  await stop?.();
});

const enc = (s: string) => new TextEncoder().encode(s);

describe('PipelinedPublisher', () => {
  it('resolves each publish with its stream sequence, stored in call order', async () => {
    const acks = await Promise.all(Array.from({ length: 500 }, (_, i) => pub.publish('p.a', enc(String(i)), `a-${i}`)));
    expect(acks.map((a) => a.seq)).toEqual(acks.map((_, i) => i + 1));
    expect(acks.every((a) => a.stream === 'P' && !a.duplicate)).toBe(true);
    const last = await jsm.streams.getMessage('P', { last_by_subj: 'p.a' });
    expect(new TextDecoder().decode(last!.data)).toBe('499');
  });

  it('reports a repeated message id as a duplicate and stores it once', async () => {
    const a = await pub.publish('p.b', enc('x'), 'dup-1');
    const b = await pub.publish('p.b', enc('y'), 'dup-1');
    expect(b.duplicate).toBe(true);
    expect(b.seq).toBe(a.seq);
    expect((await jsm.streams.info('P', { subjects_filter: 'p.b' })).state.subjects?.['p.b']).toBe(1);
  });

  it('rejects when no stream takes the subject', async () => {
    await expect(pub.publish('nostream.x', enc('z'), 'n-1')).rejects.toThrow(/before its deadline/);
  });
});

describe('PipelinedPublisher through a server restart', () => {
  it('stores every message of a burst once, in order per subject, across kill -9 and restart', async () => {
    const srv = await startTestNats();
    const c = await connect({ servers: srv.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
    try {
      const m = await jetstreamManager(c);
      await m.streams.add({ name: 'R', subjects: ['r.>'], storage: StorageType.File, duplicate_window: nanos(120_000) });
      const p = new PipelinedPublisher(c, { ackTimeoutMs: 500, deadlineMs: 30_000 });
      const subjects = 20;
      const perSubject = 150;
      const acks: Promise<unknown>[] = [];
      let restarted: Promise<void> | undefined;
      for (let i = 0; i < perSubject; i++) {
        for (let s = 0; s < subjects; s++) acks.push(p.publish(`r.${s}`, enc(String(i)), `r-${s}-${i}`));
        // Publishing goes on while the server is down and while it comes back.
        if (i === 40) restarted = srv.killAndRestart(1500);
        await new Promise((r) => setTimeout(r, 10));
      }
      await restarted;
      const results = await Promise.allSettled(acks);
      expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
      for (let s = 0; s < subjects; s++) {
        const info = await m.streams.info('R', { subjects_filter: `r.${s}` });
        expect(info.state.subjects?.[`r.${s}`], `subject r.${s}`).toBe(perSubject);
      }
      // Every message of a subject, once each, in publish order.
      const got: number[] = [];
      const js = jetstream(c);
      const oc = await js.consumers.get('R', { filter_subjects: 'r.7' });
      const it = await oc.fetch({ max_messages: perSubject, expires: 5000 });
      for await (const msg of it) {
        got.push(Number(new TextDecoder().decode(msg.data)));
        if (got.length === perSubject) break;
      }
      expect(got).toEqual(Array.from({ length: perSubject }, (_, i) => i));
      p.close();
    } finally {
      await c.close();
      await srv.stop();
    }
  }, 60_000);

  it('gives up at the deadline while the server stays down, and rejects later messages of that subject with it', async () => {
    const srv = await startTestNats();
    const c = await connect({ servers: srv.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
    try {
      const m = await jetstreamManager(c);
      await m.streams.add({ name: 'D', subjects: ['d.>'] });
      const p = new PipelinedPublisher(c, { ackTimeoutMs: 200, deadlineMs: 60_000 });
      process.kill(srv.pid, 'SIGKILL');
      await srv.exited;
      const first = p.publish('d.a', enc('1'), { msgId: 'd1', deadlineMs: 500 });
      const second = p.publish('d.a', enc('2'), { msgId: 'd2', deadlineMs: 60_000 });
      await expect(first).rejects.toThrow(/deadline/);
      await expect(second).rejects.toThrow(/deadline/);
      expect(p.connected).toBe(false);
      p.close();
    } finally {
      await c.close().catch(() => {});
      await srv.stop();
    }
  }, 30_000);
});
