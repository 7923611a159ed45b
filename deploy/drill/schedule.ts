/**
 * The every-minute schedule of the drill's load (the cluster runs with
 * SCHEDULE_MIN_INTERVAL_MINS=1): created at the start, its runs read back at the end from the
 * schedule's runs API, and every minute boundary in between judged (scheduleVerdict): one run
 * each, none missed, none fired twice.
 */
import { randomUUID } from 'node:crypto';
import { scheduleVerdict, type ScheduleRun } from './checks.js';
import type { Gateways } from './http.js';

/** A boundary is judged only once its run had this long to be fired (a scheduler's lease changing hands takes up to ~12 s). */
const SETTLE_MS = 30_000;

export type ScheduleTally = ReturnType<typeof scheduleVerdict> & { runs: number };

export class MinuteSchedule {
  private id = '';
  private createdAt = 0;

  constructor(
    private readonly gw: Gateways,
    private readonly headers: Record<string, string>,
  ) {}

  async create(): Promise<void> {
    const a = await this.gw.request('/api/v1/schedules', {
      method: 'POST',
      headers: this.headers,
      body: {
        name: `drill-${randomUUID()}`,
        cron_expression: '* * * * *',
        timezone: 'UTC',
        task_query: 'drill schedule: say something short',
        timeout_seconds: 300,
      },
      what: 'schedule',
    });
    if (!a || a.status >= 300) throw new Error(`creating the drill's schedule: ${a?.status} ${JSON.stringify(a?.body)}`);
    this.id = a.body.schedule_id;
    this.createdAt = Date.now();
  }

  private async runs(): Promise<ScheduleRun[]> {
    const out: ScheduleRun[] = [];
    for (let page = 1; ; page++) {
      const a = await this.gw.request(`/api/v1/schedules/${this.id}/runs?page=${page}&page_size=100`, { headers: this.headers, what: 'schedule runs' });
      if (a?.status !== 200) throw new Error(`reading the schedule's runs: ${a?.status} ${JSON.stringify(a?.body)}`);
      out.push(...(a.body.runs as ScheduleRun[]));
      if (a.body.runs.length < 100) return out;
    }
  }

  /** The runs so far, judged up to the last boundary that had time to fire; then the schedule is deleted. */
  async verdict(): Promise<ScheduleTally> {
    const runs = await this.runs();
    const v = scheduleVerdict(runs, this.createdAt, Date.now() - SETTLE_MS);
    await this.gw.request(`/api/v1/schedules/${this.id}`, { method: 'DELETE', headers: this.headers, what: 'schedule delete' });
    return { ...v, runs: runs.length };
  }
}
