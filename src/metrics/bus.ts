/**
 * What a process connected to the bus reports about it: the depth of the shared durable
 * consumers (read from JetStream consumer info when scraped, cached briefly so that several
 * scrapers, or both gauges of one scrape, cost one round of requests) and its reconnects.
 */
import { CONSUMERS, STREAMS, TASK_PRIORITIES, taskStream, type Bus } from '../bus/index.js';
import { collectProcessMetrics, counter, gauge } from './registry.js';

/**
 * The shared durable consumers and their streams (the task queue of every priority); one not
 * made on this server (priority queues off, no channels) is skipped.
 */
const WATCHED: readonly (readonly [stream: string, consumer: string])[] = [
  ...TASK_PRIORITIES.map((p) => [taskStream(p), CONSUMERS.workers] as const),
  [STREAMS.events, CONSUMERS.archiver],
  [STREAMS.swarmAgents, CONSUMERS.swarmAgents],
  [STREAMS.channelInbox, CONSUMERS.channelRouter],
  [STREAMS.channelOutbox, CONSUMERS.channelSender],
];

/** Long enough for one scrape's gauges to share one read, short next to any scrape interval. */
const CACHE_MS = 2000;

interface Depth {
  stream: string;
  consumer: string;
  pending: number;
  ackPending: number;
}

const sources = new Set<() => Promise<Depth[]>>();
let cached: { at: number; depths: Promise<Depth[]> } | undefined;

function depths(): Promise<Depth[]> {
  if (!cached || Date.now() - cached.at > CACHE_MS) {
    cached = { at: Date.now(), depths: Promise.all([...sources].map((s) => s().catch(() => []))).then((all) => all.flat()) };
  }
  return cached.depths;
}

const labels = ['stream', 'consumer'] as const;

gauge(
  'taskorch_consumer_pending_messages',
  'Messages of the stream not yet delivered to the durable consumer (the queue waiting for a free worker).',
  labels,
  async function () {
    const all = await depths();
    this.reset();
    for (const d of all) this.set({ stream: d.stream, consumer: d.consumer }, d.pending);
  },
);

gauge(
  'taskorch_consumer_ack_pending_messages',
  'Messages delivered to the durable consumer and not yet acknowledged (work in progress).',
  labels,
  async function () {
    const all = await depths();
    this.reset();
    for (const d of all) this.set({ stream: d.stream, consumer: d.consumer }, d.ackPending);
  },
);

const reconnects = counter('taskorch_nats_reconnects_total', 'Times the NATS connection of this process was re-established after a loss.');

/**
 * Reports the process (collectProcessMetrics) and `bus` from now on; the returned function
 * stops reporting `bus` (the app closing it).
 */
export function watchProcess(bus: Bus): () => void {
  collectProcessMetrics();
  const source = async (): Promise<Depth[]> => {
    if (!bus.connected) return [];
    const found = await Promise.all(
      WATCHED.map(([stream, consumer]) =>
        bus.jsm.consumers.info(stream, consumer).then(
          (i): Depth => ({ stream, consumer, pending: i.num_pending, ackPending: i.num_ack_pending }),
          () => undefined,
        ),
      ),
    );
    return found.filter((d) => d !== undefined);
  };
  sources.add(source);
  cached = undefined;
  const offReconnect = bus.onReconnect(() => reconnects.inc());
  return () => {
    sources.delete(source);
    cached = undefined;
    offReconnect();
  };
}
