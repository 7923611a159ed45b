/**
 * The `tools.finance` slice: the vendors of the financial catalogue agents. Each is reached
 * through a base URL the operator may point elsewhere (a proxy, a compatible service, a test
 * server) and its credential; a credential that is unset leaves start-up alone and makes the
 * agents that need it fail with an error naming the variable.
 * - SEC_EDGAR_USER_AGENT: the declared User-Agent ("Company admin@example.com") the SEC's fair
 *   access policy requires of every EDGAR request; EDGAR has no key, this is its credential.
 *   SEC_EDGAR_DATA_URL (default https://data.sec.gov): the submissions API.
 *   SEC_EDGAR_WWW_URL (default https://www.sec.gov): the ticker file and the filing archives.
 * - XAI_API_KEY, XAI_BASE_URL (default https://api.x.ai/v1), XAI_SEARCH_MODEL (default
 *   grok-4-1-fast): the live-search model of microblog-sentiment (Responses API, x_search tool).
 *   XAI_TIMEOUT_MS (default 90000): its requests' time limit, longer than the others' because the
 *   model runs several X searches before it answers (tens of seconds). microblog_sentiment's
 *   time limit (and news_aggregator's) is derived from it.
 * - ALPACA_API_KEY_ID, ALPACA_API_SECRET_KEY, ALPACA_DATA_URL (default
 *   https://data.alpaca.markets): the market-news API of broker-news.
 * - FINANCE_VENDOR_TIMEOUT_MS (default 30000): one vendor request's time limit; the EDGAR and
 *   Alpaca tools' own time limits are derived from it (their requests one after another x this,
 *   plus a margin).
 */
import { httpUrl, num, optStr, str, type Env } from './env.js';

const secret = (env: Env, name: string) => optStr(env, name)?.trim();

export function financeVendorsConfig(env: Env = process.env) {
  return {
    secEdgar: {
      userAgent: secret(env, 'SEC_EDGAR_USER_AGENT'),
      dataUrl: httpUrl(env, 'SEC_EDGAR_DATA_URL', 'https://data.sec.gov'),
      wwwUrl: httpUrl(env, 'SEC_EDGAR_WWW_URL', 'https://www.sec.gov'),
    },
    xai: {
      apiKey: secret(env, 'XAI_API_KEY'),
      baseUrl: httpUrl(env, 'XAI_BASE_URL', 'https://api.x.ai/v1'),
      model: str(env, 'XAI_SEARCH_MODEL', 'grok-4-1-fast').trim(),
      timeoutMs: num(env, 'XAI_TIMEOUT_MS', 90_000, { min: 1000, max: 300_000, int: true }),
    },
    alpaca: {
      keyId: secret(env, 'ALPACA_API_KEY_ID'),
      secretKey: secret(env, 'ALPACA_API_SECRET_KEY'),
      dataUrl: httpUrl(env, 'ALPACA_DATA_URL', 'https://data.alpaca.markets'),
    },
    timeoutMs: num(env, 'FINANCE_VENDOR_TIMEOUT_MS', 30_000, { min: 1000, max: 300_000, int: true }),
  };
}
export type FinanceVendorsConfig = ReturnType<typeof financeVendorsConfig>;
