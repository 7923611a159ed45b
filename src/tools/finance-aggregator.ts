/**
 * `news_aggregator` (catalogue agent `news-aggregator`): one view of a ticker from the three
 * financial sources, fetched in parallel with each agent's defaults: broker news (last 24 hours,
 * 10 articles), X sentiment (last day; `include_social`), SEC filings (last 30 days, the default
 * forms; `include_filings`). Each source has its block (its items, counts, component score and
 * weight, or its error); the overall sentiment is the weighted mix of ./finance-score.ts.
 * A source that fails is reported in its block and left out of the score; when every source
 * asked for fails, the tool fails with their errors (`not_configured` when that is why all did).
 */
import { EDGAR_FILINGS_REQUESTS, type EdgarClient } from './finance-edgar.js';
import { DEFAULT_FORMS, FILINGS_DAYS_DEFAULT, recentFilings } from './finance-filings.js';
import { brokerNews, NEWS_HOURS_DEFAULT, NEWS_LIMIT_DEFAULT, type AlpacaSettings } from './finance-news.js';
import { newsTones } from './finance-news-tone.js';
import { filingsComponent, newsComponent, overallSentiment, socialComponent, type SourceName } from './finance-score.js';
import { microblogSentiment, SENTIMENT_COST_ESTIMATE, SENTIMENT_DAYS_DEFAULT, type XaiSettings } from './finance-sentiment.js';
import { type Tool, ToolError, type ToolModel, type ToolOutput } from './tool.js';
import { vendorToolTimeoutMs } from './vendor-fetch.js';

export type NewsAggregatorArgs = { ticker: string; include_filings?: boolean; include_social?: boolean };

export interface AggregatorDeps {
  edgar: EdgarClient;
  alpaca: AlpacaSettings;
  xai: XaiSettings;
  model: ToolModel;
}

const TOOL = 'news_aggregator';
/** Time kept for the news tone model call after the news arrived. */
const NEWS_TONE_MODEL_MS = 60_000;

type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };
const settle = <T>(p: Promise<T>): Promise<Settled<T>> =>
  p.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

