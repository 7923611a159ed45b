/**
 * The model catalogue (v2 and v1 formats), model choice (resolveModelChoice), and LlmRouter's
 * resilience: retries with backoff honouring Retry-After, fallback to the next model, no retry
 * once a delta reached the caller, abort during backoff, per-tier counters. The real openai
 * SDK talks to a local OpenAI-compatible server scripted per test.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AppError, Code } from '../src/kernel/index.js';
import {
  buildRouting,
  createRouter,
  LlmError,
  OFFLINE_LABEL,
  OFFLINE_MODEL,
  parseCatalogue,
  pricesOf,
  resolveModelChoice,
  retryAfterOf,
  type LlmRequest,
  type LlmSettings,
  type RouterOptions,
} from '../src/llm/index.js';
import { ConfigError } from '../src/config/index.js';
import { startOpenAiServer, type OpenAiTestServer } from './helpers/openai-server.js';

let server: OpenAiTestServer;
beforeAll(async () => {
  server = await startOpenAiServer();
});
afterAll(async () => {
  await server?.close();
});
beforeEach(() => server.reset());

const model = (id: string, tier: string, extra = '') =>
  `      - { id: ${id}, tier: ${tier}, context_window: 8192, cost_per_1k_prompt_tokens: 0.001, cost_per_1k_completion_tokens: 0.002, supports_tools: true, supports_streaming: true${extra} }`;

/** Two keyed providers (alpha, beta) and a keyless one (local), all served by the test server. */
function catalogueYaml(tiers?: string): string {
  return [
    'providers:',
    '  alpha:',
    `    base_url: ${server.baseUrl}`,
    '    api_key_env: ALPHA_API_KEY',
    '    models:',
    model('a-small', 'small'),
    model('a-small-2', 'small'),
    model('a-large', 'large'),
    model('shared-model', 'medium'),
    '  beta:',
    `    base_url: ${server.baseUrl}`,
    '    api_key_env: BETA_API_KEY',
    '    models:',
    model('b-small', 'small'),
    model('shared-model', 'medium'),
    model('b-notools', 'large', '').replace('supports_tools: true', 'supports_tools: false'),
    '  local:',
    `    base_url: ${server.baseUrl}`,
    '    models:',
    model('l-medium', 'medium'),
    '  offline:',
    '    models:',
    model('offline-deterministic', 'small'),
    'tiers:',
    tiers ?? ['  small: [alpha/a-small, alpha/a-small-2, beta/b-small]', '  medium: [shared-model, local/l-medium]', '  large: [alpha/a-large]'].join('\n'),
  ].join('\n');
}

const bothKeys: LlmSettings = { providerKeys: { ALPHA_API_KEY: 'sk-alpha', BETA_API_KEY: 'sk-beta' }, requestTimeoutMs: 5000 };
const fastRetry: RouterOptions['retry'] = { baseMs: 1, capMs: 5, maxAttempts: 3 };

function router(settings: LlmSettings = bothKeys, opts: RouterOptions = {}, yaml = catalogueYaml()) {
  return createRouter(parseCatalogue(yaml, 'test.yaml'), settings, { retry: fastRetry, ...opts });
}

const request = (over: Partial<LlmRequest> = {}): LlmRequest => ({
  messages: [{ role: 'user', content: 'hello there' }],
  tier: 'small',
  maxTokens: 50,
  temperature: 0.2,
  ...over,
});

function badRequestOf(fn: () => unknown): AppError {
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(AppError);
  expect((err as AppError).code).toBe(Code.InvalidArgument);
  return err as AppError;
}

