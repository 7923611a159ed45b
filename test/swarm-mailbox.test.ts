/**
 * Swarm mailboxes and the shared board against a real nats-server: a send repeated with the same
 * id (a step run again after a crash) is stored once; a reader started after a recorded position
 * gets exactly the later messages, in order; a purge empties one swarm's mailboxes and no other;
 * concurrent task list and workspace writes all land (compare-and-set).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STREAMS, type Bus } from '../src/bus/index.js';
import { LEAD, Mailboxes, SwarmBoard, type Received } from '../src/swarm/index.js';
import { SwarmAgentContext } from '../src/swarm/agent-context.js';
import { startTestNats, type TestNats } from './harness/nats.js';
import { connectTestBus } from './harness/bus.js';

let nats: TestNats;
let bus: Bus;
let mail: Mailboxes;
let board: SwarmBoard;

beforeAll(async () => {
  nats = await startTestNats();
  bus = await connectTestBus(nats.url, 'swarm-mailbox');
  mail = new Mailboxes(bus.js, bus.jsm, bus.events);
  board = await SwarmBoard.open(bus);
});
afterAll(async () => {
  await bus?.close();
  await nats?.stop();
});

async function readAll(wf: string, name: string, after: number, n: number): Promise<Received[]> {
  const r = await mail.reader(wf, name, after);
  try {
    const got: Received[] = [];
    const end = Date.now() + 5000;
    while (got.length < n && Date.now() < end) {
      await r.wait(end - Date.now());
      got.push(...r.take());
    }
    await r.wait(200); // nothing more arrives
    got.push(...r.take());
    return got;
  } finally {
    r.close();
  }
}

describe('swarm mailboxes', () => {
  it('stores a repeated send once, and a reader from a recorded position gets exactly the later messages in order', async () => {
    const wf = randomUUID();
    for (let i = 1; i <= 5; i++) {
      const m = { kind: 'text' as const, from: 'agent-1', text: `m${i}` };
      await mail.send(wf, LEAD, m, `${wf}:agent-1:step-${i}:0`);
      await mail.send(wf, LEAD, m, `${wf}:agent-1:step-${i}:0`); // the step run again
    }
    await mail.send(wf, 'agent-2', { kind: 'text', from: 'agent-1', text: 'not for the lead' }, `${wf}:agent-1:other:0`);
    const all = await readAll(wf, LEAD, 0, 5);
    expect(all.map((m) => (m.kind === 'text' ? m.text : m.kind))).toEqual(['m1', 'm2', 'm3', 'm4', 'm5']);
    const later = await readAll(wf, LEAD, all[1]!.seq, 3);
    expect(later.map((m) => (m.kind === 'text' ? m.text : ''))).toEqual(['m3', 'm4', 'm5']);
    expect(later.map((m) => m.seq)).toEqual(all.slice(2).map((m) => m.seq));
    expect((await readAll(wf, 'agent-2', 0, 1)).map((m) => m.kind === 'text' && m.text)).toEqual(['not for the lead']);
  });

  it("a purge empties one swarm's mailboxes and leaves another's", async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    await mail.send(a, LEAD, { kind: 'text', from: 'agent-1', text: 'a' }, `${a}:x:0`);
    await mail.send(b, LEAD, { kind: 'text', from: 'agent-1', text: 'b' }, `${b}:x:0`);
    await mail.purge(a);
    expect(await readAll(a, LEAD, 0, 0)).toEqual([]);
    expect((await readAll(b, LEAD, 0, 1)).length).toBe(1);
  });

  it('concurrent writers of the task list and the workspace all land', async () => {
    const wf = randomUUID();
    await board.update(wf, () => ({ workflow_id: wf, owner: { user_id: '', tenant_id: '' }, status: 'running', tasks: [], updated_at: '' }));
    await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        board.update(wf, (cur) => ({ ...cur!, tasks: [...cur!.tasks, { id: `t${i}`, description: `task ${i}`, status: 'pending', source: 'plan' }] })),
      ),
    );
    expect((await board.state(wf))!.tasks.map((t) => t.id).sort()).toEqual(Array.from({ length: 8 }, (_, i) => `t${i}`).sort());
    await Promise.all(Array.from({ length: 6 }, (_, i) => board.post(wf, { agent: `agent-${i}`, task_id: `t${i}`, text: `r${i}`, at: '' })));
    expect((await board.entries(wf, 100)).length).toBe(6);
    expect((await board.entries(wf, 2)).length).toBe(2);
  });

  it("an agent's re-activation replays its journal: a recorded step does not run again, a step cut off before its record sends nothing twice", async () => {
    const wf = randomUUID();
    const make = () => new SwarmAgentContext({ workflowId: wf, name: 'agent-1', journal: bus.journal, publisher: bus.events, mail });
    const first = make();
    let runs = 0;
    expect(await first.step('a', async () => (first.emit('AGENT_STARTED', 'agent-1', 'started'), ++runs))).toBe(1);
    // Step b sends, then the process dies before its record (the step's function throws after its sends are stored).
    await expect(
      first.step('b', async () => {
        first.emit('PROGRESS', 'agent-1', 'iteration 1', { iteration: 1 });
        await first.send('agent-2', { kind: 'text', from: 'agent-1', text: 'hi' }, true);
        throw new Error('killed');
      }),
    ).rejects.toThrow('killed');
    const again = make();
    expect(await again.rehydrate()).toBe(1);
    expect(await again.step('a', async () => ++runs)).toBe(1);
    expect(runs).toBe(1);
    await again.step('b', async () => {
      again.emit('PROGRESS', 'agent-1', 'iteration 1', { iteration: 1 });
      await again.send('agent-2', { kind: 'text', from: 'agent-1', text: 'hi' }, true);
      return true;
    });
    expect(again.messagesSent).toBe(1);
    const third = make();
    await third.rehydrate();
    expect(third.messagesSent).toBe(1); // counted from the journal
    // The lead got each event once; agent-2 the message once. LLM events stay with the agent.
    third.emit('LLM_PARTIAL', 'agent-1', 'x');
    const lead = await readAll(wf, LEAD, 0, 2);
    expect(lead.map((m) => (m.kind === 'event' ? m.event.type : m.kind))).toEqual(['AGENT_STARTED', 'PROGRESS']);
    expect((await readAll(wf, 'agent-2', 0, 1)).length).toBe(1);
  });
  it("a deferred step is recorded with the next step's journal message; cut off before that, it runs again and sends nothing twice", async () => {
    const wf = randomUUID();
    const make = () => new SwarmAgentContext({ workflowId: wf, name: 'agent-1', journal: bus.journal, publisher: bus.events, mail });
    let reads = 0;
    const read = (c: SwarmAgentContext) =>
      c.step(
        'inbox-2',
        async () => {
          c.emit('PROGRESS', 'agent-1', 'iteration 2', { iteration: 2 });
          return { read: ++reads, last: 7 };
        },
        { deferred: true },
      );
    const first = make();
    expect(await read(first)).toEqual({ read: 1, last: 7 });
    expect(first.isRecorded('inbox-2')).toBe(true);
    // Nothing written yet: a crash here loses the step, which runs again.
    expect((await bus.journal.read(wf, 'agent-1')).size).toBe(0);
    const again = make();
    expect(await again.rehydrate()).toBe(0);
    expect(await read(again)).toEqual({ read: 2, last: 7 });
    expect(await again.step('turn-2', async () => 'answer')).toBe('answer');
    // One journal message: the turn's, carrying the deferred read's record (read back as its own step's).
    const subject = bus.journal.subject(wf, 'agent-1');
    const info = await bus.jsm.streams.info(STREAMS.journal, { subjects_filter: subject });
    expect(info.state.subjects).toEqual({ [subject]: 1 });
    const written = await bus.journal.read(wf, 'agent-1');
    expect([...written.keys()]).toEqual(['inbox-2', 'turn-2']);
    expect(written.get('inbox-2')).toEqual({ result: { read: 2, last: 7 } });
    expect(written.get('turn-2')).toEqual({ result: 'answer' });
    const third = make();
    expect(await third.rehydrate()).toBe(2);
    expect(await read(third)).toEqual({ read: 2, last: 7 });
    expect(reads).toBe(2);
    // The lead got the PROGRESS of the read once, though it ran twice.
    const lead = await readAll(wf, LEAD, 0, 1);
    expect(lead.map((m) => (m.kind === 'event' ? m.event.message : m.kind))).toEqual(['iteration 2']);
  });

  it('events emitted together are one stored mail, read as its parts with one position', async () => {
    const wf = randomUUID();
    const c = new SwarmAgentContext({ workflowId: wf, name: 'agent-1', journal: bus.journal, publisher: bus.events, mail });
    await c.step('turn-1', async () => {
      c.emit('AGENT_STARTED', 'agent-1', 'started');
      c.emit('PROGRESS', 'agent-1', 'iteration 1', { iteration: 1 });
      await new Promise((r) => setTimeout(r, 20));
      c.emit('AGENT_COMPLETED', 'agent-1', 'completed');
      return true;
    });
    const r = await mail.reader(wf, LEAD, 0);
    try {
      const got: Received[] = [];
      const end = Date.now() + 5000;
      while (got.length < 3 && Date.now() < end) {
        await r.wait(end - Date.now());
        got.push(...r.take(1)); // one stored message at a time: a batch comes whole
      }
      expect(got.map((m) => (m.kind === 'event' ? m.event.type : m.kind))).toEqual(['AGENT_STARTED', 'PROGRESS', 'AGENT_COMPLETED']);
      expect(got[0]!.seq).toBe(got[1]!.seq);
      expect(got[2]!.seq).toBeGreaterThan(got[1]!.seq);
    } finally {
      r.close();
    }
  });

  it("a board's write from its remembered revision notices another process's write in between and keeps it", async () => {
    const wf = randomUUID();
    const other = await SwarmBoard.open(bus);
    const task = (id: string) => ({ id, description: id, status: 'pending' as const, source: 'plan' as const });
    await board.update(wf, () => ({ workflow_id: wf, owner: { user_id: '', tenant_id: '' }, status: 'running', tasks: [task('t1')], updated_at: '' }));
    await other.update(wf, (cur) => ({ ...cur!, tasks: [...cur!.tasks, task('t2')] }));
    await board.update(wf, (cur) => ({ ...cur!, tasks: [...cur!.tasks, task('t3')] }));
    expect((await board.state(wf))!.tasks.map((t) => t.id)).toEqual(['t1', 't2', 't3']);
    await board.post(wf, { agent: 'agent-1', task_id: 't1', text: 'r1', at: '' }, { agent: 'agent-2', task_id: 't2', text: 'r2', at: '' });
    await other.post(wf, { agent: 'agent-3', task_id: 't3', text: 'r3', at: '' });
    await board.post(wf, { agent: 'agent-1', task_id: 't1', text: 'r1 again', at: '' });
    expect((await board.entries(wf, 10)).map((e) => e.text)).toEqual(['r2', 'r3', 'r1 again']);
  });
});
