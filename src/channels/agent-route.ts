/**
 * The default agent route of a channel message no daemon claimed within the pending-message
 * TTL: the message runs as a task for the channel's owner, and its result (or failure) is
 * posted back to the thread through the outbox.
 *
 * - What runs: the message text as the query, in a session per thread (a UUID derived from
 *   the channel and the thread, so a thread is one multi-turn conversation). `config.agent_name`
 *   names the skill the task runs (skills are this service's named single-purpose agents); an
 *   unknown name is answered in the thread with `Agent not found: <name>`. Without it, default
 *   routing: the mode detected from the query, as for any submitted task.
 * - Durable: the hand-off arrives through CHANNEL_INBOX (at least once). A record in
 *   CHANNEL_TASKS is reserved (create) before the submission, so two gateways never submit one
 *   message; it gets the task's id after, and stays until the result is in the outbox, so a
 *   gateway restart loses no result; then CHANNEL_TASKS_DONE remembers the message for a day,
 *   so a late redelivery does nothing. A gateway dying between the submission and recording
 *   the task id leaves a reservation that another takes over after 45 s: that message can run
 *   twice (rare; said in the docs).
 * - Results: every gateway's watcher looks at the recorded tasks every second; a finished one
 *   is put in the outbox (de-duplicated by its workflow id) and its record removed.
 */
import { createHash } from 'node:crypto';
import type { KV } from '@nats-io/kv';
import { BUCKETS, coreReplicas, kvKeys, kvSnapshot, openBucket, type Bus } from '../bus/index.js';
import { Code, TERMINAL_STATUSES, toAppError, type Logger } from '../kernel/index.js';
import type { InboundMessage } from './inbound.js';
import type { ChannelOutbox } from './outbox.js';

/** What the route asks the orchestrator to run (as the channel's owner). */
export interface ChannelTaskRequest {
  query: string;
  userId: string | null;
  tenantId: string | null;
  sessionId: string;
  /** A skill to run (the channel's `config.agent_name`). */
  skill?: string;
  labels: Record<string, string>;
}

export interface TaskOutcome {
  id: string;
  status: string;
  result: string | null;
  error: string;
}

export interface AgentRouteDeps {
  bus: Pick<Bus, 'nc' | 'js' | 'jsm'>;
  outbox: Pick<ChannelOutbox, 'enqueue'>;
  /** Submits a task; resolves to its workflow id; throws (an AppError or ConnectError) when refused. */
  submit: (r: ChannelTaskRequest) => Promise<string>;
  /** The tasks among `ids` and their state. */
  tasks: (ids: string[]) => Promise<TaskOutcome[]>;
  log: Logger;
  /** How often finished tasks are looked for (ms; default 1000). */
  watchMs?: number;
}

interface Record_ {
  /** Set once submitted; absent while a gateway is submitting it. */
  workflow_id?: string;
  message_id: string;
  channel_id: string;
  channel_type: InboundMessage['channel_type'];
  conversation: string;
  thread_id: string;
  /** When the record was reserved (ISO 8601). */
  since: string;
}

const enc = new TextEncoder();
const dec = new TextDecoder();
const TERMINAL = new Set<string>(TERMINAL_STATUSES);
/** A reserved record with no task after this long lost its gateway mid-submission: taken over. */
const STALE_SUBMISSION_MS = 45_000;
/** Task ids per status query of the watcher. */
const WATCH_BATCH = 500;
/** Submission errors that a retry cannot change: answered in the thread. */
const REFUSALS = new Set<Code>([Code.InvalidArgument, Code.NotFound, Code.PermissionDenied, Code.FailedPrecondition, Code.Unauthenticated]);

