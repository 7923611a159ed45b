/**
 * DeltaCoalescer: chunks of exactly `chunk` characters while text keeps coming, nothing held
 * past `flushMs`, and the first text of a stream held at most 5 ms (time to the first token).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DeltaCoalescer } from './coalescer.js';

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('DeltaCoalescer', () => {
  it('a slow first token goes out within 5 ms; later text coalesces for up to flushMs', () => {
    const sent: string[] = [];
    const c = new DeltaCoalescer((p) => sent.push(p), 8, 50);
    c.push('He');
    expect(sent).toEqual([]);
    vi.advanceTimersByTime(5);
    expect(sent).toEqual(['He']);
    c.push('llo');
    c.push(', w');
    vi.advanceTimersByTime(49);
    expect(sent).toEqual(['He']);
    vi.advanceTimersByTime(1);
    expect(sent).toEqual(['He', 'llo, w']);
    c.push('orld, again and again');
    expect(sent).toEqual(['He', 'llo, w', 'orld, ag', 'ain and ']);
    c.flush();
    expect(sent.join('')).toBe('Hello, world, again and again');
  });

  it('a fast model fills whole chunks: every delta but the last is exactly `chunk` long', () => {
    const sent: string[] = [];
    const c = new DeltaCoalescer((p) => sent.push(p), 4, 50);
    c.push('ab');
    vi.advanceTimersByTime(1);
    for (const w of ['cd', 'ef', 'gh', 'ij']) {
      c.push(w); // a token a millisecond: past the first 5 ms, no short chunk in between
      vi.advanceTimersByTime(1);
    }
    c.push('kl');
    vi.advanceTimersByTime(10);
    expect(sent).toEqual(['abcd', 'efgh', 'ijkl']);
    c.push('m');
    vi.advanceTimersByTime(50);
    expect(sent).toEqual(['abcd', 'efgh', 'ijkl', 'm']);
  });
});
