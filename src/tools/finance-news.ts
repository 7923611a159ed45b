/**
 * `broker_news` (catalogue agent `broker-news`): market news for symbols from an Alpaca-style
 * news API (https://docs.alpaca.markets/reference/news-3): `GET {base}/v1beta1/news` with
 * `symbols`, `start` (RFC 3339), `limit` (1-50), `sort=desc`, authenticated by the
 * `APCA-API-KEY-ID` and `APCA-API-SECRET-KEY` headers; it answers
 * `{news: [{id, headline, author, created_at, updated_at, summary, content, url, images, symbols, source}], next_page_token}`.
 */
import { commaList, vendorJson, vendorUrl } from './finance-http.js';
import { type Tool, ToolError, type ToolOutput } from './tool.js';
import { vendorToolTimeoutMs } from './vendor-fetch.js';

export interface AlpacaSettings {
  /** ALPACA_API_KEY_ID */
  keyId?: string;
  /** ALPACA_API_SECRET_KEY */
  secretKey?: string;
  /** ALPACA_DATA_URL (https://data.alpaca.markets) */
  dataUrl: string;
  timeoutMs: number;
}

export const NEWS_HOURS_DEFAULT = 24;
export const NEWS_LIMIT_DEFAULT = 10;

export type BrokerNewsArgs = { symbols: string; hours_back?: number; limit?: number };

export interface NewsItem {
  headline: string;
  summary: string;
  author: string;
  created_at: string;
  updated_at: string;
  url: string;
  symbols: string[];
  source: string;
}

export interface NewsResult {
  symbols: string[];
  news: NewsItem[];
  total_count: number;
}

const str = (v: unknown) => (typeof v === 'string' ? v : '');

/** Symbols as the agent accepts them: letters, digits, `.`, `/` (BRK.B, BTC/USD), at most 50. */
export function parseSymbols(tool: string, symbols: string): string[] {
  const list = commaList(symbols);
  if (list.length === 0) throw new ToolError(`${tool}: symbols must name at least one symbol, e.g. AAPL,MSFT`, 'bad_arguments');
  if (list.length > 50) throw new ToolError(`${tool}: at most 50 symbols, got ${list.length}`, 'bad_arguments');
  for (const s of list) if (!/^[A-Z0-9][A-Z0-9./-]{0,14}$/.test(s)) throw new ToolError(`${tool}: ${JSON.stringify(s)} is not a symbol`, 'bad_arguments');
  return list;
}

/** The news of the last `hours_back` hours, newest first (also the aggregator's news block). */
export async function brokerNews(
  s: AlpacaSettings,
  tool: string,
  args: { symbols: string; hours_back: number; limit: number },
  signal: AbortSignal,
  now = new Date(),
): Promise<NewsResult> {
  const symbols = parseSymbols(tool, args.symbols);
  const missing = [!s.keyId && 'ALPACA_API_KEY_ID', !s.secretKey && 'ALPACA_API_SECRET_KEY'].filter(Boolean);
  if (missing.length) throw new ToolError(`${tool}: ${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} not set`, 'not_configured');
  const start = new Date(now.getTime() - args.hours_back * 3600_000).toISOString();
  const data = await vendorJson<{ news?: unknown }>({
    vendor: 'Alpaca news',
    url: vendorUrl(s.dataUrl, 'v1beta1/news', {
      symbols: symbols.join(','),
      start: start.replace(/\.\d{3}Z$/, 'Z'),
      limit: String(args.limit),
      sort: 'desc',
      include_content: 'false',
    }),
    headers: { 'APCA-API-KEY-ID': s.keyId!, 'APCA-API-SECRET-KEY': s.secretKey! },
    timeoutMs: s.timeoutMs,
    maxBytes: 8 * 1024 * 1024,
    signal,
    credential: 'ALPACA_API_KEY_ID and ALPACA_API_SECRET_KEY',
  });
  if (!Array.isArray(data?.news)) throw new ToolError('Alpaca news answered without a news list', 'backend');
  const news = (data.news as Record<string, unknown>[])
    .filter((n) => n && typeof n === 'object' && typeof n.headline === 'string')
    .slice(0, args.limit)
    .map((n) => ({
      headline: str(n.headline),
      summary: str(n.summary),
      author: str(n.author),
      created_at: str(n.created_at),
      updated_at: str(n.updated_at),
      url: str(n.url),
      symbols: Array.isArray(n.symbols) ? n.symbols.filter((x): x is string => typeof x === 'string') : [],
      source: str(n.source),
    }));
  return { symbols, news, total_count: news.length };
}

export function brokerNewsTool(s: AlpacaSettings): Tool<BrokerNewsArgs> {
  return {
    name: 'broker_news',
    description: 'Recent market news articles for stock symbols (headline, summary, author, times, link, symbols, source) from the broker news API.',
    category: 'financial',
    version: '1.0.0',
    parameters: {
      type: 'object',
      properties: {
        symbols: { type: 'string', description: 'Comma-separated symbols, e.g. AAPL,MSFT', minLength: 1, maxLength: 500 },
        hours_back: { type: 'integer', description: 'News of the last N hours', minimum: 1, maximum: 168, default: NEWS_HOURS_DEFAULT },
        limit: { type: 'integer', description: 'Articles returned at most', minimum: 1, maximum: 50, default: NEWS_LIMIT_DEFAULT },
      },
      required: ['symbols'],
      additionalProperties: false,
    },
    // One Alpaca request (FINANCE_VENDOR_TIMEOUT_MS) and a margin.
    timeoutMs: vendorToolTimeoutMs(1, s.timeoutMs),
    costPerUse: 0,
    dangerous: false,
    available: !!(s.keyId && s.secretKey),
    retryable: true,
    async run(args, ctx): Promise<ToolOutput> {
      const r = await brokerNews(
        s,
        'broker_news',
        { symbols: args.symbols, hours_back: args.hours_back ?? NEWS_HOURS_DEFAULT, limit: args.limit ?? NEWS_LIMIT_DEFAULT },
        ctx.signal,
      );
      const text = r.news.length
        ? r.news.map((n, i) => `${i + 1}. ${n.headline} (${n.source}, ${n.created_at})${n.summary ? `\n   ${n.summary}` : ''}\n   ${n.url}`).join('\n')
        : `No news for ${r.symbols.join(', ')} in the last ${args.hours_back ?? NEWS_HOURS_DEFAULT} hours.`;
      return { output: { ...r }, text, costUsd: 0 };
    },
  };
}
