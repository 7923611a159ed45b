/**
 * Reconciler: a task row is committed before its start message is published, so a crash
 * between the two leaves a QUEUED row whose start message never reached the work queue.
 * Periodically, QUEUED rows older than `graceMs` whose start message is not in the work queue
 * of their priority (TASKS for normal; a work-queue message stays there until acked, and is acked only after the task
 * ends) get their start message published again. Safe with several orchestrators: the
 * publish carries the task id as de-duplication id, and a re-activated actor replays its
 * journal instead of repeating steps.
 */
import { headers } from '@nats-io/transport-node';
import { subjects, taskStream, type Bus } from '../bus/index.js';
import type { Logger } from '../kernel/index.js';
import type { TaskStore } from '../tasks/index.js';
import { startHeaders, startMessage } from '../tasks/index.js';

export class Reconciler {
  private timer?: NodeJS.Timeout;
  private running?: Promise<string[]>;

  constructor(
    private readonly bus: Bus,
    private readonly store: TaskStore,
    private readonly log: Logger,
    private readonly opts: { intervalMs: number; graceMs: number } = { intervalMs: 15_000, graceMs: 10_000 },
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.runOnce(), this.opts.intervalMs);
    this.timer.unref();
    void this.runOnce();
  }

  /** One pass; returns the ids of the tasks whose start message it re-published. */
  runOnce(): Promise<string[]> {
    this.running ??= this.pass().finally(() => (this.running = undefined));
    return this.running;
  }

  private async pass(): Promise<string[]> {
    const republished: string[] = [];
    try {
      const rows = await this.store.staleQueued(new Date(Date.now() - this.opts.graceMs));
      for (const r of rows) {
        const start = startMessage(r);
        const level = start.priority ?? 'normal';
        const inQueue = await this.bus.jsm.streams.getMessage(taskStream(level), { last_by_subj: subjects.taskStart(r.id, level) }).catch(() => null);
        if (inQueue) continue;
        const hdrs = headers();
        for (const [k, v] of Object.entries(startHeaders(r) ?? {})) hdrs.set(k, v);
        await this.bus.js.publish(subjects.taskStart(r.id, level), new TextEncoder().encode(JSON.stringify(start)), { msgID: r.id, headers: hdrs });
        republished.push(r.id);
        this.log.warn({ workflow_id: r.id }, 'queued task had no start message; re-published it');
      }
    } catch (err) {
      this.log.warn({ err }, 'reconciler pass failed');
    }
    return republished;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
