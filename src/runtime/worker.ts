/**
 * Worker: hosts workflow actors. Each task start message on a task work queue (one per
 * priority; task-intake.ts decides which one a free slot takes from) activates one actor; the
 * durable pull consumers shared by all workers give each message to one worker at a time.
 *
 * Delivery: the message stays in progress (in-progress acks at a third of the ack wait) while
 * its actor runs and is acked when the workflow has ended and its terminal state is written.
 * A worker that dies stops sending in-progress acks; JetStream redelivers after the ack wait
 * and another worker rehydrates the actor from its journal. On graceful shutdown actors stop
 * at their next checkpoint and their messages are nak'ed so another worker resumes at once.
 * Failures: terminal errors end the task FAILED; retryable ones are retried in place a few
 * times, then the message is nak'ed with a delay (redelivery up to max_deliver).
 */
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { SpanKind, trace, type Tracer } from '@opentelemetry/api';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { PublishError, kvKeys, subjects, type Bus } from '../bus/index.js';
import { AppError, Code, backoffDelay, toAppError, type Logger } from '../kernel/index.js';
import { readControl, type ControlState, type TaskOutcome, type TaskStart, type TaskStore, type WaitStore } from '../tasks/index.js';
import { contextOfHeaders, globalTracer, inSpan, markFailed } from '../tracing/index.js';
import { BusDesync, HandBack, WorkflowContext } from './context.js';
import { TaskIntake, type TaskDelivery } from './task-intake.js';
import { Passivate } from './wait.js';

/** Runs a workflow's body (workflows/ provides it; the runtime knows nothing of LLMs). */
export type WorkflowRunner = (ctx: WorkflowContext, task: TaskStart) => Promise<TaskOutcome>;

export interface WorkerOptions {
  concurrency: number;
  ackWaitMs: number;
  maxDeliver: number;
  taskTimeoutSeconds: number;
  /** Waits for people (task_waits); without it a workflow that must wait fails. */
  waits?: WaitStore;
  /** The agent id of a task's WORKFLOW_STARTED and WORKFLOW_COMPLETED (a swarm's is swarm-supervisor); default `orchestrator`. */
  producerOf?: (task: TaskStart) => string;
  /** Each activation is a span; default: the API's tracer. */
  tracer?: Tracer;
  /** PRIORITY_QUEUES (default on: the fairness cycle over every level; off: normal first). */
  priorityQueues?: boolean;
}

class TimeoutReached extends Error {
  override name = 'TimeoutReached';
}

class CancelRequested extends Error {
  override name = 'CancelRequested';
}

/** Another worker took over this workflow (our lease expired while we were stalled). */
class LeaseLost extends Error {
  override name = 'LeaseLost';
}

/**
 * The actor's view of its control state: applies pause and cancel commands (read at
 * activation, then pushed on the mailbox subject). Pause takes effect at the next step
 * boundary (WORKFLOW_PAUSING now, WORKFLOW_PAUSED at the checkpoint, WORKFLOW_RESUMED on
 * resume); cancel aborts the running step at once (WORKFLOW_CANCELLING, then
 * WORKFLOW_CANCELLED when the terminal state is written).
 */
class Controller {
  private paused = false;
  private cancelling = false;
  private wake?: () => void;
  private sub?: Subscription;

  constructor(
    private readonly ctx: WorkflowContext,
    private readonly store: TaskStore,
    private readonly taskId: string,
  ) {
    ctx.beforeStep = () => this.gate();
    ctx.signal.addEventListener('abort', () => this.wake?.(), { once: true });
  }

  listen(nc: NatsConnection): void {
    this.sub = nc.subscribe(subjects.workflowActor(this.taskId), {
      callback: (err, msg) => {
        if (err) return;
        try {
          const body = JSON.parse(dec.decode(msg.data)) as { control?: ControlState };
          if (body.control) this.apply(body.control);
        } catch {
          /* not a control message */
        }
      },
    });
  }

