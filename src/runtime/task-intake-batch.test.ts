/**
 * The intake's fetch size: a worker with many free slots and a backlog fills them in a few
 * round trips (each full fetch doubles the next, up to FETCH_BACKLOG_MAX), never takes more
 * than its free slots, takes every message once, and starts again from FETCH_MAX once the
 * backlog is gone; with the priority levels on, each level ramps on its own pulls. A trickle of
 * tasks costs about two pulls each, and a message nak'ed with a delay is still taken. On a real
 * nats-server with the service's topology.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestNats, type TestNats } from '../../test/harness/nats.js';
import { connectTestBus } from '../../test/harness/bus.js';
import { subjects, taskStream, type Bus, type TaskPriority } from '../bus/index.js';
import { createLogger } from '../kernel/index.js';
import { FAIRNESS, FETCH_BACKLOG_MAX, FETCH_MAX, IDLE_RESCAN_MS, TaskIntake, type TaskDelivery } from './task-intake.js';

let nats: TestNats;
let bus: Bus;
const log = createLogger({ level: 'silent' });

beforeAll(async () => {
  nats = await startTestNats();
  bus = await connectTestBus(nats.url, 'intake-batch', {}, log);
});
afterAll(async () => {
  await bus?.close();
  await nats?.stop();
});

async function queue(n: number, p: TaskPriority = 'normal'): Promise<Set<string>> {
  const ids = new Set<string>();
  await Promise.all(
    Array.from({ length: n }, () => {
      const id = randomUUID();
      ids.add(id);
      return bus.js.publish(subjects.taskStart(id, p), JSON.stringify({ task_id: id }), { msgID: id });
    }),
  );
  return ids;
}

const idOf = (d: TaskDelivery) => (JSON.parse(new TextDecoder().decode(d.data)) as { task_id: string }).task_id;

describe('task intake fetch size', () => {
  it('fills free slots from a backlog in a few fetches, each message once, then starts small again', async () => {
    const intake = new TaskIntake(bus.nc, log, false);
    const queued = await queue(600);
    const sizes: number[] = [];
    const seen = new Set<string>();
    while (seen.size < 600) {
      const got = await intake.take(1000 - seen.size);
      sizes.push(got.length);
      for (const d of got) {
        expect(seen.has(idOf(d))).toBe(false);
        seen.add(idOf(d));
        d.ack();
      }
    }
    expect(seen).toEqual(queued);
    // 16, 32, 64, 128, 256, then the rest (104): six round trips, not 38 of 16.
    expect(sizes).toEqual([FETCH_MAX, 32, 64, 128, FETCH_BACKLOG_MAX, 104]);

    // The backlog is gone: the next fetch asks for FETCH_MAX again.
    await queue(40);
    const small = await intake.take(1000);
    small.forEach((d) => d.ack());
    expect(small.length).toBe(FETCH_MAX);
    const rest = await intake.take(1000);
    rest.forEach((d) => d.ack());
    expect(rest.length).toBe(40 - FETCH_MAX);
    intake.close();
  });

  it('never takes more than the free slots, and keeps its size while the slots are the bound', async () => {
    const intake = new TaskIntake(bus.nc, log, false);
    await queue(200);
    const sizes: number[] = [];
    for (const free of [100, 100, 3, 100]) {
      const got = await intake.take(free);
      sizes.push(got.length);
      got.forEach((d) => d.ack());
    }
    expect(sizes).toEqual([16, 32, 3, 64]);
    // What is left (85) is taken once, and nothing more is waiting.
    let rest = 0;
    while (rest < 85) {
      const got = await intake.take(1000);
      rest += got.length;
      got.forEach((d) => d.ack());
    }
    expect(rest).toBe(85);
    intake.close();
  });

  it('with every level backlogged, each level ramps on its own pulls and the fetch order keeps the shares', async () => {
    const intake = new TaskIntake(bus.nc, log, true);
    // Three cycles of 8 fetches: critical 12 pulls, high 6, normal and low 3 each.
    const want: Record<TaskPriority, number[]> = {
      critical: [16, 32, 64, 128, 256, 256, 256, 256, 256, 256, 256, 256],
      high: [16, 32, 64, 128, 256, 256],
      normal: [16, 32, 64],
      low: [16, 32, 64],
    };
    for (const [p, sizes] of Object.entries(want)) await queue(sizes.reduce((a, b) => a + b) + 50, p as TaskPriority);
    const levels: string[] = [];
    const got: Record<string, number[]> = { critical: [], high: [], normal: [], low: [] };
    for (let i = 0; i < 24; i++) {
      const ds = await intake.take(1000);
      ds.forEach((d) => d.ack());
      const p = Object.keys(want).find((k) => taskStream(k as TaskPriority) === ds[0]!.info.stream)!;
      levels.push(p);
      got[p]!.push(ds.length);
    }
    expect(levels).toEqual([...FAIRNESS, ...FAIRNESS, ...FAIRNESS]);
    expect(got).toEqual(want);
    // Drain what is left, so that nothing stays queued for another test.
    for (let left = 200; left > 0;) {
      const ds = await intake.take(1000);
      ds.forEach((d) => d.ack());
      left -= ds.length;
    }
    intake.close();
  });

  it('a trickle costs about two pulls a task, not a look at every level before and after each, and each task is taken at once', async () => {
    const intake = new TaskIntake(bus.nc, log, true);
    let pulls = 0;
    const watch = bus.nc.subscribe('$JS.API.CONSUMER.MSG.NEXT.*.workers', {
      callback: () => {
        pulls++;
      },
    });
    // The first take looks at every level; then the levels are known drained.
    const first = intake.take(10);
    await queue(1, 'high');
    (await first).forEach((d) => d.ack());
    await new Promise((r) => setTimeout(r, 20));
    pulls = 0;
    const levels: TaskPriority[] = ['normal', 'low', 'critical', 'high'];
    const waits: number[] = [];
    for (let i = 0; i < 20; i++) {
      const taking = intake.take(10);
      await new Promise((r) => setTimeout(r, 10)); // the worker is waiting when the task comes
      const t0 = performance.now();
      const [id] = await queue(1, levels[i % 4]);
      const got = await taking;
      waits.push(performance.now() - t0);
      expect(got.map(idOf)).toEqual([id]);
      got.forEach((d) => d.ack());
    }
    await bus.nc.flush();
    watch.unsubscribe();
    intake.close();
    // One pull a publish prompted, and its look once more RECHECK_MS later: the old intake
    // looked at all four levels before and after waiting (about ten pulls a task).
    expect(pulls).toBeLessThanOrEqual(2 * 20 + 4);
    // Taken when published, not at the next rescan.
    expect(Math.max(...waits)).toBeLessThan(IDLE_RESCAN_MS / 2);
  });

  it("a message nak'ed with a delay comes back without a publish: a drained level is looked at again", async () => {
    const intake = new TaskIntake(bus.nc, log, true);
    const [id] = await queue(1, 'low');
    const got = await intake.take(10);
    expect(got.map(idOf)).toEqual([id]);
    const t0 = performance.now();
    got[0]!.nak(100);
    const again = await intake.take(10);
    expect(again.map(idOf)).toEqual([id]);
    expect(performance.now() - t0).toBeLessThan(100 + IDLE_RESCAN_MS + 1000);
    again.forEach((d) => d.ack());
    intake.close();
  });
});
