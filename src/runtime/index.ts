/**
 * The actor runtime: the worker that activates workflow actors from the work queue (leases,
 * journal, control state, durable retries), the archiver of events into PostgreSQL, the
 * reconciler of queued tasks without a start message, and the timeline read from journal
 * and archive, workflow signals (daemon replies, signals.ts), and the durable wait for people (wait.ts:
 * passivate, decision, wake; wait-timers.ts: its timers in PostgreSQL; external-events.ts: events
 * of a passivated workflow, e.g. a plan review's feedback, in its seq). It runs whatever
 * WorkflowRunner it is given and knows nothing of LLMs.
 */
export { Worker, type WorkerOptions, type WorkflowRunner } from './worker.js';
export { BusDesync, HandBack, WorkflowContext, type JournalEntry } from './context.js';
export { Archiver } from './archiver.js';
export { Reconciler } from './reconciler.js';
export {
  buildTimeline,
  loadTimeline,
  readJournal,
  stepOfAgent,
  type JournalMark,
  type StepStatus,
  type Timeline,
  type TimelineEvent,
  type TimelineInput,
  type TimelineStep,
} from './timeline.js';
export { WorkflowSignals } from './signals.js';
export { Passivate, waitFor, type WaitDecision, type WaitSpec } from './wait.js';
export { WaitTimers, type WaitTimerOptions } from './wait-timers.js';
export { WorkflowBusy, appendExternalEvents, type ExternalEvent } from './external-events.js';
