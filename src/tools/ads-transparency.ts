/**
 * `ads_transparency` (catalogue agent ads-transparency): an advertiser's ads from the ad
 * transparency sources, one block per queried platform:
 * - Google's Ads Transparency Center through the SerpApi-style vendor's
 *   `google_ads_transparency_center` engine (SERPAPI_API_KEY): by advertiser_id and/or domain,
 *   in a country (numeric region = 2000 + ISO 3166 numeric code), on one Google surface
 *   (`platform`) or all, with creative_format and a date range;
 * - the social ad library (META_AD_LIBRARY_ACCESS_TOKEN) as the `social` block, by domain,
 *   optionally one network (`social_platform`), in the country or (none given) `ALL`.
 * `platforms` overrides which blocks are queried (each separately); otherwise `platform` (or all
 * Google surfaces, block `google`), plus `social` when social_platform is given. A platform that
 * fails is listed in `errors` and the others still answer; when every one fails the call fails.
 * The country table (i18n-iso-countries) is loaded by the first call, not at start-up.
 */
import { lazyImport } from '../kernel/index.js';
import { type AdsVendorSettings, adLibraryPages, serpApiSearch, text } from './ads-client.js';
import { SOCIAL_PLATFORMS, type SocialPlatform, competitorsOf, socialAds, SOCIAL_SOURCE } from './ads-social-library.js';
import { type Tool, type ToolContext, ToolError, type ToolOutput } from './tool.js';
import { vendorToolTimeoutMs } from './vendor-fetch.js';

export const GOOGLE_AD_PLATFORMS = ['SEARCH', 'YOUTUBE', 'SHOPPING', 'MAPS', 'PLAY'] as const;
/** What `platforms` may list: GOOGLE is every Google surface at once, SOCIAL the social ad library. */
export const TRANSPARENCY_PLATFORMS = ['GOOGLE', ...GOOGLE_AD_PLATFORMS, 'SOCIAL'] as const;
export const CREATIVE_FORMATS = ['TEXT', 'IMAGE', 'VIDEO'] as const;
type GooglePlatform = (typeof GOOGLE_AD_PLATFORMS)[number];

export interface AdsTransparencyArgs extends Record<string, unknown> {
  advertiser_id?: string;
  domain?: string;
  country?: string;
  platforms?: (typeof TRANSPARENCY_PLATFORMS)[number][];
  platform?: GooglePlatform;
  social_platform?: SocialPlatform;
  creative_format?: (typeof CREATIVE_FORMATS)[number];
  start_date?: string;
  end_date?: string;
}

const CREATIVES_PER_BLOCK = 100;
const SOCIAL_ADS_SHOWN = 20;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

const isoCountries = lazyImport(async () => (await import('i18n-iso-countries')).default);

/** The vendor's numeric region of an ISO 3166 alpha-2 country (Google geo target ids: 2000 + ISO numeric). */
export async function regionOf(country: string): Promise<string> {
  const numeric = (await isoCountries()).alpha2ToNumeric(country.toUpperCase());
  if (!numeric) throw new ToolError(`country ${JSON.stringify(country)} is not an ISO 3166 alpha-2 country code`, 'bad_arguments');
  return String(2000 + Number(numeric));
}

const isoDay = (unixSeconds: unknown): string | null => {
  const n = Number(unixSeconds);
  return Number.isFinite(n) && n > 0 ? new Date(n * 1000).toISOString().slice(0, 10) : null;
};

/** A date given as YYYY-MM-DD that is a real calendar day. */
function checkDate(v: string | undefined, field: string): string | undefined {
  if (v === undefined) return undefined;
  const d = new Date(`${v}T00:00:00Z`);
  if (!DATE.test(v) || Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== v)
    throw new ToolError(`${field} must be a date as YYYY-MM-DD, got ${JSON.stringify(v)}`, 'bad_arguments');
  return v;
}

