/**
 * The actor runtime: the worker that activates workflow actors from the work queue (leases,
 * journal, control state, durable retries), the archiver of events into PostgreSQL, the
 * reconciler of queued tasks without a start message, and the timeline read from journal
 * and archive. It runs whatever WorkflowRunner it is given and knows nothing of LLMs.
 */
export * from './worker.js';
export * from './context.js';
export * from './archiver.js';
export * from './reconciler.js';
export * from './timeline.js';
export { WorkflowSignals } from './signals.js';
