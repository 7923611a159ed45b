/**
 * The EDGAR client of the filings agents against a local server: the older submission pages
 * read only when the window reaches past `recent` (and only the pages that overlap it),
 * duplicates across pages dropped, tickers with a dot or given as a CIK number, and a ticker file
 * that failed once read again on the next call. And the vendor client all financial agents use:
 * its time limit, size bound and redirect rule.
 */
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EdgarClient } from '../src/tools/finance-edgar.js';
import { daysAgo, vendorText } from '../src/tools/finance-http.js';
import { startServer, type TestServer } from './helpers/tools-web.js';

const now = new Date();
const day = (n: number) => daysAgo(now, n);
const cols = (rows: [form: string, date: string, acc: string][]) => ({
  form: rows.map((r) => r[0]),
  filingDate: rows.map((r) => r[1]),
  accessionNumber: rows.map((r) => r[2]),
  primaryDocument: rows.map((r) => `${r[2]}.htm`),
  primaryDocDescription: rows.map((r) => r[0]),
  items: rows.map(() => ''),
});

let edgar: TestServer;
const state = { tickersFail: false };

beforeAll(async () => {
  edgar = await startServer((req, res) => {
    const send = (status: number, body: unknown) => void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.url === '/files/company_tickers.json') {
      if (state.tickersFail) return send(503, { message: 'busy' });
      return send(200, {
        '0': { cik_str: 1067983, ticker: 'BRK-B', title: 'BERKSHIRE HATHAWAY INC' },
        '1': { cik_str: 5555, ticker: 'BUSY', title: 'Busy Filer' },
      });
    }
    if (req.url === '/submissions/CIK0000005555.json')
      return send(200, {
        name: 'Busy Filer',
        filings: {
          recent: cols([
            ['4', day(1), 'a-1'],
            ['4', day(2), 'a-2'],
          ]),
          files: [
            { name: 'CIK0000005555-submissions-001.json', filingCount: 3, filingFrom: day(20), filingTo: day(3) },
            { name: 'CIK0000005555-submissions-002.json', filingCount: 1, filingFrom: day(400), filingTo: day(200) },
          ],
        },
      });
    if (req.url === '/submissions/CIK0000005555-submissions-001.json')
      return send(
        200,
        cols([
          ['4', day(2), 'a-2'],
          ['8-K', day(5), 'a-3'],
          ['10-Q', day(19), 'a-4'],
        ]),
      );
    if (req.url === '/slow') return void setTimeout(() => send(200, {}), 1500);
    if (req.url === '/big') return void res.writeHead(200, { 'content-type': 'application/json' }).end(`"${'x'.repeat(5000)}"`);
    if (req.url === '/big-declared')
      return void res.writeHead(200, { 'content-type': 'application/json', 'content-length': '5002' }).end(`"${'x'.repeat(5000)}"`);
    if (req.url === '/moved') return void res.writeHead(302, { location: '/files/company_tickers.json' }).end();
    if (req.url === '/submissions/CIK0001067983.json') return send(200, { name: 'BERKSHIRE HATHAWAY INC', filings: { recent: cols([]), files: [] } });
    return send(404, { message: 'not found' });
  });
});
beforeEach(() => {
  edgar.requests.length = 0;
  state.tickersFail = false;
});

const client = () => new EdgarClient({ userAgent: 'T t@example.test', dataUrl: edgar.origin, wwwUrl: edgar.origin, timeoutMs: 5000 });
const signal = () => new AbortController().signal;

describe('EDGAR client', () => {
  it('reads an older page only when the window reaches past recent, once per accession, newest first', async () => {
    const c = client();
    const short = await c.filingsSince('t', '5555', day(1), signal());
    expect(short.filings.map((f) => f.accession)).toEqual(['a-1']);
    expect(edgar.requests.map((r) => r.url)).toEqual(['/submissions/CIK0000005555.json']);
    edgar.requests.length = 0;
    const long = await c.filingsSince('t', '5555', day(10), signal());
    expect(long).toMatchObject({ name: 'Busy Filer' });
    expect(long.filings.map((f) => [f.accession, f.filedDate])).toEqual([
      ['a-1', day(1)],
      ['a-2', day(2)],
      ['a-3', day(5)],
    ]);
    // The page of 400-200 days ago does not overlap the window: not read.
    expect(edgar.requests.map((r) => r.url)).toEqual(['/submissions/CIK0000005555.json', '/submissions/CIK0000005555-submissions-001.json']);
  });

  it('takes BRK.B as BRK-B and a CIK number as it is; a failed ticker file is read again next time', async () => {
    const c = client();
    state.tickersFail = true;
    await expect(c.company('t', 'brk.b', signal())).rejects.toThrow('SEC EDGAR request failed: HTTP 503: busy');
    state.tickersFail = false;
    expect(await c.company('t', 'brk.b', signal())).toEqual({ cik: '1067983', name: 'BERKSHIRE HATHAWAY INC' });
    expect(await c.company('t', '0000320193', signal())).toEqual({ cik: '320193', name: '' });
    expect(edgar.requests.filter((r) => r.url === '/files/company_tickers.json')).toHaveLength(2);
    expect(c.filingUrl('320193', { accession: '0000320193-26-000001', primaryDocument: '' })).toBe(
      `${edgar.origin}/Archives/edgar/data/320193/000032019326000001/0000320193-26-000001-index.htm`,
    );
  });
});

describe('vendor requests', () => {
  const get = (path: string, over: { timeoutMs?: number; maxBytes?: number; followRedirects?: boolean } = {}) =>
    vendorText({ vendor: 'V', url: new URL(path, edgar.origin), timeoutMs: 5000, maxBytes: 1_000_000, signal: signal(), ...over });

  it('end at their time limit and size bound with a backend error; follow redirects only when allowed', async () => {
    await expect(get('/slow', { timeoutMs: 1000 })).rejects.toMatchObject({ kind: 'backend', message: 'V request timed out after 1000 ms' });
    await expect(get('/big', { maxBytes: 1000 })).rejects.toMatchObject({ kind: 'backend', message: 'V response too large: over 1000 bytes' });
    await expect(get('/big-declared', { maxBytes: 1000 })).rejects.toMatchObject({ message: 'V response too large: 5002 bytes (limit 1000)' });
    await expect(get('/moved')).rejects.toMatchObject({ kind: 'backend', message: expect.stringMatching(/^V unreachable/) });
    expect(JSON.parse(await get('/moved', { followRedirects: true }))).toHaveProperty('0.ticker', 'BRK-B');
  });
});
