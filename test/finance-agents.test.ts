/**
 * The financial catalogue agents' tools (sec_filings, insider_transactions, microblog_sentiment,
 * broker_news, news_aggregator) through ToolRegistry.execute, as POST
 * /api/v1/tools/{name}/execute and the catalogue run them, against local servers standing in for
 * SEC EDGAR (its data and www hosts), xAI's Responses API and Alpaca's news API.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { financeVendorsConfig } from '../src/config/finance-vendors.js';
import { daysAgo } from '../src/tools/finance-http.js';
import { financeTools } from '../src/tools/finance-tools.js';
import { ToolRegistry } from '../src/tools/registry.js';
import type { ToolModel, ToolModelRequest } from '../src/tools/tool.js';
import { startServer, type TestServer } from './helpers/tools-web.js';

const UA = 'Finance Test admin@example.test';
const now = new Date();
const day = (n: number) => daysAgo(now, n);

/** What the fake vendors answer; reset before each test. */
const vendor = {
  xaiStatus: 200,
  xaiAnswer: 'Posts are upbeat about the launch.\n\nSENTIMENT: bullish',
  newsStatus: 200,
  news: [] as ReturnType<typeof article>[],
  tones: [] as string[] | 'offline',
};
const modelCalls: ToolModelRequest[] = [];
const model: ToolModel = async (req) => {
  modelCalls.push(req);
  const text = vendor.tones === 'offline' ? `[offline] ${req.prompt.slice(0, 40)}` : `Here you go: ${JSON.stringify({ tones: vendor.tones })}`;
  return { text, model: 'test-model', provider: 'test', tokens: 10, costUsd: 0.001 };
};

const FORM4_XML = `<?xml version="1.0"?>
<ownershipDocument>
  <documentType>4</documentType>
  <issuer><issuerCik>0000320193</issuerCik><issuerName>Apple Inc.</issuerName><issuerTradingSymbol>AAPL</issuerTradingSymbol></issuer>
  <reportingOwner>
    <reportingOwnerId><rptOwnerCik>0001214156</rptOwnerCik><rptOwnerName>Cook Timothy D</rptOwnerName></reportingOwnerId>
    <reportingOwnerRelationship><isDirector>1</isDirector><isOfficer>1</isOfficer><officerTitle>Chief Executive Officer</officerTitle></reportingOwnerRelationship>
  </reportingOwner>
  <nonDerivativeTable>
    <nonDerivativeTransaction>
      <securityTitle><value>Common Stock</value></securityTitle>
      <transactionDate><value>${day(11)}</value></transactionDate>
      <transactionCoding><transactionFormType>4</transactionFormType><transactionCode>M</transactionCode></transactionCoding>
      <transactionAmounts><transactionShares><value>2000</value></transactionShares><transactionPricePerShare><value>0</value></transactionPricePerShare><transactionAcquiredDisposedCode><value>A</value></transactionAcquiredDisposedCode></transactionAmounts>
      <postTransactionAmounts><sharesOwnedFollowingTransaction><value>5000</value></sharesOwnedFollowingTransaction></postTransactionAmounts>
      <ownershipNature><directOrIndirectOwnership><value>D</value></directOrIndirectOwnership></ownershipNature>
    </nonDerivativeTransaction>
    <nonDerivativeTransaction>
      <securityTitle><value>Common Stock</value></securityTitle>
      <transactionDate><value>${day(11)}</value></transactionDate>
      <transactionCoding><transactionFormType>4</transactionFormType><transactionCode>S</transactionCode></transactionCoding>
      <transactionAmounts><transactionShares><value>1,000</value></transactionShares><transactionPricePerShare><value>150.25</value></transactionPricePerShare><transactionAcquiredDisposedCode><value>D</value></transactionAcquiredDisposedCode></transactionAmounts>
      <postTransactionAmounts><sharesOwnedFollowingTransaction><value>4000</value></sharesOwnedFollowingTransaction></postTransactionAmounts>
      <ownershipNature><directOrIndirectOwnership><value>D</value></directOrIndirectOwnership></ownershipNature>
    </nonDerivativeTransaction>
  </nonDerivativeTable>
  <derivativeTable><derivativeTransaction><securityTitle><value>Restricted Stock Unit</value></securityTitle></derivativeTransaction></derivativeTable>
</ownershipDocument>`;

