/** PipelinedPublisher against a real nats-server: stored in order, de-duplicated, errors surfaced. */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
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
  pub = new PipelinedPublisher(nc, 1000);
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
    await expect(pub.publish('nostream.x', enc('z'), 'n-1')).rejects.toThrow(/no responders|not received/);
  });
});
