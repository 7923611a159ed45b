/**
 * `competitor_discover` (catalogue agent competitor-discover): who buys ads on a set of keywords.
 * One Google search per keyword and device (the serp_ads search, SERPAPI_API_KEY), ads grouped
 * by the advertiser's domain: ad_count (paid ads seen), devices_found, up to three sample_ads.
 * - organic_fallback (default true): a search that showed no ads contributes its organic results
 *   instead (samples marked `type: "organic"`; they never raise ad_count), so keywords nobody
 *   bids on still name the sites that win them;
 * - max_competitors: the list is cut to that many, most ads first (then organic appearances);
 * - include_transparency + transparency_top_n: the first N competitors get `transparency_data`
 *   from the Ads Transparency Center (by domain, in the country); the others `null`.
 * Any failed search fails the call (no silently partial ranking); a failed transparency look-up
 * is that competitor's `transparency_data: {error}`. api_cost_usd counts the vendor searches made.
 */
import pLimit from 'p-limit';
import { type AdsVendorSettings, organicOf, type SerpAd } from './ads-client.js';
import { googleSearch, SERP_DEVICES, type SerpDevice } from './ads-serp.js';
import { googleTransparency } from './ads-transparency.js';
import { type Tool, ToolError, type ToolOutput } from './tool.js';
import { vendorToolTimeoutMs } from './vendor-fetch.js';

export interface CompetitorDiscoverArgs extends Record<string, unknown> {
  keywords: string[];
  country?: string;
  language?: string;
  location?: string;
  devices?: SerpDevice[];
  transparency_top_n?: number;
  max_competitors?: number;
  include_transparency?: boolean;
  organic_fallback?: boolean;
}

export const DISCOVER_DEFAULTS = {
  country: 'us',
  language: 'en',
  devices: ['desktop', 'mobile'] as SerpDevice[],
  transparency_top_n: 5,
  max_competitors: 20,
  include_transparency: false,
  organic_fallback: true,
};

const SAMPLES = 3;
/** Vendor searches in flight at once for one call. */
const CONCURRENCY = 4;
const MAX_KEYWORDS = 20;
const MAX_TOP_N = 20;

interface Sample {
  keyword: string;
  device: SerpDevice;
  type: 'ad' | 'organic';
  position: number;
  title: string;
  description: string;
  link: string;
}

interface Entry {
  domain: string;
  ad_count: number;
  organic: number;
  devices: Set<SerpDevice>;
  ads: Sample[];
  organicSamples: Sample[];
}

function add(map: Map<string, Entry>, r: SerpAd, keyword: string, device: SerpDevice, type: Sample['type']) {
  if (!r.domain) return;
  const e = map.get(r.domain) ?? { domain: r.domain, ad_count: 0, organic: 0, devices: new Set(), ads: [], organicSamples: [] };
  e.devices.add(device);
  const sample = { keyword, device, type, position: r.position, title: r.title, description: r.description, link: r.link };
  if (type === 'ad') {
    e.ad_count++;
    e.ads.push(sample);
  } else {
    e.organic++;
    e.organicSamples.push(sample);
  }
  map.set(r.domain, e);
}