/** EDGAR's parallel arrays of `filings.recent`. */
function recent(rows: { form: string; date: string; acc: string; doc: string; desc?: string; items?: string }[]) {
  return {
    accessionNumber: rows.map((r) => r.acc),
    filingDate: rows.map((r) => r.date),
    reportDate: rows.map(() => ''),
    form: rows.map((r) => r.form),
    items: rows.map((r) => r.items ?? ''),
    primaryDocument: rows.map((r) => r.doc),
    primaryDocDescription: rows.map((r) => r.desc ?? r.form),
  };
}

const SUBMISSIONS: Record<string, unknown> = {
  '0000320193': {
    cik: '320193',
    name: 'Apple Inc.',
    tickers: ['AAPL'],
    filings: {
      recent: recent([
        { form: '8-K', date: day(2), acc: '0000320193-26-000010', doc: 'aapl-8k.htm', items: '2.02,9.01' },
        { form: 'DEF 14A', date: day(3), acc: '0000320193-26-000009', doc: 'proxy.htm', desc: 'DEFINITIVE PROXY' },
        { form: 'SCHEDULE 13D/A', date: day(5), acc: '0000950103-26-000001', doc: '' },
        { form: '4', date: day(10), acc: '0001214156-26-000004', doc: 'xslF345X05/wk-form4_1.xml' },
        { form: '10-Q', date: day(20), acc: '0000320193-26-000008', doc: 'aapl-10q.htm' },
        { form: '4', date: day(60), acc: '0001214156-26-000003', doc: 'xslF345X05/wk-form4_0.xml' },
        { form: '10-K', date: day(40), acc: '0000320193-26-000007', doc: 'aapl-10k.htm' },
      ]),
      files: [],
    },
  },
  '0000001234': {
    cik: '1234',
    name: 'Acme Corp',
    filings: {
      recent: recent([
        { form: '4', date: day(4), acc: '0000001234-26-000002', doc: 'xslF345X05/missing.xml' },
        { form: '10-Q', date: day(5), acc: '0000001234-26-000001', doc: 'acme-10q.htm' },
      ]),
      files: [],
    },
  },
};

let edgarData: TestServer;
let edgarWww: TestServer;
let xai: TestServer;
let alpaca: TestServer;

const json = (res: ServerResponse, status: number, body: unknown) =>
  void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

