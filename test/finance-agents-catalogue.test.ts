/**
 * The financial agents without vendors: the aggregator's scoring at its boundaries, the
 * parsers of model answers and Form 4 XML, the settings (config/finance-vendors.ts), and each
 * catalogue file (config/agents/<id>.yaml) against its tool's schema: same fields, types,
 * defaults, ranges and required list.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ConfigError, loadConfig } from '../src/config/index.js';
import { financeVendorsConfig } from '../src/config/finance-vendors.js';
import { parseForm4 } from '../src/tools/finance-form4.js';
import { canonicalForm, filingDescription, formRequested, isMaterialForm } from '../src/tools/finance-forms.js';
import { parseTones } from '../src/tools/finance-news-tone.js';
import { filingsComponent, labelOf, newsComponent, overallSentiment, socialComponent } from '../src/tools/finance-score.js';
import { parseSentiment } from '../src/tools/finance-sentiment.js';
import { financeTools } from '../src/tools/finance-tools.js';
import type { ToolModel } from '../src/tools/tool.js';

describe('overall sentiment', () => {
  it.each([
    [0, 'bearish'],
    [0.3999, 'bearish'],
    [0.4, 'neutral'],
    [0.5999, 'neutral'],
    [0.6, 'bullish'],
    [1, 'bullish'],
  ] as const)('score %d is %s', (score, label) => expect(labelOf(score)).toBe(label));

  it('maps each source to 0..1', () => {
    expect(newsComponent([])).toBeUndefined();
    expect(newsComponent(['positive', 'negative', 'neutral', 'neutral'])).toBe(0.5);
    expect(newsComponent(['positive', 'positive', 'positive', 'negative'])).toBe(0.75);
    expect(newsComponent(['negative'])).toBe(0);
    expect([socialComponent('bullish'), socialComponent('mixed'), socialComponent('neutral'), socialComponent('bearish')]).toEqual([1, 0.5, 0.5, 0]);
    expect([filingsComponent(true), filingsComponent(false)]).toEqual([1, 0]);
  });

  it('weighs 40/40/20 and labels the exact boundaries 0.4 and 0.6 (floating-point sums included)', () => {
    expect(overallSentiment({ news: 0.5, social: 0.5, filings: 0 })).toEqual({
      score: 0.4,
      label: 'neutral',
      weights: { news: 0.4, social: 0.4, filings: 0.2 },
    });
    // 0.2 + 0.2 + 0.2 is 0.6000000000000001 in floating point: rounded first, bullish either way.
    expect(overallSentiment({ news: 0.5, social: 0.5, filings: 1 })).toMatchObject({ score: 0.6, label: 'bullish' });
    expect(overallSentiment({ news: 1, social: 0.5, filings: 0 })).toMatchObject({ score: 0.6, label: 'bullish' });
    expect(overallSentiment({ news: 0.4999, social: 0.5, filings: 0 })).toMatchObject({ score: 0.4, label: 'neutral' });
    expect(overallSentiment({ news: 0.4998, social: 0.5, filings: 0 })).toMatchObject({ score: 0.3999, label: 'bearish' });
    expect(overallSentiment({ news: 0.9998, social: 0.5, filings: 0 })).toMatchObject({ score: 0.5999, label: 'neutral' });
    expect(overallSentiment({ news: 1, social: 1, filings: 1 })).toMatchObject({ score: 1, label: 'bullish' });
    expect(overallSentiment({ news: 0, social: 0, filings: 0 })).toMatchObject({ score: 0, label: 'bearish' });
  });

  it('re-weights over the sources there are; none gives no score', () => {
    expect(overallSentiment({ news: 0.5, filings: 1 })).toEqual({ score: 0.6667, label: 'bullish', weights: { news: 0.6667, filings: 0.3333 } });
    expect(overallSentiment({ news: 0.5, filings: 0 })).toMatchObject({ score: 0.3333, label: 'bearish' });
    expect(overallSentiment({ news: 0.4, social: 0.4 })).toEqual({ score: 0.4, label: 'neutral', weights: { news: 0.5, social: 0.5 } });
    expect(overallSentiment({ social: 0.5, news: undefined })).toEqual({ score: 0.5, label: 'neutral', weights: { social: 1 } });
    expect(overallSentiment({})).toEqual({ score: null, label: null, weights: {} });
  });
});

describe('parsers', () => {
  it('takes tones only from a JSON list of the right length and words', () => {
    expect(parseTones('```json\n{"tones": ["Positive", "neutral"]}\n```', 2)).toEqual(['positive', 'neutral']);
    expect(parseTones('{"tones": ["positive"]}', 2)).toBeUndefined();
    expect(parseTones('{"tones": ["positive", "great"]}', 2)).toBeUndefined();
    expect(parseTones('[offline] Stock: AAPL', 1)).toBeUndefined();
    expect(parseTones('{not json}', 1)).toBeUndefined();
  });

  it('takes the sentiment from the last label line, else the one label word used', () => {
    expect(parseSentiment('A.\nSENTIMENT: Bearish')).toEqual({ sentiment: 'bearish', analysis: 'A.' });
    expect(parseSentiment('- **Sentiment**: neutral (quiet week)\nMore.')).toEqual({ sentiment: 'neutral', analysis: 'More.' });
    expect(parseSentiment('The crowd is bullish.')).toEqual({ sentiment: 'bullish', analysis: 'The crowd is bullish.' });
    expect(parseSentiment('Half bullish, half bearish.')).toBeUndefined();
    expect(parseSentiment('No opinion at all.')).toBeUndefined();
  });

  it('reads a Form 4: every owner and relationship, each non-derivative row; anything else is no ownership document', async () => {
    const xml = `<ownershipDocument>
      <reportingOwner><reportingOwnerId><rptOwnerName>Fund LP</rptOwnerName></reportingOwnerId>
        <reportingOwnerRelationship><isTenPercentOwner>true</isTenPercentOwner></reportingOwnerRelationship></reportingOwner>
      <reportingOwner><reportingOwnerId><rptOwnerName>Fund GP LLC</rptOwnerName></reportingOwnerId>
        <reportingOwnerRelationship><isOther>1</isOther><otherText>General partner</otherText></reportingOwnerRelationship></reportingOwner>
      <nonDerivativeTable><nonDerivativeTransaction>
        <securityTitle><value>Class A</value></securityTitle><transactionDate><value>2026-03-02-05:00</value></transactionDate>
        <transactionCoding><transactionCode>p</transactionCode></transactionCoding>
        <transactionAmounts><transactionShares><value>300</value></transactionShares><transactionPricePerShare><value>10.5</value></transactionPricePerShare>
          <transactionAcquiredDisposedCode><value>A</value></transactionAcquiredDisposedCode></transactionAmounts>
        <ownershipNature><directOrIndirectOwnership><value>I</value></directOrIndirectOwnership></ownershipNature>
      </nonDerivativeTransaction></nonDerivativeTable></ownershipDocument>`;
    expect(await parseForm4(xml)).toEqual([
      {
        insider_name: 'Fund LP; Fund GP LLC',
        relationship: '10% Owner; Other (General partner)',
        security_title: 'Class A',
        transaction_date: '2026-03-02',
        transaction_code: 'P',
        transaction_type: 'Open market or private purchase',
        acquired_disposed: 'A',
        shares: 300,
        price_per_share: 10.5,
        value: 3150,
        shares_owned_after: null,
        ownership: 'I',
      },
    ]);
    expect(await parseForm4('<html><body>Form 4</body></html>')).toBeUndefined();
  });

  it('matches forms with their amendments and both names of the 13D schedule', () => {
    const wanted = new Set(['8-K', 'SC 13D', '4'].map(canonicalForm));
    expect(['8-K', '8-K/A', 'SC 13D', 'SCHEDULE 13D/A', '4', '4/A'].every((f) => formRequested(f, wanted))).toBe(true);
    expect(['10-K', 'SC 13G', '424B2', '40-F'].some((f) => formRequested(f, wanted))).toBe(false);
    expect(['8-K', '8-K/A', 'SC 13D/A', 'SCHEDULE 13D'].every(isMaterialForm)).toBe(true);
    expect(['10-K', '10-Q', '4', 'DEF 14A', 'S-1', 'SC 13G'].some(isMaterialForm)).toBe(false);
    expect(filingDescription('8-K/A', '', '5.02')).toBe(
      'Current report (amendment): Item 5.02 Departure or Election of Directors or Officers; Compensatory Arrangements',
    );
    expect(filingDescription('424B2', 'PROSPECTUS SUPPLEMENT', '')).toBe('PROSPECTUS SUPPLEMENT');
  });
});

describe('settings', () => {
  it('has the vendors’ own URLs by default and no credential', () => {
    const s = financeVendorsConfig({});
    expect(s).toEqual({
      secEdgar: { userAgent: undefined, dataUrl: 'https://data.sec.gov', wwwUrl: 'https://www.sec.gov' },
      xai: { apiKey: undefined, baseUrl: 'https://api.x.ai/v1', model: 'grok-4-1-fast', timeoutMs: 90_000 },
      alpaca: { keyId: undefined, secretKey: undefined, dataUrl: 'https://data.alpaca.markets' },
      timeoutMs: 30_000,
    });
    expect(loadConfig({ XAI_API_KEY: ' k ', SEC_EDGAR_USER_AGENT: 'A a@b.c' }).tools.finance).toMatchObject({
      xai: { apiKey: 'k' },
      secEdgar: { userAgent: 'A a@b.c' },
    });
  });

  it.each([
    ['SEC_EDGAR_DATA_URL', 'data.sec.gov'],
    ['XAI_BASE_URL', 'ftp://api.x.ai'],
    ['ALPACA_DATA_URL', 'not a url'],
    ['FINANCE_VENDOR_TIMEOUT_MS', '10'],
    ['XAI_TIMEOUT_MS', '400000'],
  ])('refuses %s=%s naming it', (name, value) => {
    expect(() => financeVendorsConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => financeVendorsConfig({ [name]: value })).toThrow(name);
  });
});

describe('catalogue files', () => {
  const model: ToolModel = async () => ({ text: '', model: 'm', provider: 'p', tokens: 0 });
  const tools = new Map(financeTools(financeVendorsConfig({}), model).map((t) => [t.name, t]));
  const FIELD_KEYS = ['type', 'default', 'minimum', 'maximum', 'enum'] as const;

  it.each([
    ['regulatory-filings', 'sec_filings', ['ticker', 'days_back', 'forms']],
    ['microblog-sentiment', 'microblog_sentiment', ['ticker', 'days_back']],
    ['broker-news', 'broker_news', ['symbols', 'hours_back', 'limit']],
    ['news-aggregator', 'news_aggregator', ['ticker', 'include_filings', 'include_social']],
    ['insider-transactions', 'insider_transactions', ['ticker', 'days_back', 'max_filings']],
  ])('%s runs %s with the same input schema', (id, toolName, fields) => {
    const file = parse(readFileSync(new URL(`../config/agents/${id}.yaml`, import.meta.url), 'utf8'));
    expect(file).toMatchObject({ id, category: 'financial', tool: toolName });
    expect(file.description.length).toBeGreaterThan(20);
    const tool = tools.get(toolName)!;
    expect(file.cost_per_call).toBe(tool.costPerUse);
    expect(Object.keys(file.input_schema.properties)).toEqual(fields);
    expect(Object.keys(tool.parameters.properties)).toEqual(fields);
    expect(file.input_schema.required).toEqual(tool.parameters.required);
    for (const f of fields) {
      const mine = file.input_schema.properties[f];
      const theirs = tool.parameters.properties[f]!;
      for (const k of FIELD_KEYS) expect([f, k, mine[k]]).toEqual([f, k, theirs[k]]);
    }
  });

  it('a tool without its credential is not offered to models (a direct call still says what to set)', () => {
    const availability = (env: Record<string, string>) => Object.fromEntries(financeTools(financeVendorsConfig(env), model).map((t) => [t.name, t.available]));
    expect(availability({})).toEqual({
      sec_filings: false,
      insider_transactions: false,
      microblog_sentiment: false,
      broker_news: false,
      news_aggregator: false,
    });
    expect(availability({ SEC_EDGAR_USER_AGENT: 'A a@b.c', ALPACA_API_KEY_ID: 'id' })).toEqual({
      sec_filings: true,
      insider_transactions: true,
      microblog_sentiment: false,
      broker_news: false,
      news_aggregator: true,
    });
    expect(availability({ XAI_API_KEY: 'k', ALPACA_API_KEY_ID: 'id', ALPACA_API_SECRET_KEY: 's' })).toMatchObject({
      microblog_sentiment: true,
      broker_news: true,
      news_aggregator: true,
    });
  });

  it('the spec table’s inputs: regulatory-filings, microblog-sentiment, broker-news, news-aggregator', () => {
    const p = (name: string) => tools.get(name)!.parameters.properties;
    expect(p('sec_filings').days_back).toMatchObject({ minimum: 1, maximum: 365, default: 30 });
    expect(p('sec_filings').forms).toMatchObject({ type: 'string', default: '8-K,10-K,10-Q,4,SC 13D' });
    expect(p('microblog_sentiment').days_back).toMatchObject({ minimum: 1, maximum: 7, default: 1 });
    expect(p('broker_news').hours_back).toMatchObject({ minimum: 1, maximum: 168, default: 24 });
    expect(p('broker_news').limit).toMatchObject({ minimum: 1, maximum: 50, default: 10 });
    expect(p('news_aggregator').include_filings).toEqual(expect.objectContaining({ type: 'boolean', default: true }));
    expect(p('news_aggregator').include_social).toEqual(expect.objectContaining({ type: 'boolean', default: true }));
  });
});
