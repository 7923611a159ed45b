/**
 * `social_ad_library` (catalogue agent social-ad-library): who advertises on the social networks
 * for a query, from a Graph-API-style ad library (`GET /ads_archive`; META_AD_LIBRARY_ACCESS_TOKEN,
 * META_AD_LIBRARY_BASE_URL). Ads are grouped by the advertiser's page into competitors
 * {name, domain, page_id, ad_count, platforms, sample_ads, source}; an ad is active while it has
 * no delivery stop time or one in the future. The library is free to query: cost_usd is 0.
 */
import { type AdsVendorSettings, adLibraryPages, adLibrarySearch, domainOf, text } from './ads-client.js';
import { type Tool, type ToolContext, ToolError, type ToolOutput } from './tool.js';
import { vendorToolTimeoutMs } from './vendor-fetch.js';

/** The networks of the ad library (its `publisher_platforms`), as the tools name them. */
export const SOCIAL_PLATFORMS = ['facebook', 'instagram', 'messenger', 'audience_network', 'threads', 'whatsapp'] as const;
export type SocialPlatform = (typeof SOCIAL_PLATFORMS)[number];

export interface SocialAdLibraryArgs extends Record<string, unknown> {
  query: string;
  country?: string;
  platform?: SocialPlatform;
}

const SAMPLE_ADS = 3;
export const SOCIAL_SOURCE = 'meta_ad_library';

export interface SocialAd {
  id: string;
  page_id: string;
  page_name: string;
  body: string;
  title: string;
  caption: string;
  snapshot_url: string;
  start_time: string | null;
  stop_time: string | null;
  platforms: string[];
  active: boolean;
}

const first = (v: unknown): string => (Array.isArray(v) ? (v.map(text).find(Boolean) ?? '') : text(v));

function adOf(r: Record<string, unknown>, now: number): SocialAd {
  const stop = text(r.ad_delivery_stop_time) || null;
  const stopMs = stop ? Date.parse(stop) : NaN;
  return {
    id: text(r.id),
    page_id: text(r.page_id),
    page_name: text(r.page_name),
    body: first(r.ad_creative_bodies),
    title: first(r.ad_creative_link_titles),
    caption: first(r.ad_creative_link_captions),
    snapshot_url: text(r.ad_snapshot_url),
    start_time: text(r.ad_delivery_start_time) || null,
    stop_time: stop,
    platforms: Array.isArray(r.publisher_platforms) ? r.publisher_platforms.map((p) => text(p).toLowerCase()).filter(Boolean) : [],
    // No stop time: still delivering. An unparsable one is taken as ended (not claimed active).
    active: !stop || (Number.isFinite(stopMs) && stopMs > now),
  };
}

/** Ads of the library for `search_terms` in a country, optionally one network (shared with ads_transparency). */
export async function socialAds(
  s: AdsVendorSettings,
  tool: string,
  q: { terms: string; country: string; platform?: SocialPlatform; from?: string; to?: string },
  ctx: Pick<ToolContext, 'signal'>,
): Promise<SocialAd[]> {
  const raw = await adLibrarySearch(
    s,
    tool,
    {
      search_terms: q.terms,
      ad_reached_countries: JSON.stringify([q.country.toUpperCase()]),
      ad_active_status: 'ALL',
      ad_type: 'ALL',
      publisher_platforms: q.platform ? JSON.stringify([q.platform.toUpperCase()]) : undefined,
      ad_delivery_date_min: q.from,
      ad_delivery_date_max: q.to,
    },
    ctx,
  );
  const now = Date.now();
  return raw.map((r) => adOf(r, now));
}

/** The most frequent non-empty value (first seen wins a tie); '' when none. */
function mostCommon(values: string[]): string {
  const counts = new Map<string, number>();
  for (const v of values) if (v) counts.set(v, (counts.get(v) ?? 0) + 1);
  let best = '';
  let n = 0;
  for (const [v, c] of counts) if (c > n) [best, n] = [v, c];
  return best;
}

/** Ads grouped by advertiser page, most ads first. */
export function competitorsOf(ads: SocialAd[]) {
  const byPage = new Map<string, SocialAd[]>();
  for (const ad of ads) {
    const key = ad.page_id || `name:${ad.page_name}`;
    byPage.set(key, [...(byPage.get(key) ?? []), ad]);
  }
  return [...byPage.values()]
    .map((group) => ({
      name: group[0]!.page_name,
      domain: mostCommon(group.map((a) => domainOf(a.caption))),
      page_id: group[0]!.page_id,
      ad_count: group.length,
      platforms: [...new Set(group.flatMap((a) => a.platforms))].sort(),
      sample_ads: group.slice(0, SAMPLE_ADS).map(({ page_id: _p, page_name: _n, ...ad }) => ad),
      source: SOCIAL_SOURCE,
    }))
    .sort((a, b) => b.ad_count - a.ad_count || a.name.localeCompare(b.name));
}

export function socialAdLibraryTool(s: AdsVendorSettings): Tool<SocialAdLibraryArgs> {
  return {
    name: 'social_ad_library',
    description:
      'Advertisers running ads on social networks for a query, from the social ad library: a summary (ads, active ads, networks, advertisers) and competitors with their ad counts and sample ads.',
    category: 'ads_research',
    version: '1.0.0',
    parameters: {
      type: 'object',
      properties: {
        query: { type: 'string', description: 'Search terms (brand, product, topic)', minLength: 1, maxLength: 500 },
        country: { type: 'string', description: 'Country the ads reached (ISO code)', default: 'US', minLength: 2, maxLength: 2 },
        platform: { type: 'string', enum: [...SOCIAL_PLATFORMS], description: 'One network; omitted: all' },
      },
      required: ['query'],
      additionalProperties: false,
    },
    // The ad library's pages one after another (META_AD_LIBRARY_MAX_ADS / 100), each ADS_VENDOR_TIMEOUT_MS.
    timeoutMs: vendorToolTimeoutMs(adLibraryPages(s), s.timeoutMs),
    costPerUse: 0,
    dangerous: false,
    // Not offered to models without its vendor key (a direct call says which variable to set).
    available: !!s.metaAccessToken,
    retryable: true,
    async run(args, ctx): Promise<ToolOutput> {
      const query = args.query.trim();
      if (!query) throw new ToolError('query must not be blank', 'bad_arguments');
      const country = (args.country ?? 'US').toUpperCase();
      const ads = await socialAds(s, 'social_ad_library', { terms: query, country, platform: args.platform }, ctx);
      const competitors = competitorsOf(ads);
      const summary = {
        total_ads_found: ads.length,
        active_ads: ads.filter((a) => a.active).length,
        platforms: [...new Set(ads.flatMap((a) => a.platforms))].sort(),
        unique_advertisers: competitors.length,
      };
      return {
        output: {
          search_params: { query, country, platform: args.platform ?? 'all' },
          summary,
          competitors,
          cost_usd: 0,
          timestamp: new Date().toISOString(),
        },
        text: competitors.length
          ? `${summary.total_ads_found} ads (${summary.active_ads} active) from ${summary.unique_advertisers} advertisers:\n` +
            competitors
              .map((c) => `- ${c.name}${c.domain ? ` (${c.domain})` : ''}: ${c.ad_count} ads on ${c.platforms.join(', ') || 'unknown networks'}`)
              .join('\n')
          : `No ads found for "${query}" in ${country}.`,
        metadata: { total_ads_found: summary.total_ads_found },
        costUsd: 0,
      };
    },
  };
}