beforeAll(async () => {
  edgarData = await startServer((req, res) => {
    if (req.headers['user-agent'] !== UA) return json(res, 403, { message: 'declare a User-Agent' });
    const m = /^\/submissions\/CIK(\d{10})\.json$/.exec(req.url ?? '');
    const sub = m && SUBMISSIONS[m[1]!];
    return sub ? json(res, 200, sub) : json(res, 404, { message: 'not found' });
  });
  edgarWww = await startServer((req, res) => {
    if (req.headers['user-agent'] !== UA) return json(res, 403, { message: 'declare a User-Agent' });
    if (req.url === '/files/company_tickers.json')
      return json(res, 200, {
        '0': { cik_str: 320193, ticker: 'AAPL', title: 'Apple Inc.' },
        '1': { cik_str: 1234, ticker: 'ACME', title: 'ACME CORP' },
        '2': { cik_str: 1067983, ticker: 'BRK-B', title: 'BERKSHIRE HATHAWAY INC' },
      });
    if (req.url === '/Archives/edgar/data/320193/000121415626000004/wk-form4_1.xml')
      return void res.writeHead(200, { 'content-type': 'application/xml' }).end(FORM4_XML);
    return json(res, 404, { message: 'not found' });
  });
  xai = await startServer((req, res, body) => {
    if (req.headers.authorization !== 'Bearer xai-test-key') return json(res, 401, { error: 'Incorrect API key provided' });
    if (req.url !== '/v1/responses' || req.method !== 'POST') return json(res, 404, { error: 'no such route' });
    if (vendor.xaiStatus !== 200) return json(res, vendor.xaiStatus, { code: 'x', error: 'model overloaded' });
    const ticker = /\$([A-Z.-]+)/.exec(JSON.parse(body).input[1].content)?.[1];
    return json(res, 200, {
      id: 'resp_1',
      object: 'response',
      model: 'grok-test',
      output: [
        { type: 'custom_tool_call', name: 'x_keyword_search', input: `$${ticker}` },
        {
          type: 'message',
          role: 'assistant',
          content: [{ type: 'output_text', text: vendor.xaiAnswer, annotations: [{ type: 'url_citation', url: 'https://x.com/i/status/2', title: '2' }] }],
        },
      ],
      citations: ['https://x.com/i/status/1', 'https://x.com/i/status/2'],
      usage: { input_tokens: 900, output_tokens: 120, total_tokens: 1020, cost_in_usd_ticks: 37_756_000 },
    });
  });
  alpaca = await startServer((req, res) => {
    if (req.headers['apca-api-key-id'] !== 'alpaca-id' || req.headers['apca-api-secret-key'] !== 'alpaca-secret')
      return json(res, 403, { message: 'forbidden.' });
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname !== '/v1beta1/news') return json(res, 404, { message: 'not found' });
    if (vendor.newsStatus !== 200) return json(res, vendor.newsStatus, { message: 'internal server error occurred' });
    const symbols = (url.searchParams.get('symbols') ?? '').split(',');
    const news = vendor.news.filter((n) => (n.symbols as string[]).some((s) => symbols.includes(s))).slice(0, Number(url.searchParams.get('limit')));
    return json(res, 200, { news, next_page_token: null });
  });
});

function settings(over: Record<string, string | undefined> = {}) {
  return financeVendorsConfig({
    SEC_EDGAR_USER_AGENT: UA,
    SEC_EDGAR_DATA_URL: edgarData.origin,
    SEC_EDGAR_WWW_URL: edgarWww.origin,
    XAI_API_KEY: 'xai-test-key',
    XAI_BASE_URL: `${xai.origin}/v1`,
    XAI_SEARCH_MODEL: 'grok-test',
    ALPACA_API_KEY_ID: 'alpaca-id',
    ALPACA_API_SECRET_KEY: 'alpaca-secret',
    ALPACA_DATA_URL: alpaca.origin,
    FINANCE_VENDOR_TIMEOUT_MS: '5000',
    ...over,
  });
}
const registry = (over: Record<string, string | undefined> = {}) => new ToolRegistry(financeTools(settings(over), model));
const requestsOf = (s: TestServer) => s.requests.map((r) => r.url);
const headerOf = (r: { headers: IncomingMessage['headers'] }, h: string) => r.headers[h];

function article(id: number, symbols: string[], headline: string) {
  const t = new Date(now.getTime() - id * 3600_000).toISOString();
  return {
    id,
    headline,
    author: `Author ${id}`,
    created_at: t,
    updated_at: t,
    summary: `Summary ${id}`,
    content: '',
    url: `https://news.example/${id}`,
    images: [],
    symbols,
    source: 'benzinga',
  };
}
const expectedArticle = (a: ReturnType<typeof article>) => ({
  headline: a.headline,
  summary: a.summary,
  author: a.author,
  created_at: a.created_at,
  updated_at: a.updated_at,
  url: a.url,
  symbols: a.symbols,
  source: a.source,
});

beforeEach(() => {
  vendor.xaiStatus = 200;
  vendor.xaiAnswer = 'Posts are upbeat about the launch.\n\nSENTIMENT: bullish';
  vendor.newsStatus = 200;
  vendor.news = [article(1, ['AAPL'], 'Apple beats estimates'), article(2, ['AAPL', 'MSFT'], 'Big tech rallies'), article(3, ['TSLA'], 'Tesla recalls cars')];
  vendor.tones = ['positive', 'neutral'];
  modelCalls.length = 0;
  for (const s of [edgarData, edgarWww, xai, alpaca]) s.requests.length = 0;
});

