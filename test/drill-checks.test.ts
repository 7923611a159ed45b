/**
 * The fault drill's verdicts (deploy/drill/checks.ts), each on hand-made input: a seq stream
 * across resumes, a second claim grant with and without a lost holder, the minute boundaries
 * of an every-minute schedule, and the classification of client-visible errors.
 */
import { describe, expect, it } from 'vitest';
import { allowedError, ClaimLedger, ErrorBook, errorKind, failureOutcome, quantile, scheduleVerdict, SeqCheck } from '../deploy/drill/checks.js';

describe('SeqCheck', () => {
  it('counts a seq seen again as a duplicate and a jump or a REPLAY_GAP as a gap; STREAM_END ends it', () => {
    const c = new SeqCheck();
    for (const s of [1, 2, 3]) c.see(s, 'LLM_PARTIAL');
    expect([c.gaps, c.duplicates, c.ended]).toEqual([0, 0, false]);
    c.see(3, 'LLM_PARTIAL'); // a resume that replayed the last event again
    c.see(2, 'LLM_PARTIAL');
    expect(c.duplicates).toBe(2);
    c.see(5, 'LLM_PARTIAL'); // 4 never came
    expect(c.gaps).toBe(1);
    c.replayGap();
    expect(c.gaps).toBe(2);
    c.see(6, 'STREAM_END');
    expect([c.last, c.ended]).toEqual([6, true]);
  });
});

describe('ClaimLedger', () => {
  it('a second grant is a double grant unless the first holder lost its connection soon after its grant', () => {
    const l = new ClaimLedger(5000);
    // m1: the holder's gateway died 1 s after the grant; offered again 10 s later: a re-grant.
    l.grant('m1', 'a', 1000);
    l.connClosed('a', 2000);
    l.grant('m1', 'b', 12_000);
    // m2: both holders connected: a double grant.
    l.grant('m2', 'b', 3000);
    l.grant('m2', 'c', 3001);
    // m3: the holder closed long after its grant (it had replied): a double grant.
    l.grant('m3', 'd', 1000);
    l.connClosed('d', 9000);
    l.grant('m3', 'c', 20_000);
    // m4: once.
    l.grant('m4', 'c', 5000);
    expect(l.tally()).toMatchObject({ messages: 4, doubles: 2, regrantsAfterLostHolder: 1 });
    expect(l.tally().doubleExamples).toHaveLength(2);
    expect(l.granted('m4')).toBe(true);
    expect(l.granted('m5')).toBe(false);
  });
});

describe('scheduleVerdict', () => {
  const at = (min: number) => new Date(Date.UTC(2026, 0, 1, 12, min)).toISOString();
  const from = Date.UTC(2026, 0, 1, 12, 0, 30);
  it('judges each minute boundary in (from, to]: missed, twice, failed, a run with no task as missed', () => {
    const runs = [
      { triggered_at: at(1), status: 'COMPLETED', workflow_id: 'w1' },
      { triggered_at: at(2), status: 'COMPLETED', workflow_id: 'w2' },
      { triggered_at: at(2), status: 'COMPLETED', workflow_id: 'w2b' },
      // 3: nothing
      { triggered_at: at(4), status: 'FAILED' }, // claimed, never submitted
      { triggered_at: at(5), status: 'FAILED', workflow_id: 'w5' },
      { triggered_at: at(6), status: 'RUNNING', workflow_id: 'w6' },
      { triggered_at: at(9), status: 'COMPLETED', workflow_id: 'w9' }, // after `to`: not judged
    ];
    const v = scheduleVerdict(runs, from, Date.UTC(2026, 0, 1, 12, 6, 10));
    expect(v).toMatchObject({ boundaries: 6, missed: 2, twice: 1, failed: 1, offBoundary: 0 });
    expect(v.missedAt).toEqual([at(3), at(4)]);
  });
});

describe('errors', () => {
  it('classifies outcomes; only fail-over, a cut and 503 with Retry-After are allowed', () => {
    expect(errorKind({ kind: 'status', status: 503, retryAfter: true })).toBe('503 with Retry-After');
    expect(errorKind({ kind: 'status', status: 503, retryAfter: false })).toBe('503 without Retry-After');
    expect(errorKind({ kind: 'status', status: 500, retryAfter: false })).toBe('HTTP 500');
    expect(errorKind({ kind: 'hang' })).toBe('hang');
    for (const k of ['refused', 'cut', '503 with Retry-After']) expect(allowedError(k)).toBe(true);
    for (const k of ['hang', 'HTTP 500', '503 without Retry-After', 'HTTP 429']) expect(allowedError(k)).toBe(false);
    const refused = Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } });
    const reset = Object.assign(new TypeError('fetch failed'), { cause: { code: 'UND_ERR_SOCKET' } });
    const timeout = Object.assign(new Error('timed out'), { name: 'TimeoutError' });
    expect([failureOutcome(refused), failureOutcome(reset), failureOutcome(timeout)]).toEqual([{ kind: 'refused' }, { kind: 'cut' }, { kind: 'hang' }]);
    const book = new ErrorBook();
    book.add('refused', 'x');
    book.add('HTTP 500', 'y');
    book.add('hang', 'z');
    expect(book.bad()).toBe(2);
  });

  it('quantile is the nearest rank', () => {
    expect(quantile([5, 1, 3, 2, 4], 0.5)).toBe(3);
    expect(quantile([5, 1, 3, 2, 4], 0.99)).toBe(5);
    expect(quantile([], 0.5)).toBeNaN();
  });
});
