/**
 * Lean steps (runtime/context.ts): no step waits for an acknowledgement of its own. A step's
 * journal entry is written alongside its last events and carries copies of the ones not yet
 * acknowledged, and of the earlier entries not yet acknowledged (`group`); the next step starts
 * while it is on its way, and a flush waits for everything. Whatever prefix of the entries a
 * crash leaves stored (simulated: earlier entries never reach the server, a later one does),
 * every recorded step has its earlier steps recorded and its events. `stored: true` runs only
 * after everything earlier is stored and returns once its own entry is. After a crash between
 * an entry and its events (simulated: the entry is in the journal, its events are not in the
 * stream) the workflow's next activation publishes them from the journal, exactly once, in
 * order, before it goes on, and the recorded step does not run again.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { STREAMS, decodeEvent, streamId, subjects, type PipelinedPublisher, type PubAck, type WorkflowEvent } from '../src/bus/index.js';
import { createLogger } from '../src/kernel/index.js';
import { WorkflowContext, appendExternalEvents } from '../src/runtime/index.js';
import { archivedEvents, json, startTestApp, waitFor, type TestApp } from './helpers/app.js';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.stop();
});

/** Every event the EVENTS stream holds for a workflow, in stream order (duplicates included). */
async function streamed(workflowId: string): Promise<WorkflowEvent[]> {
  const c = await t.app.bus.js.consumers.get(STREAMS.events, { filter_subjects: subjects.events(workflowId) });
  const out: WorkflowEvent[] = [];
  for await (const m of await c.fetch({ max_messages: 1000, expires: 1000 })) {
    out.push(decodeEvent(m.data));
    if (m.info.pending === 0) break;
  }
  return out;
}

const contextOf = (workflowId: string, publisher: PipelinedPublisher = t.app.bus.events) =>
  new WorkflowContext(workflowId, {
    publisher,
    journalLog: t.app.bus.journal,
    jsm: t.app.bus.jsm,
    log: createLogger({ level: 'silent' }),
  });

/** A workflow's first step: one event (WORKFLOW_STARTED), result 'started'. */
const started = (ctx: WorkflowContext) =>
  ctx.step('start', async () => {
    ctx.emit('WORKFLOW_STARTED', 'orchestrator', 'started');
    return 'started';
  });

interface Held {
  step: string;
  entry: Record<string, unknown>;
  /** Sends it to the server and settles the context's publish with the server's ack. */
  send(): Promise<void>;
}

/**
 * The service's publisher, except that journal entries are held here until the test sends
 * them (or never does: what a crash before they reached the server leaves).
 */
function holdingJournal(): { publisher: PipelinedPublisher; held: Held[] } {
  const real = t.app.bus.events;
  const held: Held[] = [];
  const publisher = Object.create(real) as PipelinedPublisher;
  publisher.publish = (subject, data, opts) => {
    if (!subject.startsWith('svc.journal.')) return real.publish(subject, data, opts);
    return new Promise<PubAck>((resolve, reject) => {
      const { step, ...entry } = JSON.parse(new TextDecoder().decode(data)) as { step: string } & Record<string, unknown>;
      held.push({ step, entry, send: () => real.publish(subject, data, opts).then(resolve, reject) });
    });
  };
  return { publisher, held };
}

/** Whether `p` is still pending after the event loop has had a few turns. */
async function pending(p: Promise<unknown>): Promise<boolean> {
  const marker = Symbol('pending');
  return (
    (await Promise.race([
      p.then(
        () => undefined,
        () => undefined,
      ),
      new Promise((r) => setTimeout(() => r(marker), 50)),
    ])) === marker
  );
}

