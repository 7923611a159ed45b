/**
 * `ad_creative_analyze` (catalogue agent ad-creative-analyze): the patterns of a set of ad
 * creatives (e.g. serp_ads or social_ad_library output) analysed by the service's model:
 * headline patterns, persuasion techniques, CTA patterns, emotional triggers, gaps against the
 * competitors, recommendations. The model is asked for one JSON object with those six lists.
 *
 * When its answer is not usable (no JSON object, or none of the six lists), the output says so
 * in `model_analysis` and holds only what the input itself shows: headline_patterns are counts
 * of structural features of the headlines (numbers, questions, exclamations) and cta_patterns the
 * calls to action the ads state in a CTA field; the other lists stay empty. api_cost_usd is the
 * model call's cost.
 */
import { analysisOf, askForJson, clip, listOf } from './ads-model.js';
import { text } from './ads-client.js';
import { type Tool, type ToolModel, ToolError, type ToolOutput } from './tool.js';

export interface AdCreativeAnalyzeArgs extends Record<string, unknown> {
  ads: Record<string, unknown>[];
  competitors?: Record<string, unknown>[];
  industry?: string;
  language?: string;
}

export const ANALYSIS_FIELDS = [
  'headline_patterns',
  'persuasion_techniques',
  'cta_patterns',
  'emotional_triggers',
  'competitive_gaps',
  'recommendations',
] as const;

const AD_CHARS = 600;
const COMPETITOR_CHARS = 400;

const HEADLINE_KEYS = ['title', 'headline', 'link_title'];
const CTA_KEYS = ['cta', 'call_to_action', 'cta_text'];

const pick = (ad: Record<string, unknown>, keys: string[]): string => keys.map((k) => text(ad[k])).find(Boolean) ?? '';

/** Structural facts of the headlines, as `{pattern, count, examples}` for the features that occur. */
export function headlineFacts(ads: Record<string, unknown>[]) {
  const headlines = ads.map((a) => pick(a, HEADLINE_KEYS)).filter(Boolean);
  const features: [string, (h: string) => boolean][] = [
    ['contains a number', (h) => /\p{Nd}/u.test(h)],
    ['asks a question', (h) => /[?？]/.test(h)],
    ['ends with an exclamation', (h) => /[!！]\s*$/.test(h)],
  ];
  return features
    .map(([pattern, has]) => {
      const hits = headlines.filter(has);
      return { pattern, count: hits.length, of: headlines.length, examples: hits.slice(0, 3) };
    })
    .filter((f) => f.count > 0);
}

/** The calls to action the ads state themselves (a CTA field), most frequent first. */
export function statedCtas(ads: Record<string, unknown>[]) {
  const counts = new Map<string, number>();
  for (const a of ads) {
    const cta = pick(a, CTA_KEYS);
    if (cta) counts.set(cta, (counts.get(cta) ?? 0) + 1);
  }
  return [...counts].sort((x, y) => y[1] - x[1] || x[0].localeCompare(y[0])).map(([cta, count]) => ({ cta, count }));
}

export function adCreativeAnalyzeTool(model: ToolModel): Tool<AdCreativeAnalyzeArgs> {
  return {
    name: 'ad_creative_analyze',
    description:
      'Analyses ad creatives (and optionally competitors) with the model: headline patterns, persuasion techniques, CTA patterns, emotional triggers, competitive gaps and recommendations.',
    category: 'ads_research',
    version: '1.0.0',
    parameters: {
      type: 'object',
      properties: {
        ads: {
          type: 'array',
          items: { type: 'object' },
          minItems: 1,
          maxItems: 100,
          description: 'Ad creatives (title/headline, description/body, link, cta...)',
        },
        competitors: {
          type: 'array',
          items: { type: 'object' },
          maxItems: 50,
          description: 'Competitors to compare against (e.g. competitor_discover output)',
        },
        industry: { type: 'string', description: 'Industry of the ads', default: 'general', maxLength: 100 },
        language: { type: 'string', description: 'Language of the analysis', default: 'en', minLength: 2, maxLength: 10 },
      },
      required: ['ads'],
      additionalProperties: false,
    },
    timeoutMs: 120_000,
    costPerUse: 0.01,
    dangerous: false,
    retryable: true,
    async run(args, ctx): Promise<ToolOutput> {
      const ads = args.ads.filter((a) => a && typeof a === 'object' && !Array.isArray(a));
      if (!ads.length) throw new ToolError('ads must hold at least one ad object', 'bad_arguments');
      const competitors = args.competitors ?? [];
      const industry = args.industry ?? 'general';
      const language = args.language ?? 'en';
      const prompt = [
        `Industry: ${industry}. Write the analysis in language "${language}".`,
        `Ads (${ads.length}):`,
        ...ads.map((a, i) => `${i + 1}. ${clip(JSON.stringify(a), AD_CHARS)}`),
        ...(competitors.length
          ? [`Competitors (${competitors.length}):`, ...competitors.map((c, i) => `${i + 1}. ${clip(JSON.stringify(c), COMPETITOR_CHARS)}`)]
          : []),
        '',
        `Answer with one JSON object and nothing else, with these keys, each a list of short strings: ${ANALYSIS_FIELDS.join(', ')}.`,
        'Base every item on the ads above; competitive_gaps are angles the competitors leave open.',
      ].join('\n');
      const answer = await askForJson(model, 'ad_creative_analyze', {
        system: 'You are an advertising analyst. You answer only with JSON.',
        prompt,
        maxTokens: 1500,
        signal: ctx.signal,
      });
      const lists = Object.fromEntries(ANALYSIS_FIELDS.map((f) => [f, answer.json ? listOf(answer.json[f]) : undefined]));
      const used = ANALYSIS_FIELDS.some((f) => lists[f] !== undefined);
      const analysis = used
        ? Object.fromEntries(ANALYSIS_FIELDS.map((f) => [f, lists[f] ?? []]))
        : {
            headline_patterns: headlineFacts(ads),
            persuasion_techniques: [],
            cta_patterns: statedCtas(ads),
            emotional_triggers: [],
            competitive_gaps: [],
            recommendations: [],
          };
      const cost = answer.result.costUsd ?? 0;
      const model_analysis = analysisOf(
        answer,
        used,
        'headline_patterns counts features of the headlines and cta_patterns the calls to action stated in the ads; the other lists are empty.',
      );
      return {
        output: { ...analysis, api_cost_usd: cost, model_analysis },
        text: used
          ? ANALYSIS_FIELDS.map(
              (f) => `${f}:\n${(analysis[f] as unknown[]).map((x) => `- ${typeof x === 'string' ? x : JSON.stringify(x)}`).join('\n') || '- (none)'}`,
            ).join('\n')
          : `${model_analysis.note}`,
        metadata: { model: answer.result.model, provider: answer.result.provider, tokens: answer.result.tokens, model_analysis: used },
        costUsd: cost,
      };
    },
  };
}
