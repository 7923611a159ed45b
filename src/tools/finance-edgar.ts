/**
 * A client of SEC EDGAR's public JSON (https://www.sec.gov/search-filings/edgar-application-programming-interfaces),
 * shared by the filings and insider-transaction agents:
 * - ticker -> CIK through the ticker file `{www}/files/company_tickers.json`
 *   (`{"0": {"cik_str": 320193, "ticker": "AAPL", "title": "Apple Inc."}, ...}`), kept for a day;
 * - a company's filings through `{data}/submissions/CIK##########.json`, whose `filings.recent`
 *   holds the latest ~1000 filings as parallel arrays (form, filingDate, accessionNumber,
 *   primaryDocument, primaryDocDescription, items, ...), and older ones in the pages listed in
 *   `filings.files` (read only when the period asked for reaches past `recent`);
 * - a filing's documents under `{www}/Archives/edgar/data/<cik>/<accession without dashes>/`.
 * EDGAR has no key; the SEC requires a declared User-Agent instead (SEC_EDGAR_USER_AGENT), so
 * without one nothing is requested.
 */
import { vendorJson, vendorText, vendorUrl } from './finance-http.js';
import { ToolError } from './tool.js';

export interface EdgarSettings {
  /** SEC_EDGAR_USER_AGENT, e.g. "Example Corp admin@example.com". */
  userAgent?: string;
  /** SEC_EDGAR_DATA_URL: the submissions API (https://data.sec.gov). */
  dataUrl: string;
  /** SEC_EDGAR_WWW_URL: the ticker file and the archives (https://www.sec.gov). */
  wwwUrl: string;
  timeoutMs: number;
}

export interface EdgarFiling {
  form: string;
  filedDate: string;
  accession: string;
  primaryDocument: string;
  primaryDocDescription: string;
  /** 8-K item numbers, comma-separated ("2.02,9.01"); empty for other forms. */
  items: string;
}

export interface EdgarCompany {
  /** Without leading zeros, as the archive paths use it. */
  cik: string;
  name: string;
}

const VENDOR = 'SEC EDGAR';
const TICKERS_TTL_MS = 24 * 3600_000;
const MAX_BYTES = 32 * 1024 * 1024;
/** Older submission pages read at most for one request (each holds thousands of filings). */
const MAX_OLDER_PAGES = 3;
/** Requests one after another to find a company's filings: the ticker file, the submissions, its older pages. */
export const EDGAR_FILINGS_REQUESTS = 2 + MAX_OLDER_PAGES;

type Columns = Partial<Record<'form' | 'filingDate' | 'accessionNumber' | 'primaryDocument' | 'primaryDocDescription' | 'items', unknown[]>>;

function rows(c: Columns | undefined): EdgarFiling[] {
  if (!c || !Array.isArray(c.form) || !Array.isArray(c.filingDate) || !Array.isArray(c.accessionNumber)) return [];
  const at = (col: unknown[] | undefined, i: number) => (Array.isArray(col) && typeof col[i] === 'string' ? (col[i] as string) : '');
  return c.form.map((_, i) => ({
    form: at(c.form, i),
    filedDate: at(c.filingDate, i),
    accession: at(c.accessionNumber, i),
    primaryDocument: at(c.primaryDocument, i),
    primaryDocDescription: at(c.primaryDocDescription, i),
    items: at(c.items, i),
  }));
}

export class EdgarClient {
  private tickers?: { at: number; map: Promise<Map<string, EdgarCompany>> };

  constructor(private readonly s: EdgarSettings) {}

  /** Whether SEC_EDGAR_USER_AGENT is set (without it nothing is requested). */
  /** One request's time limit (FINANCE_VENDOR_TIMEOUT_MS). */
  get requestTimeoutMs(): number {
    return this.s.timeoutMs;
  }

  get configured(): boolean {
    return !!this.s.userAgent;
  }

  private headers(tool: string): Record<string, string> {
    if (!this.s.userAgent)
      throw new ToolError(
        `${tool}: SEC_EDGAR_USER_AGENT is not set (the SEC requires a declared User-Agent such as "Example Corp admin@example.com")`,
        'not_configured',
      );
    return { 'user-agent': this.s.userAgent };
  }

  private get(tool: string, url: URL, signal: AbortSignal) {
    return {
      vendor: VENDOR,
      url,
      headers: this.headers(tool),
      timeoutMs: this.s.timeoutMs,
      maxBytes: MAX_BYTES,
      signal,
      credential: 'SEC_EDGAR_USER_AGENT',
      followRedirects: true,
    };
  }