it('a step does not wait for its record: the next one starts while it is on its way, a later entry carries it, and a flush waits for both', async () => {
  const id = randomUUID();
  const { publisher, held } = holdingJournal();
  const ctx = contextOf(id, publisher);
  expect(await ctx.rehydrate()).toBe(false);
  await started(ctx);
  // The first entry follows a stored event (an activation that finds none reads no journal).
  expect((await streamed(id)).map((e) => e.seq)).toEqual([1]);
  const ran: string[] = [];
  for (const name of ['one', 'two']) {
    await ctx.step(name, async () => {
      ran.push(name);
      ctx.emit('STATUS_UPDATE', 'a', name);
      return `${name} done`;
    });
  }
  // Both ran, and returned, with no entry acknowledged.
  expect(ran).toEqual(['one', 'two']);
  expect(held.map((h) => h.step)).toEqual(['start', 'one', 'two']);
  expect(held[0]!.entry.group).toBeUndefined();
  expect(held[1]!.entry.group).toEqual([['start', { result: 'started', seqAfter: 1, at: expect.any(String) }]]);
  expect(held[2]!.entry).toMatchObject({
    result: 'two done',
    seqAfter: 3,
    group: [
      ['start', { result: 'started', seqAfter: 1, at: expect.any(String) }],
      ['one', { result: 'one done', seqAfter: 2, at: expect.any(String) }],
    ],
  });

  const flushed = ctx.flush();
  expect(await pending(flushed)).toBe(true);
  // A crash now: only the last entry ever reaches the server. It records the steps before it.
  await held[2]!.send();
  expect(await pending(flushed)).toBe(true);
  const journal = await t.app.bus.journal.read(id);
  expect([...journal.keys()]).toEqual(['start', 'one', 'two']);
  expect(journal.get('one')).toEqual({ result: 'one done', seqAfter: 2, at: expect.any(String) });
  const next = contextOf(id);
  expect(await next.rehydrate()).toBe(true);
  expect(['start', 'one', 'two'].map((s) => next.isRecorded(s))).toEqual([true, true, true]);
  expect(next.lastSeq).toBe(3);
  expect((await streamed(id)).map((e) => e.seq)).toEqual([1, 2, 3]);

  // The flush resolves only once every entry sent is acknowledged.
  await held[0]!.send();
  expect(await pending(flushed)).toBe(true);
  await held[1]!.send();
  await flushed;
  // The entries' own messages, stored after the copies, read as the same records (with their own event copies).
  const all = await t.app.bus.journal.read(id);
  expect([...all].map(([s, e]) => [s, e.result, e.seqAfter])).toEqual([...journal].map(([s, e]) => [s, e.result, e.seqAfter]));
});

it('a `stored` step runs only once everything before it is stored and returns once its own record is', async () => {
  const id = randomUUID();
  const { publisher, held } = holdingJournal();
  const ctx = contextOf(id, publisher);
  await ctx.rehydrate();
  await started(ctx);
  let ran = false;
  const marker = ctx.step(
    'tool-started',
    async () => {
      ran = true;
      return true;
    },
    { stored: true },
  );
  expect(await pending(marker)).toBe(true);
  expect(ran).toBe(false);
  await held[0]!.send();
  await new Promise((r) => setTimeout(r, 20));
  expect(ran).toBe(true);
  expect(held.map((h) => h.step)).toEqual(['start', 'tool-started']);
  // Sent after everything before it was stored: it carries nothing.
  expect(held[1]!.entry.group).toBeUndefined();
  expect(await pending(marker)).toBe(true);
  await held[1]!.send();
  expect(await marker).toBe(true);
});

it('an entry carries at most 16 earlier ones: the next step waits for them before it sends its own', async () => {
  const id = randomUUID();
  const { publisher, held } = holdingJournal();
  const ctx = contextOf(id, publisher);
  await ctx.rehydrate();
  await started(ctx);
  for (let i = 1; i < 16; i++) await ctx.step(`s${i}`, async () => i);
  expect(held).toHaveLength(16);
  expect((held[15]!.entry.group as unknown[]).length).toBe(15);
  const seventeenth = ctx.step('s16', async () => 16);
  expect(await pending(seventeenth)).toBe(true);
  expect(held).toHaveLength(16);
  for (const h of held.slice(0, 16)) await h.send();
  expect(await seventeenth).toBe(16);
  expect(held).toHaveLength(17);
  expect(held[16]!.entry.group).toBeUndefined();
  await held[16]!.send();
  await ctx.flush();
  expect((await t.app.bus.journal.read(id)).size).toBe(17);
});