const EIGHT_K = {
  form_type: '8-K',
  filed_date: day(2),
  description: 'Current report: Item 2.02 Results of Operations and Financial Condition; Item 9.01 Financial Statements and Exhibits',
  is_material: true,
};
const SC13D = {
  form_type: 'SCHEDULE 13D/A',
  filed_date: day(5),
  description: 'Beneficial ownership report (over 5%, active investor) (amendment)',
  is_material: true,
};

describe('sec_filings (regulatory-filings)', () => {
  it('looks the ticker up, keeps the default forms of the last 30 days, and marks material events', async () => {
    const e = await registry().execute('sec_filings', { ticker: 'aapl' });
    expect(e.error).toBeNull();
    expect(e.output).toEqual({
      source: 'SEC EDGAR',
      ticker: 'AAPL',
      company_name: 'Apple Inc.',
      cik: '0000320193',
      filings: [
        { ...EIGHT_K, filing_url: `${edgarWww.origin}/Archives/edgar/data/320193/000032019326000010/aapl-8k.htm` },
        { ...SC13D, filing_url: `${edgarWww.origin}/Archives/edgar/data/320193/000095010326000001/0000950103-26-000001-index.htm` },
        {
          form_type: '4',
          filed_date: day(10),
          description: 'Statement of changes in beneficial ownership (insider transaction)',
          filing_url: `${edgarWww.origin}/Archives/edgar/data/320193/000121415626000004/xslF345X05/wk-form4_1.xml`,
          is_material: false,
        },
        {
          form_type: '10-Q',
          filed_date: day(20),
          description: 'Quarterly report',
          filing_url: `${edgarWww.origin}/Archives/edgar/data/320193/000032019326000008/aapl-10q.htm`,
          is_material: false,
        },
      ],
      has_material_events: true,
      total_count: 4,
    });
    expect(requestsOf(edgarWww)).toEqual(['/files/company_tickers.json']);
    expect(requestsOf(edgarData)).toEqual(['/submissions/CIK0000320193.json']);
    expect(headerOf(edgarData.requests[0]!, 'user-agent')).toBe(UA);
  });

  it('filters by the forms and days asked for; a company without material filings says so', async () => {
    const r = registry();
    const proxy = await r.execute('sec_filings', { ticker: 'AAPL', forms: 'def 14a, 10-K', days_back: 45 });
    expect((proxy.output.filings as { form_type: string }[]).map((f) => f.form_type)).toEqual(['DEF 14A', '10-K']);
    expect(proxy.output.has_material_events).toBe(false);
    const acme = await r.execute('sec_filings', { ticker: 'ACME', days_back: 3 });
    expect(acme.output).toMatchObject({ company_name: 'Acme Corp', cik: '0000001234', filings: [], has_material_events: false, total_count: 0 });
    // The ticker file is read once per day, not per call.
    expect(requestsOf(edgarWww)).toEqual(['/files/company_tickers.json']);
  });

  it('refuses days_back outside 1-365 and unknown fields by the schema; an unknown ticker or form is a bad argument', async () => {
    const r = registry();
    await expect(r.execute('sec_filings', { ticker: 'AAPL', days_back: 0 })).rejects.toThrow('arguments.days_back must be >= 1');
    await expect(r.execute('sec_filings', { ticker: 'AAPL', days_back: 366 })).rejects.toThrow('arguments.days_back must be <= 365');
    await expect(r.execute('sec_filings', { ticker: 'AAPL', days_back: 1.5 })).rejects.toThrow('arguments.days_back must be integer');
    await expect(r.execute('sec_filings', { days_back: 3 })).rejects.toThrow('arguments.ticker is required');
    await expect(r.execute('sec_filings', { ticker: 'AAPL', limit: 3 })).rejects.toThrow('arguments.limit is not a parameter of this tool');
    const unknown = await r.execute('sec_filings', { ticker: 'ZZZZ' });
    expect(unknown).toMatchObject({ success: false, errorKind: 'bad_arguments', error: "sec_filings: ticker ZZZZ is not in SEC EDGAR's ticker list" });
    const form = await r.execute('sec_filings', { ticker: 'AAPL', forms: '8-K,<script>' });
    expect(form).toMatchObject({ success: false, errorKind: 'bad_arguments' });
    expect(form.error).toContain('"<SCRIPT>" is not a form type');
  });

  it('without SEC_EDGAR_USER_AGENT fails naming it and asks nothing of EDGAR; a vendor error is reported', async () => {
    const e = await registry({ SEC_EDGAR_USER_AGENT: undefined }).execute('sec_filings', { ticker: 'AAPL' });
    expect(e).toMatchObject({ success: false, errorKind: 'not_configured' });
    expect(e.error).toMatch(/^sec_filings: SEC_EDGAR_USER_AGENT is not set/);
    expect(edgarWww.requests).toHaveLength(0);
    const refused = await registry({ SEC_EDGAR_USER_AGENT: 'someone else' }).execute('sec_filings', { ticker: 'AAPL' });
    expect(refused).toMatchObject({
      success: false,
      errorKind: 'backend',
      error: 'SEC EDGAR request failed: HTTP 403: declare a User-Agent (check SEC_EDGAR_USER_AGENT)',
    });
  });
});

