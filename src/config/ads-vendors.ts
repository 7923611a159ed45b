/**
 * The `tools.adsVendors` slice: the vendors of the ads-research agents of the catalogue
 * (serp-ads, portal-jp-ads, competitor-discover, ads-transparency, social-ad-library).
 * - SERPAPI_API_KEY / SERPAPI_BASE_URL (default https://serpapi.com): a SerpApi-style
 *   search-results vendor (`GET /search.json?engine=...`): Google results with their ads, the
 *   Japanese portal's results, and the Google Ads Transparency Center engine.
 * - SERPAPI_COST_PER_SEARCH_USD (default 0.015): what one vendor search costs; the agents report
 *   it as their cost (`cost_usd`, `api_cost_usd`).
 * - ADS_JP_PORTAL_ENGINE (default `yahoo`) / ADS_JP_PORTAL_DOMAIN (default `search.yahoo.co.jp`):
 *   the vendor engine and portal domain of portal-jp-ads; ADS_JP_PORTAL_COST_USD (default 0, the
 *   spec's figure) the cost it reports per search. ADS_JP_PORTAL_URL / ADS_JP_PORTAL_API_KEY
 *   (default: SERPAPI_BASE_URL's /search.json and SERPAPI_API_KEY) point it at another vendor of
 *   the same style: SerpApi's own Yahoo engine serves Yahoo's other markets, not Yahoo! JAPAN,
 *   which e.g. SearchApi's `/api/v1/search` (engine yahoo, yahoo_domain search.yahoo.co.jp) does.
 * - META_AD_LIBRARY_ACCESS_TOKEN / META_AD_LIBRARY_BASE_URL (default
 *   https://graph.facebook.com/v21.0): a Graph-API-style ad library (`GET /ads_archive`).
 * - META_AD_LIBRARY_MAX_ADS (default 200): ads read per query at most (pages of 100).
 * - ADS_VENDOR_TIMEOUT_MS (default 30000): the time limit of one vendor request; each tool's own
 *   time limit is derived from it (the requests it makes one after another x this, plus a margin).
 * Without a key the agents that need it fail naming the variable; nothing is made up.
 */
import { httpUrl, num, optStr, str, type Env } from './env.js';

export function adsVendorsConfig(env: Env = process.env) {
  return {
    serpApiKey: optStr(env, 'SERPAPI_API_KEY')?.trim(),
    serpApiBaseUrl: httpUrl(env, 'SERPAPI_BASE_URL', 'https://serpapi.com'),
    serpApiCostPerSearchUsd: num(env, 'SERPAPI_COST_PER_SEARCH_USD', 0.015, { min: 0 }),
    jpPortalUrl: optStr(env, 'ADS_JP_PORTAL_URL') === undefined ? undefined : httpUrl(env, 'ADS_JP_PORTAL_URL', ''),
    jpPortalApiKey: optStr(env, 'ADS_JP_PORTAL_API_KEY')?.trim(),
    jpPortalEngine: str(env, 'ADS_JP_PORTAL_ENGINE', 'yahoo').trim(),
    jpPortalDomain: str(env, 'ADS_JP_PORTAL_DOMAIN', 'search.yahoo.co.jp').trim(),
    jpPortalCostUsd: num(env, 'ADS_JP_PORTAL_COST_USD', 0, { min: 0 }),
    metaAccessToken: optStr(env, 'META_AD_LIBRARY_ACCESS_TOKEN')?.trim(),
    metaBaseUrl: httpUrl(env, 'META_AD_LIBRARY_BASE_URL', 'https://graph.facebook.com/v21.0'),
    metaMaxAds: num(env, 'META_AD_LIBRARY_MAX_ADS', 200, { min: 1, max: 5000, int: true }),
    timeoutMs: num(env, 'ADS_VENDOR_TIMEOUT_MS', 30_000, { min: 100, max: 300_000, int: true }),
  };
}
export type AdsVendorsConfig = ReturnType<typeof adsVendorsConfig>;
