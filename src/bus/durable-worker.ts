/**
 * A durable pull consumer shared by every process that runs it (created if missing; the first
 * process's settings stand), handing each message to `handle` with at most `concurrency` in
 * progress per process. `handle` acks, naks or terms the message itself; it must not throw.
 */
import { AckPolicy, DeliverPolicy, type JetStreamClient, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';

export interface DurableWorkerOptions {
  stream: string;
  durable: string;
  ackWaitMs: number;
  maxDeliver?: number;
  concurrency: number;
  handle: (m: JsMsg) => Promise<void>;
}

export interface DurableWorker {
  /** Stops taking messages and waits for those in progress. */
  stop(): Promise<void>;
}

export async function startDurableWorker(bus: { js: JetStreamClient; jsm: JetStreamManager }, o: DurableWorkerOptions): Promise<DurableWorker> {
  await bus.jsm.consumers
    .add(o.stream, {
      durable_name: o.durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: nanos(o.ackWaitMs),
      ...(o.maxDeliver ? { max_deliver: o.maxDeliver } : {}),
    })
    .catch(() => undefined); // exists already (another process created it)
  const consumer = await bus.js.consumers.get(o.stream, o.durable);
  const messages = await consumer.consume({ max_messages: Math.max(2 * o.concurrency, 16) });
  const inFlight = new Set<Promise<void>>();
  const loop = (async () => {
    for await (const m of messages) {
      while (inFlight.size >= o.concurrency) await Promise.race(inFlight);
      const p = o.handle(m).finally(() => inFlight.delete(p));
      inFlight.add(p);
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
