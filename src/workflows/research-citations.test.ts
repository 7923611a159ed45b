/** Renumbering the synthesiser's markers so that citations[n-1] is the source of every [n]. */
import { describe, expect, it } from 'vitest';
import { markersOf, renumberCitations } from './research-citations.js';

describe('renumberCitations', () => {
  it('numbers the cited sources in order of first appearance', () => {
    const r = renumberCitations('Alpha [3]. Beta [1][3]. Gamma [2, 3].', 5);
    expect(r.text).toBe('Alpha [1]. Beta [2][1]. Gamma [1, 3].');
    expect(r.cited).toEqual([3, 1, 2]);
  });

  it('removes numbers naming no listed source, and a marker left empty', () => {
    const r = renumberCitations('Alpha [7]. Beta [0, 2]. Gamma [9, 9].', 3);
    expect(r.text).toBe('Alpha. Beta [1]. Gamma.');
    expect(r.cited).toEqual([2]);
  });

  it('expands ranges, accepts semicolons and markdown links, leaves code and other brackets alone', () => {
    const r = renumberCitations('A [2-4]. B [4; 1]. C [1](https://x.test). See [the docs](https://d.test).\n```\nx = a[5]\n```', 4);
    expect(r.text).toBe('A [1, 2, 3]. B [3, 4]. C [4]. See [the docs](https://d.test).\n```\nx = a[5]\n```');
    expect(r.cited).toEqual([2, 3, 4, 1]);
  });

  it('leaves every marker resolvable and no citation unreferenced', () => {
    const r = renumberCitations('One [5]. Two [2]. Three [12]. Four [5, 2].', 6);
    const used = markersOf(r.text);
    expect(used).toEqual([1, 2]);
    expect(r.cited).toHaveLength(used.length);
  });

  it('keeps a text without markers as it is', () => {
    expect(renumberCitations('No markers here.', 3)).toEqual({ text: 'No markers here.', cited: [] });
  });
});
