/**
 * runLimited: at most `n` at a time with results in order; on the first failure nothing new
 * starts, the running members are aborted, and the failure propagates only once they settled.
 */
import { describe, expect, it } from 'vitest';
import { EphemeralContext } from './context.js';
import { parallelGroup, runLimited } from './parallel.js';

const tick = () => new Promise((r) => setImmediate(r));

describe('runLimited', () => {
  it('runs at most n at a time and keeps the order of results', async () => {
    let running = 0;
    let most = 0;
    const out = await runLimited(new EphemeralContext(), [5, 1, 4, 2, 3], 2, async (_ctx, x) => {
      most = Math.max(most, ++running);
      for (let i = 0; i < x; i++) await tick();
      running--;
      return x * 10;
    });
    expect(out).toEqual([50, 10, 40, 20, 30]);
    expect(most).toBe(2);
  });

  it('a failure stops the group: no new member starts, the running one is aborted and awaited first', async () => {
    const started: number[] = [];
    let settledAfterAbort = false;
    const p = runLimited(new EphemeralContext(), [0, 1, 2, 3], 2, async (ctx, x) => {
      started.push(x);
      if (x === 0) {
        await tick();
        throw new Error('first failed');
      }
      // The sibling runs until its context is aborted, then takes a moment to wind down.
      await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
      await tick();
      settledAfterAbort = true;
      throw new Error('stopped by the group');
    });
    await expect(p).rejects.toThrow('first failed');
    expect(settledAfterAbort).toBe(true);
    expect(started).toEqual([0, 1]);
  });

  it('a member that fails before it takes a slot (a failed dependency) stops the group too', async () => {
    const g = parallelGroup(new EphemeralContext(), 4);
    let aborted = false;
    const running = g.run(async (ctx) => {
      await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
      aborted = true;
      return 1;
    });
    const dependent = (async () => {
      await tick();
      throw new Error('dependency failed');
    })();
    await expect(g.all([running, dependent])).rejects.toThrow('dependency failed');
    expect(aborted).toBe(true);
    await expect(g.run(async () => 2)).rejects.toThrow('dependency failed');
  });

  it('a member that waits for a person lets the running ones finish, starts no new one, then propagates the wait', async () => {
    const wait = Object.assign(new Error('waiting for approval'), { passivates: true });
    const started: number[] = [];
    const finished: number[] = [];
    let aborted = false;
    const p = runLimited(new EphemeralContext(), [0, 1, 2, 3], 2, async (ctx, x) => {
      started.push(x);
      ctx.signal.addEventListener('abort', () => (aborted = true), { once: true });
      if (x === 0) {
        await tick();
        throw wait;
      }
      for (let i = 0; i < 5; i++) await tick();
      finished.push(x);
      return x;
    });
    await expect(p).rejects.toBe(wait);
    expect(aborted).toBe(false);
    expect(finished).toEqual([1]);
    expect(started).toEqual([0, 1]);
  });

  it('a real failure after a wait still stops the group and wins', async () => {
    const wait = Object.assign(new Error('waiting'), { passivates: true });
    let aborted = false;
    const p = runLimited(new EphemeralContext(), [0, 1], 2, async (ctx, x) => {
      ctx.signal.addEventListener('abort', () => (aborted = true), { once: true });
      await tick();
      if (x === 0) throw wait;
      await tick();
      throw new Error('broken');
    });
    await expect(p).rejects.toThrow('broken');
    expect(aborted).toBe(true);
  });
});
