/**
 * `serp_ads` (catalogue agent serp-ads): the paid ads on a Google results page for keywords,
 * through the SerpApi-style vendor's `google` engine (SERPAPI_API_KEY, SERPAPI_BASE_URL). Each ad
 * is {position, title, description, link, domain}; the cost is one vendor search
 * (SERPAPI_COST_PER_SEARCH_USD).
 */
import { type AdsVendorSettings, adsOf, serpApiSearch, type SerpAd } from './ads-client.js';
import { type Tool, type ToolContext, ToolError, type ToolOutput } from './tool.js';
import { vendorToolTimeoutMs } from './vendor-fetch.js';

export const SERP_DEVICES = ['desktop', 'mobile', 'tablet'] as const;
export type SerpDevice = (typeof SERP_DEVICES)[number];

export interface SerpAdsArgs extends Record<string, unknown> {
  keywords: string;
  country?: string;
  location?: string;
  language?: string;
  device?: SerpDevice;
  google_domain?: string;
  max_results?: number;
}

export const SERP_DEFAULTS = { country: 'us', language: 'en', device: 'desktop', google_domain: 'google.com', max_results: 10 } as const;

/** What one Google search returned: its ads (in page order) and the whole page (organic results). */
export interface GoogleSearch {
  ads: SerpAd[];
  page: Record<string, unknown>;
}

/** The JSON schema of one Google search's parameters (serp_ads, organic_search), without max_results. */
export const GOOGLE_SEARCH_PROPERTIES = {
  keywords: { type: 'string', description: 'Search keywords', minLength: 1, maxLength: 500 },
  country: { type: 'string', description: 'Country code of the search (gl)', default: SERP_DEFAULTS.country, minLength: 2, maxLength: 2 },
  location: { type: 'string', description: 'Location the search is made from (e.g. "Austin, Texas, United States")', maxLength: 200 },
  language: { type: 'string', description: 'Interface language (hl)', default: SERP_DEFAULTS.language, minLength: 2, maxLength: 10 },
  device: { type: 'string', enum: [...SERP_DEVICES], default: SERP_DEFAULTS.device, description: 'Device the search is made on' },
  google_domain: { type: 'string', description: 'Google domain to search', default: SERP_DEFAULTS.google_domain, maxLength: 100 },
} as const;

export type GoogleQuery = { keywords: string; country: string; language: string; device: string; google_domain: string; location?: string };

/** A tool's search arguments with their defaults, as one Google search's query. */
export function googleQueryOf(
  keywords: string,
  args: { country?: string; location?: string; language?: string; device?: SerpDevice; google_domain?: string },
): GoogleQuery {
  return {
    keywords,
    country: (args.country ?? SERP_DEFAULTS.country).toLowerCase(),
    language: args.language ?? SERP_DEFAULTS.language,
    device: args.device ?? SERP_DEFAULTS.device,
    google_domain: args.google_domain ?? SERP_DEFAULTS.google_domain,
    location: args.location?.trim() || undefined,
  };
}

/** One Google search with the serp-ads parameters (shared with competitor_discover). */
export async function googleSearch(s: AdsVendorSettings, tool: string, q: GoogleQuery, ctx: Pick<ToolContext, 'signal'>): Promise<GoogleSearch> {
  const page = await serpApiSearch(
    s,
    tool,
    { engine: 'google', q: q.keywords, gl: q.country, hl: q.language, device: q.device, google_domain: q.google_domain, location: q.location },
    ctx,
  );
  return { ads: adsOf(page), page };
}

export function serpAdsTool(s: AdsVendorSettings): Tool<SerpAdsArgs> {
  return {
    name: 'serp_ads',
    description:
      'Paid search ads shown on a Google results page for keywords (country, language, location, device), each with position, title, description, link and domain.',
    category: 'ads_research',
    version: '1.0.0',
    parameters: {
      type: 'object',
      properties: {
        ...GOOGLE_SEARCH_PROPERTIES,
        max_results: { type: 'integer', description: 'Ads returned at most', default: SERP_DEFAULTS.max_results, minimum: 1, maximum: 100 },
      },
      required: ['keywords'],
      additionalProperties: false,
    },
    // One vendor search (ADS_VENDOR_TIMEOUT_MS) and a margin.
    timeoutMs: vendorToolTimeoutMs(1, s.timeoutMs),
    costPerUse: s.serpApiCostPerSearchUsd,
    dangerous: false,
    // Not offered to models without its vendor key (a direct call says which variable to set).
    available: !!s.serpApiKey,
    retryable: true,
    async run(args, ctx): Promise<ToolOutput> {
      const keywords = args.keywords.trim();
      if (!keywords) throw new ToolError('keywords must not be blank', 'bad_arguments');
      const q = googleQueryOf(keywords, args);
      const location = q.location;
      const max = args.max_results ?? SERP_DEFAULTS.max_results;
      const { ads } = await googleSearch(s, 'serp_ads', q, ctx);
      const shown = ads.slice(0, max);
      const cost = s.serpApiCostPerSearchUsd;
      return {
        output: { keywords, location: location ?? null, total_ads: ads.length, ads: shown, cost_usd: cost, timestamp: new Date().toISOString() },
        text: shown.length
          ? shown.map((a) => `${a.position}. ${a.title} (${a.domain})\n   ${a.link}${a.description ? `\n   ${a.description}` : ''}`).join('\n')
          : `No ads for "${keywords}".`,
        metadata: { total_ads: ads.length },
        costUsd: cost,
      };
    },
  };
}
