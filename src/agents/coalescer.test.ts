/** DeltaCoalescer: the first delta at once, then chunks of at most `chunk` characters, nothing held past `flushMs`. */
import { describe, expect, it, vi } from 'vitest';
import { DeltaCoalescer } from './index.js';

describe('DeltaCoalescer', () => {
  it('sends the first delta at once, coalesces the rest, and never holds text past flushMs', () => {
    vi.useFakeTimers();
    try {
      const sent: string[] = [];
      const c = new DeltaCoalescer((p) => sent.push(p), 8, 50);
      c.push('He');
      expect(sent).toEqual(['He']); // the first token is not kept waiting
      c.push('llo');
      c.push(', w');
      expect(sent).toEqual(['He']);
      vi.advanceTimersByTime(49);
      expect(sent).toEqual(['He']);
      vi.advanceTimersByTime(1);
      expect(sent).toEqual(['He', 'llo, w']);
      c.push('orld, again and again');
      expect(sent).toEqual(['He', 'llo, w', 'orld, ag', 'ain and ']);
      c.flush();
      expect(sent.join('')).toBe('Hello, world, again and again');
      expect(sent.every((p) => p.length <= 8)).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it('a first delta longer than a chunk goes out in chunks at once, the remainder with it', () => {
    const sent: string[] = [];
    const c = new DeltaCoalescer((p) => sent.push(p), 4, 50);
    c.push('abcdefghij');
    expect(sent).toEqual(['abcd', 'efgh', 'ij']);
  });
});