/** One query of the Ads Transparency Center engine, summarised (shared with competitor_discover). */
export async function googleTransparency(
  s: AdsVendorSettings,
  tool: string,
  a: Pick<AdsTransparencyArgs, 'advertiser_id' | 'domain' | 'country' | 'creative_format' | 'start_date' | 'end_date'>,
  platform: GooglePlatform | undefined,
  ctx: Pick<ToolContext, 'signal'>,
) {
  const page = await serpApiSearch(
    s,
    tool,
    {
      engine: 'google_ads_transparency_center',
      advertiser_id: a.advertiser_id,
      text: a.domain,
      region: a.country ? await regionOf(a.country) : undefined,
      platform,
      creative_format: a.creative_format?.toLowerCase(),
      start_date: a.start_date?.replace(/-/g, ''),
      end_date: a.end_date?.replace(/-/g, ''),
      num: CREATIVES_PER_BLOCK,
    },
    ctx,
  );
  const raw = Array.isArray(page.ad_creatives) ? page.ad_creatives : [];
  const creatives = raw
    .filter((c): c is Record<string, unknown> => !!c && typeof c === 'object')
    .map((c) => ({
      ad_creative_id: text(c.ad_creative_id),
      advertiser_id: text(c.advertiser_id),
      advertiser: text(c.advertiser),
      format: text(c.format).toLowerCase(),
      target_domain: text(c.target_domain) || null,
      image: text(c.image) || null,
      first_shown: isoDay(c.first_shown),
      last_shown: isoDay(c.last_shown),
      total_days_shown: Number.isFinite(Number(c.total_days_shown)) ? Number(c.total_days_shown) : null,
      details_link: text(c.details_link) || null,
    }));
  const advertisers = new Map<string, { advertiser_id: string; name: string; ad_count: number }>();
  for (const c of creatives) {
    const e = advertisers.get(c.advertiser_id) ?? { advertiser_id: c.advertiser_id, name: c.advertiser, ad_count: 0 };
    e.ad_count++;
    advertisers.set(c.advertiser_id, e);
  }
  const formats: Record<string, number> = {};
  for (const c of creatives) if (c.format) formats[c.format] = (formats[c.format] ?? 0) + 1;
  const days = (k: 'first_shown' | 'last_shown') =>
    creatives
      .map((c) => c[k])
      .filter((d): d is string => !!d)
      .sort();
  const total = Number((page.search_information as { total_results?: unknown } | undefined)?.total_results);
  return {
    source: 'google_ads_transparency_center',
    platform: platform ?? 'ALL',
    total_creatives: Number.isFinite(total) && total >= creatives.length ? total : creatives.length,
    advertisers: [...advertisers.values()].sort((x, y) => y.ad_count - x.ad_count),
    formats,
    first_shown: days('first_shown')[0] ?? null,
    last_shown: days('last_shown').at(-1) ?? null,
    creatives,
  };
}

async function socialBlock(s: AdsVendorSettings, a: AdsTransparencyArgs, ctx: Pick<ToolContext, 'signal'>) {
  if (!a.domain) throw new ToolError('the social ad library is searched by domain: give domain (advertiser_id is a Google advertiser id)', 'bad_arguments');
  const ads = await socialAds(
    s,
    'ads_transparency',
    { terms: a.domain, country: a.country ?? 'ALL', platform: a.social_platform, from: a.start_date, to: a.end_date },
    ctx,
  );
  return {
    source: SOCIAL_SOURCE,
    platform: a.social_platform ?? 'all',
    total_ads: ads.length,
    active_ads: ads.filter((x) => x.active).length,
    advertisers: competitorsOf(ads).map((c) => ({ name: c.name, page_id: c.page_id, domain: c.domain, ad_count: c.ad_count, platforms: c.platforms })),
    ads: ads.slice(0, SOCIAL_ADS_SHOWN),
  };
}

