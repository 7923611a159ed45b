/**
 * The ads-research agents' tools (src/tools/ads-*.ts) through ToolRegistry.execute, as
 * POST /api/v1/tools/{name}/execute and the catalogue's agent workflow run them, against a local
 * vendor server (SerpApi-style `/search.json` engines and a Graph-API-style `/ads_archive`). The
 * two that analyse with the model: ads-agents-model.test.ts.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { toolModel } from '../src/app/tool-model.js';
import { AppError } from '../src/kernel/index.js';
import { OfflineProvider } from '../src/llm/index.js';
import type { AdsVendorSettings } from '../src/tools/ads-client.js';
import { adsTools } from '../src/tools/ads-tools.js';
import { ToolRegistry, type ToolExecution } from '../src/tools/index.js';
import { startServer, type TestServer } from './helpers/tools-web.js';

type Handler = (url: URL, req: IncomingMessage, res: ServerResponse) => void;
const json = (res: ServerResponse, status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

const googleAd = (n: number, domain: string, extra: Record<string, unknown> = {}) => ({
  position: n,
  block_position: 'top',
  title: `Ad ${n} of ${domain}`,
  link: `https://www.${domain}/landing?x=${n}`,
  displayed_link: `https://www.${domain}/`,
  tracking_link: `https://www.googleadservices.com/pagead/aclk?sa=L&n=${n}`,
  description: `Description ${n} of ${domain}`,
  ...extra,
});

let vendor: TestServer;
let handler: Handler;
let settings: AdsVendorSettings;
let registry: ToolRegistry;

const sent = () => vendor.requests.map((r) => new URL(r.url, 'http://x'));
const params = (u: URL) => Object.fromEntries(u.searchParams);
const run = (r: ToolRegistry, name: string, args: Record<string, unknown>) => r.execute(name, args);
async function refused(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    return err as AppError;
  }
  throw new Error('expected a 400, but the call was accepted');
}
function ok(e: ToolExecution): Record<string, any> {
  expect(e.error).toBeNull();
  expect(e.success).toBe(true);
  return e.output as Record<string, any>;
}

beforeAll(async () => {
  vendor = await startServer((req, res) => handler(new URL(req.url ?? '/', 'http://x'), req, res));
  settings = {
    serpApiKey: 'serp-secret-key',
    serpApiBaseUrl: vendor.origin,
    serpApiCostPerSearchUsd: 0.015,
    jpPortalEngine: 'yahoo',
    jpPortalDomain: 'search.yahoo.co.jp',
    jpPortalCostUsd: 0,
    metaAccessToken: 'meta-secret-token',
    metaBaseUrl: `${vendor.origin}/v21.0`,
    metaMaxAds: 200,
    timeoutMs: 5000,
  };
  registry = new ToolRegistry(adsTools(settings, toolModel(new OfflineProvider(), { tier: 'small', maxTokens: 2000, temperature: 0 })));
});
beforeEach(() => {
  vendor.requests.length = 0;
  handler = (_u, _r, res) => json(res, 404, { error: 'no route' });
});

describe('serp_ads', () => {
  it('returns the page ads with exactly the spec fields, sending the defaults to the vendor', async () => {
    handler = (u, _r, res) =>
      json(res, 200, { search_metadata: { status: 'Success' }, ads: [1, 2, 3].map((n) => googleAd(n, `shop${n}.example`)), organic_results: [] });
    const e = await run(registry, 'serp_ads', { keywords: ' running shoes ', max_results: 2 });
    const out = ok(e);
    expect(Object.keys(out).sort()).toEqual(['ads', 'cost_usd', 'keywords', 'location', 'timestamp', 'total_ads']);
    expect(out.keywords).toBe('running shoes');
    expect(out.location).toBeNull();
    expect(out.total_ads).toBe(3);
    expect(out.ads).toEqual([
      {
        position: 1,
        title: 'Ad 1 of shop1.example',
        description: 'Description 1 of shop1.example',
        link: 'https://www.shop1.example/landing?x=1',
        domain: 'shop1.example',
      },
      {
        position: 2,
        title: 'Ad 2 of shop2.example',
        description: 'Description 2 of shop2.example',
        link: 'https://www.shop2.example/landing?x=2',
        domain: 'shop2.example',
      },
    ]);
    expect(out.cost_usd).toBe(0.015);
    expect(e.costUsd).toBe(0.015);
    expect(Number.isNaN(Date.parse(out.timestamp))).toBe(false);
    const [u] = sent();
    expect(u!.pathname).toBe('/search.json');
    expect(params(u!)).toEqual({
      engine: 'google',
      q: 'running shoes',
      gl: 'us',
      hl: 'en',
      device: 'desktop',
      google_domain: 'google.com',
      api_key: 'serp-secret-key',
    });
  });

  it('sends country, language, location, device and domain as given', async () => {
    handler = (_u, _r, res) => json(res, 200, { ads: [googleAd(1, 'a.example')] });
    const out = ok(
      await run(registry, 'serp_ads', {
        keywords: 'k',
        country: 'JP',
        language: 'ja',
        location: 'Tokyo, Japan',
        device: 'mobile',
        google_domain: 'google.co.jp',
      }),
    );
    expect(out.location).toBe('Tokyo, Japan');
    expect(params(sent()[0]!)).toMatchObject({ gl: 'jp', hl: 'ja', location: 'Tokyo, Japan', device: 'mobile', google_domain: 'google.co.jp' });
  });

  it("reads the vendor's no-results answer as no ads", async () => {
    handler = (_u, _r, res) => json(res, 200, { search_metadata: { status: 'Success' }, error: "Google hasn't returned any results for this query." });
    const out = ok(await run(registry, 'serp_ads', { keywords: 'zzqx' }));
    expect(out.total_ads).toBe(0);
    expect(out.ads).toEqual([]);
  });

  it("a vendor error is a failed call carrying the vendor's message, never the key", async () => {
    handler = (_u, _r, res) => json(res, 401, { error: 'Invalid API key serp-secret-key. Your API key should be here: https://serpapi.com/manage-api-key' });
    const e = await run(registry, 'serp_ads', { keywords: 'k' });
    expect(e.success).toBe(false);
    expect(e.errorKind).toBe('backend');
    expect(e.error).toMatch(/^search vendor \(google\) failed: HTTP 401: Invalid API key \*\*\*\./);
    expect(e.error).not.toContain('serp-secret-key');
    handler = (_u, _r, res) => json(res, 200, { search_metadata: { status: 'Error' }, error: 'Your account has run out of searches.' });
    const e2 = await run(registry, 'serp_ads', { keywords: 'k' });
    expect(e2.success).toBe(false);
    expect(e2.error).toBe('search vendor (google) failed: Your account has run out of searches.');
    handler = (_u, _r, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>maintenance</html>');
    expect((await run(registry, 'serp_ads', { keywords: 'k' })).error).toBe('search vendor (google) returned a response that is not a JSON object');
  });

  it('a vendor that does not answer in time, or answers too much, fails clearly', async () => {
    const quick = new ToolRegistry(adsTools({ ...settings, timeoutMs: 200 }, async () => ({ text: '', model: 'm', provider: 'p', tokens: 0 })));
    handler = () => undefined; // never answers
    const slow = await run(quick, 'serp_ads', { keywords: 'k' });
    expect(slow.error).toBe('search vendor (google) timed out after 200 ms');
    handler = (_u, _r, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"ads":[],"pad":"${'x'.repeat(6 * 1024 * 1024)}"}`);
    };
    const big = await run(registry, 'serp_ads', { keywords: 'k' });
    expect(big.success).toBe(false);
    expect(big.error).toMatch(/^search vendor \(google\) response too large/);
  });
});

describe('portal_jp_ads', () => {
  it("asks the vendor's Japanese portal engine and marks each ad with its source", async () => {
    handler = (_u, _r, res) =>
      json(res, 200, {
        ads: {
          top: [{ position: 1, title: '格安航空券', link: 'https://www.travel.example.jp/air', description: '最安値を比較' }],
          bottom: [{ position: 2, title: 'ホテル予約', link: 'https://hotel.example.jp/', snippet: '今すぐ予約' }],
        },
      });
    const e = await run(registry, 'portal_jp_ads', { keywords: '格安 航空券' });
    const out = ok(e);
    expect(Object.keys(out).sort()).toEqual(['ads', 'cost_usd', 'keywords', 'timestamp', 'total_ads']);
    expect(out.total_ads).toBe(2);
    expect(out.ads).toEqual([
      {
        position: 1,
        title: '格安航空券',
        description: '最安値を比較',
        link: 'https://www.travel.example.jp/air',
        domain: 'travel.example.jp',
        source: 'search.yahoo.co.jp',
      },
      {
        position: 2,
        title: 'ホテル予約',
        description: '今すぐ予約',
        link: 'https://hotel.example.jp/',
        domain: 'hotel.example.jp',
        source: 'search.yahoo.co.jp',
      },
    ]);
    expect(out.cost_usd).toBe(0);
    expect(e.costUsd).toBe(0);
    expect(params(sent()[0]!)).toEqual({ engine: 'yahoo', p: '格安 航空券', q: '格安 航空券', yahoo_domain: 'search.yahoo.co.jp', api_key: 'serp-secret-key' });
  });

  it('ADS_JP_PORTAL_URL and its key point it at another vendor of the same style', async () => {
    handler = (u, _r, res) =>
      u.pathname === '/api/v1/search' ? json(res, 200, { ads_results: [{ position: 1, title: 'T', link: 'https://a.example.jp/' }] }) : json(res, 404, {});
    const other = new ToolRegistry(
      adsTools({ ...settings, serpApiKey: undefined, jpPortalUrl: `${vendor.origin}/api/v1/search`, jpPortalApiKey: 'portal-key' }, async () => ({
        text: '',
        model: 'm',
        provider: 'p',
        tokens: 0,
      })),
    );
    const out = ok(await run(other, 'portal_jp_ads', { keywords: 'k' }));
    expect(out.ads).toEqual([
      { position: 1, title: 'T', description: '', link: 'https://a.example.jp/', domain: 'a.example.jp', source: 'search.yahoo.co.jp' },
    ]);
    expect(sent()[0]!.pathname).toBe('/api/v1/search');
    expect(sent()[0]!.searchParams.get('api_key')).toBe('portal-key');
  });
});

const metaAd = (id: string, page: string, name: string, caption: string, platforms: string[], stop?: string) => ({
  id,
  page_id: page,
  page_name: name,
  ad_creative_bodies: [`Body of ${id}`],
  ad_creative_link_titles: [`Title of ${id}`],
  ad_creative_link_captions: [caption],
  ad_delivery_start_time: '2026-01-01',
  ...(stop ? { ad_delivery_stop_time: stop } : {}),
  ad_snapshot_url: `https://www.facebook.com/ads/archive/render_ad/?id=${id}`,
  publisher_platforms: platforms,
});

describe('social_ad_library', () => {
  it('groups the library ads by advertiser, following the pages, with the summary the spec names', async () => {
    handler = (u, _r, res) => {
      if (u.pathname !== '/v21.0/ads_archive') return json(res, 404, { error: { message: 'Unknown path', code: 803 } });
      if (u.searchParams.get('after') === 'c2')
        return json(res, 200, { data: [metaAd('3', 'p1', 'Acme Shoes', 'acme.example', ['facebook'], '2020-02-01')], paging: {} });
      return json(res, 200, {
        data: [metaAd('1', 'p1', 'Acme Shoes', 'ACME.EXAMPLE', ['facebook', 'instagram']), metaAd('2', 'p2', 'Beta Run', 'beta.example', ['instagram'])],
        paging: { cursors: { after: 'c2' }, next: `https://graph.facebook.com/v21.0/ads_archive?after=c2&access_token=meta-secret-token` },
      });
    };
    const out = ok(await run(registry, 'social_ad_library', { query: 'running shoes' }));
    expect(Object.keys(out).sort()).toEqual(['competitors', 'cost_usd', 'search_params', 'summary', 'timestamp']);
    expect(out.search_params).toEqual({ query: 'running shoes', country: 'US', platform: 'all' });
    expect(out.summary).toEqual({ total_ads_found: 3, active_ads: 2, platforms: ['facebook', 'instagram'], unique_advertisers: 2 });
    expect(out.competitors.map((c: any) => Object.keys(c).sort())[0]).toEqual(['ad_count', 'domain', 'name', 'page_id', 'platforms', 'sample_ads', 'source']);
    expect(out.competitors.map((c: any) => [c.name, c.domain, c.page_id, c.ad_count, c.platforms, c.source])).toEqual([
      ['Acme Shoes', 'acme.example', 'p1', 2, ['facebook', 'instagram'], 'meta_ad_library'],
      ['Beta Run', 'beta.example', 'p2', 1, ['instagram'], 'meta_ad_library'],
    ]);
    expect(out.competitors[0].sample_ads[0]).toMatchObject({ id: '1', body: 'Body of 1', title: 'Title of 1', active: true });
    expect(out.cost_usd).toBe(0);
    const [first, second] = sent();
    expect(params(first!)).toMatchObject({
      search_terms: 'running shoes',
      ad_reached_countries: '["US"]',
      ad_active_status: 'ALL',
      access_token: 'meta-secret-token',
      limit: '100',
    });
    expect(first!.searchParams.get('fields')).toContain('page_name');
    expect(first!.searchParams.has('publisher_platforms')).toBe(false);
    // The next page was read from the configured vendor, not the host the page named.
    expect(second!.pathname).toBe('/v21.0/ads_archive');
    expect(second!.searchParams.get('after')).toBe('c2');
  });

  it('filters one network and country when asked', async () => {
    handler = (_u, _r, res) => json(res, 200, { data: [] });
    const out = ok(await run(registry, 'social_ad_library', { query: 'q', country: 'gb', platform: 'instagram' }));
    expect(out.search_params).toEqual({ query: 'q', country: 'GB', platform: 'instagram' });
    expect(out.summary).toEqual({ total_ads_found: 0, active_ads: 0, platforms: [], unique_advertisers: 0 });
    expect(params(sent()[0]!)).toMatchObject({ ad_reached_countries: '["GB"]', publisher_platforms: '["INSTAGRAM"]' });
  });

  it("a Graph API error is a failed call with the vendor's message", async () => {
    handler = (_u, _r, res) =>
      json(res, 400, { error: { message: 'Invalid OAuth access token - Cannot parse access token', type: 'OAuthException', code: 190 } });
    const e = await run(registry, 'social_ad_library', { query: 'q' });
    expect(e.success).toBe(false);
    expect(e.error).toBe('ad library failed: HTTP 400: Invalid OAuth access token - Cannot parse access token');
  });
});

describe('competitor_discover', () => {
  const pages: Record<string, Record<string, unknown>> = {
    'shoes|desktop': { ads: [googleAd(1, 'acme.example'), googleAd(2, 'beta.example')] },
    'shoes|mobile': { ads: [googleAd(1, 'acme.example')] },
    'boots|desktop': { ads: [googleAd(1, 'acme.example'), googleAd(2, 'gamma.example')] },
    'boots|mobile': { ads: [], organic_results: [{ position: 1, title: 'Boot guide', link: 'https://guide.example/boots', snippet: 'All about boots' }] },
  };
  beforeEach(() => {
    handler = (u, _r, res) => {
      if (u.searchParams.get('engine') === 'google_ads_transparency_center')
        return json(res, 200, {
          search_information: { total_results: 42 },
          ad_creatives: [
            {
              advertiser_id: 'AR1',
              advertiser: 'Acme Inc',
              ad_creative_id: 'CR1',
              format: 'text',
              target_domain: 'acme.example',
              first_shown: 1735689600,
              last_shown: 1767139200,
            },
          ],
        });
      return json(res, 200, pages[`${u.searchParams.get('q')}|${u.searchParams.get('device')}`] ?? {});
    };
  });

  it('aggregates ads by domain over keywords and devices (defaults: desktop and mobile, organic fallback)', async () => {
    const e = await run(registry, 'competitor_discover', { keywords: ['shoes', 'boots'] });
    const out = ok(e);
    expect(Object.keys(out).sort()).toEqual(['api_cost_usd', 'competitors', 'total_ads_found']);
    expect(out.total_ads_found).toBe(5);
    expect(out.competitors.map((c: any) => [c.domain, c.ad_count, c.devices_found, c.transparency_data])).toEqual([
      ['acme.example', 3, ['desktop', 'mobile'], null],
      ['beta.example', 1, ['desktop'], null],
      ['gamma.example', 1, ['desktop'], null],
      ['guide.example', 0, ['mobile'], null],
    ]);
    expect(Object.keys(out.competitors[0]).sort()).toEqual(['ad_count', 'devices_found', 'domain', 'sample_ads', 'transparency_data']);
    expect(out.competitors[0].sample_ads).toHaveLength(3);
    expect(out.competitors[0].sample_ads[0]).toMatchObject({ keyword: 'shoes', device: 'desktop', type: 'ad', title: 'Ad 1 of acme.example' });
    expect(out.competitors[3].sample_ads).toEqual([
      {
        keyword: 'boots',
        device: 'mobile',
        type: 'organic',
        position: 1,
        title: 'Boot guide',
        description: 'All about boots',
        link: 'https://guide.example/boots',
      },
    ]);
    expect(out.api_cost_usd).toBeCloseTo(4 * 0.015, 10);
    expect(e.costUsd).toBeCloseTo(4 * 0.015, 10);
    const searched = sent().map((u) => `${u.searchParams.get('q')}|${u.searchParams.get('device')}|${u.searchParams.get('gl')}|${u.searchParams.get('hl')}`);
    expect(searched.sort()).toEqual(['boots|desktop|us|en', 'boots|mobile|us|en', 'shoes|desktop|us|en', 'shoes|mobile|us|en']);
  });

  it('organic_fallback false, one device and max_competitors do what they say', async () => {
    const out = ok(await run(registry, 'competitor_discover', { keywords: ['boots'], devices: ['mobile'], organic_fallback: false }));
    expect(out.competitors).toEqual([]);
    expect(out.total_ads_found).toBe(0);
    expect(out.api_cost_usd).toBeCloseTo(0.015, 10);
    const top = ok(await run(registry, 'competitor_discover', { keywords: ['shoes', 'boots'], max_competitors: 2 }));
    expect(top.competitors.map((c: any) => c.domain)).toEqual(['acme.example', 'beta.example']);
  });

  it('include_transparency looks the top N competitors up in the transparency center', async () => {
    const out = ok(await run(registry, 'competitor_discover', { keywords: ['shoes'], country: 'jp', include_transparency: true, transparency_top_n: 1 }));
    expect(out.competitors[0].transparency_data).toMatchObject({
      source: 'google_ads_transparency_center',
      total_creatives: 42,
      advertisers: [{ advertiser_id: 'AR1', name: 'Acme Inc', ad_count: 1 }],
      formats: { text: 1 },
      first_shown: '2025-01-01',
      last_shown: '2025-12-31',
    });
    expect(out.competitors[1].transparency_data).toBeNull();
    const lookups = sent().filter((u) => u.searchParams.get('engine') === 'google_ads_transparency_center');
    expect(lookups.map(params)).toEqual([
      { engine: 'google_ads_transparency_center', text: 'acme.example', region: '2392', num: '100', api_key: 'serp-secret-key' },
    ]);
    expect(out.api_cost_usd).toBeCloseTo(3 * 0.015, 10);
  });

  it('a failed search fails the call naming the keyword and device', async () => {
    handler = (u, _r, res) => (u.searchParams.get('device') === 'mobile' ? json(res, 503, { error: 'Service busy' }) : json(res, 200, { ads: [] }));
    const e = await run(registry, 'competitor_discover', { keywords: ['shoes'] });
    expect(e.success).toBe(false);
    expect(e.error).toBe('search for "shoes" (mobile) failed: search vendor (google) failed: HTTP 503: Service busy');
  });
});

describe('ads_transparency', () => {
  beforeEach(() => {
    handler = (u, _r, res) => {
      if (u.pathname.endsWith('/ads_archive')) return json(res, 200, { data: [metaAd('9', 'p9', 'Acme Shoes', 'acme.example', ['facebook'])] });
      const platform = u.searchParams.get('platform') ?? 'ALL';
      return json(res, 200, {
        ad_creatives: [
          {
            advertiser_id: 'AR1',
            advertiser: 'Acme Inc',
            ad_creative_id: `CR-${platform}-1`,
            format: 'video',
            first_shown: 1735689600,
            last_shown: 1735776000,
            total_days_shown: 2,
          },
          {
            advertiser_id: 'AR1',
            advertiser: 'Acme Inc',
            ad_creative_id: `CR-${platform}-2`,
            format: 'image',
            image: 'https://tpc.googlesyndication.com/x.png',
          },
        ],
      });
    };
  });

  it('queries all Google surfaces by default: one block, with the country as the numeric region', async () => {
    const e = await run(registry, 'ads_transparency', {
      domain: 'Acme.example',
      country: 'jp',
      creative_format: 'VIDEO',
      start_date: '2025-01-01',
      end_date: '2025-03-31',
    });
    const out = ok(e);
    expect(Object.keys(out).sort()).toEqual(['country', 'errors', 'google', 'platforms_queried']);
    expect(out.platforms_queried).toEqual(['google']);
    expect(out.country).toBe('JP');
    expect(out.errors).toEqual([]);
    expect(out.google).toMatchObject({
      source: 'google_ads_transparency_center',
      platform: 'ALL',
      total_creatives: 2,
      formats: { video: 1, image: 1 },
      first_shown: '2025-01-01',
      last_shown: '2025-01-02',
    });
    expect(out.google.creatives[0]).toMatchObject({ ad_creative_id: 'CR-ALL-1', advertiser_id: 'AR1', format: 'video', total_days_shown: 2 });
    expect(params(sent()[0]!)).toEqual({
      engine: 'google_ads_transparency_center',
      text: 'acme.example',
      region: '2392',
      creative_format: 'video',
      start_date: '20250101',
      end_date: '20250331',
      num: '100',
      api_key: 'serp-secret-key',
    });
    expect(e.costUsd).toBe(0.015);
  });

  it('platforms overrides: one block per platform, the social one from the ad library', async () => {
    const out = ok(
      await run(registry, 'ads_transparency', {
        domain: 'acme.example',
        advertiser_id: 'AR1',
        platforms: ['SEARCH', 'YOUTUBE', 'SOCIAL'],
        social_platform: 'facebook',
      }),
    );
    expect(out.platforms_queried).toEqual(['search', 'youtube', 'social']);
    expect(out.search.platform).toBe('SEARCH');
    expect(out.youtube.creatives[0].ad_creative_id).toBe('CR-YOUTUBE-1');
    expect(out.social).toMatchObject({ source: 'meta_ad_library', platform: 'facebook', total_ads: 1, active_ads: 1 });
    expect(out.country).toBeNull();
    const google = sent().filter((u) => u.pathname === '/search.json');
    expect(google.map((u) => [u.searchParams.get('platform'), u.searchParams.get('advertiser_id'), u.searchParams.has('region')])).toEqual(
      expect.arrayContaining([
        ['SEARCH', 'AR1', false],
        ['YOUTUBE', 'AR1', false],
      ]),
    );
    const social = sent().find((u) => u.pathname.endsWith('/ads_archive'))!;
    expect(params(social)).toMatchObject({ search_terms: 'acme.example', publisher_platforms: '["FACEBOOK"]', ad_reached_countries: '["ALL"]' });
  });

  it('a platform that fails is listed in errors while the others answer; all failing fails the call', async () => {
    const noMeta = new ToolRegistry(adsTools({ ...settings, metaAccessToken: undefined }, async () => ({ text: '', model: 'm', provider: 'p', tokens: 0 })));
    const out = ok(await run(noMeta, 'ads_transparency', { domain: 'acme.example', social_platform: 'instagram' }));
    expect(out.platforms_queried).toEqual(['google', 'social']);
    expect(out.errors).toEqual([{ platform: 'social', error: expect.stringContaining('META_AD_LIBRARY_ACCESS_TOKEN is not set') }]);
    const e = await run(noMeta, 'ads_transparency', { domain: 'acme.example', platforms: ['SOCIAL'] });
    expect(e.success).toBe(false);
    expect(e.errorKind).toBe('not_configured');
    expect(e.error).toContain('META_AD_LIBRARY_ACCESS_TOKEN');
  });

  it('refuses what it cannot query: no advertiser, bad dates, unknown country', async () => {
    expect((await run(registry, 'ads_transparency', { country: 'US' })).error).toBe('give advertiser_id or domain (or both)');
    expect((await run(registry, 'ads_transparency', { domain: 'a.example', start_date: '2025-03-01', end_date: '2025-01-01' })).error).toBe(
      'start_date 2025-03-01 is after end_date 2025-01-01',
    );
    expect((await run(registry, 'ads_transparency', { domain: 'a.example', start_date: '2025-02-30' })).error).toBe(
      'start_date must be a date as YYYY-MM-DD, got "2025-02-30"',
    );
    expect((await run(registry, 'ads_transparency', { domain: 'a.example', platforms: ['SEARCH'], social_platform: 'instagram' })).error).toBe(
      'social_platform filters the SOCIAL block, which platforms does not include: add SOCIAL to platforms',
    );
    expect((await run(registry, 'ads_transparency', { domain: 'a.example', platforms: ['SOCIAL'], creative_format: 'VIDEO' })).errorKind).toBe('bad_arguments');
    const bad = await run(registry, 'ads_transparency', { domain: 'a.example', country: 'XX' });
    expect(bad.errorKind).toBe('bad_arguments');
    expect(bad.error).toBe('country "XX" is not an ISO 3166 alpha-2 country code');
    expect(sent()).toHaveLength(0);
  });
});

describe('settings and validation', () => {
  it('without a key every vendor agent fails naming its setting', async () => {
    const bare = new ToolRegistry(
      adsTools({ ...settings, serpApiKey: undefined, metaAccessToken: undefined }, async () => ({ text: '', model: 'm', provider: 'p', tokens: 0 })),
    );
    const cases: [string, Record<string, unknown>, string][] = [
      ['serp_ads', { keywords: 'k' }, 'SERPAPI_API_KEY'],
      ['portal_jp_ads', { keywords: 'k' }, 'ADS_JP_PORTAL_API_KEY (or SERPAPI_API_KEY)'],
      ['competitor_discover', { keywords: ['k'] }, 'SERPAPI_API_KEY'],
      ['ads_transparency', { domain: 'a.example' }, 'SERPAPI_API_KEY'],
      ['social_ad_library', { query: 'q' }, 'META_AD_LIBRARY_ACCESS_TOKEN'],
    ];
    for (const [tool, args, variable] of cases) {
      const e = await run(bare, tool, args);
      expect(e.success, tool).toBe(false);
      expect(e.errorKind, tool).toBe('not_configured');
      expect(e.error, tool).toContain(`${variable} is not set`);
    }
    expect(sent()).toHaveLength(0);
    // Not offered to models either; with keys they are, and the model tools always are.
    const offered = (r: ToolRegistry) => r.names().filter((n) => r.get(n)!.available !== false);
    expect(offered(bare)).toEqual(['ad_creative_analyze', 'keyword_extract']);
    expect(offered(registry)).toHaveLength(7);
  });

  it("refuses arguments that break a tool's schema (400 naming the field)", async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['serp_ads', {}, 'arguments.keywords is required'],
      ['serp_ads', { keywords: 'k', device: 'watch' }, 'arguments.device must be equal to one of the allowed values'],
      ['serp_ads', { keywords: 'k', max_results: 0 }, 'arguments.max_results must be >= 1'],
      ['serp_ads', { keywords: 'k', colour: 'red' }, 'arguments.colour is not a parameter of this tool'],
      ['portal_jp_ads', { keywords: 7 }, 'arguments.keywords must be string'],
      ['social_ad_library', { query: 'q', platform: 'myspace' }, 'arguments.platform must be equal to one of the allowed values'],
      ['competitor_discover', { keywords: 'shoes' }, 'arguments.keywords must be array'],
      ['competitor_discover', { keywords: ['k'], devices: ['watch'] }, 'arguments.devices.0 must be equal to one of the allowed values'],
      ['competitor_discover', { keywords: ['k'], include_transparency: 'yes' }, 'arguments.include_transparency must be boolean'],
      ['ads_transparency', { domain: 'a.example', platform: 'TV' }, 'arguments.platform must be equal to one of the allowed values'],
      ['ads_transparency', { domain: 'a.example', creative_format: 'AUDIO' }, 'arguments.creative_format must be equal to one of the allowed values'],
      ['ads_transparency', { domain: 'a.example', start_date: '1/2/2025' }, 'arguments.start_date must match pattern'],
      ['ad_creative_analyze', { ads: ['not an object'] }, 'arguments.ads.0 must be object'],
      ['keyword_extract', { query: 'q', max_keywords: 51 }, 'arguments.max_keywords must be <= 50'],
    ];
    for (const [tool, args, message] of cases) {
      const err = await refused(run(registry, tool, args));
      expect(err.message, `${tool} ${JSON.stringify(args)}`).toContain(message);
    }
    expect(sent()).toHaveLength(0);
  });
});
