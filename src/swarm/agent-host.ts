/**
 * The agent host of a worker process: takes swarm agents' start messages from the
 * SWARM_AGENTS work queue (durable consumer `swarm-agents`, shared by every worker process)
 * and runs each agent as an actor here, in parallel with the others and with the lead.
 *
 * Delivery: a start message stays in progress (in-progress acks at a third of the ack wait)
 * while its agent runs and is acked when the agent has reported. A process that dies stops
 * acking; the message is redelivered and another process re-activates the agent from its
 * journal (recorded steps are not run again, its mailbox is read from the position it
 * recorded). One live actor per agent: a lease in LEASES (`<workflow_id>.<name>`), renewed
 * with every in-progress ack; a delivery for an agent leased elsewhere is retried later.
 * Control: the agent subscribes to the workflow's nudges (`svc.actor.workflow.<id>`), then
 * reads its CONTROL state and follows both: pause holds the agent before its next step,
 * cancel stops it at once (no report; the lead ends the task CANCELLED). The swarm's end (the
 * task list in KV marked ended, whatever ended the task) is read at activation (a start still
 * queued is acked without running), before every turn and with every in-progress ack (a
 * running agent stops at once, no report).
 */
import type { JsMsg } from '@nats-io/jetstream';
import type { Subscription } from '@nats-io/transport-node';
import { randomUUID } from 'node:crypto';
import { CONSUMERS, STREAMS, kvKeys, startDurableWorker, subjects, type Bus, type DurableWorker } from '../bus/index.js';
import type { Logger } from '../kernel/index.js';
import { readControl, type ControlState } from '../tasks/index.js';
import { SwarmAgentContext } from './agent-context.js';
import { SwarmEnded, agentPrefix, recordedCursor, runSwarmAgent, type AgentRunDeps, type AgentStart } from './agent-run.js';
import type { Mailboxes } from './mailbox.js';

export interface AgentHostOptions extends AgentRunDeps {
  bus: Bus;
  mail: Mailboxes;
  /** Agents run at once by this process. */
  concurrency: number;
  ackWaitMs: number;
  /** Deliveries of one start message before it is given up (WORKER_MAX_DELIVER); the lead then counts the agent failed at its limits. */
  maxDeliver?: number;
  log: Logger;
}