  apply(c: ControlState): void {
    if (c.cancel_requested && !this.cancelling) {
      this.cancelling = true;
      this.ctx.emit('WORKFLOW_CANCELLING', 'orchestrator', 'Cancelling workflow', { reason: c.cancel_reason ?? '', requested_by: c.cancelled_by ?? '' });
      this.ctx.abort.abort(new CancelRequested(c.cancel_reason || 'cancelled by request'));
      return;
    }
    if (c.paused && !this.paused) {
      this.paused = true;
      this.ctx.emit('WORKFLOW_PAUSING', 'orchestrator', 'Pausing at the next checkpoint', { reason: c.pause_reason ?? '', requested_by: c.paused_by ?? '' });
    } else if (!c.paused && this.paused) {
      this.paused = false;
      this.wake?.();
    }
  }

  private async gate(): Promise<void> {
    if (!this.paused) return;
    this.ctx.emit('WORKFLOW_PAUSED', 'orchestrator', 'Workflow paused');
    await this.ctx.flush();
    await this.store.setStatus(this.taskId, 'TASK_STATUS_PAUSED', new Date());
    while (this.paused && !this.ctx.signal.aborted) await new Promise<void>((r) => (this.wake = r));
    this.wake = undefined;
    this.ctx.checkpoint(); // cancelled or handed back while paused
    this.ctx.emit('WORKFLOW_RESUMED', 'orchestrator', 'Workflow resumed');
    await this.store.setStatus(this.taskId, 'TASK_STATUS_RUNNING', new Date());
  }

  close(): void {
    this.sub?.unsubscribe();
  }
}

/** The `metadata` object a workflow's error carries for the task's status, if any. */
function metadataOf(err: unknown): Record<string, unknown> {
  const m = (err as { metadata?: unknown } | undefined)?.metadata;
  return m && typeof m === 'object' && !Array.isArray(m) ? (m as Record<string, unknown>) : {};
}

/** Redelivery of a workflow that failed with a retryable error: 2 s, 4 s, ... up to 30 s. */
const REDELIVERY_BACKOFF = { baseMs: 2000, capMs: 30_000, jitter: 'none' } as const;
/** A retryable step is tried again in place after 250 ms, then 500 ms. */
const STEP_RETRY_BACKOFF = { baseMs: 250, capMs: 1000, jitter: 'none' } as const;

const dec = new TextDecoder();
const enc = new TextEncoder();

/** NATS failures that say nothing about the workflow: the connection, a timeout, a server restarting. */
function isTransientBusError(err: unknown): boolean {
  if (err instanceof BusDesync || err instanceof PublishError) return true;
  const e = err as { name?: string; message?: string; status?: number } | undefined;
  if (!e || typeof e !== 'object') return false;
  if (e.name === 'TimeoutError' || e.name === 'RequestError' || e.name === 'ConnectionError' || e.name === 'ClosedConnectionError' || e.name === 'NoResponders')
    return true;
  return e.name === 'JetStreamApiError' && (e.status === 503 || e.status === 408);
}

interface Active {
  msg: TaskDelivery;
  ctx?: WorkflowContext;
  done: Promise<void>;
  /** Revision of this worker's lease on the workflow, while held. */
  leaseRev?: number;
  /** A renewal is under way. */
  renewing?: boolean;
  /** The lease was let go: a renewal still under way must not take it again. */
  released?: boolean;
  /** The actor is passivating (its workflow waits for a person): new deliveries wait for it to be gone. */
  ending?: boolean;
}

export class Worker {
  private readonly active = new Map<string, Active>();
  /** This worker's identity in workflow leases. */
  private readonly owner = `${process.pid}-${randomUUID()}`;
  private stopping = false;
  private intake?: TaskIntake;
  private heartbeat?: NodeJS.Timeout;
  private loop?: Promise<void>;
  private slotWaiters: (() => void)[] = [];

