/**
 * `insider_transactions` (catalogue agent `insider-transactions`, one of the two designed here):
 * what a company's insiders bought and sold, from the Form 4 filings EDGAR holds for it: the
 * Form 4s (and 4/A) filed in the last `days_back` days, newest first, at most `max_filings`
 * of them read (four at a time, within the SEC's 10 requests a second), each one's raw XML
 * parsed (./finance-form4.ts). A Form 4 whose XML cannot be read is counted, not guessed.
 */
import pLimit from 'p-limit';
import { EDGAR_FILINGS_REQUESTS, type EdgarClient } from './finance-edgar.js';
import { formRequested } from './finance-forms.js';
import { daysAgo } from './finance-http.js';
import { parseForm4, type InsiderTransaction } from './finance-form4.js';
import { type Tool, ToolError, type ToolOutput } from './tool.js';
import { vendorToolTimeoutMs } from './vendor-fetch.js';

export type InsiderArgs = { ticker: string; days_back?: number; max_filings?: number };

const TOOL = 'insider_transactions';
const DAYS_DEFAULT = 90;
const MAX_FILINGS_DEFAULT = 20;
const MAX_FILINGS = 50;
/** Form 4 documents read at a time. */
const DOCUMENT_CONCURRENCY = 4;
const FORM_4 = new Set(['4']);

type Row = InsiderTransaction & { filed_date: string; filing_url: string };

const sum = (rows: Row[], f: (r: Row) => number | null) => Math.round(rows.reduce((s, r) => s + (f(r) ?? 0), 0) * 100) / 100;

/** Open-market buys (P) and sells (S): what insiders chose to do with their own money. */
function summary(rows: Row[]) {
  const buys = rows.filter((r) => r.transaction_code === 'P');
  const sells = rows.filter((r) => r.transaction_code === 'S');
  return {
    purchase_count: buys.length,
    purchase_shares: sum(buys, (r) => r.shares),
    purchase_value: sum(buys, (r) => r.value),
    sale_count: sells.length,
    sale_shares: sum(sells, (r) => r.shares),
    sale_value: sum(sells, (r) => r.value),
    net_shares: Math.round((sum(buys, (r) => r.shares) - sum(sells, (r) => r.shares)) * 100) / 100,
    insiders: [...new Set(rows.map((r) => r.insider_name).filter(Boolean))].length,
  };
}

/** The raw XML beside the rendered copy EDGAR lists as primary (`xslF345X05/form4.xml` -> `form4.xml`). */
const rawXmlName = (primary: string) => primary.split('/').pop() ?? '';

export function insiderTransactionsTool(edgar: EdgarClient): Tool<InsiderArgs> {
  return {
    name: TOOL,
    description:
      'Insider transactions of a company from its recent SEC Form 4 filings: who (director, officer, 10% owner) bought, sold or was granted how many shares, at what price, and the open-market buy/sell totals.',
    category: 'financial',
    version: '1.0.0',
    parameters: {
      type: 'object',
      properties: {
        ticker: { type: 'string', description: 'Stock ticker (e.g. AAPL) or SEC CIK number', minLength: 1, maxLength: 20 },
        days_back: { type: 'integer', description: 'Form 4 filings of the last N days', minimum: 1, maximum: 365, default: DAYS_DEFAULT },
        max_filings: {
          type: 'integer',
          description: 'Form 4 filings read at most (newest first)',
          minimum: 1,
          maximum: MAX_FILINGS,
          default: MAX_FILINGS_DEFAULT,
        },
      },
      required: ['ticker'],
      additionalProperties: false,
    },
    // The filing list, then up to MAX_FILINGS documents DOCUMENT_CONCURRENCY at a time; each request FINANCE_VENDOR_TIMEOUT_MS.
    timeoutMs: vendorToolTimeoutMs(EDGAR_FILINGS_REQUESTS + Math.ceil(MAX_FILINGS / DOCUMENT_CONCURRENCY), edgar.requestTimeoutMs),
    costPerUse: 0,
    dangerous: false,
    available: edgar.configured,
    retryable: true,
    async run(args, ctx): Promise<ToolOutput> {
      const days = args.days_back ?? DAYS_DEFAULT;
      const max = args.max_filings ?? MAX_FILINGS_DEFAULT;
      const company = await edgar.company(TOOL, args.ticker, ctx.signal);
      const { name, filings } = await edgar.filingsSince(TOOL, company.cik, daysAgo(new Date(), days), ctx.signal);
      const form4s = filings.filter((f) => formRequested(f.form, FORM_4));
      const read = form4s.slice(0, max);
      const limit = pLimit(DOCUMENT_CONCURRENCY);
      let unreadable = 0;
      let firstProblem = '';
      const skip = (why: string): Row[] => {
        unreadable++;
        firstProblem ||= why;
        return [];
      };
      const perFiling = await Promise.all(
        read.map((f) =>
          limit(async (): Promise<Row[]> => {
            const file = rawXmlName(f.primaryDocument);
            if (!file.toLowerCase().endsWith('.xml')) return skip(`${f.accession} has no XML document`);
            let xml: string;
            try {
              xml = await edgar.document(TOOL, company.cik, f.accession, file, ctx.signal);
            } catch (err) {
              if (ctx.signal.aborted || (err instanceof ToolError && err.kind === 'not_configured')) throw err;
              return skip((err as Error).message);
            }
            const parsed = await parseForm4(xml);
            if (!parsed) return skip(`${f.accession}/${file} is not an ownership document`);
            const filing_url = edgar.filingUrl(company.cik, f);
            return parsed.map((t) => ({ ...t, filed_date: f.filedDate, filing_url }));
          }),
        ),
      );
      if (read.length > 0 && unreadable === read.length)
        throw new ToolError(`${TOOL}: none of the ${read.length} Form 4 filing(s) of ${args.ticker.trim()} could be read: ${firstProblem}`, 'backend');
      const transactions = perFiling.flat();
      const s = summary(transactions);
      const output = {
        source: 'SEC EDGAR',
        ticker: args.ticker.trim().toUpperCase(),
        company_name: name || company.name,
        cik: company.cik.padStart(10, '0'),
        transactions,
        summary: s,
        filings_found: form4s.length,
        filings_read: read.length - unreadable,
        filings_unreadable: unreadable,
        total_count: transactions.length,
      };
      const head = `${output.company_name || output.ticker}: ${transactions.length} insider transaction(s) in ${output.filings_read} Form 4 filing(s) of the last ${days} days; open-market buys ${s.purchase_count} (${s.purchase_shares} shares), sells ${s.sale_count} (${s.sale_shares} shares).`;
      const lines = transactions.map(
        (t) =>
          `- ${t.transaction_date} ${t.insider_name}${t.relationship ? ` (${t.relationship})` : ''}: ${t.transaction_type}, ${t.acquired_disposed} ${t.shares ?? '?'} @ ${t.price_per_share ?? '?'}`,
      );
      return { output, text: [head, ...lines].join('\n'), costUsd: 0 };
    },
  };
}
