/** Metrics of the fleet's coordination: daemon claims granted and schedule runs fired. */
import { counter } from './registry.js';

const claims = counter('taskorch_daemon_claims_granted_total', 'Daemon claims on channel messages granted by this gateway (one per message).');
const scheduleRuns = counter(
  'taskorch_schedule_runs_total',
  'Schedule runs claimed by this scheduler, by result (submitted: its task was accepted; failed: the submission was refused).',
  ['result'],
);

export function countClaimGranted(): void {
  claims.inc();
}

export function countScheduleRun(submitted: boolean): void {
  scheduleRuns.inc({ result: submitted ? 'submitted' : 'failed' });
}
