/**
 * The response cache on a real nats-server (JetStream KV, the LLM_CACHE bucket of the bus):
 * exact hits, similar hits (local text similarity, and embeddings from a provider's
 * /embeddings endpoint named by the catalogue), misses below the threshold, the exclusions,
 * the switch, sharing between two instances (two workers), and CachedProvider.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectBus, kvKeys, type Bus } from '../src/bus/index.js';
import {
  CachedProvider,
  cacheKeysOf,
  createRouter,
  LlmCache,
  parseCatalogue,
  sameFacts,
  textSimilarity,
  type ChatMessage,
  type LlmProvider,
  type LlmRequest,
  type LlmResult,
} from '../src/llm/index.js';
import { startTestNats, type TestNats } from './harness/nats.js';
import { testBusOptions } from './harness/bus.js';

const log = pino({ level: 'silent' });
let nats: TestNats;
let busA: Bus;
let busB: Bus;

const busOpts = (url: string, name: string) =>
  testBusOptions(url, name, { ackWaitMs: 15_000, eventsMaxAgeSeconds: 3600, eventsMaxPerWorkflow: 100, idempotencyTtlSeconds: 3600 });

beforeAll(async () => {
  nats = await startTestNats();
  busA = await connectBus(busOpts(nats.url, 'worker-a'), log);
  busB = await connectBus(busOpts(nats.url, 'worker-b'), log);
});
afterAll(async () => {
  await busA?.close();
  await busB?.close();
  await nats?.stop();
});

let seq = 0;
/** A system prompt unique to each test, so tests never see each other's entries. */
const uniqueSystem = () => `You are a helpful assistant (test ${++seq} ${Date.now()}).`;

const req = (system: string, user: string, over: Partial<LlmRequest> = {}): LlmRequest => ({
  messages: [
    { role: 'system', content: system },
    { role: 'user', content: user },
  ],
  tier: 'small',
  maxTokens: 200,
  temperature: 0.7,
  ...over,
});

const answer = (text: string, over: Partial<LlmResult> = {}): LlmResult => ({
  text,
  model: 'gpt-test',
  provider: 'openai',
  finishReason: 'stop',
  usage: { inputTokens: 100, outputTokens: 20, totalTokens: 120, costUsd: 0.0042 },
  ...over,
});

/** An LlmProvider that answers from a script and counts its calls. */
class CountingProvider implements LlmProvider {
  readonly name = 'counting';
  calls = 0;
  constructor(private readonly reply: (r: LlmRequest) => string) {}
  async complete(r: LlmRequest, onDelta?: (d: string) => void): Promise<LlmResult> {
    this.calls++;
    const text = this.reply(r);
    for (const w of text.split(/(?<= )/)) onDelta?.(w);
    return answer(text);
  }
}

const ROMAN = 'Please summarise the history of the Roman Empire in three short paragraphs for a student.';
const ROMAN_Z = 'Please summarize the history of the Roman Empire in three short paragraphs for a student.';
const QUANTUM = 'Explain quantum computing to a ten year old child using a simple analogy.';

