/** The answer's [n] marks as links to their sources, and code left as it is (src/console/citations-text.ts). */
import { describe, expect, it } from 'vitest';
import { citationsOf, linkCitations } from '../src/console/citations-text.js';

const items = citationsOf({
  citations: [{ url: 'https://a.example/x (1)', title: 'A' }, { url: 'javascript:alert(1)' }, { url: 'https://c.example/' }, { title: 'no url' }],
});

describe('linkCitations', () => {
  it('links marks to http(s) sources only, in lists too; a link or a reference stays as it is', () => {
    expect(items.map((c) => c.url)).toEqual(['https://a.example/x (1)', 'javascript:alert(1)', 'https://c.example/']);
    expect(linkCitations('Fact [1]. Both [1, 3]. Unsafe [2]. Missing [9]. [1](https://x.example) [3]: note', items)).toBe(
      'Fact [[1](https://a.example/x%20%281%29)]. Both [[1](https://a.example/x%20%281%29), [3](https://c.example/)]. Unsafe [2]. Missing [9]. [1](https://x.example) [3]: note',
    );
    expect(linkCitations('Fact [1].', [])).toBe('Fact [1].');
  });

  it('leaves marks inside fenced blocks and inline code as text', () => {
    const text = [
      'Before [3].',
      '```python',
      'xs = [1]',
      'print(xs[3])',
      '```',
      'Inline `a[1]` and ``b[3]`` then [1].',
      '~~~',
      'ys[3]',
      '~~~',
      'After [3].',
      '```',
      'unclosed [1]',
    ].join('\n');
    const out = linkCitations(text, items).split('\n');
    expect(out[0]).toBe('Before [[3](https://c.example/)].');
    expect(out.slice(1, 5)).toEqual(['```python', 'xs = [1]', 'print(xs[3])', '```']);
    expect(out[5]).toBe('Inline `a[1]` and ``b[3]`` then [[1](https://a.example/x%20%281%29)].');
    expect(out.slice(6, 9)).toEqual(['~~~', 'ys[3]', '~~~']);
    expect(out[9]).toBe('After [[3](https://c.example/)].');
    expect(out.slice(10)).toEqual(['```', 'unclosed [1]']);
  });
});
