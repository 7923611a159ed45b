/**
 * Archiver: copies every workflow event from the EVENTS stream into Postgres (task_events)
 * for the history endpoints. A durable pull consumer shared by all archiver processes;
 * rows are inserted in batches with ON CONFLICT DO NOTHING and acked after commit, so an
 * event is archived at least once and stored exactly once. The live path never waits on it.
 */
import type { JsMsg } from '@nats-io/jetstream';
import { CONSUMERS, STREAMS, decodeEvent, type Bus } from '../bus/index.js';
import type { Logger } from '../kernel/index.js';
import type { EventRow, TaskStore } from '../tasks/index.js';

export class Archiver {
  private stopped = false;
  private loop?: Promise<void>;
  private msgs?: { close(): Promise<void | Error> };

  constructor(
    private readonly bus: Bus,
    private readonly store: TaskStore,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    const consumer = await this.bus.js.consumers.get(STREAMS.events, CONSUMERS.archiver);
    const msgs = await consumer.consume({ max_messages: 1000 });
    this.msgs = msgs;
    let batch: JsMsg[] = [];
    let timer: NodeJS.Timeout | undefined;
    let flushing = Promise.resolve();
    const flush = () => {
      timer = undefined;
      const b = batch;
      batch = [];
      if (!b.length) return;
      flushing = flushing.then(() => this.write(b));
    };
    this.loop = (async () => {
      for await (const m of msgs) {
        batch.push(m);
        if (batch.length >= 500) flush();
        else if (!timer) timer = setTimeout(flush, 5);
      }
      flush();
      await flushing;
    })().catch((err) => this.log.error({ err }, 'archiver loop ended'));
  }

  private async write(msgs: JsMsg[]): Promise<void> {
    const rows: EventRow[] = [];
    for (const m of msgs) {
      try {
        const e = decodeEvent(m.data);
        rows.push({
          workflow_id: e.workflow_id,
          seq: e.seq,
          type: e.type,
          agent_id: e.agent_id,
          message: e.message,
          payload: e.payload,
          ts: new Date(e.timestamp),
          stream_id: e.stream_id,
        });
      } catch (err) {
        this.log.error({ err, subject: m.subject }, 'undecodable event; not archived');
      }
    }
    try {
      await this.store.insertEvents(rows);
      msgs.forEach((m) => m.ack());
    } catch (err) {
      if (!this.stopped) this.log.warn({ err, count: msgs.length }, 'archiving events failed; they will be redelivered');
      msgs.forEach((m) => m.nak(1000));
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.msgs?.close().catch(() => {});
    await this.loop;
  }
}