describe('insider_transactions (insider-transactions)', () => {
  it("reads the Form 4s' XML of the window: each transaction, the open-market totals", async () => {
    const e = await registry().execute('insider_transactions', { ticker: 'AAPL', days_back: 30 });
    expect(e.error).toBeNull();
    const base = {
      insider_name: 'Cook Timothy D',
      relationship: 'Director, Officer (Chief Executive Officer)',
      security_title: 'Common Stock',
      transaction_date: day(11),
      ownership: 'D',
      filed_date: day(10),
      filing_url: `${edgarWww.origin}/Archives/edgar/data/320193/000121415626000004/xslF345X05/wk-form4_1.xml`,
    };
    expect(e.output).toEqual({
      source: 'SEC EDGAR',
      ticker: 'AAPL',
      company_name: 'Apple Inc.',
      cik: '0000320193',
      transactions: [
        {
          ...base,
          transaction_code: 'M',
          transaction_type: 'Exercise or conversion of a derivative security',
          acquired_disposed: 'A',
          shares: 2000,
          price_per_share: 0,
          value: 0,
          shares_owned_after: 5000,
        },
        {
          ...base,
          transaction_code: 'S',
          transaction_type: 'Open market or private sale',
          acquired_disposed: 'D',
          shares: 1000,
          price_per_share: 150.25,
          value: 150250,
          shares_owned_after: 4000,
        },
      ],
      summary: {
        purchase_count: 0,
        purchase_shares: 0,
        purchase_value: 0,
        sale_count: 1,
        sale_shares: 1000,
        sale_value: 150250,
        net_shares: -1000,
        insiders: 1,
      },
      filings_found: 1,
      filings_read: 1,
      filings_unreadable: 0,
      total_count: 2,
    });
    expect(requestsOf(edgarWww)).toContain('/Archives/edgar/data/320193/000121415626000004/wk-form4_1.xml');
  });

  it('a Form 4 that cannot be read is counted, not guessed; when none can, the call fails; ranges are the schema', async () => {
    const r = registry();
    // day 60's Form 4 XML is not served.
    const e = await r.execute('insider_transactions', { ticker: 'AAPL', days_back: 90, max_filings: 2 });
    expect(e).toMatchObject({ success: true });
    expect(e.output).toMatchObject({ filings_found: 2, filings_read: 1, filings_unreadable: 1, total_count: 2 });
    const newest = await r.execute('insider_transactions', { ticker: 'AAPL', days_back: 90, max_filings: 1 });
    expect(newest.output).toMatchObject({ filings_found: 2, filings_read: 1, filings_unreadable: 0, total_count: 2 });
    const none = await r.execute('insider_transactions', { ticker: 'ACME' });
    expect(none).toMatchObject({ success: false, errorKind: 'backend' });
    expect(none.error).toBe('insider_transactions: none of the 1 Form 4 filing(s) of ACME could be read: SEC EDGAR request failed: HTTP 404: not found');
    await expect(r.execute('insider_transactions', { ticker: 'AAPL', max_filings: 51 })).rejects.toThrow('arguments.max_filings must be <= 50');
    await expect(r.execute('insider_transactions', { ticker: 'AAPL', days_back: 0 })).rejects.toThrow('arguments.days_back must be >= 1');
  });
});

