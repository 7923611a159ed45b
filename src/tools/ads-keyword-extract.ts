/**
 * `keyword_extract` (catalogue agent keyword-extract): the search keywords an advertiser would
 * bid on for a free-text query, with its language and country, from the service's model (asked
 * for one JSON object {keywords, language, country}).
 *
 * - `language` given: it is the detected_language (the caller fixed it); otherwise the model's,
 *   else the one the text's script shows (kana: ja, hangul: ko, han only: zh, thai, hebrew,
 *   greek); a script shared by many languages (Latin, Cyrillic, Arabic...) gives null rather
 *   than a guess.
 * - detected_country: the model's, else the `country` argument (default us).
 * - When the model's answer is not usable, keywords is empty and `model_analysis` says so: a
 *   keyword list is analysis, and none is invented. api_cost_usd is the model call's cost.
 */
import { analysisOf, askForJson, listOf } from './ads-model.js';
import { type Tool, type ToolModel, ToolError, type ToolOutput } from './tool.js';

export interface KeywordExtractArgs extends Record<string, unknown> {
  query: string;
  country?: string;
  language?: string;
  max_keywords?: number;
}

const CODE = /^[a-z]{2,3}(-[a-z0-9]{2,8})?$/i;

/** Scripts that name one language; checked in this order (kana before han: Japanese mixes both). */
const SCRIPTS: [RegExp, string][] = [
  [/[\p{Script=Hiragana}\p{Script=Katakana}]/u, 'ja'],
  [/\p{Script=Hangul}/u, 'ko'],
  [/\p{Script=Han}/u, 'zh'],
  [/\p{Script=Thai}/u, 'th'],
  [/\p{Script=Hebrew}/u, 'he'],
  [/\p{Script=Greek}/u, 'el'],
];

/** The language a text's script shows, or null when its script is shared by many languages. */
export function languageFromScript(s: string): string | null {
  for (const [re, lang] of SCRIPTS) if (re.test(s)) return lang;
  return null;
}

function keywordsOf(v: unknown, max: number): string[] | undefined {
  const list = listOf(v);
  if (!list) return undefined;
  const words = list
    .map((x) => (typeof x === 'string' ? x : x && typeof x === 'object' ? String((x as { keyword?: unknown }).keyword ?? '') : ''))
    .map((x) => x.trim())
    .filter(Boolean);
  const seen = new Set<string>();
  return words.filter((w) => !seen.has(w.toLowerCase()) && seen.add(w.toLowerCase())).slice(0, max);
}

export function keywordExtractTool(model: ToolModel): Tool<KeywordExtractArgs> {
  return {
    name: 'keyword_extract',
    description: 'Extracts the search keywords worth bidding on from a free-text query, with the detected language and country, using the model.',
    category: 'ads_research',
    version: '1.0.0',
    parameters: {
      type: 'object',
      properties: {
        query: { type: 'string', description: 'Free text (a product, a business, a question)', minLength: 1, maxLength: 4000 },
        country: { type: 'string', description: 'Country of the searches (ISO code)', default: 'us', minLength: 2, maxLength: 2 },
        language: { type: 'string', description: 'Language of the query; omitted: detected', minLength: 2, maxLength: 10 },
        max_keywords: { type: 'integer', description: 'Keywords returned at most', default: 5, minimum: 1, maximum: 50 },
      },
      required: ['query'],
      additionalProperties: false,
    },
    timeoutMs: 60_000,
    costPerUse: 0.001,
    dangerous: false,
    retryable: true,
    async run(args, ctx): Promise<ToolOutput> {
      const query = args.query.trim();
      if (!query) throw new ToolError('query must not be blank', 'bad_arguments');
      const country = (args.country ?? 'us').toLowerCase();
      const max = args.max_keywords ?? 5;
      const answer = await askForJson(model, 'keyword_extract', {
        system: 'You extract search-ad keywords. You answer only with JSON.',
        prompt: [
          `Text: ${query}`,
          `Country of the searches: ${country}.${args.language ? ` Language: ${args.language}.` : ''}`,
          `Answer with one JSON object and nothing else: {"keywords": [at most ${max} search keywords in the text's language, most valuable first], "language": "<ISO 639-1 code of the text>", "country": "<ISO 3166 alpha-2 code the text is about, or the country above>"}`,
        ].join('\n'),
        maxTokens: 400,
        signal: ctx.signal,
      });
      const keywords = answer.json ? keywordsOf(answer.json.keywords, max) : undefined;
      const used = keywords !== undefined;
      const modelLang = used && typeof answer.json!.language === 'string' && CODE.test(answer.json!.language) ? answer.json!.language.toLowerCase() : undefined;
      const modelCountry =
        used && typeof answer.json!.country === 'string' && /^[a-z]{2}$/i.test(answer.json!.country) ? answer.json!.country.toLowerCase() : undefined;
      const detected_language = args.language?.toLowerCase() ?? modelLang ?? languageFromScript(query);
      const detected_country = modelCountry ?? country;
      const cost = answer.result.costUsd ?? 0;
      const model_analysis = analysisOf(
        answer,
        used,
        'keywords is empty; detected_language is the given language or the one the text’s script shows (null when the script does not tell), detected_country the given country.',
      );
      return {
        output: { keywords: keywords ?? [], detected_language, detected_country, api_cost_usd: cost, model_analysis },
        text: used ? `Keywords (${detected_language ?? 'unknown language'}, ${detected_country}): ${(keywords ?? []).join(', ')}` : `${model_analysis.note}`,
        metadata: { model: answer.result.model, provider: answer.result.provider, tokens: answer.result.tokens, model_analysis: used },
        costUsd: cost,
      };
    },
  };
}
