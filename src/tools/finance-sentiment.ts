/**
 * `microblog_sentiment` (catalogue agent `microblog-sentiment`): what posts on X say about a
 * ticker, through a live-search model vendor's OpenAI-compatible Responses API (xAI:
 * https://docs.x.ai/developers/tools/x-search): `POST {base}/responses` with the `x_search`
 * tool limited to the last `days_back` days (`from_date`, `to_date`). The model searches, then
 * answers; its answer is the analysis, its last `SENTIMENT:` line the label, and the sources
 * it read (`citations`, and the answer's `url_citation` annotations) the citations. The cost is
 * what the vendor reports (`usage.cost_in_usd_ticks`, 10^10 ticks a dollar), else the tool's
 * listed estimate.
 */
import { daysAgo, vendorJson, vendorUrl } from './finance-http.js';
import { type Tool, ToolError, type ToolOutput } from './tool.js';
import { vendorToolTimeoutMs } from './vendor-fetch.js';

export interface XaiSettings {
  /** XAI_API_KEY */
  apiKey?: string;
  /** XAI_BASE_URL (https://api.x.ai/v1) */
  baseUrl: string;
  /** XAI_SEARCH_MODEL */
  model: string;
  timeoutMs: number;
}

export const SENTIMENTS = ['bullish', 'bearish', 'mixed', 'neutral'] as const;
export type Sentiment = (typeof SENTIMENTS)[number];
export const SENTIMENT_DAYS_DEFAULT = 1;
/** Listed cost of one call (USD) when the vendor does not report it: a search-backed model answer. */
export const SENTIMENT_COST_ESTIMATE = 0.025;

export type MicroblogSentimentArgs = { ticker: string; days_back?: number };

export interface SentimentResult {
  ticker: string;
  analysis: string;
  sentiment: Sentiment;
  citations: string[];
  cost_usd: number;
}

const SYSTEM =
  'You are a market analyst. Search posts on X about the stock the user names and summarise what people say about it: ' +
  'the main themes, notable posts, and the balance of opinion. End with one last line that reads exactly ' +
  '"SENTIMENT: bullish", "SENTIMENT: bearish", "SENTIMENT: mixed" or "SENTIMENT: neutral".';

const LABEL_LINE = /^[\s*_#>-]*sentiment[\s*_]*[:：][\s*_]*(bullish|bearish|mixed|neutral)\b.*$/gim;

/**
 * The label of an answer: its last `SENTIMENT: <label>` line; without one, the only label word
 * the answer uses; else none (the caller fails rather than guess).
 */
export function parseSentiment(answer: string): { sentiment: Sentiment; analysis: string } | undefined {
  const lines = [...answer.matchAll(LABEL_LINE)];
  const last = lines.at(-1);
  if (last) {
    const analysis = answer.replace(LABEL_LINE, '').trim();
    return { sentiment: last[1]!.toLowerCase() as Sentiment, analysis };
  }
  const used = SENTIMENTS.filter((s) => new RegExp(`\\b${s}\\b`, 'i').test(answer));
  return used.length === 1 ? { sentiment: used[0]!, analysis: answer.trim() } : undefined;
}

interface ResponsesBody {
  output?: { type?: string; content?: { type?: string; text?: unknown; annotations?: { type?: string; url?: unknown }[] }[] }[];
  citations?: unknown;
  usage?: { cost_in_usd_ticks?: unknown };
}

/** The answer's text and every source it cites, in order, once. */
function answerOf(body: ResponsesBody): { text: string; citations: string[] } {
  const texts: string[] = [];
  const urls: string[] = [];
  for (const item of Array.isArray(body.output) ? body.output : []) {
    if (item?.type !== 'message' || !Array.isArray(item.content)) continue;
    for (const part of item.content) {
      if (part?.type !== 'output_text' || typeof part.text !== 'string') continue;
      texts.push(part.text);
      for (const a of Array.isArray(part.annotations) ? part.annotations : []) if (a?.type === 'url_citation' && typeof a.url === 'string') urls.push(a.url);
    }
  }
  if (Array.isArray(body.citations)) for (const c of body.citations) if (typeof c === 'string') urls.push(c);
  return { text: texts.join('\n').trim(), citations: [...new Set(urls)] };
}

/** The sentiment on X about `ticker` over the last `days_back` days (also the aggregator's social block). */
export async function microblogSentiment(
  s: XaiSettings,
  tool: string,
  args: { ticker: string; days_back: number },
  signal: AbortSignal,
  now = new Date(),
): Promise<SentimentResult> {
  if (!s.apiKey) throw new ToolError(`${tool}: XAI_API_KEY is not set`, 'not_configured');
  const ticker = args.ticker.trim().toUpperCase();
  const body = await vendorJson<ResponsesBody>({
    vendor: 'xAI',
    url: vendorUrl(s.baseUrl, 'responses'),
    headers: { authorization: `Bearer ${s.apiKey}` },
    body: {
      model: s.model,
      input: [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: `What is the sentiment on X about $${ticker} over the last ${args.days_back} day(s)?` },
      ],
      tools: [{ type: 'x_search', from_date: daysAgo(now, args.days_back), to_date: daysAgo(now, 0) }],
      store: false,
    },
    timeoutMs: s.timeoutMs,
    maxBytes: 4 * 1024 * 1024,
    signal,
    credential: 'XAI_API_KEY',
  });
  const { text, citations } = answerOf(body ?? {});
  if (!text) throw new ToolError('xAI answered without any text', 'backend');
  const parsed = parseSentiment(text);
  if (!parsed) throw new ToolError(`xAI's answer named no sentiment (${SENTIMENTS.join(', ')}): ${text.slice(0, 120)}`, 'backend');
  const ticks = body?.usage?.cost_in_usd_ticks;
  const cost = typeof ticks === 'number' && Number.isFinite(ticks) && ticks >= 0 ? ticks / 1e10 : SENTIMENT_COST_ESTIMATE;
  return { ticker, analysis: parsed.analysis, sentiment: parsed.sentiment, citations, cost_usd: cost };
}

export function microblogSentimentTool(s: XaiSettings): Tool<MicroblogSentimentArgs> {
  return {
    name: 'microblog_sentiment',
    description: 'Sentiment on X (bullish, bearish, mixed or neutral) about a stock ticker over the last days, with an analysis and the posts cited.',
    category: 'financial',
    version: '1.0.0',
    parameters: {
      type: 'object',
      properties: {
        ticker: { type: 'string', description: 'Stock ticker, e.g. TSLA', minLength: 1, maxLength: 20 },
        days_back: { type: 'integer', description: 'Posts of the last N days', minimum: 1, maximum: 7, default: SENTIMENT_DAYS_DEFAULT },
      },
      required: ['ticker'],
      additionalProperties: false,
    },
    // One xAI request (XAI_TIMEOUT_MS) and a margin.
    timeoutMs: vendorToolTimeoutMs(1, s.timeoutMs),
    costPerUse: SENTIMENT_COST_ESTIMATE,
    dangerous: false,
    available: !!s.apiKey,
    retryable: true,
    async run(args, ctx): Promise<ToolOutput> {
      const r = await microblogSentiment(s, 'microblog_sentiment', { ticker: args.ticker, days_back: args.days_back ?? SENTIMENT_DAYS_DEFAULT }, ctx.signal);
      const text = `${r.ticker}: ${r.sentiment}\n\n${r.analysis}${r.citations.length ? `\n\nSources:\n${r.citations.map((c) => `- ${c}`).join('\n')}` : ''}`;
      return { output: { ...r }, text, costUsd: r.cost_usd };
    },
  };
}
