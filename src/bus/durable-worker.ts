/**
 * A durable pull consumer shared by every process that runs it (created if missing, its
 * settings updated when they changed), handing each message to `handle` with at most
 * `concurrency` in progress per process and no more fetched ahead than that: a message waiting
 * in a local buffer would spend its ack wait there, and be redelivered to another process
 * while this one still holds it. Each message's ack timer restarts when `handle` takes it.
 * `handle` acks, naks or terms the message itself; anything it throws is logged and the
 * message is left to redeliver.
 */
import { AckPolicy, DeliverPolicy, type JetStreamClient, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import pLimit from 'p-limit';
import type { Logger } from '../kernel/index.js';

/** Creates a durable consumer, or updates the settings of an existing one that differ. */
export async function upsertConsumer(jsm: JetStreamManager, stream: string, cfg: { durable_name: string } & Record<string, unknown>): Promise<void> {
  try {
    const info = await jsm.consumers.info(stream, cfg.durable_name);
    const cur = info.config as unknown as Record<string, unknown>;
    const { deliver_policy: _d, durable_name: _n, ack_policy: _a, ...mutable } = cfg;
    const changed = Object.entries(mutable).some(([k, v]) => JSON.stringify(cur[k]) !== JSON.stringify(v));
    if (changed) await jsm.consumers.update(stream, cfg.durable_name, mutable);
  } catch (err) {
    if ((err as Error).name === 'ConsumerNotFoundError' || /consumer not found/i.test((err as Error).message)) {
      await jsm.consumers.add(stream, cfg);
    } else throw err;
  }
}

export interface DurableWorkerOptions {
  stream: string;
  durable: string;
  ackWaitMs: number;
  maxDeliver?: number;
  concurrency: number;
  handle: (m: JsMsg) => Promise<void>;
  log: Logger;
}

export interface DurableWorker {
  /** Stops taking messages and waits for those in progress. */
  stop(): Promise<void>;
}

export async function startDurableWorker(bus: { js: JetStreamClient; jsm: JetStreamManager }, o: DurableWorkerOptions): Promise<DurableWorker> {
  await upsertConsumer(bus.jsm, o.stream, {
    durable_name: o.durable,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: nanos(o.ackWaitMs),
    max_deliver: o.maxDeliver ?? -1,
  });
  const consumer = await bus.js.consumers.get(o.stream, o.durable);
  const messages = await consumer.consume({ max_messages: o.concurrency });
  const limit = pLimit(o.concurrency);
  const inFlight = new Set<Promise<void>>();
  const loop = (async () => {
    for await (const m of messages) {
      // The next message is taken only once this one holds a slot: none waits in a local queue.
      await new Promise<void>((started) => {
        const p = limit(async () => {
          started();
          m.working(); // its ack wait starts now, not when it was fetched
          try {
            await o.handle(m);
          } catch (err) {
            o.log.warn({ err, stream: o.stream, consumer: o.durable }, 'message handler failed; redelivered after the ack wait');
          }
        });
        inFlight.add(p);
        void p.finally(() => inFlight.delete(p));
      });
    }
  })();
  return {
    async stop() {
      await messages.close();
      await loop.catch(() => {});
      await Promise.allSettled([...inFlight]);
    },
  };
}
