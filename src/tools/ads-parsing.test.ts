/** The pure readers of the ads tools: model answers, vendor result shapes, domains, regions, scripts. */
import { describe, expect, it } from 'vitest';
import { adsOf, domainOf, organicOf } from './ads-client.js';
import { headlineFacts, statedCtas } from './ads-creative-analyze.js';
import { languageFromScript } from './ads-keyword-extract.js';
import { listOf, parseJsonObject } from './ads-model.js';
import { regionOf } from './ads-transparency.js';
import { ToolError } from './tool.js';

describe('parseJsonObject', () => {
  it.each([
    ['{"a":1}', { a: 1 }],
    ['  {"a":1}\n', { a: 1 }],
    ['Sure:\n```json\n{"a":[1,2]}\n```\nDone.', { a: [1, 2] }],
    ['```\n{"a":"x"}\n```', { a: 'x' }],
    ['The analysis is {"a": {"b": 2}} as asked.', { a: { b: 2 } }],
  ])('reads %j', (answer, expected) => {
    expect(parseJsonObject(answer)).toEqual(expected);
  });

  it.each(['[offline provider: deterministic response, no language model was called] restated request', '[1, 2, 3]', '"just a string"', '{"a": 1', '', 'null'])(
    'finds no object in %j',
    (answer) => {
      expect(parseJsonObject(answer)).toBeUndefined();
    },
  );
});

describe('listOf', () => {
  it('keeps arrays (blank items dropped, strings trimmed), makes one string a list, refuses the rest', () => {
    expect(listOf([' a ', '', null, { x: 1 }, 'b'])).toEqual(['a', { x: 1 }, 'b']);
    expect(listOf(' one ')).toEqual(['one']);
    expect(listOf('  ')).toEqual([]);
    expect(listOf(undefined)).toBeUndefined();
    expect(listOf({ a: 1 })).toBeUndefined();
    expect(listOf(3)).toBeUndefined();
  });
});

describe('vendor result shapes', () => {
  it('ads as an array, as top/bottom blocks, or as ads_results; links without a scheme', () => {
    const ad = (title: string, link: string) => ({ title, link, description: `${title} text` });
    expect(adsOf({ ads: [ad('A', 'https://www.a.example/x')] }).map((a) => [a.position, a.domain])).toEqual([[1, 'a.example']]);
    expect(adsOf({ ads: { top: [ad('T', 'https://t.example/')], bottom: [ad('B', 'https://b.example/')] } }).map((a) => a.title)).toEqual(['T', 'B']);
    expect(adsOf({ ads_results: [{ position: 4, title: 'R', link: 'https://r.example/', snippet: 'from snippet' }] })).toEqual([
      { position: 4, title: 'R', description: 'from snippet', link: 'https://r.example/', domain: 'r.example' },
    ]);
    expect(adsOf({ ads: [{ title: 'no link' }, 'junk', null] })).toEqual([]);
    expect(adsOf({})).toEqual([]);
    expect(organicOf({ organic_results: [{ position: 2, title: 'O', link: 'https://o.example/p', snippet: 's' }] })).toEqual([
      { position: 2, title: 'O', description: 's', link: 'https://o.example/p', domain: 'o.example' },
    ]);
  });

  it('domainOf: host without www., lower case; display captions without a scheme; nothing for junk', () => {
    expect(domainOf('https://WWW.Example.COM/path?q=1')).toBe('example.com');
    expect(domainOf('EXAMPLE.ORG')).toBe('example.org');
    expect(domainOf('shop.example.co.jp/sale')).toBe('shop.example.co.jp');
    expect(domainOf('')).toBe('');
    expect(domainOf(42)).toBe('');
    expect(domainOf('not a url at all')).toBe('');
  });
});

describe('regionOf', () => {
  it('is 2000 + the ISO 3166 numeric code, any case; an unknown code is bad arguments', async () => {
    expect(await regionOf('US')).toBe('2840');
    expect(await regionOf('jp')).toBe('2392');
    expect(await regionOf('AL')).toBe('2008');
    await expect(regionOf('XX')).rejects.toThrow(ToolError);
    await expect(regionOf('XX')).rejects.toThrow('country "XX" is not an ISO 3166 alpha-2 country code');
  });
});

describe('deterministic facts', () => {
  it('languageFromScript names only the languages a script tells', () => {
    expect(languageFromScript('東京のホテル')).toBe('ja');
    expect(languageFromScript('カメラ')).toBe('ja');
    expect(languageFromScript('서울 호텔')).toBe('ko');
    expect(languageFromScript('北京酒店')).toBe('zh');
    expect(languageFromScript('โรงแรม')).toBe('th');
    expect(languageFromScript('מלון')).toBe('he');
    expect(languageFromScript('ξενοδοχείο')).toBe('el');
    expect(languageFromScript('hotel in Lisbon')).toBeNull();
    expect(languageFromScript('гостиница')).toBeNull();
  });

  it('headline facts and stated CTAs come from the ads themselves', () => {
    const ads = [
      { title: '3 ways to save' },
      { headline: 'Why wait？' },
      { link_title: 'Buy now!' },
      { description: 'no headline', call_to_action: 'Buy now' },
    ];
    expect(headlineFacts(ads)).toEqual([
      { pattern: 'contains a number', count: 1, of: 3, examples: ['3 ways to save'] },
      { pattern: 'asks a question', count: 1, of: 3, examples: ['Why wait？'] },
      { pattern: 'ends with an exclamation', count: 1, of: 3, examples: ['Buy now!'] },
    ]);
    expect(headlineFacts([{ title: 'Plain' }])).toEqual([]);
    expect(statedCtas(ads)).toEqual([{ cta: 'Buy now', count: 1 }]);
  });
});