export function adsTransparencyTool(s: AdsVendorSettings): Tool<AdsTransparencyArgs> {
  return {
    name: 'ads_transparency',
    description:
      "An advertiser's ads from the ad transparency sources (Google's Ads Transparency Center per surface, and the social ad library): one block per queried platform with creatives, formats and dates.",
    category: 'ads_research',
    version: '1.0.0',
    parameters: {
      type: 'object',
      properties: {
        advertiser_id: { type: 'string', description: 'Google advertiser id (AR...); several separated by commas', maxLength: 1000 },
        domain: { type: 'string', description: "The advertiser's domain (example.com)", maxLength: 253 },
        country: { type: 'string', description: 'ISO 3166 alpha-2 country the ads were shown in; omitted: anywhere', minLength: 2, maxLength: 2 },
        platforms: {
          type: 'array',
          items: { type: 'string', enum: [...TRANSPARENCY_PLATFORMS] },
          maxItems: TRANSPARENCY_PLATFORMS.length,
          description: 'Platforms to query, each as its own block (overrides platform)',
        },
        platform: { type: 'string', enum: [...GOOGLE_AD_PLATFORMS], description: 'One Google surface; omitted: all (block `google`)' },
        social_platform: {
          type: 'string',
          enum: [...SOCIAL_PLATFORMS],
          description: 'Network filter of the social block (adds it when platforms is not given)',
        },
        creative_format: { type: 'string', enum: [...CREATIVE_FORMATS], description: 'Only creatives of this format' },
        start_date: { type: 'string', description: 'Ads shown from this day (YYYY-MM-DD)', pattern: '^\\d{4}-\\d{2}-\\d{2}$' },
        end_date: { type: 'string', description: 'Ads shown until this day (YYYY-MM-DD)', pattern: '^\\d{4}-\\d{2}-\\d{2}$' },
      },
      additionalProperties: false,
    },
    // The platforms are queried in parallel: the longest is the SOCIAL block's ad library pages; each request ADS_VENDOR_TIMEOUT_MS.
    timeoutMs: vendorToolTimeoutMs(Math.max(1, adLibraryPages(s)), s.timeoutMs),
    costPerUse: s.serpApiCostPerSearchUsd,
    dangerous: false,
    // Not offered to models without its vendor key (a direct call says which variable to set).
    available: !!(s.serpApiKey || s.metaAccessToken),
    retryable: true,
    prepare: async () => void (await isoCountries()),
    async run(raw, ctx): Promise<ToolOutput> {
      const a: AdsTransparencyArgs = {
        ...raw,
        advertiser_id: raw.advertiser_id?.trim() || undefined,
        domain: raw.domain?.trim().toLowerCase() || undefined,
        country: raw.country?.toUpperCase(),
      };
      if (!a.advertiser_id && !a.domain) throw new ToolError('give advertiser_id or domain (or both)', 'bad_arguments');
      const from = checkDate(a.start_date, 'start_date');
      const to = checkDate(a.end_date, 'end_date');
      if (from && to && from > to) throw new ToolError(`start_date ${from} is after end_date ${to}`, 'bad_arguments');
      if (a.country) await regionOf(a.country);
      const queried: string[] = a.platforms?.length ? [...new Set(a.platforms)] : [a.platform ?? 'GOOGLE', ...(a.social_platform ? ['SOCIAL'] : [])];
      // A filter for a block that is not queried would be silently ignored: refused instead.
      if (a.social_platform && !queried.includes('SOCIAL'))
        throw new ToolError('social_platform filters the SOCIAL block, which platforms does not include: add SOCIAL to platforms', 'bad_arguments');
      if (a.creative_format && queried.every((p) => p === 'SOCIAL'))
        throw new ToolError(
          'creative_format filters the Google blocks, and platforms names none: add a Google platform or drop creative_format',
          'bad_arguments',
        );
      const errors: { platform: string; error: string; kind: string }[] = [];
      const blocks: Record<string, unknown> = {};
      let searches = 0;
      await Promise.all(
        queried.map(async (p) => {
          const key = p.toLowerCase();
          try {
            if (p === 'SOCIAL') blocks[key] = await socialBlock(s, a, ctx);
            else {
              blocks[key] = await googleTransparency(s, 'ads_transparency', a, p === 'GOOGLE' ? undefined : (p as GooglePlatform), ctx);
              searches++;
            }
          } catch (err) {
            if (ctx.signal.aborted) throw err;
            if (!(err instanceof ToolError)) throw err;
            errors.push({ platform: key, error: err.message, kind: err.kind });
          }
        }),
      );
      const platforms_queried = queried.map((p) => p.toLowerCase());
      if (errors.length === queried.length) {
        const kind = errors.every((e) => e.kind === 'not_configured')
          ? 'not_configured'
          : errors.every((e) => e.kind === 'bad_arguments')
            ? 'bad_arguments'
            : 'backend';
        throw new ToolError(`ads_transparency: every platform failed: ${errors.map((e) => `${e.platform}: ${e.error}`).join('; ')}`, kind);
      }
      const cost = searches * s.serpApiCostPerSearchUsd;
      const ordered = Object.fromEntries(platforms_queried.filter((k) => k in blocks).map((k) => [k, blocks[k]]));
      return {
        output: {
          ...ordered,
          platforms_queried,
          country: a.country ?? null,
          errors: errors
            .sort((x, y) => platforms_queried.indexOf(x.platform) - platforms_queried.indexOf(y.platform))
            .map(({ platform, error }) => ({ platform, error })),
        },
        text: platforms_queried
          .map((k) => {
            const b = blocks[k] as { total_creatives?: number; total_ads?: number } | undefined;
            if (!b) return `${k}: failed (${errors.find((e) => e.platform === k)?.error})`;
            return `${k}: ${b.total_creatives ?? b.total_ads ?? 0} ads`;
          })
          .join('\n'),
        metadata: { platforms_queried },
        costUsd: cost,
      };
    },
  };
}
