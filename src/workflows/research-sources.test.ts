/** Canonical URLs, the two scores' rules, merging hits, and the presets' rounds as submission applies them. */
import { describe, expect, it } from 'vitest';
import { RESEARCH_ROUNDS } from '../tasks/index.js';
import { RESEARCH_PRESETS, researchSettingsOf } from './research-presets.js';
import { canonicalUrl, citableOf, citationOf, credibilityScore, hitsOf, mergeSources, qualityScore, sourcesToCite } from './research-sources.js';

describe('canonical URL', () => {
  it('lower-cases scheme and host, drops fragment, tracking parameters and the trailing slash', () => {
    expect(canonicalUrl('HTTPS://Example.COM/Docs/Page/?utm_source=x&id=3&gclid=abc&fbclid=z#part')).toBe('https://example.com/Docs/Page?id=3');
    expect(canonicalUrl('https://example.com/')).toBe('https://example.com');
    expect(canonicalUrl('https://example.com')).toBe('https://example.com');
    expect(canonicalUrl('http://example.com:80/a//')).toBe('http://example.com/a');
    expect(canonicalUrl('https://example.com/a?utm_medium=m')).toBe('https://example.com/a');
  });
});

describe('credibility_score', () => {
  it('follows the domain kind, raised for https', () => {
    expect(credibilityScore('https://www.nasa.gov/x')).toBe(1);
    expect(credibilityScore('http://www.nasa.gov/x')).toBe(0.9);
    expect(credibilityScore('https://cs.stanford.edu/a')).toBe(0.95);
    expect(credibilityScore('https://www.ox.ac.uk/a')).toBe(0.95);
    expect(credibilityScore('https://en.wikipedia.org/wiki/NATS')).toBe(0.9);
    expect(credibilityScore('https://example.org/')).toBe(0.7);
    expect(credibilityScore('https://blog.example.com/')).toBe(0.6);
    expect(credibilityScore('http://blog.example.com/')).toBe(0.5);
    expect(credibilityScore('https://www.reddit.com/r/x')).toBe(0.4);
    expect(credibilityScore('http://127.0.0.1:8080/page')).toBe(0.2);
    expect(credibilityScore('not a url')).toBe(0);
  });
});

describe('quality_score', () => {
  const page = { fetched: true, snippet: '', title: 'T', truncated: false };
  it('grows with what was read: a long whole titled page 1, a search snippet far less', () => {
    expect(qualityScore({ ...page, text: 'x'.repeat(5000) })).toBe(1);
    expect(qualityScore({ ...page, text: 'x'.repeat(2000) })).toBe(0.8);
    expect(qualityScore({ ...page, text: 'x'.repeat(2000), truncated: true })).toBe(0.7);
    expect(qualityScore({ ...page, title: '', text: 'x'.repeat(2000) })).toBe(0.7);
    expect(qualityScore({ fetched: false, text: '', snippet: 'y'.repeat(300), title: 'T', truncated: false })).toBe(0.4);
    expect(qualityScore({ fetched: false, text: '', snippet: 'y'.repeat(150), title: '', truncated: false })).toBe(0.2);
  });
});

describe('hits and sources', () => {
  it('reads search results and pages from the tools’ structured outputs; pages without text are not read', () => {
    expect(
      hitsOf('web_search', {
        results: [
          { title: 'A', url: 'https://a.test/x', snippet: 's' },
          { title: 'bad', url: 'ftp://x' },
        ],
      }),
    ).toEqual([{ url: 'https://a.test/x', title: 'A', snippet: 's', fetched: false }]);
    expect(hitsOf('web_fetch', { url: 'https://a.test/x', title: 'A', content: 'body', truncated: true })).toEqual([
      { url: 'https://a.test/x', title: 'A', text: 'body', fetched: true, truncated: true },
    ]);
    expect(
      hitsOf('web_crawl', {
        pages: [
          { url: 'https://a.test/1', title: '', content: 'one' },
          { url: 'https://a.test/2', content: '' },
        ],
      }),
    ).toHaveLength(1);
    expect(hitsOf('calculator', { result: 1 })).toEqual([]);
  });

  it('merges by canonical URL, pages read first, keeping the longer read and any title', () => {
    const merged = mergeSources([
      { url: 'https://a.test/x?utm_source=s', title: '', snippet: 'snip', fetched: false },
      { url: 'https://b.test/', title: 'B', snippet: 'b', fetched: false },
      { url: 'https://A.test/x#top', title: 'A page', text: 'short', fetched: true },
      { url: 'https://a.test/x/', title: 'A again', text: 'a longer text', fetched: true },
    ]);
    expect(merged.map((s) => [s.canonical, s.title, s.fetched, s.text, s.snippet])).toEqual([
      ['https://a.test/x', 'A page', true, 'a longer text', 'snip'],
      ['https://b.test', 'B', false, '', 'b'],
    ]);
    expect(merged[0]!.url).toBe('https://A.test/x#top');
    expect(citationOf(merged[1]!)).toEqual({ url: 'https://b.test/', title: 'B', source: 'b.test', credibility_score: 0.6, quality_score: 0.2 });
  });

  it('lists pages read first; only they are citable', () => {
    const listed = sourcesToCite(
      [
        { url: 'https://a.test/1', title: 'One', snippet: 'one', fetched: false },
        { url: 'https://a.test/2', title: 'Two', snippet: 'two', fetched: false },
        { url: 'https://a.test/2', title: 'Two', text: 'the page', fetched: true },
      ],
      10,
    );
    expect(listed.map((s) => [s.canonical, s.fetched])).toEqual([
      ['https://a.test/2', true],
      ['https://a.test/1', false],
    ]);
    expect(citableOf(listed).map((s) => s.canonical)).toEqual(['https://a.test/2']);
  });

  it('fails when no page was read', () => {
    expect(() => sourcesToCite([{ url: 'https://a.test/', title: 'A', fetched: false }], 10)).toThrow(
      /research read no web page: none of the 1 search results was fetched/,
    );
    expect(() => sourcesToCite([], 10)).toThrow(/the searches found no result/);
  });
});

describe('presets', () => {
  it('give the rounds submission resolves iterative_max_iterations to', () => {
    for (const [k, v] of Object.entries(RESEARCH_PRESETS)) expect(v.rounds, k).toBe(RESEARCH_ROUNDS[k as keyof typeof RESEARCH_ROUNDS]);
  });

  it('apply iterative_research_enabled and the task’s rounds', () => {
    const t = (research: Record<string, unknown>) => ({ research, context: {} }) as never;
    expect(researchSettingsOf(t({ strategy: 'deep', maxIterations: 4, iterative: true, factExtraction: true }))).toMatchObject({
      maxRounds: 4,
      searchResults: 8,
      fetchDepth: 5,
      factExtraction: true,
    });
    expect(researchSettingsOf(t({ strategy: 'quick', maxIterations: 3, iterative: false, factExtraction: false })).maxRounds).toBe(1);
  });
});
