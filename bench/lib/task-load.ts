/**
 * Closed-loop task load for the scaling benchmark: keeps `outstanding` tasks submitted and not
 * yet finished, spread round-robin over the gateways, and counts completions. Finished tasks are
 * read from PostgreSQL (the source of truth) a few times a second for the ids still open, so the
 * load costs the service one submission per task and nothing else: no SSE stream, no polling of
 * the gateways.
 */
import type postgres from 'postgres';
import { sleep } from './proc.js';

export interface LoadWindow {
  completed: number;
  failed: number;
  seconds: number;
  /** Submissions refused (status or network error) during the window, by reason. */
  errors: Record<string, number>;
}

export class TaskLoad {
  private readonly open = new Set<string>();
  private completed = 0;
  private failed = 0;
  private errors: Record<string, number> = {};
  private running = false;
  private loops: Promise<void>[] = [];
  private next = 0;
  private seq = 0;

  constructor(
    private readonly sql: postgres.Sql,
    private readonly gateways: readonly string[],
    private readonly body: (i: number) => Record<string, unknown>,
    private readonly headers: Record<string, string> = {},
  ) {}

  /** Starts keeping `outstanding` tasks in flight. */
  start(outstanding: number): void {
    this.running = true;
    this.loops = [this.fill(outstanding), this.reap()];
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  /** Counts over `ms` after a warm-up of `warmMs`. */
  async window(warmMs: number, ms: number): Promise<LoadWindow> {
    await sleep(warmMs);
    const c0 = this.completed;
    const f0 = this.failed;
    this.errors = {};
    const t0 = performance.now();
    await sleep(ms);
    return { completed: this.completed - c0, failed: this.failed - f0, seconds: (performance.now() - t0) / 1000, errors: { ...this.errors } };
  }

  private async fill(outstanding: number): Promise<void> {
    const inflight = new Set<Promise<void>>();
    while (this.running) {
      if (this.open.size + inflight.size >= outstanding) {
        await sleep(5);
        continue;
      }
      const p = this.submit().finally(() => inflight.delete(p));
      inflight.add(p);
    }
    await Promise.all(inflight);
  }

  private async submit(): Promise<void> {
    const base = this.gateways[this.next++ % this.gateways.length];
    try {
      const r = await fetch(`${base}/api/v1/tasks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...this.headers },
        body: JSON.stringify(this.body(this.seq++)),
        signal: AbortSignal.timeout(30_000),
      });
      const b = (await r.json().catch(() => ({}))) as { task_id?: string };
      if (r.status === 200 && b.task_id) this.open.add(b.task_id);
      else this.count(`HTTP ${r.status}`);
    } catch (err) {
      this.count((err as Error).name === 'TimeoutError' ? 'no answer in 30 s' : (err as Error).message);
      await sleep(50);
    }
  }

  private count(reason: string): void {
    this.errors[reason] = (this.errors[reason] ?? 0) + 1;
  }

  private async reap(): Promise<void> {
    while (this.running) {
      await sleep(200);
      if (!this.open.size) continue;
      const ids = [...this.open];
      const rows = await this.sql<{ id: string; status: string }[]>`
        SELECT id, status FROM tasks WHERE id = ANY(${ids}::uuid[])
          AND status IN ('TASK_STATUS_COMPLETED', 'TASK_STATUS_FAILED', 'TASK_STATUS_CANCELLED', 'TASK_STATUS_TIMEOUT')`;
      for (const r of rows) {
        this.open.delete(r.id);
        if (r.status === 'TASK_STATUS_COMPLETED') this.completed++;
        else this.failed++;
      }
    }
  }
}
