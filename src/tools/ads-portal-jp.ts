/**
 * `portal_jp_ads` (catalogue agent portal-jp-ads): the paid ads on the Japanese portal's results
 * page (Yahoo! JAPAN by default) for keywords, through the SerpApi-style vendor
 * (SERPAPI_API_KEY, SERPAPI_BASE_URL, or ADS_JP_PORTAL_URL / ADS_JP_PORTAL_API_KEY for a vendor
 * whose Yahoo engine serves Yahoo! JAPAN) with engine ADS_JP_PORTAL_ENGINE on domain
 * ADS_JP_PORTAL_DOMAIN. Each ad carries `source` (the portal domain); the reported cost is
 * ADS_JP_PORTAL_COST_USD (0 by default, as the spec's table says).
 */
import { type AdsVendorSettings, adsOf, engineSearch, vendorUrl } from './ads-client.js';
import { type Tool, ToolError, type ToolOutput } from './tool.js';
import { vendorToolTimeoutMs } from './vendor-fetch.js';

export interface PortalJpAdsArgs extends Record<string, unknown> {
  keywords: string;
}

export function portalJpAdsTool(s: AdsVendorSettings): Tool<PortalJpAdsArgs> {
  return {
    name: 'portal_jp_ads',
    description: `Paid search ads on the Japanese search portal (${s.jpPortalDomain}) for keywords, each with position, title, description, link, domain and source.`,
    category: 'ads_research',
    version: '1.0.0',
    parameters: {
      type: 'object',
      properties: {
        keywords: { type: 'string', description: 'Search keywords (Japanese or any language)', minLength: 1, maxLength: 500 },
      },
      required: ['keywords'],
      additionalProperties: false,
    },
    // One vendor search (ADS_VENDOR_TIMEOUT_MS) and a margin.
    timeoutMs: vendorToolTimeoutMs(1, s.timeoutMs),
    costPerUse: s.jpPortalCostUsd,
    dangerous: false,
    // Not offered to models without its vendor key (a direct call says which variable to set).
    available: !!(s.jpPortalApiKey ?? s.serpApiKey),
    retryable: true,
    async run(args, ctx): Promise<ToolOutput> {
      const keywords = args.keywords.trim();
      if (!keywords) throw new ToolError('keywords must not be blank', 'bad_arguments');
      const key = s.jpPortalApiKey ?? s.serpApiKey;
      if (!key)
        throw new ToolError(
          'portal_jp_ads: ADS_JP_PORTAL_API_KEY (or SERPAPI_API_KEY) is not set (the search-results vendor key); set it to use this agent',
          'not_configured',
        );
      const endpoint = s.jpPortalUrl ? new URL(s.jpPortalUrl) : vendorUrl(s.serpApiBaseUrl, 'search.json', 'SERPAPI_BASE_URL');
      // The query goes as `p` (SerpApi's Yahoo engine) and `q` (SearchApi's), the portal as `yahoo_domain`.
      const page = await engineSearch(endpoint, key, { engine: s.jpPortalEngine, p: keywords, q: keywords, yahoo_domain: s.jpPortalDomain }, s.timeoutMs, ctx);
      const ads = adsOf(page).map((a) => ({ ...a, source: s.jpPortalDomain }));
      const cost = s.jpPortalCostUsd;
      return {
        output: { keywords, total_ads: ads.length, ads, cost_usd: cost, timestamp: new Date().toISOString() },
        text: ads.length
          ? ads.map((a) => `${a.position}. ${a.title} (${a.domain})\n   ${a.link}`).join('\n')
          : `No ads for "${keywords}" on ${s.jpPortalDomain}.`,
        metadata: { total_ads: ads.length, source: s.jpPortalDomain },
        costUsd: cost,
      };
    },
  };
}
