/**
 * Metrics of the gateway's event streams: open SSE and WebSocket connections, events written
 * to them, and clients dropped for reading too slowly (any streaming client of the feeds:
 * SSE, WebSocket, OpenAI-compatible streams).
 */
import { counter, gauge } from './registry.js';

export type StreamTransport = 'sse' | 'ws';

const open = gauge('taskorch_stream_connections', 'Open event-stream connections of this process, by transport (sse, ws).', ['transport']);
const delivered = counter('taskorch_events_delivered_total', 'Workflow events written to SSE and WebSocket clients, by transport.', ['transport']);
const slowDropped = counter(
  'taskorch_stream_slow_clients_dropped_total',
  'Streaming clients disconnected for falling too far behind (the per-connection buffer limit or the ring).',
);

export function streamOpened(transport: StreamTransport): void {
  open.inc({ transport });
}

export function streamClosed(transport: StreamTransport): void {
  open.dec({ transport });
}

export function countEventsDelivered(transport: StreamTransport, n: number): void {
  if (n > 0) delivered.inc({ transport }, n);
}

export function countSlowClientDropped(): void {
  slowDropped.inc();
}