describe('microblog_sentiment (microblog-sentiment)', () => {
  it("asks the Responses API with x_search over the days asked for and returns the answer's label, analysis, citations and cost", async () => {
    const e = await registry().execute('microblog_sentiment', { ticker: 'tsla', days_back: 3 });
    expect(e.error).toBeNull();
    expect(e.output).toEqual({
      ticker: 'TSLA',
      analysis: 'Posts are upbeat about the launch.',
      sentiment: 'bullish',
      citations: ['https://x.com/i/status/2', 'https://x.com/i/status/1'],
      cost_usd: 0.0037756,
    });
    expect(e.costUsd).toBe(0.0037756);
    const sent = JSON.parse(xai.requests[0]!.body);
    expect(sent).toMatchObject({ model: 'grok-test', tools: [{ type: 'x_search', from_date: day(3), to_date: day(0) }], store: false });
    expect(sent.input[1]).toEqual({ role: 'user', content: 'What is the sentiment on X about $TSLA over the last 3 day(s)?' });
  });

  it.each([
    ['Mostly calm.\n**Sentiment:** Mixed', 'mixed', 'Mostly calm.'],
    ['Nothing notable; the tone is neutral overall.', 'neutral', 'Nothing notable; the tone is neutral overall.'],
    ['SENTIMENT: bullish early on\nthen it turned.\nSENTIMENT: bearish', 'bearish', 'then it turned.'],
  ])('parses the label of %j', async (answer, sentiment, analysis) => {
    vendor.xaiAnswer = answer;
    const e = await registry().execute('microblog_sentiment', { ticker: 'TSLA' });
    expect(e.output).toMatchObject({ sentiment, analysis });
    expect(JSON.parse(xai.requests[0]!.body).tools[0]).toEqual({ type: 'x_search', from_date: day(1), to_date: day(0) });
  });

  it('an answer without a label, a vendor error, a wrong key and a missing key are clear failures', async () => {
    const r = registry();
    vendor.xaiAnswer = 'Some say bullish, some say bearish.';
    expect(await r.execute('microblog_sentiment', { ticker: 'TSLA' })).toMatchObject({ success: false, errorKind: 'backend' });
    vendor.xaiStatus = 503;
    expect(await r.execute('microblog_sentiment', { ticker: 'TSLA' })).toMatchObject({
      success: false,
      errorKind: 'backend',
      error: 'xAI request failed: HTTP 503: model overloaded',
    });
    vendor.xaiStatus = 200;
    expect(await registry({ XAI_API_KEY: 'wrong' }).execute('microblog_sentiment', { ticker: 'TSLA' })).toMatchObject({
      error: 'xAI request failed: HTTP 401: Incorrect API key provided (check XAI_API_KEY)',
    });
    const before = xai.requests.length;
    expect(await registry({ XAI_API_KEY: undefined }).execute('microblog_sentiment', { ticker: 'TSLA' })).toMatchObject({
      success: false,
      errorKind: 'not_configured',
      error: 'microblog_sentiment: XAI_API_KEY is not set',
    });
    expect(xai.requests).toHaveLength(before);
    await expect(r.execute('microblog_sentiment', { ticker: 'TSLA', days_back: 8 })).rejects.toThrow('arguments.days_back must be <= 7');
    await expect(r.execute('microblog_sentiment', { ticker: 'TSLA', days_back: 0 })).rejects.toThrow('arguments.days_back must be >= 1');
  });
});

