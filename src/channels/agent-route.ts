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
 * - Durable: the hand-off arrives through CHANNEL_INBOX (at least once); a message already
 *   recorded in CHANNEL_TASKS is not submitted again. The record (task, conversation, thread)
 *   stays until the result is in the outbox, so a gateway restart loses no result. A crash
 *   between the submission and the record can run the message twice (rare; said in the docs).
 * - Results: every gateway's watcher looks at the recorded tasks every second; a finished one
 *   is put in the outbox (de-duplicated by its workflow id) and its record removed.
 */
import { createHash } from 'node:crypto';
import { Kvm, type KV } from '@nats-io/kv';
import { BUCKETS, kvKeys, kvSnapshot, type Bus } from '../bus/index.js';
import { Code, TERMINAL_STATUSES, toAppError, type Logger } from '../kernel/index.js';
import type { InboundMessage } from './index.js';
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
  workflow_id: string;
  message_id: string;
  channel_id: string;
  channel_type: InboundMessage['channel_type'];
  conversation: string;
  thread_id: string;
  submitted_at: string;
}

const enc = new TextEncoder();
const dec = new TextDecoder();
const TERMINAL = new Set<string>(TERMINAL_STATUSES);
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
    private readonly d: AgentRouteDeps,
  ) {
    this.js = d.bus.js;
    this.jsm = d.bus.jsm;
  }

  static async start(d: AgentRouteDeps): Promise<ChannelAgentRoute> {
    const kvm = new Kvm(d.bus.nc);
    const kv = await kvm.create(BUCKETS.channelTasks, { history: 1 }).catch(() => kvm.open(BUCKETS.channelTasks));
    const r = new ChannelAgentRoute(kv, d);
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
    const seen = await this.kv.get(key);
    if (seen && seen.operation === 'PUT') return;
    const conversation = m.conversation ?? '';
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
      if (!REFUSALS.has(err.code)) throw err; // retried by the caller
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
      return;
    }
    const rec: Record_ = {
      workflow_id: workflowId,
      message_id: m.message_id,
      channel_id: m.channel_id,
      channel_type: m.channel_type,
      conversation,
      thread_id: m.thread_id,
      submitted_at: new Date().toISOString(),
    };
    await this.kv.put(key, enc.encode(JSON.stringify(rec)));
    this.d.log.info({ message_id: m.message_id, channel_id: m.channel_id, workflow_id: workflowId }, 'channel message runs on the agent route');
  }

  /** One pass: finished tasks' results into the outbox, their records removed. */
  async watch(): Promise<number> {
    const recs = (await kvSnapshot(this.js, this.jsm, BUCKETS.channelTasks)).map((e) => ({ key: e.key, rec: JSON.parse(dec.decode(e.value)) as Record_ }));
    if (!recs.length) return 0;
    const done = new Map((await this.d.tasks(recs.map((r) => r.rec.workflow_id))).filter((t) => TERMINAL.has(t.status)).map((t) => [t.id, t]));
    let n = 0;
    for (const { key, rec } of recs) {
      const t = done.get(rec.workflow_id);
      if (!t) continue;
      await this.d.outbox.enqueue({
        id: `result:${rec.workflow_id}`,
        channel_id: rec.channel_id,
        channel_type: rec.channel_type,
        conversation: rec.conversation,
        thread_id: rec.thread_id,
        text: resultText(t),
        format: 'markdown',
      });
      await this.kv.delete(key);
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