describe('LlmCache: exact and similar hits, shared by workers', () => {
  it('an answer stored by one worker is an exact hit for another, with zero usage and score 1', async () => {
    const a = new LlmCache(busA.kv.llmCache, { log });
    const b = new LlmCache(busB.kv.llmCache, { log });
    const sys = uniqueSystem();
    expect(await b.get(req(sys, 'What is the capital of France?'))).toBeUndefined();
    await a.put(req(sys, 'What is the capital of France?'), answer('Paris.'));
    // Whitespace differences do not matter.
    const hit = await b.get(req(`  ${sys.replace(/ /g, '   ')}\n`, 'What is   the capital\nof France?  '));
    expect(hit).toBeDefined();
    expect(hit!.score).toBe(1);
    expect(hit!.result).toMatchObject({
      text: 'Paris.',
      model: 'gpt-test',
      provider: 'openai',
      cacheHit: true,
      cacheScore: 1,
      usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0, costUsd: 0 },
    });
  });

  it('a similar request at or above the threshold is a hit (local text similarity); a less similar one is a miss', async () => {
    const sim = textSimilarity(ROMAN, ROMAN_Z);
    expect(sim).toBeGreaterThanOrEqual(0.95);
    expect(sim).toBeLessThan(1);
    expect(textSimilarity(ROMAN, QUANTUM)).toBeLessThan(0.5);
    const a = new LlmCache(busA.kv.llmCache, { log });
    const b = new LlmCache(busB.kv.llmCache, { log });
    const sys = uniqueSystem();
    await a.put(req(sys, ROMAN), answer('Rome rose, ruled and fell.'));
    const hit = await b.get(req(sys, ROMAN_Z));
    expect(hit?.result.text).toBe('Rome rose, ruled and fell.');
    expect(hit?.score).toBeCloseTo(sim, 10);
    expect(hit?.result.cacheScore).toBeCloseTo(sim, 10);
    expect(await b.get(req(sys, QUANTUM))).toBeUndefined();
    // The same pair misses when the threshold is above their similarity.
    const strict = new LlmCache(busB.kv.llmCache, { log, similarityThreshold: Math.min(1, sim + 0.01) });
    expect(await strict.get(req(sys, ROMAN_Z))).toBeUndefined();
  });

  it('a near-miss with other numbers or a negation is never a local-similarity hit, however similar the text', async () => {
    const RATE = 'What is the monthly payment on a 300000 mortgage over 30 years at 6.5% interest?';
    const RATE2 = 'What is the monthly payment on a 300000 mortgage over 30 years at 7.5% interest?';
    const SIGNED = 'Summarise why the treaty was signed by both parties in the end.';
    const NOT_SIGNED = 'Summarise why the treaty was not signed by both parties in the end.';
    expect(textSimilarity(RATE, RATE2)).toBeGreaterThan(0.95);
    expect(textSimilarity(SIGNED, NOT_SIGNED)).toBeGreaterThan(0.95);
    expect(sameFacts(RATE, RATE2)).toBe(false);
    expect(sameFacts(SIGNED, NOT_SIGNED)).toBe(false);
    expect(sameFacts(ROMAN, ROMAN_Z)).toBe(true);
    const c = new LlmCache(busA.kv.llmCache, { log });
    const sys = uniqueSystem();
    await c.put(req(sys, RATE), answer('About 1896 per month.'));
    await c.put(req(sys, SIGNED), answer('Both wanted peace.'));
    expect(await c.get(req(sys, RATE2))).toBeUndefined();
    expect(await c.get(req(sys, NOT_SIGNED))).toBeUndefined();
    expect((await c.get(req(sys, RATE)))?.result.text).toBe('About 1896 per month.');
  });

  it('compares only the last user message: a different system prompt, history or setting is another group', async () => {
    const c = new LlmCache(busA.kv.llmCache, { log });
    const sys = uniqueSystem();
    await c.put(req(sys, ROMAN), answer('cached'));
    expect(await c.get(req(sys, ROMAN))).toBeDefined();
    expect(await c.get(req(`${sys} Answer in French.`, ROMAN))).toBeUndefined();
    expect(await c.get(req(sys, ROMAN, { maxTokens: 201 }))).toBeUndefined();
    expect(await c.get(req(sys, ROMAN, { temperature: 0.2 }))).toBeUndefined();
    expect(await c.get(req(sys, ROMAN, { tier: 'large' }))).toBeUndefined();
    expect(await c.get(req(sys, ROMAN, { model: 'other-model' }))).toBeUndefined();
    const history: ChatMessage[] = [
      { role: 'system', content: sys },
      { role: 'user', content: 'earlier question' },
      { role: 'assistant', content: 'earlier answer' },
      { role: 'user', content: ROMAN },
    ];
    expect(await c.get({ ...req(sys, ROMAN), messages: history })).toBeUndefined();
    expect(cacheKeysOf(req(sys, ROMAN)).settingsHash).toBe(cacheKeysOf(req(sys, QUANTUM)).settingsHash);
    expect(cacheKeysOf(req(sys, ROMAN)).requestHash).not.toBe(cacheKeysOf(req(sys, QUANTUM)).requestHash);
  });

  it('is off with ENABLE_CACHE=false: nothing is read or written', async () => {
    const on = new LlmCache(busA.kv.llmCache, { log });
    const off = new LlmCache(busB.kv.llmCache, { log, enabled: false });
    const sys = uniqueSystem();
    await on.put(req(sys, ROMAN), answer('cached'));
    expect(await on.get(req(sys, ROMAN))).toBeDefined();
    expect(await off.get(req(sys, ROMAN))).toBeUndefined();
    const sys2 = uniqueSystem();
    await off.put(req(sys2, ROMAN), answer('not stored'));
    expect(await on.get(req(sys2, ROMAN))).toBeUndefined();
  });

  it('excludes requests with tools or a high temperature, and answers that are unfinished or offline', async () => {
    const c = new LlmCache(busA.kv.llmCache, { log });
    const sys = uniqueSystem();
    const withTools = req(sys, ROMAN, { tools: [{ name: 'web_search' }] });
    await c.put(withTools, answer('x'));
    expect(await c.get(withTools)).toBeUndefined();
    const hot = req(sys, ROMAN, { temperature: 1.5 });
    await c.put(hot, answer('x'));
    expect(await c.get(hot)).toBeUndefined();
    await c.put(req(sys, 'cut off'), answer('x', { finishReason: 'length' }));
    expect(await c.get(req(sys, 'cut off'))).toBeUndefined();
    await c.put(req(sys, 'offline one'), answer('x', { provider: 'offline' }));
    expect(await c.get(req(sys, 'offline one'))).toBeUndefined();
  });

  it('keeps every entry of concurrent writers in the group index (compare-and-set)', async () => {
    const a = new LlmCache(busA.kv.llmCache, { log });
    const b = new LlmCache(busB.kv.llmCache, { log });
    const sys = uniqueSystem();
    const questions = Array.from({ length: 8 }, (_, i) => `question number ${i} about topic ${'xyz'.repeat(i)}`);
    await Promise.all(questions.map((q, i) => (i % 2 ? a : b).put(req(sys, q), answer(`answer ${i}`))));
    const idx = await busA.kv.llmCache.get(kvKeys.llmCacheIndex(cacheKeysOf(req(sys, 'x')).settingsHash));
    const items = idx!.json<{ items: { h: string }[] }>().items;
    expect(new Set(items.map((i) => i.h))).toEqual(new Set(questions.map((q) => cacheKeysOf(req(sys, q)).requestHash)));
    // The index is bounded.
    const small = new LlmCache(busA.kv.llmCache, { log, indexSize: 3 });
    await small.put(req(sys, 'one more question'), answer('x'));
    const after = await busA.kv.llmCache.get(kvKeys.llmCacheIndex(cacheKeysOf(req(sys, 'x')).settingsHash));
    expect(after!.json<{ items: unknown[] }>().items).toHaveLength(3);
  });

  it('treats a cache it cannot reach as a miss, never as a failed call', async () => {
    const nc = await connectBus(busOpts(nats.url, 'worker-c'), log);
    const c = new LlmCache(nc.kv.llmCache, { log, timeoutMs: 1000 });
    await nc.close();
    expect(await c.get(req(uniqueSystem(), ROMAN))).toBeUndefined();
    await expect(c.put(req(uniqueSystem(), ROMAN), answer('x'))).resolves.toBeUndefined();
  });
});

