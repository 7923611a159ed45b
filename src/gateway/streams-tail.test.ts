/**
 * A feed whose live path misses the newest events, with no later event to reveal the gap (as
 * when, in a NATS cluster, an event is published on another server before the feed's new core
 * subscription has reached it, just after the history read ended): the feed's tail check finds
 * the stored events in JetStream and delivers them, STREAM_END included, within seconds.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NatsConnection } from '@nats-io/transport-node';
import { encodeEvent, msgIdOf, streamId, subjects, type Bus, type WorkflowEvent } from '../bus/index.js';
import { createLogger } from '../kernel/index.js';
import { startTestNats, type TestNats } from '../../test/harness/nats.js';
import { connectTestBus } from '../../test/harness/bus.js';
import { StreamHub, type Encoded, type Subscriber } from './streams.js';

let nats: TestNats;
let bus: Bus;
const log = createLogger({ level: 'silent' });

beforeAll(async () => {
  nats = await startTestNats();
  bus = await connectTestBus(
    nats.url,
    'tail-test',
    { ackWaitMs: 15_000, maxDeliver: 10, eventsMaxAgeSeconds: 3600, eventsMaxPerWorkflow: 1000, idempotencyTtlSeconds: 600 },
    log,
  );
}, 30_000);

afterAll(async () => {
  await bus?.close();
  await nats?.stop();
});

/** The bus connection, but core deliveries of the given workflow's events from `dropFrom` on never arrive. */
function lossy(nc: NatsConnection, dropFrom: number): NatsConnection {
  return new Proxy(nc, {
    get(target, prop, receiver) {
      if (prop !== 'subscribe') return Reflect.get(target, prop, receiver);
      return (subject: string, opts: { callback: (err: unknown, msg: { data: Uint8Array }) => void }) =>
        target.subscribe(subject, {
          ...opts,
          callback: (err, msg) => {
            const e = JSON.parse(new TextDecoder().decode(msg.data)) as WorkflowEvent;
            if (e.seq < dropFrom) opts.callback(err, msg);
          },
        });
    },
  });
}

function event(wf: string, seq: number, type: string): WorkflowEvent {
  return {
    workflow_id: wf,
    seq,
    stream_id: streamId(Date.now(), seq),
    type,
    agent_id: 'test',
    message: `event ${seq}`,
    timestamp: new Date().toISOString(),
  } as WorkflowEvent;
}

describe('a feed whose live path missed its last events', () => {
  it('finds them in JetStream and ends the stream', async () => {
    const wf = randomUUID();
    const hub = new StreamHub(lossy(bus.nc, 3), bus.js, bus.jsm, { ringCapacity: 100, maxBufferedBytes: 1 << 20 }, log);
    const seen: number[] = [];
    let ended!: () => void;
    const end = new Promise<void>((r) => (ended = r));
    const sub: Subscriber = {
      cursor: 0,
      backpressured: false,
      closed: false,
      write(events: Encoded[]) {
        seen.push(...events.map((e) => e.seq));
        return true;
      },
      end: () => ended(),
      drop: (reason) => expect.fail(reason),
    };
    try {
      await bus.js.publish(subjects.events(wf), encodeEvent(event(wf, 1, 'WORKFLOW_STARTED')), { msgID: msgIdOf(wf, 1) });
      await hub.attach(wf, sub, 0, () => expect.fail('no gap expected'));
      // Arrive on the live path (2), then are stored but never delivered live (3, 4).
      await bus.js.publish(subjects.events(wf), encodeEvent(event(wf, 2, 'LLM_PARTIAL')), { msgID: msgIdOf(wf, 2) });
      await bus.js.publish(subjects.events(wf), encodeEvent(event(wf, 3, 'WORKFLOW_COMPLETED')), { msgID: msgIdOf(wf, 3) });
      await bus.js.publish(subjects.events(wf), encodeEvent(event(wf, 4, 'STREAM_END')), { msgID: msgIdOf(wf, 4) });
      const t0 = Date.now();
      await Promise.race([end, new Promise((_, rej) => setTimeout(() => rej(new Error(`not ended; seen ${seen.join(',')}`)), 10_000))]);
      expect(seen).toEqual([1, 2, 3, 4]);
      expect(Date.now() - t0).toBeLessThan(8000);
    } finally {
      hub.close();
    }
  }, 20_000);
});
