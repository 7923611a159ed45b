/**
 * FINANCE_VENDOR_TIMEOUT_MS and XAI_TIMEOUT_MS set the financial tools' time limits: each tool's
 * limit is derived from the requests it makes one after another (x the setting, plus a margin),
 * so a setting above the old fixed limits (broker_news stopped at 30 s, microblog_sentiment at
 * 120 s) is not cut short. Read as the tools API lists it (`timeoutSeconds`), from settings
 * loaded as the service loads them.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import { financeTools } from '../src/tools/finance-tools.js';
import { ToolRegistry } from '../src/tools/index.js';

const model = async () => ({ text: '', model: 'm', provider: 'p', tokens: 0 });
const limits = (env: Record<string, string>) => {
  const r = new ToolRegistry(financeTools(loadConfig(env).tools.finance, model));
  return (name: string) => r.describe(name).timeoutSeconds * 1000;
};

describe('FINANCE_VENDOR_TIMEOUT_MS', () => {
  it('gives the EDGAR and Alpaca tools time for their requests at the setting', () => {
    const at = limits({ FINANCE_VENDOR_TIMEOUT_MS: '300000' });
    expect(at('broker_news')).toBeGreaterThan(300_000);
    expect(at('broker_news')).toBeLessThanOrEqual(300_000 + 60_000);
    // The ticker file, the submissions and up to 3 older pages, one after another.
    expect(at('sec_filings')).toBeGreaterThan(5 * 300_000);
    // ... then up to 50 Form 4 documents, 4 at a time (13 rounds).
    expect(at('insider_transactions')).toBeGreaterThan(18 * 300_000);
    expect(at('news_aggregator')).toBeGreaterThan(5 * 300_000);
    const short = limits({ FINANCE_VENDOR_TIMEOUT_MS: '2000' });
    expect(at('broker_news') - short('broker_news')).toBe(298_000);
    // XAI_TIMEOUT_MS is its own setting.
    expect(short('microblog_sentiment')).toBe(at('microblog_sentiment'));
  });
});

describe('XAI_TIMEOUT_MS', () => {
  it('gives microblog_sentiment (and news_aggregator) time for the xAI request at the setting', () => {
    const at = limits({ XAI_TIMEOUT_MS: '300000' });
    expect(at('microblog_sentiment')).toBeGreaterThan(300_000);
    expect(at('microblog_sentiment')).toBeLessThanOrEqual(300_000 + 60_000);
    expect(at('news_aggregator')).toBeGreaterThan(300_000);
    const short = limits({ XAI_TIMEOUT_MS: '5000' });
    expect(at('microblog_sentiment') - short('microblog_sentiment')).toBe(295_000);
    expect(short('broker_news')).toBe(at('broker_news'));
  });
});
