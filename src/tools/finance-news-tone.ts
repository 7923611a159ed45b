/**
 * The tone of news articles for a stock (positive, negative, neutral), asked of the service's
 * model (ToolModel) in one call: the articles are numbered, the answer must be a JSON object
 * `{"tones": [...]}` with one tone per article, in order. An answer that is not that (the
 * offline provider's labelled text, a wrong count, an unknown word) gives no tones: the caller
 * leaves the news out of the score rather than guess.
 */
import type { NewsItem } from './finance-news.js';
import type { Tone } from './finance-score.js';
import type { ToolModel } from './tool.js';

const TONES: readonly Tone[] = ['positive', 'negative', 'neutral'];

export interface NewsTones {
  tones?: Tone[];
  /** Why there are none. */
  note?: string;
  costUsd: number;
}

const SYSTEM =
  'You rate financial news. For each numbered article say whether it is positive, negative or neutral for the stock named. ' +
  'Answer with JSON only: {"tones": ["positive" | "negative" | "neutral", ...]} with exactly one entry per article, in order.';

/** The tones of a model's answer, or undefined when it is not a usable answer for `count` articles. */
export function parseTones(answer: string, count: number): Tone[] | undefined {
  const start = answer.indexOf('{');
  const end = answer.lastIndexOf('}');
  if (start < 0 || end <= start) return undefined;
  let data: unknown;
  try {
    data = JSON.parse(answer.slice(start, end + 1));
  } catch {
    return undefined;
  }
  const tones = (data as { tones?: unknown })?.tones;
  if (!Array.isArray(tones) || tones.length !== count) return undefined;
  const out = tones.map((t) => (typeof t === 'string' ? t.trim().toLowerCase() : ''));
  return out.every((t): t is Tone => (TONES as readonly string[]).includes(t)) ? (out as Tone[]) : undefined;
}

export async function newsTones(model: ToolModel, ticker: string, news: readonly NewsItem[], signal: AbortSignal): Promise<NewsTones> {
  if (news.length === 0) return { note: 'no articles', costUsd: 0 };
  const articles = news.map((n, i) => `${i + 1}. ${n.headline}${n.summary ? ` — ${n.summary.slice(0, 400)}` : ''}`).join('\n');
  const r = await model({
    system: SYSTEM,
    prompt: `Stock: ${ticker}\n\nArticles:\n${articles}`,
    maxTokens: 40 + 8 * news.length,
    tier: 'small',
    signal,
  });
  const tones = parseTones(r.text, news.length);
  return tones ? { tones, costUsd: r.costUsd ?? 0 } : { note: `the model's answer (${r.model}) gave no usable tones`, costUsd: r.costUsd ?? 0 };
}
