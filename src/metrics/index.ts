/**
 * Prometheus metrics of the process (prom-client's process-global registry), scraped at
 * GET /metrics on the gateway port and on the health ports. Each count is made where the
 * counted thing is recorded, through the functions below; the names and labels are listed in
 * the README ("Metrics"). Labels are low-cardinality only: never a task, user or tenant id.
 */
export { scrape } from './registry.js';
export { watchProcess } from './bus.js';
export { countEventPublished, countTaskFinished, countTaskSubmitted } from './tasks.js';
export { countEventsDelivered, countSlowClientDropped, streamClosed, streamOpened, type StreamTransport } from './streams.js';
export { countModelCall, countToolCall } from './usage.js';
export { countClaimGranted, countScheduleRun } from './coordination.js';
