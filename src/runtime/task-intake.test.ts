/**
 * The intake's fetch order: over every cycle of 8 fetches each priority is looked at first
 * its stated share of times (4 critical, 2 high, 1 normal, 1 low), and every fetch falls
 * through to all the other levels, highest first.
 */
import { describe, expect, it } from 'vitest';
import { TASK_PRIORITIES } from '../bus/index.js';
import { FAIRNESS, scanOrder } from './task-intake.js';

describe('scanOrder', () => {
  it('looks at each level first its share of every 8 fetches, wherever the cycle starts', () => {
    for (const start of [0, 3, 7, 1_000_001]) {
      const firsts = Array.from({ length: 8 }, (_, i) => scanOrder(start + i)[0]);
      const count = (p: string) => firsts.filter((f) => f === p).length;
      expect([count('critical'), count('high'), count('normal'), count('low')]).toEqual([4, 2, 1, 1]);
    }
    expect(FAIRNESS).toHaveLength(8);
  });

  it('then looks at every other level, highest first', () => {
    for (let turn = 0; turn < 8; turn++) {
      const order = scanOrder(turn);
      expect([...order].sort()).toEqual([...TASK_PRIORITIES].sort());
      const rest = order.slice(1);
      expect(rest).toEqual(TASK_PRIORITIES.filter((p) => p !== order[0]));
    }
    expect(scanOrder(7)).toEqual(['low', 'critical', 'high', 'normal']);
  });

  it('with the queues off looks at normal first, and at the other levels first once in 8 fetches', () => {
    const firsts = Array.from({ length: 16 }, (_, i) => scanOrder(i, false)[0]);
    expect(firsts.filter((f) => f === 'normal')).toHaveLength(14);
    expect(firsts.filter((f) => f !== 'normal')).toEqual(['low', 'low']);
    for (let turn = 0; turn < 8; turn++) expect([...scanOrder(turn, false)].sort()).toEqual([...TASK_PRIORITIES].sort());
  });
});
