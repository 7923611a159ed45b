/**
 * `organic_search` (catalogue agent organic-search) through ToolRegistry.execute against a local
 * server standing in for the SerpApi-style vendor of the ads agents, and its catalogue file
 * against the tool's schema.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { adsVendorsConfig } from '../src/config/ads-vendors.js';
import { organicSearchTool } from '../src/tools/organic-search.js';
import { ToolRegistry } from '../src/tools/registry.js';
import { startServer, type TestServer } from './helpers/tools-web.js';

let serp: TestServer;
const vendor = { status: 200 };

const PAGE = {
  search_metadata: { status: 'Success' },
  search_information: { total_results: 1_230_000 },
  ads: [
    { position: 1, title: 'Shoes sale', link: 'https://www.shoeshop.example/sale', displayed_link: 'shoeshop.example', description: 'Half price' },
    { position: 2, title: 'Run faster', link: 'https://runners.example/', description: 'Buy now' },
  ],
  organic_results: [
    { position: 1, title: 'Best running shoes 2026', link: 'https://www.reviews.example/best', snippet: 'We tested 40 pairs.' },
    { position: 2, title: 'Running shoes | Shoe Shop', link: 'https://shoeshop.example/running', snippet: 'Free returns.' },
    { position: 3, title: 'No link here' },
    { position: 4, title: 'Forum thread', link: 'https://forum.example/t/1', snippet: '' },
  ],
};

beforeAll(async () => {
  serp = await startServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const send = (status: number, body: unknown) => void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (url.pathname !== '/search.json') return send(404, { error: 'not found' });
    if (url.searchParams.get('api_key') !== 'serp-key')
      return send(401, { error: 'Invalid API key. Your API key should be here: https://serpapi.com/manage-api-key' });
    if (vendor.status !== 200) return send(vendor.status, { error: 'Your account has run out of searches.' });
    return send(200, PAGE);
  });
});
beforeEach(() => {
  vendor.status = 200;
  serp.requests.length = 0;
});

const registry = (env: Record<string, string | undefined> = {}) =>
  new ToolRegistry([organicSearchTool(adsVendorsConfig({ SERPAPI_API_KEY: 'serp-key', SERPAPI_BASE_URL: serp.origin, ...env }))]);

describe('organic_search (organic-search)', () => {
  it('returns the organic results of one Google search, marking the domains that also advertise', async () => {
    const e = await registry().execute('organic_search', { keywords: ' running shoes ', country: 'GB', device: 'mobile', max_results: 3 });
    expect(e.error).toBeNull();
    expect(e.output).toEqual({
      keywords: 'running shoes',
      location: null,
      total_results: 3,
      estimated_total_results: 1_230_000,
      results: [
        {
          position: 1,
          title: 'Best running shoes 2026',
          description: 'We tested 40 pairs.',
          link: 'https://www.reviews.example/best',
          domain: 'reviews.example',
          advertises: false,
        },
        {
          position: 2,
          title: 'Running shoes | Shoe Shop',
          description: 'Free returns.',
          link: 'https://shoeshop.example/running',
          domain: 'shoeshop.example',
          advertises: true,
        },
        { position: 4, title: 'Forum thread', description: '', link: 'https://forum.example/t/1', domain: 'forum.example', advertises: false },
      ],
      paid_domains: ['shoeshop.example', 'runners.example'],
      cost_usd: 0.015,
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(e.costUsd).toBe(0.015);
    const sent = Object.fromEntries(new URL(serp.requests[0]!.url, 'http://x').searchParams);
    expect(sent).toEqual({ engine: 'google', q: 'running shoes', gl: 'gb', hl: 'en', device: 'mobile', google_domain: 'google.com', api_key: 'serp-key' });
  });

  it('refuses max_results outside 1-10 and unknown devices by the schema', async () => {
    const r = registry();
    await expect(r.execute('organic_search', { keywords: 'k', max_results: 11 })).rejects.toThrow('arguments.max_results must be <= 10');
    await expect(r.execute('organic_search', { keywords: 'k', max_results: 0 })).rejects.toThrow('arguments.max_results must be >= 1');
    await expect(r.execute('organic_search', { keywords: 'k', device: 'watch' })).rejects.toThrow(
      'arguments.device must be equal to one of the allowed values',
    );
    await expect(r.execute('organic_search', {})).rejects.toThrow('arguments.keywords is required');
  });

  it('a vendor error and a missing key are clear failures, naming the setting', async () => {
    vendor.status = 429;
    expect(await registry().execute('organic_search', { keywords: 'k' })).toMatchObject({
      success: false,
      errorKind: 'backend',
      error: expect.stringContaining('Your account has run out of searches.'),
    });
    const missing = await registry({ SERPAPI_API_KEY: undefined }).execute('organic_search', { keywords: 'k' });
    expect(missing).toMatchObject({ success: false, errorKind: 'not_configured' });
    expect(missing.error).toContain('SERPAPI_API_KEY is not set');
    // Nor is it offered to models without the key.
    expect(organicSearchTool(adsVendorsConfig({})).available).toBe(false);
    expect(organicSearchTool(adsVendorsConfig({ SERPAPI_API_KEY: 'k' })).available).toBe(true);
  });

  it('its catalogue file has the tool’s input schema', () => {
    const file = parse(readFileSync(new URL('../config/agents/organic-search.yaml', import.meta.url), 'utf8'));
    const tool = organicSearchTool(adsVendorsConfig({}));
    expect(file).toMatchObject({ id: 'organic-search', category: 'ads_research', tool: 'organic_search', cost_per_call: tool.costPerUse });
    expect(file.input_schema.required).toEqual(tool.parameters.required);
    expect(Object.keys(file.input_schema.properties)).toEqual(Object.keys(tool.parameters.properties));
    for (const [f, p] of Object.entries(tool.parameters.properties))
      for (const k of ['type', 'default', 'minimum', 'maximum', 'enum']) expect([f, k, file.input_schema.properties[f][k]]).toEqual([f, k, p[k]]);
  });
});
