/**
 * `sec_filings` (catalogue agent `regulatory-filings`): a company's recent SEC filings from
 * EDGAR: ticker -> CIK, the filings of the last `days_back` days whose form is one of `forms`,
 * each marked `is_material` by its form type (./finance-forms.ts), and whether any is.
 */
import { EDGAR_FILINGS_REQUESTS, type EdgarClient } from './finance-edgar.js';
import { filingDescription, canonicalForm, formRequested, isMaterialForm } from './finance-forms.js';
import { commaList, daysAgo } from './finance-http.js';
import { type Tool, ToolError, type ToolOutput } from './tool.js';
import { vendorToolTimeoutMs } from './vendor-fetch.js';

export const DEFAULT_FORMS = '8-K,10-K,10-Q,4,SC 13D';
export const FILINGS_DAYS_DEFAULT = 30;

export type SecFilingsArgs = { ticker: string; days_back?: number; forms?: string };

export interface FilingItem {
  form_type: string;
  filed_date: string;
  description: string;
  filing_url: string;
  is_material: boolean;
}

export interface FilingsResult {
  source: string;
  ticker: string;
  company_name: string;
  cik: string;
  filings: FilingItem[];
  has_material_events: boolean;
  total_count: number;
}

/** The requested forms, canonical; a token that is no form name is a bad argument. */
export function parseForms(tool: string, forms: string): Set<string> {
  const list = commaList(forms);
  if (list.length === 0) throw new ToolError(`${tool}: forms must name at least one form type, e.g. ${DEFAULT_FORMS}`, 'bad_arguments');
  for (const f of list)
    if (!/^[A-Z0-9][A-Z0-9 /-]{0,19}$/.test(f))
      throw new ToolError(`${tool}: ${JSON.stringify(f)} is not a form type (e.g. 8-K, 10-Q, SC 13D)`, 'bad_arguments');
  return new Set(list.map(canonicalForm));
}

/** The filings of a company for the agent (also the aggregator's filings block). */
export async function recentFilings(
  edgar: EdgarClient,
  tool: string,
  args: { ticker: string; days_back: number; forms: string },
  signal: AbortSignal,
  now = new Date(),
): Promise<FilingsResult> {
  const requested = parseForms(tool, args.forms);
  const company = await edgar.company(tool, args.ticker, signal);
  const { name, filings } = await edgar.filingsSince(tool, company.cik, daysAgo(now, args.days_back), signal);
  const items = filings
    .filter((f) => formRequested(f.form, requested))
    .map((f) => ({
      form_type: f.form,
      filed_date: f.filedDate,
      description: filingDescription(f.form, f.primaryDocDescription, f.items),
      filing_url: edgar.filingUrl(company.cik, f),
      is_material: isMaterialForm(f.form),
    }));
  return {
    source: 'SEC EDGAR',
    ticker: args.ticker.trim().toUpperCase(),
    company_name: name || company.name,
    cik: company.cik.padStart(10, '0'),
    filings: items,
    has_material_events: items.some((f) => f.is_material),
    total_count: items.length,
  };
}

export function secFilingsTool(edgar: EdgarClient): Tool<SecFilingsArgs> {
  return {
    name: 'sec_filings',
    description:
      "A company's recent SEC filings from EDGAR (8-K, 10-K, 10-Q, Form 4, SC 13D, ...): form type, date, description, link, " +
      'and whether each reports a material event.',
    category: 'financial',
    version: '1.0.0',
    parameters: {
      type: 'object',
      properties: {
        ticker: { type: 'string', description: 'Stock ticker (e.g. AAPL) or SEC CIK number', minLength: 1, maxLength: 20 },
        days_back: { type: 'integer', description: 'Filings of the last N days', minimum: 1, maximum: 365, default: FILINGS_DAYS_DEFAULT },
        forms: {
          type: 'string',
          description: 'Comma-separated form types (also DEF 14A, S-1, ...); a form includes its amendments',
          default: DEFAULT_FORMS,
          minLength: 1,
          maxLength: 200,
        },
      },
      required: ['ticker'],
      additionalProperties: false,
    },
    // EDGAR's requests one after another, each FINANCE_VENDOR_TIMEOUT_MS.
    timeoutMs: vendorToolTimeoutMs(EDGAR_FILINGS_REQUESTS, edgar.requestTimeoutMs),
    costPerUse: 0,
    dangerous: false,
    // Not offered to models without SEC_EDGAR_USER_AGENT (a direct call says what to set).
    available: edgar.configured,
    retryable: true,
    async run(args, ctx): Promise<ToolOutput> {
      const r = await recentFilings(
        edgar,
        'sec_filings',
        { ticker: args.ticker, days_back: args.days_back ?? FILINGS_DAYS_DEFAULT, forms: args.forms ?? DEFAULT_FORMS },
        ctx.signal,
      );
      const head = `${r.company_name || r.ticker} (CIK ${r.cik}): ${r.total_count} filing(s) in the last ${args.days_back ?? FILINGS_DAYS_DEFAULT} days${
        r.has_material_events ? ', including material events' : ''
      }.`;
      const lines = r.filings.map((f) => `- ${f.filed_date} ${f.form_type}${f.is_material ? ' [material]' : ''}: ${f.description} ${f.filing_url}`);
      return { output: { ...r }, text: [head, ...lines].join('\n'), costUsd: 0 };
    },
  };
}
