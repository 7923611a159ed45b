/**
 * The internal model service: GET /providers/models (the spec's provider model entries keyed
 * by provider, `[]` for a provider without its key, the tier filter, 400 on another tier) and
 * GET /health, on a port chosen by the system.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { OFFLINE_MODEL, parseCatalogue, startModelService, type LlmSettings, type ModelService } from '../src/llm/index.js';

const yaml = [
  'providers:',
  '  alpha:',
  '    base_url: http://127.0.0.1:9/v1',
  '    api_key_env: ALPHA_API_KEY',
  '    models:',
  '      - { id: a-small, tier: small, context_window: 8192, cost_per_1k_prompt_tokens: 0.001, cost_per_1k_completion_tokens: 0.002, supports_tools: true, supports_streaming: true }',
  '      - { id: a-large, tier: large, context_window: 200000, cost_per_1k_prompt_tokens: 0.01, cost_per_1k_completion_tokens: 0.03, supports_tools: true, supports_streaming: false }',
  '  beta:',
  '    base_url: http://127.0.0.1:9/v1',
  '    api_key_env: BETA_API_KEY',
  '    models:',
  '      - { id: b-medium, tier: medium, context_window: 32000, cost_per_1k_prompt_tokens: 0.002, cost_per_1k_completion_tokens: 0.004 }',
  '  local:',
  '    base_url: http://127.0.0.1:11434/v1',
  '    models:',
  '      - { id: l-small, tier: small, context_window: 4096, cost_per_1k_prompt_tokens: 0, cost_per_1k_completion_tokens: 0, supports_tools: false }',
  'tiers:',
  '  small: [alpha/a-small]',
  '  medium: [beta/b-medium]',
  '  large: [alpha/a-large]',
].join('\n');

let svc: ModelService | undefined;
afterEach(async () => {
  await svc?.close();
  svc = undefined;
});

async function start(settings: LlmSettings, text = yaml): Promise<string> {
  svc = await startModelService({ port: 0, catalogue: parseCatalogue(text), settings });
  return `http://127.0.0.1:${svc.port}`;
}

async function getJson(url: string): Promise<{ status: number; body: any; type: string | null }> {
  const r = await fetch(url);
  return { status: r.status, body: await r.json(), type: r.headers.get('content-type') };
}

describe('GET /providers/models', () => {
  it('answers every provider with the spec entry fields; a provider without its key yields []', async () => {
    const base = await start({ providerKeys: { ALPHA_API_KEY: 'sk-a' } });
    const r = await getJson(`${base}/providers/models`);
    expect(r.status).toBe(200);
    expect(r.type).toMatch(/application\/json/);
    expect(Object.keys(r.body)).toEqual(['alpha', 'beta', 'local', 'offline']);
    expect(r.body.beta).toEqual([]);
    expect(r.body.alpha).toEqual([
      {
        id: 'a-small',
        name: 'a-small',
        tier: 'small',
        context_window: 8192,
        cost_per_1k_prompt_tokens: 0.001,
        cost_per_1k_completion_tokens: 0.002,
        supports_tools: true,
        supports_streaming: true,
        available: true,
      },
      {
        id: 'a-large',
        name: 'a-large',
        tier: 'large',
        context_window: 200000,
        cost_per_1k_prompt_tokens: 0.01,
        cost_per_1k_completion_tokens: 0.03,
        supports_tools: true,
        supports_streaming: false,
        available: true,
      },
    ]);
    // A provider that needs no key is always listed; the offline provider too.
    expect(r.body.local.map((m: { id: string }) => m.id)).toEqual(['l-small']);
    expect(r.body.local[0].supports_tools).toBe(false);
    expect(r.body.offline.map((m: { id: string }) => m.id)).toEqual([OFFLINE_MODEL]);
  });

  it('lists a provider once its key is set', async () => {
    const base = await start({ providerKeys: { ALPHA_API_KEY: 'sk-a', BETA_API_KEY: 'sk-b' } });
    const r = await getJson(`${base}/providers/models`);
    expect(r.body.beta).toHaveLength(1);
    expect(r.body.beta[0]).toMatchObject({
      id: 'b-medium',
      name: 'b-medium',
      tier: 'medium',
      supports_tools: false,
      supports_streaming: true,
      available: true,
    });
  });

  it('filters by tier, and refuses another tier with 400', async () => {
    const base = await start({ providerKeys: { ALPHA_API_KEY: 'sk-a', BETA_API_KEY: 'sk-b' } });
    const large = await getJson(`${base}/providers/models?tier=large`);
    expect(large.status).toBe(200);
    expect(large.body).toEqual({
      alpha: [expect.objectContaining({ id: 'a-large', tier: 'large' })],
      beta: [],
      local: [],
      offline: [],
    });
    const small = await getJson(`${base}/providers/models?tier=small`);
    expect(Object.fromEntries(Object.entries(small.body).map(([k, v]) => [k, (v as { id: string }[]).map((m) => m.id)]))).toEqual({
      alpha: ['a-small'],
      beta: [],
      local: ['l-small'],
      offline: [OFFLINE_MODEL],
    });
    const bad = await getJson(`${base}/providers/models?tier=huge`);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/tier/i);
  });

  it('marks other providers unavailable when LLM_PROVIDER=offline forces the offline provider', async () => {
    const base = await start({ providerKeys: { ALPHA_API_KEY: 'sk-a' }, offlineOnly: true });
    const r = await getJson(`${base}/providers/models`);
    expect(r.body.alpha.every((m: { available: boolean }) => m.available === false)).toBe(true);
    expect(r.body.offline[0].available).toBe(true);
  });

  it('serves the shipped catalogue: openai [] without OPENAI_API_KEY, its models with it (or with the LLM_* shortcut)', async () => {
    const shipped = readFileSync('config/models.yaml', 'utf8');
    let base = await start({}, shipped);
    let r = await getJson(`${base}/providers/models`);
    expect(r.body.openai).toEqual([]);
    expect(r.body.ollama.length).toBeGreaterThan(0);
    await svc!.close();
    base = await start({ providerKeys: { OPENAI_API_KEY: 'sk-o' } }, shipped);
    r = await getJson(`${base}/providers/models?tier=small`);
    expect(r.body.openai.map((m: { id: string }) => m.id)).toContain('gpt-4o-mini');
    await svc!.close();
    base = await start({ baseUrl: 'http://127.0.0.1:8001/v1', defaultModel: 'my-local-model', defaultTier: 'small' }, shipped);
    r = await getJson(`${base}/providers/models`);
    expect(r.body.openai.map((m: { id: string }) => m.id)).toContain('my-local-model');
  });
});

describe('the rest of the service', () => {
  it('answers GET /health, 404 elsewhere and 405 for other methods', async () => {
    const base = await start({});
    const h = await getJson(`${base}/health`);
    expect(h.status).toBe(200);
    expect(h.body.status).toBe('healthy');
    expect((await fetch(`${base}/nope`)).status).toBe(404);
    const post = await fetch(`${base}/providers/models`, { method: 'POST', body: '{}' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });

  it('GET /metrics answers what the metrics source gives (tier shares), 503 when it fails, 404 without one', async () => {
    expect((await fetch(`${await start({})}/metrics`)).status).toBe(404);
    await svc!.close();
    let fail = false;
    svc = await startModelService({
      port: 0,
      catalogue: parseCatalogue(yaml),
      settings: {},
      metrics: async () => {
        if (fail) throw new Error('db down');
        return { tier_shares: { small: { calls: 5, share: 0.5 } } };
      },
    });
    const base = `http://127.0.0.1:${svc.port}`;
    expect(await getJson(`${base}/metrics`)).toMatchObject({ status: 200, body: { tier_shares: { small: { calls: 5, share: 0.5 } } } });
    fail = true;
    expect((await fetch(`${base}/metrics`)).status).toBe(503);
  });

  it('stops listening on close()', async () => {
    const base = await start({});
    await svc!.close();
    svc = undefined;
    await expect(fetch(`${base}/health`)).rejects.toThrow();
  });
});