describe('CachedProvider', () => {
  it('answers a repeated request from the cache (one delta, no model call) and a new one from the model', async () => {
    const inner = new CountingProvider((r) => `answer to ${r.messages.at(-1)!.content}`);
    const workerA = new CachedProvider(inner, new LlmCache(busA.kv.llmCache, { log }));
    const workerB = new CachedProvider(inner, new LlmCache(busB.kv.llmCache, { log }));
    const sys = uniqueSystem();
    const d1: string[] = [];
    const first = await workerA.complete(req(sys, 'tell me a fact about owls'), (d) => d1.push(d));
    expect(first.cacheHit).toBeUndefined();
    expect(first.usage.costUsd).toBeGreaterThan(0);
    expect(d1.length).toBeGreaterThan(1);
    // The answer is stored in the background (the caller does not wait for the cache).
    const probe = new LlmCache(busB.kv.llmCache, { log });
    for (let i = 0; i < 100 && !(await probe.get(req(sys, 'tell me a fact about owls'))); i++) await new Promise((r) => setTimeout(r, 20));
    const d2: string[] = [];
    const second = await workerB.complete(req(sys, 'tell me a fact about owls'), (d) => d2.push(d));
    expect(inner.calls).toBe(1);
    expect(second).toMatchObject({ text: first.text, cacheHit: true, cacheScore: 1, usage: { costUsd: 0, totalTokens: 0 } });
    expect(d2).toEqual([first.text]);
    await workerB.complete(req(sys, 'explain how volcanoes erupt'));
    expect(inner.calls).toBe(2);
  });
});