/** The session of a channel thread: a stable UUID (v4 layout) from the channel and thread. */
export function threadSessionId(channelId: string, threadId: string): string {
  const h = createHash('sha256').update(`channel|${channelId}|${threadId}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export class ChannelAgentRoute {
  private timer?: NodeJS.Timeout;
  private watching?: Promise<unknown>;

  private readonly js: Bus['js'];
  private readonly jsm: Bus['jsm'];

  private constructor(
    private readonly kv: KV,
    private readonly done: KV,
    private readonly d: AgentRouteDeps,
  ) {
    this.js = d.bus.js;
    this.jsm = d.bus.jsm;
  }

  static async start(d: AgentRouteDeps): Promise<ChannelAgentRoute> {
    // Replicated as the core buckets are (NATS_REPLICAS). Records leave explicitly (answered): no TTL.
    const replicas = await coreReplicas(d.bus.jsm);
    const kv = await openBucket(d.bus.nc, d.bus.jsm, BUCKETS.channelTasks, { ttlMs: 0, replicas });
    const done = await openBucket(d.bus.nc, d.bus.jsm, BUCKETS.channelTasksDone, { ttlMs: 24 * 3600 * 1000, replicas });
    const r = new ChannelAgentRoute(kv, done, d);
    r.timer = setInterval(() => {
      if (r.watching) return;
      r.watching = r
        .watch()
        .then(() => undefined)
        .catch((err: unknown) => d.log.warn({ err }, 'channel task watch failed'))
        .finally(() => (r.watching = undefined));
    }, d.watchMs ?? 1000);
    r.timer.unref();
    return r;
  }

  /** Runs one message (idempotent: a message already submitted is not submitted again). */
  async run(m: InboundMessage): Promise<void> {
    const key = kvKeys.channelTask(m.message_id);
    const done = await this.done.get(key);
    if (done && done.operation === 'PUT') return; // answered already (a late redelivery)
    const conversation = m.conversation ?? '';
    const base: Record_ = {
      message_id: m.message_id,
      channel_id: m.channel_id,
      channel_type: m.channel_type,
      conversation,
      thread_id: m.thread_id,
      since: new Date().toISOString(),
    };
    // The record is reserved before the submission: two gateways never submit one message at once.
    let rev: number;
    try {
      rev = await this.kv.create(key, enc.encode(JSON.stringify(base)));
    } catch {
      const e = await this.kv.get(key);
      if (!e || e.operation !== 'PUT' || !e.value.length) throw new Error('channel task record changed meanwhile; retried');
      const rec = JSON.parse(dec.decode(e.value)) as Record_;
      if (rec.workflow_id) return; // submitted already
      // A submission under way elsewhere, unless its gateway died mid-way: then taken over.
      if (Date.now() - Date.parse(rec.since) < STALE_SUBMISSION_MS) throw new Error('channel message being submitted by another gateway; retried');
      rev = await this.kv.update(key, enc.encode(JSON.stringify(base)), e.revision);
    }
    let workflowId: string;
    try {
      workflowId = await this.d.submit({
        query: m.text,
        userId: m.user_id,
        tenantId: m.tenant_id,
        sessionId: threadSessionId(m.channel_id, m.thread_id),
        ...(m.agent_name ? { skill: m.agent_name } : {}),
        labels: { channel_id: m.channel_id, channel_message_id: m.message_id },
      });
    } catch (thrown) {
      const err = toAppError(thrown);
      if (!REFUSALS.has(err.code)) {
        await this.kv.delete(key).catch(() => undefined); // the next delivery starts afresh
        throw err; // retried by the caller
      }
      // Refused (e.g. an unknown agent): said in the thread, not retried.
      const text = m.agent_name && /skill/i.test(err.message) ? `Agent not found: ${m.agent_name}` : `The request was refused: ${err.message}`;
      this.d.log.warn({ message_id: m.message_id, channel_id: m.channel_id, error: err.message }, 'channel message refused by the agent route');
      await this.d.outbox.enqueue({
        id: `refused:${m.message_id}`,
        channel_id: m.channel_id,
        channel_type: m.channel_type,
        conversation,
        thread_id: m.thread_id,
        text,
        format: 'text',
      });
      await this.finish(key);
      return;
    }
    await this.kv.update(key, enc.encode(JSON.stringify({ ...base, workflow_id: workflowId })), rev);
    this.d.log.info({ message_id: m.message_id, channel_id: m.channel_id, workflow_id: workflowId }, 'channel message runs on the agent route');
  }

  /** A message answered: remembered for a day (so a redelivery does nothing), its record removed. */
  private async finish(key: string): Promise<void> {
    await this.done.put(key, enc.encode('1'));
    await this.kv.delete(key);
  }

  /** One pass: finished tasks' results into the outbox, their records removed. */
  async watch(): Promise<number> {
    const recs = (await kvSnapshot(this.js, this.jsm, BUCKETS.channelTasks))
      .map((e) => ({ key: e.key, rec: JSON.parse(dec.decode(e.value)) as Record_ }))
      .filter((r) => r.rec.workflow_id);
    if (!recs.length) return 0;
    const done = new Map<string, TaskOutcome>();
    for (let i = 0; i < recs.length; i += WATCH_BATCH) {
      const ids = recs.slice(i, i + WATCH_BATCH).map((r) => r.rec.workflow_id!);
      for (const t of await this.d.tasks(ids)) if (TERMINAL.has(t.status)) done.set(t.id, t);
    }
    let n = 0;
    for (const { key, rec } of recs) {
      const t = done.get(rec.workflow_id!);
      if (!t) continue;
      await this.d.outbox.enqueue({
        id: `result:${rec.workflow_id!}`,
        channel_id: rec.channel_id,
        channel_type: rec.channel_type,
        conversation: rec.conversation,
        thread_id: rec.thread_id,
        text: resultText(t),
        format: 'markdown',
      });
      await this.finish(key);
      n++;
    }
    return n;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.watching;
  }
}

function resultText(t: TaskOutcome): string {
  if (t.status === 'TASK_STATUS_COMPLETED') return t.result || '(no answer)';
  const what = t.status === 'TASK_STATUS_CANCELLED' ? 'was cancelled' : t.status === 'TASK_STATUS_TIMEOUT' ? 'timed out' : 'failed';
  return `The task ${what}${t.error ? `: ${t.error}` : ''}.`;
}
