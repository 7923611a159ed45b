import { describe, expect, it } from 'vitest';
import { within } from './within.js';

describe('within', () => {
  it('gives what arrives in time', async () => {
    await expect(within(Promise.resolve(7), 'x', 100)).resolves.toBe(7);
  });

  it('fails a call that waits too long, and hands its late result over to be closed', async () => {
    let resolve!: (v: string) => void;
    const slow = new Promise<string>((r) => (resolve = r));
    const late: string[] = [];
    await expect(within(slow, 'opening the history', 50, (v) => late.push(v))).rejects.toThrow('opening the history stalled for 50 ms');
    resolve('consumer');
    await new Promise((r) => setTimeout(r, 10));
    expect(late).toEqual(['consumer']);
  });
});
