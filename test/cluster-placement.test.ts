/**
 * The cluster launcher's placement check (deploy/cluster/placement.ts): a cluster whose nodes
 * cannot place a stream with its replica count gets its nodes restarted one at a time, a
 * bounded number of times, and then a clear error; one that can place it goes on at once.
 * A standalone nats-server stands in for a cluster that cannot place R3 (it refuses replicas
 * above 1), and for one that can place R1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESTART_ROUNDS, settlePlacement } from '../deploy/cluster/placement.js';
import { startTestNats, type TestNats } from './harness/nats.js';

let nats: TestNats;
beforeAll(async () => {
  nats = await startTestNats();
});
afterAll(async () => {
  await nats?.stop();
});

function nodes(calls: string[]) {
  return ['nats-1', 'nats-2'].map((name) => ({
    name,
    ports: { client: nats.port },
    stop: async () => void calls.push(`stop ${name}`),
    start: async () => void calls.push(`start ${name}`),
  }));
}

describe('settlePlacement', () => {
  it('goes on at once when the stream can be placed, restarting nothing', async () => {
    const calls: string[] = [];
    const logs: string[] = [];
    await settlePlacement(nodes(calls), 1, (s) => logs.push(s), 5000);
    expect(calls).toEqual([]);
    expect(logs).toEqual([]);
  });

  it('restarts the nodes one at a time while placement fails, then gives up with the server answer', async () => {
    const calls: string[] = [];
    const logs: string[] = [];
    const err = await settlePlacement(nodes(calls), 3, (s) => logs.push(s), 300).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/could not place a stream with 3 replicas \(.+\), even after 2 rolling restarts/);
    const round = ['stop nats-1', 'start nats-1', 'stop nats-2', 'start nats-2'];
    expect(calls).toEqual(Array.from({ length: RESTART_ROUNDS }, () => round).flat());
    expect(logs).toHaveLength(RESTART_ROUNDS);
    expect(logs[0]).toMatch(/restarting the nodes one at a time/);
  });
});