export async function aggregate(d: AggregatorDeps, args: NewsAggregatorArgs, signal: AbortSignal, now = new Date()): Promise<ToolOutput> {
  const ticker = args.ticker.trim().toUpperCase();
  const withFilings = args.include_filings ?? true;
  const withSocial = args.include_social ?? true;
  const [news, social, filings] = await Promise.all([
    settle(
      brokerNews(d.alpaca, TOOL, { symbols: ticker, hours_back: NEWS_HOURS_DEFAULT, limit: NEWS_LIMIT_DEFAULT }, signal, now).then(async (r) => ({
        ...r,
        // A failed model call leaves the news unscored, not lost.
        tones: await newsTones(d.model, ticker, r.news, signal).catch((e: unknown) => {
          if (signal.aborted) throw e;
          return { tones: undefined, note: `the model call failed: ${messageOf(e)}`, costUsd: 0 };
        }),
      })),
    ),
    withSocial ? settle(microblogSentiment(d.xai, TOOL, { ticker, days_back: SENTIMENT_DAYS_DEFAULT }, signal, now)) : undefined,
    withFilings ? settle(recentFilings(d.edgar, TOOL, { ticker, days_back: FILINGS_DAYS_DEFAULT, forms: DEFAULT_FORMS }, signal, now)) : undefined,
  ]);
  if (signal.aborted) throw signal.reason;

  const components: Partial<Record<SourceName, number>> = {};
  const blocks: Record<string, Record<string, unknown>> = {};
  let cost = 0;
  const failures: unknown[] = [];

  if (news.ok) {
    const t = news.value.tones;
    cost += t.costUsd;
    const count = (tone: string) => t.tones?.filter((x) => x === tone).length ?? 0;
    components.news = t.tones ? newsComponent(t.tones) : undefined;
    blocks.news = {
      items: news.value.news,
      total_count: news.value.total_count,
      positive_count: count('positive'),
      negative_count: count('negative'),
      neutral_count: count('neutral'),
      score: components.news ?? null,
      ...(t.note ? { note: `not scored: ${t.note}` } : {}),
    };
  } else {
    failures.push(news.error);
    blocks.news = { items: [], total_count: 0, score: null, error: messageOf(news.error) };
  }

  if (social?.ok) {
    cost += social.value.cost_usd;
    components.social = socialComponent(social.value.sentiment);
    blocks.social = {
      sentiment: social.value.sentiment,
      analysis: social.value.analysis,
      citations: social.value.citations,
      total_count: social.value.citations.length,
      score: components.social,
    };
  } else if (social) {
    failures.push(social.error);
    blocks.social = { citations: [], total_count: 0, score: null, error: messageOf(social.error) };
  }

  if (filings?.ok) {
    components.filings = filingsComponent(filings.value.has_material_events);
    blocks.filings = {
      company_name: filings.value.company_name,
      cik: filings.value.cik,
      items: filings.value.filings,
      total_count: filings.value.total_count,
      material_count: filings.value.filings.filter((f) => f.is_material).length,
      has_material_events: filings.value.has_material_events,
      score: components.filings,
    };
  } else if (filings) {
    failures.push(filings.error);
    blocks.filings = { items: [], total_count: 0, score: null, error: messageOf(filings.error) };
  }

  const asked = 1 + (social ? 1 : 0) + (filings ? 1 : 0);
  if (failures.length === asked) {
    const allUnconfigured = failures.every((e) => e instanceof ToolError && e.kind === 'not_configured');
    throw new ToolError(`${TOOL}: every source failed: ${failures.map(messageOf).join('; ')}`, allUnconfigured ? 'not_configured' : 'backend');
  }
  const overall = overallSentiment(components);
  for (const [name, block] of Object.entries(blocks)) block.weight = overall.weights[name as SourceName] ?? 0;
  const output = {
    ticker,
    as_of: now.toISOString(),
    sources_used: Object.keys(overall.weights),
    overall_sentiment: { score: overall.score, label: overall.label },
    ...blocks,
  };
  const lines = [
    `${ticker} as of ${output.as_of}: ${overall.label ?? 'no score'}${overall.score === null ? '' : ` (${overall.score})`} from ${output.sources_used.join(', ') || 'no source'}.`,
    ...Object.entries(blocks).map(
      ([name, b]) => `- ${name}: ${b.error ? `failed: ${String(b.error)}` : `${String(b.total_count)} item(s), score ${String(b.score)}`}`,
    ),
  ];
  return { output, text: lines.join('\n'), costUsd: cost };
}

export function newsAggregatorTool(d: AggregatorDeps): Tool<NewsAggregatorArgs> {
  return {
    name: TOOL,
    description:
      'A ticker seen through broker news, X sentiment and SEC filings at once, with an overall sentiment score ' +
      '(40% news, 40% social, 20% material filings) and label (bullish, neutral, bearish).',
    category: 'financial',
    version: '1.0.0',
    parameters: {
      type: 'object',
      properties: {
        ticker: { type: 'string', description: 'Stock ticker, e.g. NVDA', minLength: 1, maxLength: 20 },
        include_filings: { type: 'boolean', description: 'Read SEC filings (material-event indicator)', default: true },
        include_social: { type: 'boolean', description: 'Read sentiment on X', default: true },
      },
      required: ['ticker'],
      additionalProperties: false,
    },
    // The three sources run in parallel: the longest chain of requests, each at its setting
    // (FINANCE_VENDOR_TIMEOUT_MS, XAI_TIMEOUT_MS); the news also waits for the tone model call.
    timeoutMs: vendorToolTimeoutMs(1, Math.max(d.alpaca.timeoutMs + NEWS_TONE_MODEL_MS, d.xai.timeoutMs, EDGAR_FILINGS_REQUESTS * d.edgar.requestTimeoutMs)),
    costPerUse: SENTIMENT_COST_ESTIMATE,
    dangerous: false,
    // Offered to models when any of its sources can answer.
    available: !!(d.alpaca.keyId && d.alpaca.secretKey) || !!d.xai.apiKey || d.edgar.configured,
    retryable: true,
    run: (args, ctx) => aggregate(d, args, ctx.signal),
  };
}