it('a record carries only the events not yet acknowledged when it is sent', async () => {
  const id = randomUUID();
  const ctx = contextOf(id);
  expect(await ctx.rehydrate()).toBe(false);
  await started(ctx);
  await ctx.flush();
  // An activation that finds no event does not read the journal: the first entry follows its event.
  expect((await streamed(id)).map((e) => e.seq)).toEqual([1]);
  expect((await t.app.bus.journal.read(id)).get('start')).toEqual({ result: 'started', seqAfter: 1, at: expect.any(String) });

  await ctx.step('work', async () => {
    ctx.emit('STATUS_UPDATE', 'a', 'one');
    await ctx.flush();
    ctx.emit('STATUS_UPDATE', 'a', 'two');
    ctx.emit('STATUS_UPDATE', 'a', 'three');
    return 'worked';
  });
  await ctx.flush();
  const stored = await streamed(id);
  expect(stored.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
  const work = (await t.app.bus.journal.read(id)).get('work')!;
  expect(work).toMatchObject({ result: 'worked', seqAfter: 4 });
  // Event 2 was acknowledged before the entry was written; 3 and 4 could not have been.
  expect(work.events).toEqual(stored.slice(2));

  await ctx.step('quiet', async () => 'nothing emitted');
  await ctx.flush();
  expect((await t.app.bus.journal.read(id)).get('quiet')).toEqual({ result: 'nothing emitted', seqAfter: 4, at: expect.any(String) });
});

it('a crash between a step record and its events: the next activation publishes them from the journal once, in order, and does not run the step again', async () => {
  const r = await fetch(`${t.base}/api/v1/tasks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: 'lean steps', mode: 'simple', context: { require_approval: true } }),
  });
  const { task_id: id } = await json(r);
  const approval = await waitFor(async () => {
    const b = await json(await fetch(`${t.base}/api/v1/approvals?status=pending`));
    const a = (b.approvals as { approval_id: string; workflow_id: string }[]).find((x) => x.workflow_id === id);
    return a && (await t.app.store.getTask(id))?.status === 'TASK_STATUS_PAUSED' ? a : undefined;
  });
  const before = await streamed(id);
  const last = before.at(-1)!.seq;
  expect(before.map((e) => e.seq)).toEqual(before.map((_, i) => i + 1));

  // What the decision step of a worker that died between its two writes leaves: its record,
  // carrying its two events, and neither event in the stream.
  const now = Date.now();
  const event = (seq: number, type: WorkflowEvent['type'], message: string): WorkflowEvent => ({
    workflow_id: id,
    seq,
    stream_id: streamId(now, seq),
    type,
    agent_id: 'orchestrator',
    message,
    timestamp: new Date(now).toISOString(),
    payload: { from: 'journal copy' },
  });
  const carried = [event(last + 1, 'APPROVAL_DECISION', 'Approved'), event(last + 2, 'STATUS_UPDATE', 'the step went on')];
  await t.app.bus.journal.put(id, 'wait-approval-task', {
    result: { waitId: approval.approval_id, decision: { approved: true }, timedOut: false, decidedAt: new Date(now).toISOString(), waitedMs: 1 },
    seqAfter: last + 2,
    at: new Date(now).toISOString(),
    events: carried,
  });

  // The decision wakes the workflow.
  const d = await fetch(`${t.base}/api/v1/approvals/decision`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ approval_id: approval.approval_id, workflow_id: id, approved: true }),
  });
  expect(d.status).toBe(200);
  const archived = await archivedEvents(t.base, id);
  const evs = await streamed(id);
  // Each seq once, in order, the copies in their places, the recorded step not run again.
  expect(evs.map((e) => e.seq)).toEqual(evs.map((_, i) => i + 1));
  expect(evs.slice(0, last)).toEqual(before);
  expect(evs.slice(last, last + 2)).toEqual(carried);
  expect(evs.filter((e) => e.type === 'APPROVAL_DECISION')).toEqual([carried[0]]);
  expect(evs.filter((e) => e.type === 'ERROR_RECOVERY')).toEqual([]);
  expect(evs.filter((e) => e.type === 'WORKFLOW_COMPLETED')).toHaveLength(1);
  expect(archived.map((e) => e.seq)).toEqual(evs.map((e) => e.seq));
  expect((await t.app.store.getTask(id))?.status).toBe('TASK_STATUS_COMPLETED');
});

it('an append from outside first publishes the events the journal records and the stream lacks, then takes the next seq', async () => {
  const id = randomUUID();
  const ctx = contextOf(id);
  await ctx.rehydrate();
  await started(ctx);
  // A crash between the next step's record and its event: the entry is stored, the event is not.
  const lost: WorkflowEvent = {
    workflow_id: id,
    seq: 2,
    stream_id: streamId(Date.now(), 2),
    type: 'STATUS_UPDATE',
    agent_id: 'a',
    message: 'lost',
    timestamp: new Date().toISOString(),
  };
  await t.app.bus.journal.put(id, 'work', { result: 'done', seqAfter: 2, at: new Date().toISOString(), events: [lost] });
  const stored = await appendExternalEvents(t.app.bus, id, [{ type: 'STATUS_UPDATE', agentId: 'review', message: 'from outside' }]);
  expect(stored.map((e) => e.seq)).toEqual([3]);
  expect((await streamed(id)).map((e) => [e.seq, e.message])).toEqual([
    [1, 'started'],
    [2, 'lost'],
    [3, 'from outside'],
  ]);
  // The actor's next activation finds nothing missing and no step cut off.
  const next = contextOf(id);
  expect(await next.rehydrate()).toBe(true);
  expect(next.lastSeq).toBe(3);
  expect(next.isRecorded('work')).toBe(true);
  expect((await streamed(id)).map((e) => e.seq)).toEqual([1, 2, 3]);
});