  private tickerMap(tool: string, signal: AbortSignal): Promise<Map<string, EdgarCompany>> {
    const now = Date.now();
    if (this.tickers && now - this.tickers.at < TICKERS_TTL_MS) return this.tickers.map;
    const map = vendorJson<Record<string, { cik_str?: unknown; ticker?: unknown; title?: unknown }>>(
      this.get(tool, vendorUrl(this.s.wwwUrl, 'files/company_tickers.json'), signal),
    ).then((data) => {
      const m = new Map<string, EdgarCompany>();
      for (const e of Object.values(data ?? {})) {
        if (typeof e?.ticker !== 'string' || (typeof e.cik_str !== 'number' && typeof e.cik_str !== 'string')) continue;
        const t = e.ticker.toUpperCase();
        if (!m.has(t)) m.set(t, { cik: String(Number(e.cik_str)), name: typeof e.title === 'string' ? e.title : '' });
      }
      if (m.size === 0) throw new ToolError(`${VENDOR} ticker file listed no companies`, 'backend');
      return m;
    });
    this.tickers = { at: now, map };
    // A failed read is not kept: the next call tries again.
    map.catch(() => {
      if (this.tickers?.map === map) this.tickers = undefined;
    });
    return map;
  }

  /** A ticker (BRK.B and BRK-B alike) or a CIK number -> the company. Unknown -> bad_arguments. */
  async company(tool: string, ticker: string, signal: AbortSignal): Promise<EdgarCompany> {
    const t = ticker.trim().toUpperCase().replace(/\./g, '-');
    if (/^\d{1,10}$/.test(t)) return { cik: String(Number(t)), name: '' };
    const c = (await this.tickerMap(tool, signal)).get(t);
    if (!c) throw new ToolError(`${tool}: ticker ${ticker.trim()} is not in SEC EDGAR's ticker list`, 'bad_arguments');
    return c;
  }

  /**
   * The company's filings filed on or after `since` (YYYY-MM-DD), newest first, and its name
   * as EDGAR records it.
   */
  async filingsSince(tool: string, cik: string, since: string, signal: AbortSignal): Promise<{ name: string; filings: EdgarFiling[] }> {
    const padded = cik.padStart(10, '0');
    const sub = await vendorJson<{
      name?: unknown;
      filings?: { recent?: Columns; files?: { name?: unknown; filingFrom?: unknown; filingTo?: unknown }[] };
    }>(this.get(tool, vendorUrl(this.s.dataUrl, `submissions/CIK${padded}.json`), signal));
    const recent = rows(sub?.filings?.recent);
    const all = [...recent];
    const oldestRecent = recent.reduce((min, f) => (f.filedDate && f.filedDate < min ? f.filedDate : min), '9999-12-31');
    if (oldestRecent > since && Array.isArray(sub?.filings?.files)) {
      const pages = sub.filings.files
        .filter((p) => typeof p?.name === 'string' && /^[\w.-]+\.json$/.test(p.name) && typeof p.filingTo === 'string' && p.filingTo >= since)
        .slice(0, MAX_OLDER_PAGES);
      for (const p of pages) all.push(...rows(await vendorJson<Columns>(this.get(tool, vendorUrl(this.s.dataUrl, `submissions/${p.name as string}`), signal))));
    }
    // One entry per accession (a page may repeat what `recent` holds), newest first.
    const byAccession = new Map<string, EdgarFiling>();
    for (const f of all) if (f.accession && f.filedDate >= since && !byAccession.has(f.accession)) byAccession.set(f.accession, f);
    const filings = [...byAccession.values()].sort((a, b) => b.filedDate.localeCompare(a.filedDate));
    return { name: typeof sub?.name === 'string' ? sub.name : '', filings };
  }

  /** The folder of a filing in the archives. */
  private folder(cik: string, accession: string): string {
    return vendorUrl(this.s.wwwUrl, `Archives/edgar/data/${cik}/${accession.replace(/-/g, '')}/`).toString();
  }

  /** The filing's primary document, or its index page when EDGAR names none. */
  filingUrl(cik: string, f: Pick<EdgarFiling, 'accession' | 'primaryDocument'>): string {
    const dir = this.folder(cik, f.accession);
    return f.primaryDocument ? new URL(f.primaryDocument, dir).toString() : new URL(`${f.accession}-index.htm`, dir).toString();
  }

  /**
   * A document of a filing as text: `name` is its file name in the filing's folder (Form 4's
   * raw XML beside the rendered `xslF345X05/...` copy the submissions list as primary).
   */
  document(tool: string, cik: string, accession: string, name: string, signal: AbortSignal): Promise<string> {
    return vendorText({ ...this.get(tool, new URL(name, this.folder(cik, accession)), signal), headers: { ...this.headers(tool), accept: '*/*' } });
  }
}