export function competitorDiscoverTool(s: AdsVendorSettings): Tool<CompetitorDiscoverArgs> {
  return {
    name: 'competitor_discover',
    description:
      'Competitors bidding on keywords: Google ads per keyword and device grouped by domain (ad count, devices, sample ads), with organic results as fallback and optional ad transparency data for the top ones.',
    category: 'ads_research',
    version: '1.0.0',
    parameters: {
      type: 'object',
      properties: {
        keywords: {
          type: 'array',
          items: { type: 'string', minLength: 1, maxLength: 500 },
          minItems: 1,
          maxItems: MAX_KEYWORDS,
          description: 'Keywords to search',
        },
        country: { type: 'string', description: 'Country code of the searches (gl)', default: DISCOVER_DEFAULTS.country, minLength: 2, maxLength: 2 },
        language: { type: 'string', description: 'Interface language (hl)', default: DISCOVER_DEFAULTS.language, minLength: 2, maxLength: 10 },
        location: { type: 'string', description: 'Location the searches are made from', maxLength: 200 },
        devices: {
          type: 'array',
          items: { type: 'string', enum: [...SERP_DEVICES] },
          default: DISCOVER_DEFAULTS.devices,
          minItems: 1,
          maxItems: SERP_DEVICES.length,
          description: 'Devices to search on',
        },
        transparency_top_n: {
          type: 'integer',
          description: 'Competitors given transparency data (with include_transparency)',
          default: DISCOVER_DEFAULTS.transparency_top_n,
          minimum: 1,
          maximum: MAX_TOP_N,
        },
        max_competitors: { type: 'integer', description: 'Competitors returned at most', default: DISCOVER_DEFAULTS.max_competitors, minimum: 1, maximum: 100 },
        include_transparency: { type: 'boolean', description: 'Look the top competitors up in the Ads Transparency Center', default: false },
        organic_fallback: { type: 'boolean', description: 'Use organic results of searches that showed no ads', default: true },
      },
      required: ['keywords'],
      additionalProperties: false,
    },
    // Worst case (20 keywords x 3 devices, then 20 transparency look-ups), CONCURRENCY searches at a time, each ADS_VENDOR_TIMEOUT_MS.
    timeoutMs: vendorToolTimeoutMs(Math.ceil((MAX_KEYWORDS * SERP_DEVICES.length) / CONCURRENCY) + Math.ceil(MAX_TOP_N / CONCURRENCY), s.timeoutMs),
    costPerUse: s.serpApiCostPerSearchUsd * 2,
    dangerous: false,
    // Not offered to models without its vendor key (a direct call says which variable to set).
    available: !!s.serpApiKey,
    retryable: true,
    async run(args, ctx): Promise<ToolOutput> {
      const keywords = [...new Set(args.keywords.map((k) => k.trim()).filter(Boolean))];
      if (!keywords.length) throw new ToolError('keywords must hold at least one non-blank keyword', 'bad_arguments');
      const devices = [...new Set(args.devices ?? DISCOVER_DEFAULTS.devices)];
      const country = (args.country ?? DISCOVER_DEFAULTS.country).toLowerCase();
      const language = args.language ?? DISCOVER_DEFAULTS.language;
      const location = args.location?.trim() || undefined;
      const fallback = args.organic_fallback ?? DISCOVER_DEFAULTS.organic_fallback;
      const limit = pLimit(CONCURRENCY);
      const searches = keywords.flatMap((keyword) => devices.map((device) => ({ keyword, device })));
      const pages = await Promise.all(
        searches.map((q) =>
          limit(async () => {
            try {
              return {
                ...q,
                ...(await googleSearch(
                  s,
                  'competitor_discover',
                  { keywords: q.keyword, country, language, device: q.device, google_domain: 'google.com', location },
                  ctx,
                )),
              };
            } catch (err) {
              if (err instanceof ToolError && err.kind !== 'not_configured')
                throw new ToolError(`search for "${q.keyword}" (${q.device}) failed: ${err.message}`, err.kind);
              throw err;
            }
          }),
        ),
      );
      const map = new Map<string, Entry>();
      let totalAds = 0;
      for (const p of pages) {
        totalAds += p.ads.length;
        for (const ad of p.ads) add(map, ad, p.keyword, p.device, 'ad');
        if (fallback && p.ads.length === 0) {
          for (const r of organicOf(p.page).slice(0, 10)) add(map, r, p.keyword, p.device, 'organic');
        }
      }
      const ranked = [...map.values()]
        .sort((a, b) => b.ad_count - a.ad_count || b.organic - a.organic || a.domain.localeCompare(b.domain))
        .slice(0, args.max_competitors ?? DISCOVER_DEFAULTS.max_competitors);
      const topN = args.include_transparency ? (args.transparency_top_n ?? DISCOVER_DEFAULTS.transparency_top_n) : 0;
      let lookups = 0;
      const transparency = await Promise.all(
        ranked.slice(0, topN).map((c) =>
          limit(async () => {
            try {
              const t = await googleTransparency(s, 'competitor_discover', { domain: c.domain, country: country.toUpperCase() }, undefined, ctx);
              lookups++;
              const { creatives: _all, ...summary } = t;
              return summary as Record<string, unknown>;
            } catch (err) {
              if (ctx.signal.aborted || !(err instanceof ToolError)) throw err;
              return { error: err.message };
            }
          }),
        ),
      );
      const competitors = ranked.map((c, i) => ({
        domain: c.domain,
        ad_count: c.ad_count,
        devices_found: SERP_DEVICES.filter((d) => c.devices.has(d)),
        sample_ads: [...c.ads, ...c.organicSamples].slice(0, SAMPLES),
        transparency_data: i < topN ? transparency[i] : null,
      }));
      const cost = (searches.length + lookups) * s.serpApiCostPerSearchUsd;
      return {
        output: { competitors, total_ads_found: totalAds, api_cost_usd: cost },
        text: competitors.length
          ? `${totalAds} ads over ${searches.length} searches; competitors:\n` +
            competitors.map((c) => `- ${c.domain}: ${c.ad_count} ads (${c.devices_found.join(', ')})`).join('\n')
          : `No competitors found for ${keywords.join(', ')}.`,
        metadata: { searches: searches.length, transparency_lookups: lookups },
        costUsd: cost,
      };
    },
  };
}
