/**
 * The aggregator's overall sentiment, as pure functions. Each source becomes a component in
 * 0..1, the score is the spec's weighted mix of the components there are, and the label the
 * spec's range the score falls in:
 * - news: each article's tone (positive, negative, neutral; ./finance-news-tone.ts) ->
 *   (positive + 0.5 * neutral) / articles, i.e. 0.5 + (positive - negative) / (2 * articles);
 *   no articles, or no usable tones -> no component;
 * - social: the microblog label -> bullish 1, mixed 0.5, neutral 0.5, bearish 0;
 * - filings: the material-event indicator -> 1 when a material filing (8-K, SC 13D) was filed
 *   in the window, else 0 (the spec's indicator: it says that something material happened, not
 *   in which direction).
 * Weights 0.4 news, 0.4 social, 0.2 filings. A source that is switched off, failed, or gave no
 * component is left out and the weights of the others are scaled to sum to 1 (news and filings
 * alone: 0.4/0.6 and 0.2/0.6). The score is rounded to 4 decimals before it is labelled:
 * 0.6 and above bullish, 0.4 up to 0.6 neutral, below 0.4 bearish (each boundary belongs to
 * the range above it). No component at all -> no score.
 */
import type { Sentiment } from './finance-sentiment.js';

export type SourceName = 'news' | 'social' | 'filings';
export type Tone = 'positive' | 'negative' | 'neutral';
export type SentimentLabel = 'bullish' | 'neutral' | 'bearish';

export const WEIGHTS: Readonly<Record<SourceName, number>> = { news: 0.4, social: 0.4, filings: 0.2 };

const SOCIAL_COMPONENT: Readonly<Record<Sentiment, number>> = { bullish: 1, mixed: 0.5, neutral: 0.5, bearish: 0 };

export function newsComponent(tones: readonly Tone[]): number | undefined {
  if (tones.length === 0) return undefined;
  const positive = tones.filter((t) => t === 'positive').length;
  const neutral = tones.filter((t) => t === 'neutral').length;
  return (positive + 0.5 * neutral) / tones.length;
}

export const socialComponent = (s: Sentiment): number => SOCIAL_COMPONENT[s];

export const filingsComponent = (hasMaterialEvents: boolean): number => (hasMaterialEvents ? 1 : 0);

export function labelOf(score: number): SentimentLabel {
  if (score >= 0.6) return 'bullish';
  if (score >= 0.4) return 'neutral';
  return 'bearish';
}

const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

export interface OverallSentiment {
  score: number | null;
  label: SentimentLabel | null;
  /** The weight each scored source had after re-weighting. */
  weights: Partial<Record<SourceName, number>>;
}

/** The weighted mix of the components given (a source absent or undefined is left out). */
export function overallSentiment(components: Partial<Record<SourceName, number | undefined>>): OverallSentiment {
  const used = (Object.keys(WEIGHTS) as SourceName[]).filter((s) => typeof components[s] === 'number' && Number.isFinite(components[s]));
  const total = used.reduce((sum, s) => sum + WEIGHTS[s], 0);
  if (used.length === 0 || total === 0) return { score: null, label: null, weights: {} };
  const score = round4(used.reduce((sum, s) => sum + WEIGHTS[s] * components[s]!, 0) / total);
  const weights = Object.fromEntries(used.map((s) => [s, round4(WEIGHTS[s] / total)]));
  return { score, label: labelOf(score), weights };
}
