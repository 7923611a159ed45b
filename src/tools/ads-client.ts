/**
 * The vendor client of the ads-research tools (ads-*.ts): a SerpApi-style search-results vendor
 * (`GET <base>/search.json?engine=...&api_key=...`) and a Graph-API-style ad library
 * (`GET <base>/ads_archive?access_token=...`), reached at the base URLs the operator configured.
 *
 * Those URLs come from the operator, not from a model, so requests go through `./vendor-fetch.ts`
 * (a vendor on the local network is allowed, as for web_search) and skip the SSRF guard of
 * `./net.ts`; every request still has a time limit and a response size bound. Missing keys fail with
 * `not_configured` naming the variable; a vendor's error becomes a `backend` ToolError carrying
 * the vendor's own message. Nothing here makes data up.
 */
import { type ToolContext, ToolError } from './tool.js';
import { fetchBounded, redact } from './vendor-fetch.js';

/** The settings the ads tools read (config's `tools.adsVendors`; see src/config/ads-vendors.ts). */
export interface AdsVendorSettings {
  /** SERPAPI_API_KEY */
  serpApiKey?: string;
  /** SERPAPI_BASE_URL */
  serpApiBaseUrl: string;
  /** SERPAPI_COST_PER_SEARCH_USD */
  serpApiCostPerSearchUsd: number;
  /** ADS_JP_PORTAL_URL: the portal's search endpoint; unset: SERPAPI_BASE_URL's /search.json. */
  jpPortalUrl?: string;
  /** ADS_JP_PORTAL_API_KEY; unset: SERPAPI_API_KEY. */
  jpPortalApiKey?: string;
  /** ADS_JP_PORTAL_ENGINE */
  jpPortalEngine: string;
  /** ADS_JP_PORTAL_DOMAIN */
  jpPortalDomain: string;
  /** ADS_JP_PORTAL_COST_USD */
  jpPortalCostUsd: number;
  /** META_AD_LIBRARY_ACCESS_TOKEN */
  metaAccessToken?: string;
  /** META_AD_LIBRARY_BASE_URL */
  metaBaseUrl: string;
  /** META_AD_LIBRARY_MAX_ADS */
  metaMaxAds: number;
  /** ADS_VENDOR_TIMEOUT_MS */
  timeoutMs: number;
}

/** A vendor's JSON answer is read up to this size; a larger one is refused, not truncated. */
export const MAX_VENDOR_RESPONSE_BYTES = 5 * 1024 * 1024;

/** The key a tool needs, or a `not_configured` error naming its variable. */
export function requireSetting(value: string | undefined, variable: string, tool: string, what: string): string {
  if (!value) throw new ToolError(`${tool}: ${variable} is not set (${what}); set it to use this agent`, 'not_configured');
  return value;
}

