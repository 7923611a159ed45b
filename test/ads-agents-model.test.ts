/**
 * The ads-research tools that analyse with the service's model (ad_creative_analyze,
 * keyword_extract) through ToolRegistry.execute: a local OpenAI-compatible model server answering
 * JSON, the offline provider (no usable answer: said so, nothing invented), a failing model.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { toolModel } from '../src/app/tool-model.js';
import { adsVendorsConfig } from '../src/config/ads-vendors.js';
import { OFFLINE_LABEL, OfflineProvider } from '../src/llm/index.js';
import { adsTools } from '../src/tools/ads-tools.js';
import { ToolRegistry, type ToolExecution } from '../src/tools/index.js';
import { scriptedProvider, startOpenAiServer, type OpenAiTestServer } from './helpers/openai-server.js';

let llm: OpenAiTestServer;
let registry: ToolRegistry;
let offline: ToolRegistry;

const run = (r: ToolRegistry, name: string, args: Record<string, unknown>) => r.execute(name, args);
function ok(e: ToolExecution): Record<string, any> {
  expect(e.error).toBeNull();
  expect(e.success).toBe(true);
  return e.output as Record<string, any>;
}

beforeAll(async () => {
  llm = await startOpenAiServer();
  const settings = adsVendorsConfig({});
  registry = new ToolRegistry(adsTools(settings, toolModel(scriptedProvider(llm), { tier: 'small', maxTokens: 2000, temperature: 0 })));
  offline = new ToolRegistry(adsTools(settings, toolModel(new OfflineProvider(), { tier: 'small', maxTokens: 2000, temperature: 0 })));
});
afterAll(async () => {
  await llm?.close();
});
beforeEach(() => llm.reset());

describe('ad_creative_analyze', () => {
  const ads = [
    { title: 'Save 50% on Running Shoes!', description: 'Free shipping today', cta: 'Shop now' },
    { title: 'Need new boots?', description: 'Top brands', cta: 'Shop now' },
    { headline: 'Trail shoes for every runner', body: 'Waterproof', cta: 'Learn more' },
  ];

  it("returns the model's analysis when it answers JSON (fenced, with prose around it)", async () => {
    const analysis = {
      headline_patterns: ['Discount figures in headlines'],
      persuasion_techniques: ['Scarcity'],
      cta_patterns: ['Shop now dominates'],
      emotional_triggers: ['Fear of missing out'],
      competitive_gaps: ['Nobody mentions sustainability'],
      recommendations: 'Test a sustainability angle',
    };
    llm.enqueue({
      type: 'completion',
      content: `Here you go:\n\`\`\`json\n${JSON.stringify(analysis)}\n\`\`\``,
      usage: { prompt_tokens: 300, completion_tokens: 80, total_tokens: 380 },
    });
    const out = ok(await run(registry, 'ad_creative_analyze', { ads, competitors: [{ domain: 'beta.example', ad_count: 3 }], industry: 'footwear' }));
    expect(Object.keys(out).sort()).toEqual([
      'api_cost_usd',
      'competitive_gaps',
      'cta_patterns',
      'emotional_triggers',
      'headline_patterns',
      'model_analysis',
      'persuasion_techniques',
      'recommendations',
    ]);
    expect(out).toMatchObject({ ...analysis, recommendations: ['Test a sustainability angle'] });
    expect(out.model_analysis).toEqual({ available: true, model: 'm-small', provider: 'openai' });
    expect(typeof out.api_cost_usd).toBe('number');
    const prompt = String(llm.requests[0]!.messages!.at(-1)!.content);
    expect(prompt).toContain('Industry: footwear');
    expect(prompt).toContain('Save 50% on Running Shoes!');
    expect(prompt).toContain('beta.example');
  });

  it('says no model analysis was available when the answer is not JSON, keeping only what the ads show', async () => {
    const out = ok(await run(offline, 'ad_creative_analyze', { ads }));
    expect(out.model_analysis.available).toBe(false);
    expect(out.model_analysis.note).toMatch(/^No model analysis available: the model did not answer a JSON object\./);
    expect(out.model_analysis.answer_excerpt.startsWith(OFFLINE_LABEL)).toBe(true);
    expect(out.headline_patterns).toEqual([
      { pattern: 'contains a number', count: 1, of: 3, examples: ['Save 50% on Running Shoes!'] },
      { pattern: 'asks a question', count: 1, of: 3, examples: ['Need new boots?'] },
      { pattern: 'ends with an exclamation', count: 1, of: 3, examples: ['Save 50% on Running Shoes!'] },
    ]);
    expect(out.cta_patterns).toEqual([
      { cta: 'Shop now', count: 2 },
      { cta: 'Learn more', count: 1 },
    ]);
    for (const f of ['persuasion_techniques', 'emotional_triggers', 'competitive_gaps', 'recommendations']) expect(out[f]).toEqual([]);
    expect(out.api_cost_usd).toBe(0);
  });

  it('a model that fails fails the call', async () => {
    llm.enqueue({ type: 'error', status: 400, message: 'context length exceeded' });
    const e = await run(registry, 'ad_creative_analyze', { ads });
    expect(e.success).toBe(false);
    expect(e.error).toMatch(/^ad_creative_analyze: the model call failed: /);
  });
});

describe('keyword_extract', () => {
  it("returns the model's keywords (cut to max_keywords), language and country", async () => {
    llm.enqueue({
      type: 'completion',
      content: JSON.stringify({ keywords: ['cheap flights tokyo', 'tokyo hotels', 'Tokyo Hotels', 'jr pass'], language: 'EN', country: 'jp' }),
    });
    const out = ok(await run(registry, 'keyword_extract', { query: 'I want cheap flights and a hotel in Tokyo', max_keywords: 2 }));
    expect(Object.keys(out).sort()).toEqual(['api_cost_usd', 'detected_country', 'detected_language', 'keywords', 'model_analysis']);
    expect(out.keywords).toEqual(['cheap flights tokyo', 'tokyo hotels']);
    expect(out.detected_language).toBe('en');
    expect(out.detected_country).toBe('jp');
    expect(out.model_analysis.available).toBe(true);
    expect(String(llm.requests[0]!.messages!.at(-1)!.content)).toContain('at most 2 search keywords');
  });

  it("without a usable answer: no keywords, the language from the text's script, the given country", async () => {
    const ja = ok(await run(offline, 'keyword_extract', { query: '東京で安いホテルを探しています' }));
    expect(ja).toMatchObject({ keywords: [], detected_language: 'ja', detected_country: 'us', api_cost_usd: 0 });
    expect(ja.model_analysis.available).toBe(false);
    expect(ja.model_analysis.answer_excerpt.startsWith(OFFLINE_LABEL)).toBe(true);
    const ko = ok(await run(offline, 'keyword_extract', { query: '서울 호텔 예약', country: 'KR' }));
    expect(ko).toMatchObject({ detected_language: 'ko', detected_country: 'kr' });
    const latin = ok(await run(offline, 'keyword_extract', { query: 'cheap hotels in Lisbon' }));
    expect(latin.detected_language).toBeNull();
    const given = ok(await run(offline, 'keyword_extract', { query: 'cheap hotels in Lisbon', language: 'en' }));
    expect(given.detected_language).toBe('en');
  });
});
