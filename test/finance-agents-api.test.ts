/**
 * The financial agents over the whole service, from the shipped catalogue (config/agents), with
 * the settings read from the environment as an operator sets them: SEC EDGAR and xAI pointed at
 * a local server, Alpaca left unset. Listed by GET /api/v1/agents, run by POST
 * /api/v1/agents/{id} and by context.agent to COMPLETED with the tool's output as result (the
 * catalogue's defaults applied), input refused by the agent schema, and the unset news keys
 * failing the task and the direct call naming them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { daysAgo } from '../src/tools/finance-http.js';
import { json, startTestApp, waitFor, type TestApp } from './helpers/app.js';
import { startServer, type TestServer } from './helpers/tools-web.js';

const FINANCIAL: Record<string, string> = {
  'broker-news': 'broker_news',
  'insider-transactions': 'insider_transactions',
  'microblog-sentiment': 'microblog_sentiment',
  'news-aggregator': 'news_aggregator',
  'regulatory-filings': 'sec_filings',
};
const now = new Date();
const day = (n: number) => daysAgo(now, n);

let t: TestApp;
let vendor: TestServer;

beforeAll(async () => {
  vendor = await startServer((req, res) => {
    const send = (body: unknown) => void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.url === '/files/company_tickers.json') return send({ '0': { cik_str: 320193, ticker: 'AAPL', title: 'Apple Inc.' } });
    if (req.url === '/submissions/CIK0000320193.json')
      return send({
        name: 'Apple Inc.',
        filings: {
          recent: {
            form: ['8-K', '10-K'],
            filingDate: [day(3), day(40)],
            accessionNumber: ['0000320193-26-000010', '0000320193-26-000007'],
            primaryDocument: ['aapl-8k.htm', 'aapl-10k.htm'],
            primaryDocDescription: ['8-K', '10-K'],
            items: ['5.02', ''],
          },
          files: [],
        },
      });
    if (req.url === '/v1/responses')
      return send({
        output: [{ type: 'message', content: [{ type: 'output_text', text: 'Calm week.\nSENTIMENT: neutral', annotations: [] }] }],
        citations: ['https://x.com/i/status/9'],
        usage: { cost_in_usd_ticks: 100_000_000 },
      });
    return void res.writeHead(404).end('{}');
  });
  t = await startTestApp({
    SEC_EDGAR_USER_AGENT: 'Finance Test admin@example.test',
    SEC_EDGAR_DATA_URL: vendor.origin,
    SEC_EDGAR_WWW_URL: vendor.origin,
    XAI_API_KEY: 'xai-key',
    XAI_BASE_URL: `${vendor.origin}/v1`,
    RATE_LIMIT_REQUESTS: '100000',
  });
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

describe('financial agents through the service', () => {
  it('the shipped catalogue lists the five on their tools, and organic-search among the ads agents', async () => {
    const body = await json(await fetch(`${t.base}/api/v1/agents`));
    const agents = body.agents as { id: string; tool: string; category: string; cost_per_call: number }[];
    const financial = agents.filter((a) => a.category === 'financial');
    expect(Object.fromEntries(financial.map((a) => [a.id, a.tool]))).toEqual(FINANCIAL);
    expect(agents.find((a) => a.id === 'organic-search')).toMatchObject({ tool: 'organic_search', category: 'ads_research' });
    const filings = await json(await fetch(`${t.base}/api/v1/agents/regulatory-filings`));
    expect(filings.input_schema).toEqual({
      required: ['ticker'],
      properties: {
        ticker: { type: 'string', description: expect.any(String) },
        days_back: { type: 'integer', default: 30, minimum: 1, maximum: 365, description: expect.any(String) },
        forms: { type: 'string', default: '8-K,10-K,10-Q,4,SC 13D', description: expect.any(String) },
      },
    });
  });

  it('POST /api/v1/agents/regulatory-filings runs to COMPLETED with the spec output over the default 30 days', async () => {
    const r = await post('/api/v1/agents/regulatory-filings', { input: { ticker: 'AAPL' } });
    expect(r.status).toBe(202);
    const s = await ended((await json(r)).task_id);
    expect(s.status).toBe('TASK_STATUS_COMPLETED');
    expect(JSON.parse(s.result)).toEqual({
      source: 'SEC EDGAR',
      ticker: 'AAPL',
      company_name: 'Apple Inc.',
      cik: '0000320193',
      filings: [
        {
          form_type: '8-K',
          filed_date: day(3),
          description: 'Current report: Item 5.02 Departure or Election of Directors or Officers; Compensatory Arrangements',
          filing_url: `${vendor.origin}/Archives/edgar/data/320193/000032019326000010/aapl-8k.htm`,
          is_material: true,
        },
      ],
      has_material_events: true,
      total_count: 1,
    });
  });

  it('context.agent news-aggregator: the unset news source is reported in its block, the score is re-weighted over the rest', async () => {
    const r = await post('/api/v1/tasks', { query: 'AAPL overview', context: { agent: 'news-aggregator', agent_input: { ticker: 'AAPL' } } });
    expect(r.status).toBeLessThan(300);
    const s = await ended((await json(r)).task_id);
    expect(s.status).toBe('TASK_STATUS_COMPLETED');
    const out = JSON.parse(s.result);
    // social neutral 0.5 (weight 0.4/0.6), filings material 1 (0.2/0.6): 0.6667.
    expect(out).toMatchObject({
      ticker: 'AAPL',
      sources_used: ['social', 'filings'],
      overall_sentiment: { score: 0.6667, label: 'bullish' },
      news: { score: null, weight: 0, error: 'news_aggregator: ALPACA_API_KEY_ID and ALPACA_API_SECRET_KEY are not set' },
      social: { sentiment: 'neutral', score: 0.5, weight: 0.6667, citations: ['https://x.com/i/status/9'] },
      filings: { total_count: 1, material_count: 1, score: 1, weight: 0.3333 },
    });
  });

  it('input outside the schema is a 400 with the catalogue message; unset keys fail the task and the direct call naming them', async () => {
    const over = await post('/api/v1/agents/regulatory-filings', { input: { ticker: 'AAPL', days_back: 366 } });
    expect(over.status).toBe(400);
    expect((await json(over)).error).toBe('input validation failed: field days_back: 366 is above the maximum 365');
    const hours = await post('/api/v1/agents/broker-news', { input: { symbols: 'AAPL', hours_back: 0 } });
    expect(hours.status).toBe(400);
    expect((await json(hours)).error).toBe('input validation failed: field hours_back: 0 is below the minimum 1');
    const unknown = await post('/api/v1/agents/microblog-sentiment', { input: { ticker: 'AAPL', since: 'today' } });
    expect((await json(unknown)).error).toBe('input validation failed: unknown field: since (not defined in agent schema)');

    const r = await post('/api/v1/agents/broker-news', { input: { symbols: 'AAPL' } });
    expect(r.status).toBe(202);
    const s = await ended((await json(r)).task_id);
    expect(s.status).toBe('TASK_STATUS_FAILED');
    expect(JSON.stringify(s)).toContain('ALPACA_API_KEY_ID and ALPACA_API_SECRET_KEY are not set');
    const direct = await post('/api/v1/tools/broker_news/execute', { arguments: { symbols: 'AAPL' } });
    expect(direct.status).toBe(502);
    expect((await json(direct)).error).toContain('ALPACA_API_KEY_ID and ALPACA_API_SECRET_KEY are not set');
  });
});