  constructor(
    private readonly bus: Bus,
    private readonly store: TaskStore,
    private readonly run: WorkflowRunner,
    private readonly opts: WorkerOptions,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    const intake = new TaskIntake(this.bus.nc, this.log, this.opts.priorityQueues ?? true);
    this.intake = intake;
    this.heartbeat = setInterval(
      () => {
        for (const [id, a] of this.active) {
          a.msg.working();
          if (a.leaseRev) this.renewLease(id, a);
        }
      },
      Math.max(200, Math.floor(this.opts.ackWaitMs / 3)),
    );
    this.loop = (async () => {
      while (!this.stopping) {
        while (this.active.size >= this.opts.concurrency && !this.stopping) await new Promise<void>((r) => this.slotWaiters.push(r));
        // Only as many as there are free slots: nothing waits here that another worker could run.
        const taken = await intake.take(this.opts.concurrency - this.active.size);
        if (!taken.length) break; // the intake was closed
        for (const m of taken) {
          if (this.stopping) m.nak();
          else this.activate(m);
        }
      }
    })().catch((err) => this.log.error({ err }, 'worker consume loop ended'));
  }

  get inFlight(): number {
    return this.active.size;
  }

  private activate(msg: TaskDelivery): void {
    let task: TaskStart;
    try {
      task = JSON.parse(dec.decode(msg.data)) as TaskStart;
    } catch (err) {
      this.log.error({ err }, 'undecodable task start message; terminating it');
      msg.term();
      return;
    }
    const running = this.active.get(task.task_id);
    if (running) {
      if (msg.seq === running.msg.seq && msg.info.stream === running.msg.info.stream) {
        // A second delivery of the message this worker is running (redelivery raced the
        // in-progress ack): keep one actor, and ack/heartbeat through the newest delivery.
        running.msg = msg;
      } else if (running.ending) {
        // A wake for an actor that is passivating: taken again once it is gone.
        msg.nak(50);
      } else {
        // A wake for a live actor: it reads decisions and control itself (and looks again
        // before it passivates), so this one has nothing to add.
        msg.ack();
      }
      return;
    }
    const entry: Active = { msg, done: Promise.resolve() };
    this.active.set(task.task_id, entry);
    entry.done = this.activation(task, msg, () => this.runActor(task, entry))
      .catch((err) => this.log.error({ err, workflow_id: task.task_id }, 'actor crashed'))
      .finally(() => {
        this.active.delete(task.task_id);
        this.slotWaiters.shift()?.();
      });
  }

  /**
   * An activation as a span, ending however the actor ends: a child of the submission's span
   * when the start message's headers carry its context, else the root of a new trace. Every
   * activation of a task (after a wait, a crash, a hand-back) is one more span of its trace.
   */
  private activation(task: TaskStart, msg: TaskDelivery, run: () => Promise<void>): Promise<void> {
    const attributes = {
      'messaging.system': 'nats',
      'messaging.operation.type': 'process',
      'messaging.destination.name': msg.info.stream,
      'taskorch.task.id': task.task_id,
      'taskorch.task.mode': task.mode,
      'taskorch.delivery': msg.info.deliveryCount,
    };
    return inSpan(this.opts.tracer ?? globalTracer(), `workflow ${task.mode}`, { kind: SpanKind.CONSUMER, attributes }, run, contextOfHeaders(msg.headers));
  }

  /**
   * One live actor per workflow across all workers: a lease in the LEASES bucket, created at
   * activation and renewed with every in-progress ack; it expires one ack wait after its
   * worker stops renewing it. Returns the lease revision, or undefined while another worker
   * holds it.
   */
  private async acquireLease(workflowId: string): Promise<number | undefined> {
    const kv = this.bus.kv.leases;
    try {
      return await kv.create(kvKeys.lease(workflowId), enc.encode(this.owner));
    } catch {
      const e = await kv.get(kvKeys.lease(workflowId)).catch(() => null);
      if (e && e.operation === 'PUT' && dec.decode(e.value) === this.owner) return e.revision;
      return undefined;
    }
  }

