/**
 * The durable timers of waits for people: a wait's `due_at` lives in PostgreSQL (task_waits),
 * so a timer survives the restart of every process. One pass a second (per orchestrator; a
 * decision is written once, so several orchestrators are harmless) decides the due waits as
 * timed out, which wakes their workflows, and wakes again decided waits whose workflow has not
 * read them (a wake lost between a decision and its publish).
 */
import type { Logger } from '../kernel/index.js';
import type { WaitStore } from '../tasks/index.js';

export interface WaitTimerOptions {
  intervalMs: number;
  /** A decided wait unread this long after its last wake is woken again. */
  rewakeAfterMs: number;
}

export class WaitTimers {
  private timer?: NodeJS.Timeout;
  private running?: Promise<{ timedOut: number; rewoken: number }>;

  constructor(
    private readonly waits: WaitStore,
    private readonly log: Logger,
    private readonly opts: WaitTimerOptions = { intervalMs: 1000, rewakeAfterMs: 10_000 },
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.runOnce(), this.opts.intervalMs);
    this.timer.unref();
    void this.runOnce();
  }

  /** One pass: how many waits timed out and how many decided waits were woken again. */
  runOnce(): Promise<{ timedOut: number; rewoken: number }> {
    this.running ??= this.pass().finally(() => (this.running = undefined));
    return this.running;
  }

  private async pass(): Promise<{ timedOut: number; rewoken: number }> {
    let timedOut = 0;
    let rewoken = 0;
    try {
      for (const w of await this.waits.due(new Date())) {
        const d = await this.waits.decide(w.id, { timed_out: true }, { by: 'timeout', timedOut: true });
        if (d.changed) {
          timedOut++;
          this.log.info({ workflow_id: w.task_id, wait: w.wait_key, kind: w.kind }, 'wait for a person timed out');
        }
      }
      const woken = new Set<string>();
      for (const w of await this.waits.unconsumed(new Date(Date.now() - this.opts.rewakeAfterMs))) {
        if (woken.has(w.task_id)) continue;
        woken.add(w.task_id);
        if (await this.waits.wake(w.task_id)) rewoken++;
      }
    } catch (err) {
      this.log.warn({ err }, 'wait timer pass failed');
    }
    return { timedOut, rewoken };
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
