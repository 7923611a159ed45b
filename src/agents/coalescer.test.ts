/**
 * DeltaCoalescer: chunks of exactly `chunk` characters while text keeps coming, nothing held
 * past `flushMs`, and the first text of a stream sent at the end of the event loop's turn that
 * read it (time to the first token), with whatever else that turn read.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DeltaCoalescer } from './coalescer.js';

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('DeltaCoalescer', () => {
  it('the first text goes out at the end of the turn that read it; later text coalesces for up to flushMs', () => {
    const sent: string[] = [];
    const c = new DeltaCoalescer((p) => sent.push(p), 8, 50);
    c.push('H');
    c.push('e');
    expect(sent).toEqual([]);
    vi.advanceTimersByTime(0);
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

  it('a burst read at once is whole chunks from the start, with no short first event', () => {
    const sent: string[] = [];
    const c = new DeltaCoalescer((p) => sent.push(p), 4, 50);
    for (const w of ['ab', 'cd', 'ef', 'gh', 'ij']) c.push(w);
    expect(sent).toEqual(['abcd', 'efgh']);
    vi.advanceTimersByTime(0);
    expect(sent).toEqual(['abcd', 'efgh']); // 'ij' waits for the window, not for the first-text flush
    c.push('kl');
    vi.advanceTimersByTime(10);
    expect(sent).toEqual(['abcd', 'efgh', 'ijkl']);
    c.push('m');
    vi.advanceTimersByTime(39);
    expect(sent).toEqual(['abcd', 'efgh', 'ijkl']);
    vi.advanceTimersByTime(1); // the window opened by 'ij' at 0 ms
    expect(sent).toEqual(['abcd', 'efgh', 'ijkl', 'm']);
  });

  it('a fast model after its first text fills whole chunks: every later delta but the last is exactly `chunk` long', () => {
    const sent: string[] = [];
    const c = new DeltaCoalescer((p) => sent.push(p), 4, 50);
    c.push('ab');
    vi.advanceTimersByTime(1);
    for (const w of ['cd', 'ef', 'gh', 'ij']) {
      c.push(w); // a token a millisecond
      vi.advanceTimersByTime(1);
    }
    expect(sent).toEqual(['ab', 'cdef', 'ghij']);
    c.push('k');
    c.flush();
    vi.advanceTimersByTime(100);
    expect(sent).toEqual(['ab', 'cdef', 'ghij', 'k']); // flushed once, nothing sent twice
  });
});
