/**
 * Task submissions at a steady rate (simple mode, the offline model), spread over the
 * gateways. Each submission carries an Idempotency-Key, so that a retry after a cut
 * connection or a 503 (possibly on the other gateway) cannot make a second task: the task id
 * of the acknowledged 200 is recorded, and at the end every acknowledged task is read back
 * until it is terminal. Submission latency (the answering attempt) is kept per minute.
 */
import { randomUUID } from 'node:crypto';
import pLimit from 'p-limit';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Answer, Gateways } from './http.js';

const TERMINAL = new Set(['TASK_STATUS_COMPLETED', 'TASK_STATUS_FAILED', 'TASK_STATUS_CANCELLED', 'TASK_STATUS_TIMEOUT']);

export interface TaskVerdict {
  acknowledged: number;
  completed: number;
  /** Terminal but not COMPLETED: id, status, error. */
  failed: { id: string; status: string; error: string }[];
  /** Not terminal when the verification deadline passed. */
  unfinished: string[];
  /** Submissions given up without any 200 (never acknowledged, so not a loss; shown). */
  abandoned: number;
}

export class Submitter {
  /** Acknowledged task ids, in order of acknowledgement. */
  readonly acked: string[] = [];
  /** Latency (ms) of acknowledged submissions, by minute since the start. */
  readonly latencyByMinute: number[][] = [];
  abandoned = 0;
  private running = false;
  private inflight = new Set<Promise<unknown>>();
  private t0 = 0;
  private n = 0;

  constructor(
    private readonly gw: Gateways,
    private readonly headers: Record<string, string>,
    private readonly perSecond: number,
    /** Called with each acknowledged task id (the stream followers pick some). */
    private readonly onAck: (taskId: string) => void,
  ) {}

  start(): void {
    this.running = true;
    this.t0 = Date.now();
    void this.loop();
  }

  private async loop(): Promise<void> {
    const period = 1000 / this.perSecond;
    let due = Date.now();
    while (this.running) {
      const p = this.submitOne().finally(() => this.inflight.delete(p));
      this.inflight.add(p);
      due += period;
      await sleep(Math.max(0, due - Date.now()));
    }
  }

  /** One task, retried with the same key until acknowledged or its deadline. */
  async submitOne(only?: string, deadlineMs = 60_000): Promise<string | undefined> {
    const i = this.n++;
    const key = randomUUID();
    let a: Answer | undefined;
    // 409: a request with this key is still in progress (e.g. cut off on a killed gateway): retried a few times.
    for (let k = 0; k < 4 && (k === 0 || a?.status === 409); k++) {
      if (k) await sleep(1000);
      a = await this.gw.request('/api/v1/tasks', {
        method: 'POST',
        headers: { ...this.headers, 'Idempotency-Key': key },
        body: { query: `drill task ${i}: say something short`, mode: 'simple' },
        deadlineMs,
        only,
        what: only ? 'probe' : 'submit',
      });
    }
    if (a?.status !== 200 || typeof a.body?.task_id !== 'string') {
      if (a) this.gw.errors.add(`HTTP ${a.status}`, `submit: ${JSON.stringify(a.body).slice(0, 160)}`);
      if (!only) this.abandoned++;
      return undefined;
    }
    if (only) return a.body.task_id;
    const minute = Math.floor((Date.now() - this.t0) / 60_000);
    (this.latencyByMinute[minute] ??= []).push(a.ms);
    this.acked.push(a.body.task_id);
    this.onAck(a.body.task_id);
    return a.body.task_id;
  }

  /** Stops submitting and waits for the submissions in flight. */
  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.inflight);
  }

  /** A task's status through any gateway (undefined when no gateway answered). */
  async status(id: string, only?: string): Promise<{ status: string; error: string } | undefined> {
    const a = await this.gw.request(`/api/v1/tasks/${id}`, { headers: this.headers, deadlineMs: 30_000, only, what: 'status' });
    return a?.status === 200 ? { status: String(a.body.status), error: String(a.body.error ?? '') } : undefined;
  }

  /** Reads every acknowledged task until it is terminal or `deadlineMs` passes. */
  async verify(deadlineMs: number): Promise<TaskVerdict> {
    const end = Date.now() + deadlineMs;
    const final = new Map<string, { status: string; error: string }>();
    const limit = pLimit(4);
    let open = [...this.acked];
    while (open.length && Date.now() < end) {
      await Promise.all(
        open.map((id) =>
          limit(async () => {
            const s = await this.status(id);
            if (s && TERMINAL.has(s.status)) final.set(id, s);
          }),
        ),
      );
      open = open.filter((id) => !final.has(id));
      if (open.length) await sleep(1000);
    }
    const failed = [...final].filter(([, s]) => s.status !== 'TASK_STATUS_COMPLETED').map(([id, s]) => ({ id, ...s }));
    return {
      acknowledged: this.acked.length,
      completed: [...final.values()].filter((s) => s.status === 'TASK_STATUS_COMPLETED').length,
      failed,
      unfinished: open,
      abandoned: this.abandoned,
    };
  }
}
