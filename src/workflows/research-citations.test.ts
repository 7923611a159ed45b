/** Renumbering the synthesiser's markers so that citations[n-1] is the source of every [n]. */
import { describe, expect, it } from 'vitest';
import { markersOf, renumberCitations, withoutMarkers } from './research-citations.js';

describe('renumberCitations', () => {
  it('numbers the cited sources in order of first appearance', () => {
    const r = renumberCitations('Alpha [3]. Beta [1][3]. Gamma [2, 3].', 5);
    expect(r.text).toBe('Alpha [1]. Beta [2][1]. Gamma [1, 3].');
    expect(r.cited).toEqual([3, 1, 2]);
  });

  it('removes numbers naming no listed source, and a marker left empty', () => {
    const r = renumberCitations('Alpha [7]. Beta [4, 2]. Gamma [9, 9]. Delta [2-5].', 3);
    expect(r.text).toBe('Alpha. Beta [1]. Gamma. Delta [1, 2].');
    expect(r.cited).toEqual([2, 3]);
  });

  it('leaves inline code alone: arr[0] keeps its [0], x[1] is no citation', () => {
    const r = renumberCitations('Index with `arr[0]` or ``x[1] `y` [2]``, as streams do [2].', 2);
    expect(r.text).toBe('Index with `arr[0]` or ``x[1] `y` [2]``, as streams do [1].');
    expect(r.cited).toEqual([2]);
    // A backtick nothing closes is no code span; a blank line ends one.
    expect(renumberCitations('A ` tick [2].', 2).text).toBe('A ` tick [1].');
    expect(renumberCitations('A `b\n\nc [2]` d', 2).text).toBe('A `b\n\nc [1]` d');
  });

  it('leaves fenced code alone, backticks or tildes, closed or running to the end', () => {
    const text = 'See [2].\n~~~\na[1]\n~~~\nThen [1].\n```js\nb[2]';
    expect(renumberCitations(text, 2).text).toBe('See [1].\n~~~\na[1]\n~~~\nThen [2].\n```js\nb[2]');
  });

  it('leaves as written a bracket whose numbers could not all be sources: years, ranges of years, 0, reversed ranges', () => {
    const text = 'Sales grew [2020-2023] and again [2024]; arr[0] stays; [5-2] and [1, 2020] too; [1-40] is no range of sources. Streams [1].';
    const r = renumberCitations(text, 3);
    expect(r.text).toBe(text);
    expect(r.cited).toEqual([1]);
    expect(markersOf(text)).toEqual([1]);
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

  it('finds and strips only citations', () => {
    expect(markersOf('A [2, 1]. `b[3]` [2020]. C [4-5].')).toEqual([2, 1, 4, 5]);
    expect(withoutMarkers('A [2, 1]. `b[3]` x[0] [2020]. C [4-5](https://x.test).')).toBe('A. `b[3]` x[0] [2020]. C.');
  });

  it('keeps a text without markers as it is', () => {
    expect(renumberCitations('No markers here.', 3)).toEqual({ text: 'No markers here.', cited: [] });
  });
});