  /**
   * Renews the lease with the in-progress ack. While NATS is unreachable the renewal waits
   * for the next heartbeat (the actor keeps running: its publishes wait too). When the key
   * changed or expired meanwhile (a restarted server expires it by age), the lease is taken
   * again if nobody else holds it; otherwise another worker runs the workflow now and this
   * actor stops.
   */
  private renewLease(id: string, a: Active): void {
    if (a.renewing || !this.bus.connected) return;
    a.renewing = true;
    const kv = this.bus.kv.leases;
    const key = kvKeys.lease(id);
    kv.update(key, enc.encode(this.owner), a.leaseRev!)
      .catch(async (err: unknown) => {
        if (!(err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamWrongLastSequence)) return a.leaseRev;
        // Let go meanwhile (a passivation or a hand-back deleted the key): not ours to take again.
        if (a.released) return undefined;
        const e = await kv.get(key);
        if (e && e.operation === 'PUT' && e.value.length && dec.decode(e.value) !== this.owner) throw new LeaseLost('lease lost to another worker');
        return e && e.operation === 'PUT' && e.value.length ? kv.update(key, enc.encode(this.owner), e.revision) : kv.create(key, enc.encode(this.owner));
      })
      .then(
        (rev) => {
          if (a.released) {
            // Renewed just as it was let go: let it go again.
            if (rev !== undefined) void kv.delete(key, { previousSeq: rev }).catch(() => {});
            return;
          }
          a.leaseRev = rev;
        },
        (err: unknown) => {
          const taken = err instanceof LeaseLost || (err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamWrongLastSequence);
          if (taken) a.ctx?.abort.abort(new LeaseLost('lease lost to another worker'));
        },
      )
      .finally(() => {
        a.renewing = false;
      });
  }

  /** Lets the lease go (callers that need it gone before going on await it). */
  private releaseLease(workflowId: string, entry: Active): Promise<void> {
    if (!entry.leaseRev) return Promise.resolve();
    entry.leaseRev = undefined;
    entry.released = true;
    return this.bus.kv.leases.delete(kvKeys.lease(workflowId)).catch(() => {});
  }

  /** While NATS is unreachable nothing of an activation can succeed: wait for it (bounded). */
  private async untilConnected(deadline: number): Promise<void> {
    while (!this.bus.connected && !this.stopping && Date.now() < deadline) await sleep(100);
  }

  private async runActor(task: TaskStart, entry: Active): Promise<void> {
    await this.untilConnected(this.deadlineOf(task));
    const lease = await this.acquireLease(task.task_id);
    if (lease === undefined) {
      // A live actor elsewhere runs this workflow (a duplicate or early redelivery): retry
      // later; by then it has finished (the journal makes this a no-op) or its lease expired.
      this.log.info({ workflow_id: task.task_id }, 'workflow is leased by another worker; redelivering later');
      entry.msg.nak(Math.max(250, Math.floor(this.opts.ackWaitMs / 2)));
      return;
    }
    entry.leaseRev = lease;
    try {
      await this.runLeased(task, entry);
    } finally {
      void this.releaseLease(task.task_id, entry);
    }
  }