class Stopped extends Error {
  override name = 'Stopped';
}

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Starts taking agents; `stop()` hands the running ones back (they continue elsewhere from their journals). */
export async function startAgentHost(o: AgentHostOptions): Promise<DurableWorker> {
  const owner = `${process.pid}-${randomUUID()}`;
  const running = new Set<AbortController>();
  /** Agents this process runs now (`<workflow_id>.<name>`): a second delivery of one is left to redeliver. */
  const local = new Set<string>();
  const worker = await startDurableWorker(o.bus, {
    stream: STREAMS.swarmAgents,
    durable: CONSUMERS.swarmAgents,
    ackWaitMs: o.ackWaitMs,
    maxDeliver: o.maxDeliver,
    concurrency: o.concurrency,
    log: o.log,
    handle: (m) => host(m),
  });

  async function host(m: JsMsg): Promise<void> {
    let s: AgentStart;
    try {
      s = JSON.parse(dec.decode(m.data)) as AgentStart;
    } catch {
      m.term();
      return;
    }
    const log = o.log.child({ workflow_id: s.workflow_id, agent: s.name });
    const leases = o.bus.kv.leases;
    const key = kvKeys.agentLease(s.workflow_id, s.name);
    // A redelivery that raced this process's in-progress acks: the running actor acks the message.
    if (local.has(key)) return;
    let rev: number | undefined;
    try {
      rev = await leases.create(key, enc.encode(owner));
    } catch {
      const e = await leases.get(key).catch(() => null);
      if (e && e.operation === 'PUT' && dec.decode(e.value) === owner) rev = e.revision;
    }
    if (rev === undefined) {
      log.info('swarm agent is leased by another process; redelivering later');
      m.nak(Math.max(250, Math.floor(o.ackWaitMs / 2)));
      return;
    }
    const ctx = new SwarmAgentContext({ workflowId: s.workflow_id, name: s.name, journal: o.bus.journal, publisher: o.bus.events, mail: o.mail });
    running.add(ctx.abort);
    local.add(key);
    let renewing = false;
    let checking = false;
    const heartbeat = setInterval(
      () => {
        m.working();
        // The swarm ended (its task over) while the agent works: stop it now, model call in flight included.
        if (!checking && o.bus.connected) {
          checking = true;
          o.board
            .ended(s.workflow_id)
            .then((over) => over && ctx.abort.abort(new SwarmEnded()))
            .catch(() => undefined)
            .finally(() => (checking = false));
        }
        if (renewing || rev === undefined || !o.bus.connected) return;
        renewing = true;
        leases
          .update(key, enc.encode(owner), rev)
          .then((r) => (rev = r))
          .catch(() => ctx.abort.abort(new Stopped('agent lease lost to another process')))
          .finally(() => (renewing = false));
      },
      Math.max(200, Math.floor(o.ackWaitMs / 3)),
    );
    let sub: Subscription | undefined;
    let reader: Awaited<ReturnType<Mailboxes['reader']>> | undefined;
    let ended = false;
    try {
      // Subscribed to the nudges before the control state is read: a command between the two is not missed.
      const gate = control(ctx);
      sub = o.bus.nc.subscribe(subjects.workflowActor(s.workflow_id), {
        callback: (err, msg) => {
          if (err) return;
          try {
            const body = JSON.parse(dec.decode(msg.data)) as { control?: ControlState };
            if (body.control) gate.apply(body.control);
          } catch {
            /* not a control message */
          }
        },
      });
      // A first delivery starts the agent: no activation ran before it (the start message is one per agent), so its journal is empty.
      // Its mailbox is then read from the start: the reader opens alongside the control read.
      const first = m.info.deliveryCount <= 1;
      const opening = first ? o.mail.reader(s.workflow_id, s.name, 0) : undefined;
      // Opened after this activation ended (the control read failed first): closed at once.
      opening?.then((r) => (ended ? r.close() : (reader = r))).catch(() => undefined);
      const [, ctl, over] = await Promise.all([
        first ? 0 : ctx.rehydrate(),
        readControl(o.bus.kv.control, s.workflow_id),
        o.board.ended(s.workflow_id),
        opening,
      ]);
      // Reported already, cancelled, or the swarm is over (a start still queued when its task ended): acked without running.
      if (ctx.isRecorded(`${agentPrefix(s.name)}-report`) || ctl.state.cancel_requested || over) {
        m.ack();
        return;
      }
      gate.apply(ctl.state);
      const cursor = recordedCursor(ctx.recordedResults());
      reader = (await opening) ?? (await o.mail.reader(s.workflow_id, s.name, cursor));
      await runSwarmAgent(ctx, o, s, reader, cursor);
      m.ack();
    } catch (err) {
      const reason: unknown = ctx.signal.reason;
      if (reason instanceof Stopped || !o.bus.connected) {
        // Handed back (shutdown, lease lost, NATS away): another activation continues from the journal.
        log.warn({ err }, 'swarm agent handed back');
        m.nak(1000);
      } else if (ctx.signal.aborted) {
        log.info('swarm agent cancelled');
        m.ack();
      } else {
        log.warn({ err }, 'swarm agent failed before it could report; redelivering');
        m.nak(1000);
      }
    } finally {
      clearInterval(heartbeat);
      sub?.unsubscribe();
      ended = true;
      reader?.close();
      running.delete(ctx.abort);
      local.delete(key);
      if (rev !== undefined) await leases.delete(key).catch(() => undefined);
    }
  }

  return {
    async stop() {
      for (const a of running) a.abort(new Stopped('worker shutting down'));
      await worker.stop();
    },
  };
}

/** Pause holds the agent before its next step; cancel stops it. */
function control(ctx: SwarmAgentContext) {
  let paused = false;
  let wake: (() => void) | undefined;
  ctx.signal.addEventListener('abort', () => wake?.(), { once: true });
  ctx.beforeStep = async () => {
    while (paused && !ctx.signal.aborted) await new Promise<void>((r) => (wake = r));
    wake = undefined;
  };
  const apply = (c: ControlState) => {
    if (c.cancel_requested) ctx.abort.abort(new Error(`cancelled: ${c.cancel_reason || 'cancelled by request'}`));
    paused = c.paused;
    if (!paused) wake?.();
  };
  return { apply };
}
