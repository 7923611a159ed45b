/**
 * The financial catalogue agents' tools, built from the `tools.finance` settings
 * (config/finance-vendors.ts): sec_filings, insider_transactions (SEC EDGAR, one client and one
 * ticker cache), microblog_sentiment (xAI), broker_news (Alpaca) and news_aggregator (all
 * three, and the service's model for the news tone).
 */
import { newsAggregatorTool } from './finance-aggregator.js';
import { EdgarClient } from './finance-edgar.js';
import { secFilingsTool } from './finance-filings.js';
import { insiderTransactionsTool } from './finance-insider.js';
import { brokerNewsTool } from './finance-news.js';
import { microblogSentimentTool } from './finance-sentiment.js';
import type { Tool, ToolModel } from './tool.js';

export interface FinanceVendorSettings {
  secEdgar: { userAgent?: string; dataUrl: string; wwwUrl: string };
  /** `timeoutMs`: XAI_TIMEOUT_MS (a live search takes tens of seconds). */
  xai: { apiKey?: string; baseUrl: string; model: string; timeoutMs: number };
  alpaca: { keyId?: string; secretKey?: string; dataUrl: string };
  /** One EDGAR or Alpaca request's time limit. */
  timeoutMs: number;
}

export function financeTools(s: FinanceVendorSettings, model: ToolModel): Tool[] {
  const edgar = new EdgarClient({ ...s.secEdgar, timeoutMs: s.timeoutMs });
  const alpaca = { ...s.alpaca, timeoutMs: s.timeoutMs };
  const xai = s.xai;
  return [
    secFilingsTool(edgar),
    insiderTransactionsTool(edgar),
    microblogSentimentTool(xai),
    brokerNewsTool(alpaca),
    newsAggregatorTool({ edgar, alpaca, xai, model }),
  ] as Tool[];
}