  private async runLeased(task: TaskStart, entry: Active): Promise<void> {
    const log = this.log.child({ workflow_id: task.task_id, trace_id: task.trace_id });
    const ctx = new WorkflowContext(task.task_id, {
      publisher: this.bus.events,
      journalLog: this.bus.journal,
      jsm: this.bus.jsm,
      log,
      deadline: this.deadlineOf(task),
      waits: this.opts.waits,
    });
    entry.ctx = ctx;
    const first = entry.msg;
    log.debug({ delivery: first.info.deliveryCount }, 'workflow actor activated');
    const timeoutMs = this.deadlineOf(task) - Date.now();
    const timer = setTimeout(() => ctx.abort.abort(new TimeoutReached('time limit exceeded')), Math.max(0, timeoutMs));
    const control = new Controller(ctx, this.store, task.task_id);
    control.listen(this.bus.nc);
    try {
      // The delivery count is only a hint (it is not reliable across nak/redelivery), so every
      // activation asks the event stream: a workflow with no event yet has no journal either.
      const [rehydrated, ctl, status] = await Promise.all([
        ctx.rehydrate({ expectJournal: task.waited_ms !== undefined }),
        readControl(this.bus.kv.control, task.task_id),
        this.store.claimStart(task.task_id, new Date()),
      ]);
      if (status === undefined) {
        // Refused at submission (the start message was published, its ack was not seen,
        // and the row was withdrawn): the client was told it will not run.
        log.info('task was withdrawn at submission; not running it');
        entry.msg.ack();
        return;
      }
      if (ctx.isRecorded('finish')) {
        // Ended already (a late wake or a duplicate delivery): nothing to replay.
        entry.msg.ack();
        return;
      }
      if (rehydrated) log.info({ delivery: first.info.deliveryCount, last_seq: ctx.lastSeq }, 'workflow actor re-activated');
      control.apply(ctl.state);
      await ctx.step('start', async () => {
        const at = new Date();
        ctx.emit('WORKFLOW_STARTED', this.opts.producerOf?.(task) ?? 'orchestrator', 'Workflow started', {
          mode: task.mode,
          query: task.query,
          session_id: task.session_id,
          ...(task.trace_id ? { trace_id: task.trace_id } : {}),
        });
        return { at: at.toISOString() };
      });
      const outcome = await this.withRetries(ctx, () => this.run(ctx, task), log);
      await this.finish(ctx, task, outcome);
      entry.msg.ack();
    } catch (err) {
      if (err instanceof Passivate && !ctx.signal.aborted) {
        // No command reaches this actor any more (nor emits events past its last flush); the
        // control state is read once more below, after the lease is let go.
        control.close();
        await this.passivate(ctx, task, entry, err.key, log);
        return;
      }
      if (ctx.signal.reason instanceof LeaseLost) {
        // Someone else runs the workflow now; neither ack nor nak (their delivery is live).
        entry.leaseRev = undefined;
        log.warn('workflow lease lost; stopping this actor');
        return;
      }
      if (isTransientBusError(err) || (!this.bus.connected && !(err instanceof AppError))) {
        // The bus failed under the actor (an outage, a server restart): stop as after a
        // crash, without acking. The next activation continues from what JetStream stored.
        log.warn({ err }, 'workflow interrupted by a NATS failure; it resumes on redelivery');
        void this.releaseLease(task.task_id, entry);
        entry.msg.nak(1000);
        return;
      }
      if (err instanceof HandBack || (ctx.signal.aborted && ctx.signal.reason instanceof HandBack)) {
        await ctx.flush().catch(() => {});
        log.info('workflow handed back');
        void this.releaseLease(task.task_id, entry);
        entry.msg.nak();
        return;
      }
      if (err instanceof CancelRequested || ctx.signal.reason instanceof CancelRequested) {
        const reason = (ctx.signal.reason as Error).message;
        await this.finish(ctx, task, { status: 'TASK_STATUS_CANCELLED', error: `cancelled: ${reason}` });
        entry.msg.ack();
        return;
      }
      if (err instanceof TimeoutReached || ctx.signal.reason instanceof TimeoutReached) {
        await this.finish(ctx, task, { status: 'TASK_STATUS_TIMEOUT', error: 'time limit exceeded' });
        entry.msg.ack();
        return;
      }
      const app = toAppError(err);
      if (app.retryable && entry.msg.info.deliveryCount < this.opts.maxDeliver) {
        log.warn({ err, delivery: entry.msg.info.deliveryCount }, 'workflow failed with a retryable error; redelivering');
        await ctx.flush().catch(() => {});
        entry.msg.nak(backoffDelay(REDELIVERY_BACKOFF, entry.msg.info.deliveryCount));
        return;
      }
      log.error({ err }, 'workflow failed');
      // The error's code is kept (metadata.error_code): a budget stop is resource_exhausted.
      await this.finish(ctx, task, {
        status: 'TASK_STATUS_FAILED',
        error: app.isPublic ? app.message : `internal error: ${app.message}`,
        // A workflow's own failure metadata (a swarm's usage and cost) comes with its error.
        metadata: { error_code: Code[app.code], ...metadataOf(err) },
      });
      entry.msg.ack();
    } finally {
      clearTimeout(timer);
      control.close();
    }
  }

  /** The task's time limit runs from its submission; time spent waiting for people does not count. */
  private deadlineOf(task: TaskStart): number {
    return Date.parse(task.submitted_at) + this.opts.taskTimeoutSeconds * 1000 + (task.waited_ms ?? 0);
  }