describe('broker_news (broker-news)', () => {
  it('asks for the symbols, window and limit, and returns the articles with exact fields', async () => {
    const e = await registry().execute('broker_news', { symbols: 'aapl, msft', hours_back: 48, limit: 5 });
    expect(e.error).toBeNull();
    expect(e.output).toEqual({ symbols: ['AAPL', 'MSFT'], news: vendor.news.slice(0, 2).map(expectedArticle), total_count: 2 });
    const url = new URL(alpaca.requests[0]!.url, 'http://x');
    expect(url.pathname).toBe('/v1beta1/news');
    const { start: startParam, ...rest } = Object.fromEntries(url.searchParams);
    expect(rest).toEqual({ symbols: 'AAPL,MSFT', limit: '5', sort: 'desc', include_content: 'false' });
    expect(startParam).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const start = Date.parse(startParam!);
    expect(Math.abs(start - (Date.now() - 48 * 3600_000))).toBeLessThan(60_000);
  });

  it('defaults to 24 hours and 10 articles; ranges are the schema; vendor errors and missing keys are clear', async () => {
    const r = registry();
    await r.execute('broker_news', { symbols: 'TSLA' });
    const url = new URL(alpaca.requests[0]!.url, 'http://x');
    expect(url.searchParams.get('limit')).toBe('10');
    expect(Math.abs(Date.parse(url.searchParams.get('start')!) - (Date.now() - 24 * 3600_000))).toBeLessThan(60_000);
    await expect(r.execute('broker_news', { symbols: 'TSLA', hours_back: 169 })).rejects.toThrow('arguments.hours_back must be <= 168');
    await expect(r.execute('broker_news', { symbols: 'TSLA', hours_back: 0 })).rejects.toThrow('arguments.hours_back must be >= 1');
    await expect(r.execute('broker_news', { symbols: 'TSLA', limit: 51 })).rejects.toThrow('arguments.limit must be <= 50');
    await expect(r.execute('broker_news', { symbols: 'TSLA', limit: 0 })).rejects.toThrow('arguments.limit must be >= 1');
    vendor.newsStatus = 500;
    expect(await r.execute('broker_news', { symbols: 'TSLA' })).toMatchObject({
      success: false,
      errorKind: 'backend',
      error: 'Alpaca news request failed: HTTP 500: internal server error occurred',
    });
    expect(await registry({ ALPACA_API_SECRET_KEY: undefined }).execute('broker_news', { symbols: 'TSLA' })).toMatchObject({
      success: false,
      errorKind: 'not_configured',
      error: 'broker_news: ALPACA_API_SECRET_KEY is not set',
    });
    expect(await registry({ ALPACA_API_KEY_ID: undefined, ALPACA_API_SECRET_KEY: undefined }).execute('broker_news', { symbols: 'TSLA' })).toMatchObject({
      error: 'broker_news: ALPACA_API_KEY_ID and ALPACA_API_SECRET_KEY are not set',
    });
  });
});