async function rejection(p: Promise<unknown>): Promise<Error> {
  return p.then(
    (r) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(r)}`);
    },
    (e: Error) => e,
  );
}

describe('catalogue v2', () => {
  it('parses providers (endpoint, key variable, embedding model, models) and ordered tier lists', () => {
    const c = parseCatalogue(catalogueYaml().replace('    api_key_env: BETA_API_KEY', '    api_key_env: BETA_API_KEY\n    embedding_model: emb-1'));
    expect(Object.keys(c.providerSpecs)).toEqual(['alpha', 'beta', 'local', 'offline']);
    expect(c.providerSpecs.alpha).toMatchObject({ baseUrl: server.baseUrl, apiKeyEnv: 'ALPHA_API_KEY' });
    expect(c.providerSpecs.beta.embeddingModel).toBe('emb-1');
    expect(c.providerSpecs.local.apiKeyEnv).toBeUndefined();
    expect(c.tierPreferences.small).toEqual([
      { provider: 'alpha', model: 'a-small' },
      { provider: 'alpha', model: 'a-small-2' },
      { provider: 'beta', model: 'b-small' },
    ]);
    expect(c.tierPreferences.medium).toEqual([{ model: 'shared-model' }, { provider: 'local', model: 'l-medium' }]);
    // The v1 views existing callers use.
    expect(c.tiers).toEqual({ small: 'a-small', medium: 'shared-model', large: 'a-large' });
    expect(c.providers.beta.map((m) => m.id)).toEqual(['b-small', 'shared-model', 'b-notools']);
    expect(c.providers.beta[2].supports_tools).toBe(false);
  });

  it('reads the shipped config/models.yaml: openai, a keyless ollama and the offline provider', () => {
    const c = parseCatalogue(readFileSync('config/models.yaml', 'utf8'));
    expect(c.providerSpecs.openai).toMatchObject({ baseUrl: 'https://api.openai.com/v1', apiKeyEnv: 'OPENAI_API_KEY' });
    expect(c.providerSpecs.ollama).toMatchObject({ baseUrl: 'http://localhost:11434/v1' });
    expect(c.providerSpecs.ollama.apiKeyEnv).toBeUndefined();
    expect(c.providerSpecs.offline.models.map((m) => m.id)).toEqual([OFFLINE_MODEL]);
    for (const t of ['small', 'medium', 'large'] as const) expect(c.tierPreferences[t].length).toBeGreaterThanOrEqual(2);
    expect(pricesOf(c)['gpt-4o-mini']).toEqual({ prompt: 0.00015, completion: 0.0006 });
  });

  it('still reads the v1 format (tier -> model id, provider -> list of models)', () => {
    const v1 = ['tiers:', '  small: m1', '  medium: m1', '  large: m1', 'providers:', '  openai:', model('m1', 'small').replace('      -', '    -')].join('\n');
    const c = parseCatalogue(v1);
    expect(c.tiers.small).toBe('m1');
    expect(c.tierPreferences.large).toEqual([{ model: 'm1' }]);
    expect(c.providerSpecs.openai).toMatchObject({ baseUrl: 'https://api.openai.com/v1', apiKeyEnv: 'OPENAI_API_KEY' });
  });

  it.each<[string, () => string, RegExp]>([
    ['a tier naming a model no provider lists', () => catalogueYaml().replace('[alpha/a-large]', '[alpha/nope]'), /tiers\.large\[0\].*no model nope/],
    ['a key variable not ending in _API_KEY', () => catalogueYaml().replace('ALPHA_API_KEY', 'DATABASE_URL'), /api_key_env/],
    [
      'a provider without base_url',
      () => catalogueYaml().replace(`    base_url: ${server.baseUrl}\n    api_key_env: BETA`, '    api_key_env: BETA'),
      /providers\.beta\.base_url/,
    ],
    ['an unknown tier', () => `${catalogueYaml()}\n  huge: [alpha/a-large]`, /tiers\.huge/],
  ])('refuses %s with a ConfigError naming the field', (_name, yaml, re) => {
    let err: unknown;
    try {
      parseCatalogue(yaml(), 'bad.yaml');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(re);
    expect((err as Error).message).toContain('bad.yaml');
  });
});

describe('model choice (resolveModelChoice)', () => {
  it('follows the tier list, skipping providers whose key is not configured', () => {
    const r = router({ providerKeys: { BETA_API_KEY: 'sk-beta' } });
    const c = r.resolveModelChoice({ tier: 'small' });
    expect(c).toMatchObject({ tier: 'small', provider: 'beta', model: 'b-small' });
    expect(c.candidates).toEqual([{ provider: 'beta', model: 'b-small' }]);
    // A bare model id in a tier list: every configured provider listing it, in catalogue order.
    expect(router().resolveModelChoice({ tier: 'medium' }).candidates).toEqual([
      { provider: 'alpha', model: 'shared-model' },
      { provider: 'beta', model: 'shared-model' },
      { provider: 'local', model: 'l-medium' },
    ]);
  });

  it('uses DEFAULT_MODEL_TIER when no tier is given', () => {
    expect(router({ ...bothKeys, defaultTier: 'large' }).resolveModelChoice({})).toMatchObject({ tier: 'large', provider: 'alpha', model: 'a-large' });
  });

  it('lets provider and model overrides win over the tier', () => {
    const r = router();
    expect(r.resolveModelChoice({ tier: 'small', model: 'a-large' }).candidates).toEqual([{ provider: 'alpha', model: 'a-large' }]);
    expect(r.resolveModelChoice({ tier: 'small', provider: 'beta' })).toMatchObject({ provider: 'beta', model: 'b-small' });
    expect(r.resolveModelChoice({ tier: 'medium', provider: 'beta', model: 'shared-model' }).candidates).toEqual([{ provider: 'beta', model: 'shared-model' }]);
    // A model served by two providers falls back from one to the other.
    expect(r.resolveModelChoice({ model: 'shared-model' }).candidates.map((c) => c.provider)).toEqual(['alpha', 'beta']);
  });

  it('refuses an unknown model or provider, and a provider without its key, with 400s naming them', () => {
    const r = router({ providerKeys: { BETA_API_KEY: 'sk-beta' } });
    expect(badRequestOf(() => r.resolveModelChoice({ model: 'gpt-17' })).message).toBe('unknown model: gpt-17');
    expect(badRequestOf(() => r.resolveModelChoice({ provider: 'acme' })).message).toBe('unknown provider: acme');
    expect(badRequestOf(() => r.resolveModelChoice({ provider: 'constructor' })).message).toBe('unknown provider: constructor');
    expect(badRequestOf(() => r.resolveModelChoice({ provider: 'alpha' })).message).toBe('provider alpha has no API key configured (set ALPHA_API_KEY)');
    expect(badRequestOf(() => r.resolveModelChoice({ model: 'a-large' })).message).toBe('provider alpha has no API key configured (set ALPHA_API_KEY)');
    expect(badRequestOf(() => r.resolveModelChoice({ provider: 'beta', model: 'a-small' })).message).toMatch(/^unknown model: a-small/);
    expect(badRequestOf(() => r.resolveModelChoice({ tier: 'huge' })).message).toMatch(/tier/);
    // The same function, on a routing built without a router (e.g. at submission in a gateway).
    const routing = buildRouting(parseCatalogue(catalogueYaml()), {});
    expect(badRequestOf(() => resolveModelChoice(routing, { model: 'nope' })).message).toBe('unknown model: nope');
  });

  it('leaves a tier with no configured provider to the offline provider, and LLM_PROVIDER=offline sends everything there', async () => {
    const r = router({});
    expect(r.resolveModelChoice({ tier: 'small' }).candidates).toEqual([{ provider: 'offline', model: OFFLINE_MODEL }]);
    const res = await r.complete(request());
    expect(res.provider).toBe('offline');
    expect(res.text).toContain(OFFLINE_LABEL);
    expect(server.requests).toHaveLength(0);
    // Keyless providers are configured: the medium tier's local model is used.
    expect(r.resolveModelChoice({ tier: 'medium' }).candidates).toEqual([{ provider: 'local', model: 'l-medium' }]);
    const forced = router({ ...bothKeys, offlineOnly: true });
    expect(forced.resolveModelChoice({ tier: 'large' }).candidates).toEqual([{ provider: 'offline', model: OFFLINE_MODEL }]);
    expect(badRequestOf(() => forced.resolveModelChoice({ model: 'nope' })).message).toBe('unknown model: nope');
  });

  it('LLM_BASE_URL / LLM_API_KEY define the openai provider, and LLM_MODEL pins every tier to one model', async () => {
    const r = router({ baseUrl: server.baseUrl, apiKey: 'sk-short', defaultModel: 'llama3-local' });
    for (const tier of ['small', 'medium', 'large'] as const) {
      expect(r.resolveModelChoice({ tier }).candidates).toEqual([{ provider: 'openai', model: 'llama3-local' }]);
    }
    const res = await r.complete(request({ tier: 'large' }));
    expect(res.provider).toBe('openai');
    expect(server.requests[0]).toMatchObject({ model: 'llama3-local', authorization: 'Bearer sk-short' });
    // LLM_MODEL alone, naming a model of the catalogue: pinned to the providers listing it.
    expect(
      router({ ...bothKeys, defaultModel: 'shared-model' })
        .resolveModelChoice({ tier: 'small' })
        .candidates.map((c) => c.provider),
    ).toEqual(['alpha', 'beta']);
  });
});

describe('LlmRouter: calls, retries and fallback', () => {
  it('sends each provider its own key and reports the provider that answered', async () => {
    const r = router();
    const a = await r.complete(request({ tier: 'small' }));
    const b = await r.complete(request({ provider: 'beta' }));
    expect([a.provider, b.provider]).toEqual(['alpha', 'beta']);
    expect(server.requests.map((q) => [q.model, q.authorization])).toEqual([
      ['a-small', 'Bearer sk-alpha'],
      ['b-small', 'Bearer sk-beta'],
    ]);
    expect(a.usage.costUsd).toBeGreaterThan(0); // the catalogue's prices
  });

  it('retries a 429 after the Retry-After it names (seconds), then succeeds', async () => {
    server.enqueue({ type: 'error', status: 429, headers: { 'retry-after': '1' } }, { type: 'completion', content: 'after the wait' });
    const start = Date.now();
    const res = await router().complete(request());
    expect(Date.now() - start).toBeGreaterThanOrEqual(950); // backoff alone would be <= 5 ms
    expect(res.text).toBe('after the wait');
    expect(server.requests.map((q) => q.model)).toEqual(['a-small', 'a-small']);
  });

  it('reads Retry-After in seconds, as an HTTP date, and retry-after-ms, into LlmError.retryAfterMs', async () => {
    const now = Date.parse('2030-01-01T00:00:00Z');
    expect(retryAfterOf(new Headers({ 'retry-after': '3' }), now)).toBe(3000);
    expect(retryAfterOf(new Headers({ 'retry-after': 'Tue, 01 Jan 2030 00:00:07 GMT' }), now)).toBe(7000);
    expect(retryAfterOf(new Headers({ 'retry-after-ms': '120', 'retry-after': '9' }), now)).toBe(120);
    expect(retryAfterOf(new Headers({ 'retry-after': 'soon' }), now)).toBeUndefined();
    server.enqueue({ type: 'error', status: 429, headers: { 'retry-after': '2' } });
    const err = await rejection(router(bothKeys, { retry: { ...fastRetry, maxAttempts: 1 } }).complete(request({ provider: 'alpha', model: 'a-small' })));
    expect(err).toBeInstanceOf(LlmError);
    expect((err as LlmError).retryAfterMs).toBe(2000);
    expect((err as LlmError).status).toBe(429);
    expect((err as LlmError).retryAfter).toBe(2);
  });

  it('does not wait for a Retry-After beyond maxRetryAfterMs: the next model is tried at once', async () => {
    server.enqueue({ type: 'error', status: 429, headers: { 'retry-after': '120' } }, { type: 'completion', content: 'from the fallback' });
    const start = Date.now();
    const res = await router().complete(request());
    expect(Date.now() - start).toBeLessThan(1000);
    expect(res.text).toBe('from the fallback');
    expect(server.requests.map((q) => q.model)).toEqual(['a-small', 'a-small-2']);
  });

  it('after repeated 500s falls back to the next model of the tier, then to the next provider', async () => {
    const fail = { type: 'error', status: 500 } as const;
    server.enqueue(fail, fail, fail, fail, fail, fail, { type: 'completion', content: 'beta answers' });
    const res = await router().complete(request());
    expect(res.text).toBe('beta answers');
    expect(res.model).toBe('b-small');
    expect(res.provider).toBe('beta');
    expect(server.requests.map((q) => q.model)).toEqual(['a-small', 'a-small', 'a-small', 'a-small-2', 'a-small-2', 'a-small-2', 'b-small']);
  });

  it('fails over to the next provider serving the same model', async () => {
    server.enqueue({ type: 'error', status: 503 }, { type: 'error', status: 503 }, { type: 'error', status: 503 });
    const res = await router().complete(request({ model: 'shared-model' }));
    expect(res.provider).toBe('beta');
    expect(server.requests.map((q) => q.authorization)).toEqual(['Bearer sk-alpha', 'Bearer sk-alpha', 'Bearer sk-alpha', 'Bearer sk-beta']);
  });

  it('surfaces the last error when every candidate keeps failing', async () => {
    server.setDefault({ type: 'error', status: 502, message: 'bad gateway upstream' });
    const err = await rejection(router().complete(request()));
    expect(err).toBeInstanceOf(LlmError);
    expect((err as LlmError).status).toBe(502);
    expect((err as LlmError).retryable).toBe(true);
    expect(server.requests).toHaveLength(9); // 3 models x 3 attempts
  });

  it('retries a connection reset that happened before any delta', async () => {
    server.enqueue({ type: 'reset' }, { type: 'completion', content: ['fine ', 'now'] });
    const deltas: string[] = [];
    const res = await router().complete(request(), (d) => deltas.push(d));
    expect(res.text).toBe('fine now');
    expect(deltas).toEqual(['fine ', 'now']);
    expect(server.requests).toHaveLength(2);
  });

  it('never retries nor falls back once a delta reached the caller: the error surfaces', async () => {
    server.enqueue({ type: 'reset', content: ['Hel', 'lo'] });
    const deltas: string[] = [];
    const err = await rejection(router().complete(request(), (d) => deltas.push(d)));
    expect(err).toBeInstanceOf(LlmError);
    expect(deltas).toEqual(['Hel', 'lo']);
    expect(server.requests).toHaveLength(1);
  });

  it('does not retry a 400 (the request itself is wrong), but hands a 401 to the next model', async () => {
    server.enqueue({ type: 'error', status: 400, message: 'context too long' });
    const err = await rejection(router().complete(request()));
    expect((err as LlmError).status).toBe(400);
    expect(server.requests).toHaveLength(1);
    server.reset();
    server.enqueue({ type: 'error', status: 401 }, { type: 'completion', content: 'ok' });
    expect((await router().complete(request())).model).toBe('a-small-2');
    expect(server.requests).toHaveLength(2);
  });

  it('gives up at once when aborted during a backoff', async () => {
    server.setDefault({ type: 'error', status: 503 });
    const ac = new AbortController();
    let backingOff!: (delayMs: number) => void;
    const inBackoff = new Promise<number>((r) => (backingOff = r));
    const slow = router(bothKeys, {
      retry: { baseMs: 10_000, capMs: 10_000, maxAttempts: 3 },
      random: () => 0.99,
      onBackoff: (b) => backingOff(b.delayMs),
    });
    const p = rejection(slow.complete(request({ signal: ac.signal })));
    // The router is in its backoff wait once it says so: no guess of how long that takes.
    expect(await inBackoff).toBe(9900);
    const t = Date.now();
    ac.abort();
    const err = await p;
    // Well under the 9.9 s wait: the abort ended it, however loaded the machine is.
    expect(Date.now() - t).toBeLessThan(5000);
    expect(err.message).toMatch(/aborted/);
    expect(server.requests).toHaveLength(1);
  });

  it('backs off with full jitter under an exponential ceiling (base 250 ms, cap 8 s by default)', () => {
    const top = createRouter(parseCatalogue(catalogueYaml()), bothKeys, { random: () => 0.999999 });
    expect(top.retry).toMatchObject({ baseMs: 250, capMs: 8000, maxAttempts: 3 });
    expect(top.backoff(1)).toBeCloseTo(250, 0);
    expect(top.backoff(2)).toBeCloseTo(500, 0);
    expect(top.backoff(10)).toBeCloseTo(8000, 0);
    const low = createRouter(parseCatalogue(catalogueYaml()), bothKeys, { random: () => 0 });
    expect(low.backoff(3)).toBe(0);
    expect(low.backoff(3, 1500)).toBe(1500);
    expect(low.backoff(3, 31_000)).toBeUndefined();
  });

  it('prefers models that support tools when the request offers tools', async () => {
    const r = router(bothKeys, {}, catalogueYaml().replace('  large: [alpha/a-large]', '  large: [beta/b-notools, alpha/a-large]'));
    await r.complete(request({ tier: 'large', tools: [{ name: 'calc' }] }));
    await r.complete(request({ tier: 'large' }));
    expect(server.requests.map((q) => q.model)).toEqual(['a-large', 'b-notools']);
  });

  it('counts calls per tier and reports each tier share', async () => {
    const r = router();
    for (const tier of ['small', 'small', 'small', 'small', 'small', 'medium', 'medium', 'medium', 'medium', 'large'] as const)
      await r.complete(request({ tier }));
    expect(r.tierShares()).toEqual({
      small: { calls: 5, share: 0.5 },
      medium: { calls: 4, share: 0.4 },
      large: { calls: 1, share: 0.1 },
    });
    expect(router().tierShares().small).toEqual({ calls: 0, share: 0 });
  });
});