  /**
   * The workflow waits for a person: its events are stored, the task reads PAUSED, and its
   * message is acked and its lease let go, so nothing of it stays here. A decision (or a
   * cancel) that landed meanwhile, whose wake this worker may have swallowed as a duplicate
   * delivery of the running actor, is woken again so it is not lost.
   */
  private async passivate(ctx: WorkflowContext, task: TaskStart, entry: Active, key: string, log: Logger): Promise<void> {
    entry.ending = true;
    trace.getActiveSpan()?.addEvent('passivated', { 'taskorch.wait': key });
    await ctx.flush();
    await this.store.setStatus(task.task_id, 'TASK_STATUS_PAUSED', new Date());
    entry.msg.ack();
    await this.releaseLease(task.task_id, entry);
    log.debug({ wait: key }, 'workflow waits for a person; passivated');
    const waits = this.opts.waits!;
    const [row, ctl] = await Promise.all([waits.byKey(task.task_id, key), readControl(this.bus.kv.control, task.task_id)]);
    if ((row && row.status !== 'pending') || ctl.state.cancel_requested) await waits.wake(task.task_id);
  }

  /** Retries a retryable failure in place (up to 2 more times) before handing it to redelivery. */
  private async withRetries<T>(ctx: WorkflowContext, fn: () => Promise<T>, log: Logger): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn();
      } catch (err) {
        if (ctx.signal.aborted || attempt >= 3 || !(err instanceof AppError) || !err.retryable) throw err;
        log.warn({ err, attempt }, 'step failed; retrying');
        ctx.emit('ERROR_RECOVERY', 'orchestrator', `Retrying after error: ${err.message}`, { attempt });
        // An abort ends the wait; the step's own error is what the caller sees.
        await sleep(backoffDelay(STEP_RETRY_BACKOFF, attempt), undefined, { signal: ctx.signal }).catch(() => {
          throw err;
        });
      }
    }
  }

  /** Terminal state: written once to Postgres, then the final events. */
  private async finish(ctx: WorkflowContext, task: TaskStart, outcome: TaskOutcome): Promise<void> {
    const span = trace.getActiveSpan();
    span?.setAttribute('taskorch.task.status', outcome.status);
    if (span && (outcome.status === 'TASK_STATUS_FAILED' || outcome.status === 'TASK_STATUS_TIMEOUT')) markFailed(span, outcome.status, outcome.error ?? '');
    await ctx.step(
      'finish',
      async () => {
        await this.store.finishTask(task.task_id, outcome, new Date(), { closeWaits: !!this.opts.waits });
        if (outcome.status === 'TASK_STATUS_COMPLETED') {
          ctx.emit('WORKFLOW_COMPLETED', this.opts.producerOf?.(task) ?? 'orchestrator', 'Workflow completed', {
            result: outcome.result ?? '',
            usage: {
              total_tokens: outcome.totalTokens ?? 0,
              input_tokens: outcome.inputTokens ?? 0,
              output_tokens: outcome.outputTokens ?? 0,
              cost_usd: outcome.costUsd ?? 0,
            },
            model_used: outcome.modelUsed,
            provider: outcome.provider,
          });
        } else if (outcome.status === 'TASK_STATUS_CANCELLED') {
          ctx.emit('WORKFLOW_CANCELLED', 'orchestrator', 'Workflow cancelled', { reason: outcome.error ?? '' });
        } else {
          ctx.emit('ERROR_OCCURRED', 'orchestrator', outcome.error ?? 'workflow failed', { status: outcome.status });
        }
        ctx.emit('STREAM_END', 'orchestrator', 'Stream ended', { status: outcome.status });
        return { status: outcome.status };
      },
      // The task reads finished in PostgreSQL only once every step before is stored, and the
      // actor acks its message only once the finish is.
      { evenIfAborted: true, stored: true },
    );
  }

  /** Stops taking work; running actors stop at their next checkpoint and are handed back. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.heartbeat);
    this.intake?.close();
    for (const a of this.active.values()) a.ctx?.abort.abort(new HandBack('worker shutting down'));
    await Promise.race([Promise.all([...this.active.values()].map((a) => a.done)), sleep(5000)]);
    this.slotWaiters.splice(0).forEach((r) => r());
    await this.loop?.catch(() => {});
  }
}