describe('similarity by the provider embeddings endpoint (catalogue embedding_model)', () => {
  let emb: Server;
  let embUrl: string;
  const embRequests: { model: string; input: string[]; auth?: string }[] = [];
  // Lexically unlike but "semantically" alike (by the scripted vectors), and unlike both.
  const CAT = 'How much should an adult house cat eat each day?';
  const FELINE = 'Daily food amount for a grown domestic feline?';
  const TAXES = 'How much should an adult house cat pay in taxes each day?';
  const vectors: Record<string, number[]> = {
    [CAT]: [1, 0.1, 0, 0],
    [FELINE]: [0.98, 0.12, 0.02, 0],
    [TAXES]: [0.2, 0, 1, 0.3],
  };

  beforeAll(async () => {
    emb = createServer((rq, rs) => {
      let body = '';
      rq.on('data', (c: Buffer) => (body += c.toString()));
      rq.on('end', () => {
        const b = JSON.parse(body) as { model: string; input: string | string[]; encoding_format?: string };
        const input = Array.isArray(b.input) ? b.input : [b.input];
        embRequests.push({ model: b.model, input, auth: rq.headers.authorization });
        const data = input.map((t, index) => ({ object: 'embedding', index, embedding: vectors[t] ?? [0, 0, 0, 1] }));
        const out = JSON.stringify({ object: 'list', data, model: b.model, usage: { prompt_tokens: 1, total_tokens: 1 } });
        rs.writeHead(200, { 'content-type': 'application/json' });
        rs.end(out);
      });
    });
    await new Promise<void>((r) => emb.listen(0, '127.0.0.1', () => r()));
    embUrl = `http://127.0.0.1:${(emb.address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => {
    await new Promise<void>((r) => (emb ? emb.close(() => r()) : r()));
  });

  it('a request whose embedding is close enough is a hit though its text is not; a distant one is a miss', async () => {
    expect(textSimilarity(CAT, FELINE)).toBeLessThan(0.6);
    expect(textSimilarity(CAT, TAXES)).toBeGreaterThan(0.8);
    const yaml = [
      'providers:',
      '  vendor:',
      `    base_url: ${embUrl}`,
      '    api_key_env: VENDOR_API_KEY',
      '    embedding_model: embed-small',
      '    models:',
      '      - { id: chat-small, tier: small, context_window: 8192, cost_per_1k_prompt_tokens: 0.001, cost_per_1k_completion_tokens: 0.002, supports_tools: true }',
      'tiers:',
      '  small: [vendor/chat-small]',
      '  medium: [vendor/chat-small]',
      '  large: [vendor/chat-small]',
    ].join('\n');
    const router = createRouter(parseCatalogue(yaml), { providerKeys: { VENDOR_API_KEY: 'sk-vendor' } });
    const embedderFor = (r: LlmRequest) => router.embedderFor(r);
    expect(embedderFor(req('s', 'q'))?.id).toBe('vendor/embed-small');
    // No embedding model for the offline provider: local similarity.
    expect(createRouter(parseCatalogue(yaml), {}).embedderFor(req('s', 'q'))).toBeUndefined();

    const a = new LlmCache(busA.kv.llmCache, { log, embedderFor, similarityThreshold: 0.8 });
    const b = new LlmCache(busB.kv.llmCache, { log, embedderFor, similarityThreshold: 0.8 });
    const sys = uniqueSystem();
    await a.put(req(sys, CAT), answer('About 200 kcal.'));
    expect(embRequests.at(-1)).toMatchObject({ model: 'embed-small', input: [CAT], auth: 'Bearer sk-vendor' });
    const hit = await b.get(req(sys, FELINE));
    expect(hit?.result.text).toBe('About 200 kcal.');
    expect(hit!.score).toBeGreaterThan(0.95);
    expect(hit!.score).toBeLessThan(1);
    // Textually close, semantically far: the embedding decides, so this is a miss ...
    expect(await b.get(req(sys, TAXES))).toBeUndefined();
    // ... where local text similarity, at the same threshold, would have answered it.
    const local = new LlmCache(busB.kv.llmCache, { log, similarityThreshold: 0.8 });
    expect((await local.get(req(sys, TAXES)))?.result.text).toBe('About 200 kcal.');
    expect(await local.get(req(sys, FELINE))).toBeUndefined();
  });
});
