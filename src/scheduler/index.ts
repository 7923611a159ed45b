/**
 * Scheduled tasks: cron rules (cron.ts), schedules and their runs in Postgres (store.ts), and
 * the scheduler role that fires due schedules as tasks (scheduler.ts).
 *
 * Guarantees: one leader fires runs at a time (a KV lease); a due time is claimed at most
 * once (a unique run row, whatever the lease says); missed due times after an outage give
 * one catch-up run, not one per missed time; a run's outcome is recorded once.
 */
export { LEADER_KEY, LEASE_MS, Scheduler, SCHEDULER_BUCKET, startScheduler, type Claim, type SchedulerDeps } from './scheduler.js';
export { checkInterval, nextRun, prevRun, shortestGapMinutes, validateCron, validateTimezone } from './cron.js';
export {
  ScheduleLimitError,
  ScheduleStore,
  type NewSchedule,
  type Owner,
  type RunRow,
  type SchedulePatch,
  type ScheduleRow,
  type ScheduleStatus,
} from './store.js';