/** `path` under `base`, keeping any path prefix of base (a vendor behind /api/). */
export function vendorUrl(base: string, path: string, variable: string): URL {
  try {
    return new URL(path.replace(/^\//, ''), base.endsWith('/') ? base : `${base}/`);
  } catch {
    throw new ToolError(`${variable} is not a valid URL: ${base}`, 'not_configured');
  }
}

/** The vendor's own words from an error body: `{error: "..."}` (SerpApi) or `{error: {message}}` (Graph API). */
function vendorMessage(data: unknown): string | undefined {
  if (!data || typeof data !== 'object') return undefined;
  const e = (data as { error?: unknown }).error;
  if (typeof e === 'string' && e.trim()) return e.trim();
  if (e && typeof e === 'object' && typeof (e as { message?: unknown }).message === 'string') return (e as { message: string }).message;
  return undefined;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * GETs `url` and returns its JSON object. A non-2xx answer, a body that is not a JSON object, a
 * timeout or an unreachable vendor is a `backend` ToolError naming the vendor; the caller's abort
 * is rethrown as is.
 */
export async function getVendorJson(
  url: URL,
  o: { vendor: string; timeoutMs: number; signal: AbortSignal; redact?: string[] },
): Promise<Record<string, unknown>> {
  const res = await fetchBounded({
    vendor: o.vendor,
    url,
    headers: { accept: 'application/json' },
    timeoutMs: o.timeoutMs,
    maxBytes: MAX_VENDOR_RESPONSE_BYTES,
    signal: o.signal,
  });
  const data = parseJson(res.text);
  if (!res.ok) {
    const said = redact(vendorMessage(data) ?? '', o.redact);
    throw new ToolError(`${o.vendor} failed: HTTP ${res.status}${said ? `: ${said}` : ''}`, 'backend');
  }
  if (!data || typeof data !== 'object' || Array.isArray(data)) throw new ToolError(`${o.vendor} returned a response that is not a JSON object`, 'backend');
  return data as Record<string, unknown>;
}

/** SerpApi answers some failures with 200 and `{error}`; "no results" is an empty page, not a failure. */
const NO_RESULTS = /hasn't returned any results|no results/i;

/**
 * One search on the SerpApi-style vendor: `engine` plus its parameters (unset ones are not sent).
 * Returns the JSON page; `{error}` answers other than "no results" are failures.
 */
export async function serpApiSearch(
  s: AdsVendorSettings,
  tool: string,
  params: Record<string, string | number | undefined>,
  ctx: Pick<ToolContext, 'signal'>,
): Promise<Record<string, unknown>> {
  const key = requireSetting(s.serpApiKey, 'SERPAPI_API_KEY', tool, 'the search-results vendor key');
  return engineSearch(vendorUrl(s.serpApiBaseUrl, 'search.json', 'SERPAPI_BASE_URL'), key, params, s.timeoutMs, ctx);
}

/**
 * One search at a SerpApi-style endpoint (`GET <endpoint>?engine=...&api_key=...`): the JSON
 * page; `{error}` answers other than "no results", and an `Error` status, are failures.
 */
export async function engineSearch(
  endpoint: URL,
  key: string,
  params: Record<string, string | number | undefined>,
  timeoutMs: number,
  ctx: Pick<ToolContext, 'signal'>,
): Promise<Record<string, unknown>> {
  const url = new URL(endpoint);
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') url.searchParams.set(k, String(v));
  url.searchParams.set('api_key', key);
  const vendor = `search vendor (${String(params.engine)})`;
  const page = await getVendorJson(url, { vendor, timeoutMs, signal: ctx.signal, redact: [key] });
  const said = vendorMessage(page);
  if (said && !NO_RESULTS.test(said)) throw new ToolError(`${vendor} failed: ${redact(said, [key])}`, 'backend');
  const status = (page.search_metadata as { status?: unknown } | undefined)?.status;
  if (typeof status === 'string' && /error/i.test(status) && !said) throw new ToolError(`${vendor} reported status ${status}`, 'backend');
  return page;
}

/** The fields read from each ad of the Graph-API-style ad library. */
export const AD_LIBRARY_FIELDS = [
  'id',
  'page_id',
  'page_name',
  'ad_creative_bodies',
  'ad_creative_link_titles',
  'ad_creative_link_captions',
  'ad_creative_link_descriptions',
  'ad_delivery_start_time',
  'ad_delivery_stop_time',
  'ad_snapshot_url',
  'publisher_platforms',
] as const;

/** Pages of the ad library one query reads at most (sequential requests: each needs the last's `paging.next`). */
export const adLibraryPages = (s: Pick<AdsVendorSettings, 'metaMaxAds'>) => Math.ceil(s.metaMaxAds / 100);

/**
 * Ads of the Graph-API-style ad library (`GET /ads_archive`) for `params`, following the
 * vendor's `paging.next` until META_AD_LIBRARY_MAX_ADS ads were read.
 */
export async function adLibrarySearch(
  s: AdsVendorSettings,
  tool: string,
  params: Record<string, string | undefined>,
  ctx: Pick<ToolContext, 'signal'>,
): Promise<Record<string, unknown>[]> {
  const token = requireSetting(s.metaAccessToken, 'META_AD_LIBRARY_ACCESS_TOKEN', tool, 'the ad library access token');
  const first = vendorUrl(s.metaBaseUrl, 'ads_archive', 'META_AD_LIBRARY_BASE_URL');
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') first.searchParams.set(k, v);
  first.searchParams.set('fields', AD_LIBRARY_FIELDS.join(','));
  first.searchParams.set('limit', String(Math.min(100, s.metaMaxAds)));
  first.searchParams.set('access_token', token);
  const ads: Record<string, unknown>[] = [];
  let url: URL | undefined = first;
  while (url && ads.length < s.metaMaxAds) {
    const page = await getVendorJson(url, { vendor: 'ad library', timeoutMs: s.timeoutMs, signal: ctx.signal, redact: [token] });
    const data = Array.isArray(page.data) ? page.data : undefined;
    if (!data) throw new ToolError('ad library returned a page without a data array', 'backend');
    for (const ad of data) if (ad && typeof ad === 'object' && !Array.isArray(ad)) ads.push(ad as Record<string, unknown>);
    const next = (page.paging as { next?: unknown } | undefined)?.next;
    url = typeof next === 'string' && next && data.length > 0 ? nextPage(next, first, token) : undefined;
  }
  return ads.slice(0, s.metaMaxAds);
}

/** The vendor's next-page URL, kept on the configured origin (a page never sends the token elsewhere). */
function nextPage(next: string, first: URL, token: string): URL | undefined {
  let u: URL;
  try {
    u = new URL(next, first);
  } catch {
    return undefined;
  }
  if (u.origin !== first.origin) {
    const moved = new URL(first);
    moved.search = u.search;
    u = moved;
  }
  u.searchParams.set('access_token', token);
  return u;
}

/** The registrable-looking host of a link, lower case, without `www.`; '' when it is no URL. */
export function domainOf(link: unknown): string {
  if (typeof link !== 'string' || !link.trim()) return '';
  const raw = link.trim();
  try {
    const u = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `https://${raw}`);
    return u.hostname.toLowerCase().replace(/^www\./, '');
  } catch {
    return '';
  }
}

/** One search result as the ads tools report it. */
export interface SerpAd {
  position: number;
  title: string;
  description: string;
  link: string;
  domain: string;
}

/**
 * The paid results of a search page: `ads` as an array (Google), or split into `top`/`bottom`
 * blocks, or `ads_results` (other engines of the same vendor family), in page order.
 */
export function adsOf(page: Record<string, unknown>): SerpAd[] {
  const raw = page.ads ?? page.ads_results;
  let items: unknown[] = [];
  if (Array.isArray(raw)) items = raw;
  else if (raw && typeof raw === 'object') {
    const blocks = raw as Record<string, unknown>;
    items = [
      ...(Array.isArray(blocks.top) ? blocks.top : []),
      ...(Array.isArray(blocks.results) ? blocks.results : []),
      ...(Array.isArray(blocks.bottom) ? blocks.bottom : []),
    ];
  }
  return resultsOf(items, ['description', 'snippet']);
}

/** The organic results of a search page (`organic_results`). */
export function organicOf(page: Record<string, unknown>): SerpAd[] {
  return resultsOf(Array.isArray(page.organic_results) ? page.organic_results : [], ['snippet', 'description']);
}

function resultsOf(items: unknown[], descriptionKeys: string[]): SerpAd[] {
  const out: SerpAd[] = [];
  for (const item of items) {
    if (!item || typeof item !== 'object') continue;
    const r = item as Record<string, unknown>;
    const link = text(r.link) || text(r.url);
    if (!link) continue;
    const description = descriptionKeys.map((k) => text(r[k])).find(Boolean) ?? '';
    const pos = Number(r.position);
    out.push({
      // Positions are 1-based in page order when the vendor gives none.
      position: Number.isFinite(pos) && pos > 0 ? pos : out.length + 1,
      title: text(r.title),
      description,
      link,
      domain: domainOf(text(r.displayed_link) && !domainOf(link) ? text(r.displayed_link) : link),
    });
  }
  return out;
}

/** A string field of a vendor record, trimmed; '' when absent. */
export function text(v: unknown): string {
  return typeof v === 'string' ? v.trim() : typeof v === 'number' ? String(v) : '';
}
