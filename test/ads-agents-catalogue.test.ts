/**
 * The ads-research agents' catalogue files agree with their tools (an agent IS its tool: same
 * properties, required fields, defaults, enums and bounds), the tools are registered among the
 * built-in tools, and their settings (src/config/ads-vendors.ts) parse as documented.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAgentFile } from '../src/agents/catalogue-parse.js';
import { adsVendorsConfig } from '../src/config/ads-vendors.js';
import { ConfigError, loadConfig } from '../src/config/index.js';
import { adsTools } from '../src/tools/ads-tools.js';

const AGENTS = ['serp-ads', 'portal-jp-ads', 'social-ad-library', 'competitor-discover', 'ads-transparency', 'ad-creative-analyze', 'keyword-extract'];
const tools = adsTools(adsVendorsConfig({}), async () => ({ text: '', model: 'm', provider: 'p', tokens: 0 }));

describe('ads agents in the catalogue', () => {
  it.each(AGENTS)('%s: the catalogue file matches its tool', (id) => {
    const def = parseAgentFile(readFileSync(new URL(`../config/agents/${id}.yaml`, import.meta.url)), `${id}.yaml`, id);
    expect(def.category).toBe('ads_research');
    const tool = tools.find((t) => t.name === def.tool);
    expect(tool, `tool ${def.tool}`).toBeDefined();
    expect(def.costPerCall).toBe(tool!.costPerUse);
    const props = tool!.parameters.properties;
    expect(Object.keys(def.inputSchema.properties).sort()).toEqual(Object.keys(props).sort());
    expect([...def.inputSchema.required].sort()).toEqual([...(tool!.parameters.required ?? [])].sort());
    expect(tool!.parameters.additionalProperties).toBe(false);
    for (const [name, p] of Object.entries(def.inputSchema.properties)) {
      const t = props[name]!;
      expect(p.type, name).toBe(t.type);
      expect(p.default, `${name} default`).toEqual(t.default);
      expect(p.enum, `${name} enum`).toEqual(t.enum);
      expect(p.minimum, `${name} minimum`).toEqual(t.minimum);
      expect(p.maximum, `${name} maximum`).toEqual(t.maximum);
      expect(p.maxItems, `${name} maxItems`).toEqual(t.maxItems);
      expect(p.items?.type, `${name} items`).toEqual((t.items as { type?: string } | undefined)?.type);
      expect(p.items?.enum, `${name} items enum`).toEqual((t.items as { enum?: string[] } | undefined)?.enum);
    }
  });
});

describe('ads vendor settings', () => {
  it('defaults', () => {
    expect(adsVendorsConfig({})).toEqual({
      serpApiKey: undefined,
      serpApiBaseUrl: 'https://serpapi.com',
      serpApiCostPerSearchUsd: 0.015,
      jpPortalUrl: undefined,
      jpPortalApiKey: undefined,
      jpPortalEngine: 'yahoo',
      jpPortalDomain: 'search.yahoo.co.jp',
      jpPortalCostUsd: 0,
      metaAccessToken: undefined,
      metaBaseUrl: 'https://graph.facebook.com/v21.0',
      metaMaxAds: 200,
      timeoutMs: 30_000,
    });
  });

  it('reads every variable and reaches the tools slice of the configuration', () => {
    const env = {
      SERPAPI_API_KEY: ' k1 ',
      SERPAPI_BASE_URL: 'http://vendor.internal:8080/api',
      SERPAPI_COST_PER_SEARCH_USD: '0.01',
      ADS_JP_PORTAL_URL: 'https://portal-vendor.example/api/v1/search',
      ADS_JP_PORTAL_API_KEY: 'k2',
      ADS_JP_PORTAL_ENGINE: 'yahoo_jp',
      ADS_JP_PORTAL_DOMAIN: 'search.yahoo.co.jp',
      ADS_JP_PORTAL_COST_USD: '0.002',
      META_AD_LIBRARY_ACCESS_TOKEN: 't1',
      META_AD_LIBRARY_BASE_URL: 'http://graph.internal/v20.0',
      META_AD_LIBRARY_MAX_ADS: '50',
      ADS_VENDOR_TIMEOUT_MS: '5000',
    };
    expect(adsVendorsConfig(env)).toEqual({
      serpApiKey: 'k1',
      serpApiBaseUrl: 'http://vendor.internal:8080/api',
      serpApiCostPerSearchUsd: 0.01,
      jpPortalUrl: 'https://portal-vendor.example/api/v1/search',
      jpPortalApiKey: 'k2',
      jpPortalEngine: 'yahoo_jp',
      jpPortalDomain: 'search.yahoo.co.jp',
      jpPortalCostUsd: 0.002,
      metaAccessToken: 't1',
      metaBaseUrl: 'http://graph.internal/v20.0',
      metaMaxAds: 50,
      timeoutMs: 5000,
    });
    expect(loadConfig(env).tools.adsVendors.serpApiKey).toBe('k1');
  });

  it.each([
    ['SERPAPI_BASE_URL', 'serpapi.com'],
    ['ADS_JP_PORTAL_URL', 'not a url'],
    ['META_AD_LIBRARY_BASE_URL', 'ftp://graph.example'],
    ['ADS_VENDOR_TIMEOUT_MS', '5'],
    ['META_AD_LIBRARY_MAX_ADS', '0'],
    ['SERPAPI_COST_PER_SEARCH_USD', '-1'],
  ])('a bad %s fails start-up naming it', (name, value) => {
    expect(() => adsVendorsConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => adsVendorsConfig({ [name]: value })).toThrow(name);
  });
});
