/**
 * `organic_search` (catalogue agent `organic-search`, one of the two designed beside the spec's
 * table): who ranks organically on a Google results page for keywords, and which of them also
 * pay for ads there. One search on the ads agents' SerpApi-style vendor (the `google` engine,
 * SERPAPI_API_KEY and SERPAPI_BASE_URL, as serp-ads: ./ads-serp.ts), so it costs one vendor
 * search (SERPAPI_COST_PER_SEARCH_USD). Google shows 10 organic results a page; this reads one
 * page, so max_results is at most 10. The vendor's estimate of all matching pages
 * (`search_information.total_results`) is reported as it is, null when it gives none.
 */
import { type AdsVendorSettings, organicOf } from './ads-client.js';
import { GOOGLE_SEARCH_PROPERTIES, googleQueryOf, googleSearch, type SerpDevice } from './ads-serp.js';
import { type Tool, ToolError, type ToolOutput } from './tool.js';
import { vendorToolTimeoutMs } from './vendor-fetch.js';

export interface OrganicSearchArgs extends Record<string, unknown> {
  keywords: string;
  country?: string;
  location?: string;
  language?: string;
  device?: SerpDevice;
  google_domain?: string;
  max_results?: number;
}

const TOOL = 'organic_search';

export function organicSearchTool(s: AdsVendorSettings): Tool<OrganicSearchArgs> {
  return {
    name: TOOL,
    description:
      'Organic (unpaid) results of a Google results page for keywords (country, language, location, device): position, title, description, link, domain, ' +
      'and whether the domain also runs ads on that page.',
    category: 'ads_research',
    version: '1.0.0',
    parameters: {
      type: 'object',
      properties: {
        ...GOOGLE_SEARCH_PROPERTIES,
        max_results: { type: 'integer', description: 'Organic results returned at most (one page)', default: 10, minimum: 1, maximum: 10 },
      },
      required: ['keywords'],
      additionalProperties: false,
    },
    // One vendor search (ADS_VENDOR_TIMEOUT_MS) and a margin.
    timeoutMs: vendorToolTimeoutMs(1, s.timeoutMs),
    costPerUse: s.serpApiCostPerSearchUsd,
    dangerous: false,
    available: !!s.serpApiKey,
    retryable: true,
    async run(args, ctx): Promise<ToolOutput> {
      const keywords = args.keywords.trim();
      if (!keywords) throw new ToolError(`${TOOL}: keywords must not be blank`, 'bad_arguments');
      const q = googleQueryOf(keywords, args);
      const location = q.location;
      const { ads, page } = await googleSearch(s, TOOL, q, ctx);
      const paid = new Set(ads.map((a) => a.domain).filter(Boolean));
      const results = organicOf(page)
        .slice(0, args.max_results ?? 10)
        .map((r) => ({ ...r, advertises: paid.has(r.domain) }));
      const estimate = Number((page.search_information as { total_results?: unknown } | undefined)?.total_results);
      const cost = s.serpApiCostPerSearchUsd;
      const output = {
        keywords,
        location: location ?? null,
        total_results: results.length,
        estimated_total_results: Number.isFinite(estimate) ? estimate : null,
        results,
        paid_domains: [...paid],
        cost_usd: cost,
        timestamp: new Date().toISOString(),
      };
      const text = results.length
        ? results
            .map(
              (r) =>
                `${r.position}. ${r.title} (${r.domain}${r.advertises ? ', also advertises' : ''})\n   ${r.link}${r.description ? `\n   ${r.description}` : ''}`,
            )
            .join('\n')
        : `No organic results for "${keywords}".`;
      return { output, text, costUsd: cost };
    },
  };
}
