import { describe, expect, it } from 'vitest';
import { passing, untilSettled } from './settle.js';

const quiet = { warn: () => {} };

describe('untilSettled', () => {
  it('runs the start-up again after a passing failure and returns its value', async () => {
    let calls = 0;
    const v = await untilSettled(quiet, async () => {
      if (++calls < 3) throw Object.assign(new Error('timeout'), { name: 'TimeoutError' });
      return 'ready';
    });
    expect(v).toBe('ready');
    expect(calls).toBe(3);
  });

  it('fails at once on an error that waiting does not cure', async () => {
    let calls = 0;
    const err = new Error('subjects overlap with an existing stream');
    await expect(
      untilSettled(quiet, async () => {
        calls++;
        throw err;
      }),
    ).rejects.toBe(err);
    expect(calls).toBe(1);
  });

  it('gives up after its window with the last error', async () => {
    let calls = 0;
    await expect(
      untilSettled(
        quiet,
        async () => {
          calls++;
          throw new Error('JetStream system temporarily unavailable');
        },
        300,
      ),
    ).rejects.toThrow('temporarily unavailable');
    expect(calls).toBeGreaterThan(1);
  });

  it('tells passing failures from lasting ones', () => {
    expect(passing(Object.assign(new Error('x'), { name: 'NoRespondersError' }))).toBe(true);
    expect(passing(new Error('no suitable peers for placement'))).toBe(true);
    expect(passing(new Error('stream name already in use with a different configuration'))).toBe(false);
  });
});