describe('news_aggregator (news-aggregator)', () => {
  it('reads the three sources, gives each its block and mixes 40/40/20', async () => {
    const e = await registry().execute('news_aggregator', { ticker: 'AAPL' });
    expect(e.error).toBeNull();
    // news: positive + neutral -> 0.75; social bullish -> 1; filings: an 8-K in 30 days -> 1.
    expect(e.output).toEqual({
      ticker: 'AAPL',
      as_of: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      sources_used: ['news', 'social', 'filings'],
      overall_sentiment: { score: 0.9, label: 'bullish' },
      news: {
        items: vendor.news.slice(0, 2).map(expectedArticle),
        total_count: 2,
        positive_count: 1,
        negative_count: 0,
        neutral_count: 1,
        score: 0.75,
        weight: 0.4,
      },
      social: {
        sentiment: 'bullish',
        analysis: 'Posts are upbeat about the launch.',
        citations: ['https://x.com/i/status/2', 'https://x.com/i/status/1'],
        total_count: 2,
        score: 1,
        weight: 0.4,
      },
      filings: {
        company_name: 'Apple Inc.',
        cik: '0000320193',
        items: expect.any(Array),
        total_count: 4,
        material_count: 2,
        has_material_events: true,
        score: 1,
        weight: 0.2,
      },
    });
    expect(e.costUsd).toBeCloseTo(0.0037756 + 0.001, 10);
    expect(modelCalls[0]!.prompt).toContain('1. Apple beats estimates — Summary 1');
    expect(new URL(alpaca.requests[0]!.url, 'http://x').searchParams.get('symbols')).toBe('AAPL');
  });

  it.each([
    // [news tones, social answer, ticker (AAPL has an 8-K, ACME none), score, label]
    [['positive', 'negative'], 'neutral', 'ACME', 0.4, 'neutral'],
    [['negative', 'neutral'], 'neutral', 'ACME', 0.3, 'bearish'],
    [['positive'], 'neutral', 'ACME', 0.6, 'bullish'],
    [['positive', 'negative'], 'mixed', 'AAPL', 0.6, 'bullish'],
    [['positive', 'positive', 'neutral'], 'mixed', 'ACME', 0.5333, 'neutral'],
    [['negative'], 'bearish', 'AAPL', 0.2, 'bearish'],
  ] as const)('tones %j, social %s, %s -> %d %s', async (tones, social, ticker, score, label) => {
    vendor.tones = [...tones];
    vendor.news = tones.map((_, i) => article(i + 1, [ticker], `Headline ${i + 1}`));
    vendor.xaiAnswer = `Summary.\nSENTIMENT: ${social}`;
    const e = await registry().execute('news_aggregator', { ticker });
    expect(e.output.overall_sentiment).toEqual({ score, label });
  });

  it('include_social and include_filings false leave those sources unasked, and the weights scale over the rest', async () => {
    const r = registry();
    const noSocial = await r.execute('news_aggregator', { ticker: 'AAPL', include_social: false });
    expect(xai.requests).toHaveLength(0);
    expect(noSocial.output).not.toHaveProperty('social');
    // (0.4 * 0.75 + 0.2 * 1) / 0.6
    expect(noSocial.output).toMatchObject({ sources_used: ['news', 'filings'], overall_sentiment: { score: 0.8333, label: 'bullish' } });
    expect(noSocial.output).toMatchObject({ news: { weight: 0.6667 }, filings: { weight: 0.3333 } });
    const newsOnly = await r.execute('news_aggregator', { ticker: 'AAPL', include_social: false, include_filings: false });
    expect(edgarData.requests).toHaveLength(1);
    expect(newsOnly.output).toMatchObject({ sources_used: ['news'], overall_sentiment: { score: 0.75, label: 'bullish' }, news: { weight: 1 } });
    expect(newsOnly.output).not.toHaveProperty('filings');
  });

  it('a model answer that is no tone list leaves the news unscored; a failed source is reported in its block', async () => {
    vendor.tones = 'offline';
    vendor.newsStatus = 500;
    let e = await registry().execute('news_aggregator', { ticker: 'ACME' });
    expect(e.output).toMatchObject({
      sources_used: ['social', 'filings'],
      // (0.4 * 1 + 0.2 * 0) / 0.6
      overall_sentiment: { score: 0.6667, label: 'bullish' },
      news: { items: [], score: null, weight: 0, error: 'Alpaca news request failed: HTTP 500: internal server error occurred' },
    });
    vendor.newsStatus = 200;
    vendor.news = [article(1, ['ACME'], 'Acme files 10-Q')];
    e = await registry().execute('news_aggregator', { ticker: 'ACME' });
    expect(e.output).toMatchObject({
      sources_used: ['social', 'filings'],
      news: { total_count: 1, score: null, weight: 0, note: "not scored: the model's answer (test-model) gave no usable tones" },
    });
    const noScore = await registry().execute('news_aggregator', { ticker: 'ACME', include_social: false, include_filings: false });
    expect(noScore.output).toMatchObject({ sources_used: [], overall_sentiment: { score: null, label: null } });
  });

  it('fails naming every setting when no source is configured', async () => {
    const e = await registry({ SEC_EDGAR_USER_AGENT: undefined, XAI_API_KEY: undefined, ALPACA_API_KEY_ID: undefined }).execute('news_aggregator', {
      ticker: 'AAPL',
    });
    expect(e).toMatchObject({ success: false, errorKind: 'not_configured' });
    for (const v of ['ALPACA_API_KEY_ID', 'XAI_API_KEY', 'SEC_EDGAR_USER_AGENT']) expect(e.error).toContain(v);
    await expect(registry().execute('news_aggregator', { ticker: 'AAPL', include_social: 'yes' })).rejects.toThrow('arguments.include_social must be boolean');
  });
});
