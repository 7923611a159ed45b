/**
 * ADS_VENDOR_TIMEOUT_MS sets the ads tools' time limits: each tool's limit is derived from the
 * requests it makes one after another (x the setting, plus a margin), so a setting above the
 * old fixed limits (serp_ads stopped at 60 s) is not cut short. Read as the tools API lists it
 * (`timeoutSeconds`), from settings loaded as the service loads them.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import { adsTools } from '../src/tools/ads-tools.js';
import { ToolRegistry } from '../src/tools/index.js';
import { organicSearchTool } from '../src/tools/organic-search.js';

const model = async () => ({ text: '', model: 'm', provider: 'p', tokens: 0 });
const limits = (env: Record<string, string>) => {
  const s = loadConfig({ SERPAPI_API_KEY: 'k', META_AD_LIBRARY_ACCESS_TOKEN: 't', ...env }).tools.adsVendors;
  const r = new ToolRegistry([...adsTools(s, model), organicSearchTool(s)]);
  return (name: string) => r.describe(name).timeoutSeconds * 1000;
};

describe('ADS_VENDOR_TIMEOUT_MS', () => {
  it('gives every vendor tool time for its requests at the setting, not a fixed limit', () => {
    const at = limits({ ADS_VENDOR_TIMEOUT_MS: '300000', META_AD_LIBRARY_MAX_ADS: '500' });
    // One search each.
    for (const t of ['serp_ads', 'portal_jp_ads', 'organic_search']) {
      expect(at(t)).toBeGreaterThan(300_000);
      expect(at(t)).toBeLessThanOrEqual(300_000 + 60_000);
    }
    // 500 ads: 5 pages of the ad library, one after another.
    expect(at('social_ad_library')).toBeGreaterThan(5 * 300_000);
    expect(at('ads_transparency')).toBeGreaterThan(5 * 300_000);
    // 20 keywords x 3 devices, 4 at a time (15 rounds), then 20 transparency look-ups (5 rounds).
    expect(at('competitor_discover')).toBeGreaterThan(20 * 300_000);
  });

  it('follows a short setting down too', () => {
    const short = limits({ ADS_VENDOR_TIMEOUT_MS: '2000' });
    const long = limits({ ADS_VENDOR_TIMEOUT_MS: '60000' });
    expect(long('serp_ads') - short('serp_ads')).toBe(58_000);
    // The default 200 ads: 2 pages.
    expect(long('social_ad_library') - short('social_ad_library')).toBe(2 * 58_000);
  });
});
