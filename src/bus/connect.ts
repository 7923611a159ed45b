/**
 * The bus: one NATS connection per process, with the topology ensured (topology.ts), the
 * shared KV buckets opened and the pipelined publisher for events.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { Logger } from '../kernel/index.js';
import { untilSettled } from './settle.js';
import { connectNats } from './nats-transport.js';
import { PipelinedPublisher } from './publisher.js';
import { JournalLog } from './journal.js';
import { ensureTopology, type CoreBuckets, type TopologySettings } from './topology.js';

export interface BusOptions extends TopologySettings {
  url: string;
  name: string;
}

export interface Bus {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  kv: CoreBuckets;
  /** Every workflow's step journal (stream JOURNAL). */
  journal: JournalLog;
  /** Pipelined publisher for hot-path JetStream publishes (events). */
  events: PipelinedPublisher;
  /** False between a lost connection and the reconnect (publishes wait, requests fail). */
  readonly connected: boolean;
  /** Called after every reconnect (e.g. to catch up on what core subscriptions missed). */
  onReconnect(fn: () => void): () => void;
  close(): Promise<void>;
}

export async function connectBus(opts: BusOptions, log: Logger): Promise<Bus> {
  // noAsyncTraces: no stack captured per request (every JetStream publish/ack is one).
  // reconnectTimeWait: a restarted local server is back within a few hundred ms; the
  // reconnect jitter keeps a fleet from arriving at once. pingInterval/maxPingOut: a frozen
  // server (SIGSTOP, a stalled host) keeps its socket open and is noticed only by unanswered
  // pings: the third tick with 2 outstanding leaves it, 4-6 s after it froze (10 s: 20-30 s,
  // longer than a client waits); the cost is one PING/PONG per connection every 2 s.
  // timeout: one connection attempt; the default 20 s was spent on the frozen server again
  // when the reconnect came back round to it (3 s: measured recovery 10 s instead of 30 s).
  const nc = await connectNats({
    servers: opts.url,
    name: opts.name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    pingInterval: 2_000,
    maxPingOut: 2,
    timeout: 3_000,
    noAsyncTraces: true,
  });
  const reconnectHooks = new Set<() => void>();
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect' || s.type === 'reconnect' || s.type === 'error') log.warn({ nats: s.type }, 'nats connection status');
      if (s.type === 'reconnect') {
        for (const fn of reconnectHooks) {
          try {
            fn();
          } catch (err) {
            log.warn({ err }, 'reconnect hook failed');
          }
        }
      }
    }
  })();
  const js = jetstream(nc);
  let jsm: JetStreamManager;
  let kv: CoreBuckets;
  try {
    [jsm, kv] = await untilSettled(log, async () => {
      const m = await jetstreamManager(nc);
      return [m, await ensureTopology(nc, m, opts)] as const;
    });
  } catch (err) {
    await nc.close();
    throw err;
  }
  const events = new PipelinedPublisher(nc);
  return {
    nc,
    js,
    jsm,
    kv,
    journal: new JournalLog(js, jsm),
    events,
    // One view of the connection: the publisher's (it must know, to hold messages back).
    get connected() {
      return events.connected;
    },
    onReconnect(fn) {
      reconnectHooks.add(fn);
      return () => reconnectHooks.delete(fn);
    },
    async close() {
      events.close();
      await nc.drain().catch(() => nc.close());
    },
  };
}
