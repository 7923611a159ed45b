/**
 * The ads-research agents over the whole service, from the shipped catalogue (config/agents):
 * listed by GET /api/v1/agents, run by POST /api/v1/agents/{id} to COMPLETED with the tool's
 * output as result (the catalogue's defaults reaching the vendor), input refused by the agent
 * schema, and a missing vendor key failing the task and the direct tool call naming the
 * variable. The settings are read from the environment as an operator sets them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startTestApp, waitFor, type TestApp } from './helpers/app.js';
import { startServer, type TestServer } from './helpers/tools-web.js';

const ADS_AGENTS: Record<string, string> = {
  'ad-creative-analyze': 'ad_creative_analyze',
  'ads-transparency': 'ads_transparency',
  'competitor-discover': 'competitor_discover',
  'keyword-extract': 'keyword_extract',
  'portal-jp-ads': 'portal_jp_ads',
  'serp-ads': 'serp_ads',
  'social-ad-library': 'social_ad_library',
};

let t: TestApp;
let vendor: TestServer;

beforeAll(async () => {
  vendor = await startServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        search_metadata: { status: 'Success' },
        ads: [{ position: 1, title: 'Acme running shoes', link: 'https://www.acme.example/shoes', description: 'Free returns' }],
      }),
    ),
  );
  t = await startTestApp({ SERPAPI_API_KEY: 'serp-key', SERPAPI_BASE_URL: vendor.origin, SERPAPI_COST_PER_SEARCH_USD: '0.02', RATE_LIMIT_REQUESTS: '100000' });
}, 60_000);
afterAll(async () => {
  await t?.stop();
});

const post = (path: string, body: unknown) =>
  fetch(t.base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const ended = (id: string) =>
  waitFor(
    async () => {
      const s = await json(await fetch(`${t.base}/api/v1/tasks/${id}`));
      return ['TASK_STATUS_COMPLETED', 'TASK_STATUS_FAILED', 'TASK_STATUS_TIMEOUT', 'TASK_STATUS_CANCELLED'].includes(s.status) ? s : undefined;
    },
    30_000,
    50,
  );

describe('ads-research agents through the service', () => {
  it('the shipped catalogue lists the seven, each on its registered tool', async () => {
    const body = await json(await fetch(`${t.base}/api/v1/agents`));
    const ads = (body.agents as { id: string; tool: string; category: string }[]).filter((a) => a.category === 'ads_research' && a.id in ADS_AGENTS);
    expect(Object.fromEntries(ads.map((a) => [a.id, a.tool]))).toEqual(ADS_AGENTS);
    const serp = await json(await fetch(`${t.base}/api/v1/agents/serp-ads`));
    expect(serp.input_schema.required).toEqual(['keywords']);
    expect(serp.input_schema.properties.device).toMatchObject({ type: 'string', enum: ['desktop', 'mobile', 'tablet'], default: 'desktop' });
  });

  it('POST /api/v1/agents/serp-ads runs to COMPLETED with the spec output; the defaults reach the vendor', async () => {
    const r = await post('/api/v1/agents/serp-ads', { input: { keywords: 'running shoes' } });
    expect(r.status).toBe(202);
    const { task_id } = await json(r);
    const s = await ended(task_id);
    expect(s.status).toBe('TASK_STATUS_COMPLETED');
    const out = JSON.parse(s.result);
    expect(Object.keys(out).sort()).toEqual(['ads', 'cost_usd', 'keywords', 'location', 'timestamp', 'total_ads']);
    expect(out).toMatchObject({
      keywords: 'running shoes',
      location: null,
      total_ads: 1,
      ads: [{ position: 1, title: 'Acme running shoes', description: 'Free returns', link: 'https://www.acme.example/shoes', domain: 'acme.example' }],
      cost_usd: 0.02,
    });
    expect(s.usage.estimated_cost).toBeCloseTo(0.02, 9);
    const sent = new URL(vendor.requests.at(-1)!.url, 'http://x').searchParams;
    expect(Object.fromEntries(sent)).toEqual({
      engine: 'google',
      q: 'running shoes',
      gl: 'us',
      hl: 'en',
      device: 'desktop',
      google_domain: 'google.com',
      api_key: 'serp-key',
    });
  });

  it("input the agent's schema refuses is a 400", async () => {
    const r = await post('/api/v1/agents/serp-ads', { input: { keywords: 'k', device: 'watch' } });
    expect(r.status).toBe(400);
    expect((await json(r)).error).toMatch(/^input validation failed: .*device/);
    const missing = await post('/api/v1/agents/competitor-discover', { input: { country: 'us' } });
    expect(missing.status).toBe(400);
    expect((await json(missing)).error).toBe('input validation failed: missing required field: keywords');
  });

  it('without the ad library token the agent fails naming it, and so does the direct tool call (502)', async () => {
    const r = await post('/api/v1/agents/social-ad-library', { input: { query: 'shoes' } });
    expect(r.status).toBe(202);
    const s = await ended((await json(r)).task_id);
    expect(s.status).toBe('TASK_STATUS_FAILED');
    expect(JSON.stringify(s)).toContain('META_AD_LIBRARY_ACCESS_TOKEN is not set');
    const direct = await post('/api/v1/tools/social_ad_library/execute', { arguments: { query: 'shoes' } });
    expect(direct.status).toBe(502);
    expect((await json(direct)).error).toContain('META_AD_LIBRARY_ACCESS_TOKEN is not set');
  });
});
