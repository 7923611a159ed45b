/**
 * /api/v1/tools over the whole service: listing (dangerous tools never), one tool (403 for
 * dangerous, 404 unknown), direct execution (the spec's result, argument validation naming
 * the field, rate limits shared through NATS, 502 for an unconfigured backend), workspace
 * files written by a tool and served by the files API, usage recorded asynchronously.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { json, runTask, startTestApp, waitFor, type TestApp } from './helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ CALCULATOR_RATE_LIMIT: '0', WEB_SEARCH_PROVIDER: '' });
});
afterAll(async () => {
  await t?.stop();
});

const get = (app: TestApp, path: string) => fetch(app.base + path);
const exec = (app: TestApp, name: string, body: unknown) =>
  fetch(`${app.base}/api/v1/tools/${name}/execute`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('GET /api/v1/tools', () => {
  it('lists the built-in tools with the spec fields, never bash; category filters', async () => {
    const r = await get(t, '/api/v1/tools');
    expect(r.status).toBe(200);
    const list = await json(r);
    const names = list.map((x: { name: string }) => x.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'calculator',
        'python_executor',
        'web_search',
        'web_fetch',
        'web_subpage_fetch',
        'web_crawl',
        'file_read',
        'file_write',
        'file_list',
      ]),
    );
    expect(names).not.toContain('bash');
    const calc = list.find((x: { name: string }) => x.name === 'calculator');
    expect(Object.keys(calc).sort()).toEqual(['category', 'cost_per_use', 'description', 'name', 'parameters', 'timeout_seconds', 'version']);
    expect(calc.parameters).toMatchObject({ type: 'object', required: ['expression'] });
    const math = await json(await get(t, `/api/v1/tools?category=${calc.category}`));
    expect(math.map((x: { name: string }) => x.name)).toEqual(['calculator']);
    expect(await json(await get(t, '/api/v1/tools?category=nothing-here'))).toEqual([]);
  });

  it('one tool: 200, dangerous 403, unknown 404', async () => {
    expect((await json(await get(t, '/api/v1/tools/web_fetch'))).name).toBe('web_fetch');
    const bash = await get(t, '/api/v1/tools/bash');
    expect(bash.status).toBe(403);
    expect(await json(bash)).toEqual({ error: 'Tool not available via direct execution' });
    const none = await get(t, '/api/v1/tools/teleport');
    expect(none.status).toBe(404);
    expect(await json(none)).toEqual({ error: 'Tool not found: teleport' });
  });
});

describe('POST /api/v1/tools/{name}/execute', () => {
  it('runs the calculator: the spec result with the synthetic token count', async () => {
    const r = await exec(t, 'calculator', { arguments: { expression: '2^10 + 1/4' } });
    expect(r.status).toBe(200);
    const b = await json(r);
    expect(Object.keys(b).sort()).toEqual(['error', 'execution_time_ms', 'metadata', 'output', 'success', 'text', 'usage']);
    expect(b.success).toBe(true);
    expect(b.error).toBeNull();
    expect(b.text).toContain('1024.25');
    expect(b.output).toMatchObject({ result: '1024.25', exact: true });
    expect(b.metadata).toMatchObject({ tool: 'calculator' });
    expect(b.usage).toEqual({ tokens: 100, cost_usd: 0 });
  });

  it('validates: arguments required and an object, each argument against the schema (400 naming the field), unknown fields refused', async () => {
    const cases: [unknown, string][] = [
      [{}, 'arguments is required'],
      [{ arguments: [1] }, 'arguments must be a JSON object'],
      [{ arguments: {} }, 'arguments.expression is required'],
      [{ arguments: { expression: 42 } }, 'arguments.expression must be string'],
      [{ arguments: { expression: '1' }, tenant_id: 'x' }, 'unknown field: tenant_id'],
    ];
    for (const [body, msg] of cases) {
      const r = await exec(t, 'calculator', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect((await json(r)).error).toBe(msg);
    }
    const bash = await exec(t, 'bash', { arguments: { command: 'id' } });
    expect(bash.status).toBe(403);
    expect((await exec(t, 'teleport', { arguments: {} })).status).toBe(404);
    // A failure the tool itself reports is a result, not an HTTP error.
    const div = await json(await exec(t, 'calculator', { arguments: { expression: '1/0' } }));
    expect(div).toMatchObject({ success: false });
    expect(div.error).toMatch(/division by zero/i);
  });

  it('web_search without a configured backend: 502 naming what to set, never invented results', async () => {
    const r = await exec(t, 'web_search', { arguments: { query: 'nats jetstream' } });
    expect(r.status).toBe(502);
    expect((await json(r)).error).toMatch(/^tool backend unavailable: web search is not configured: set WEB_SEARCH_PROVIDER/);
  });

  it('file tools work in the session workspace; the file is then served by the files API', async () => {
    // A task creates the session (by its external id).
    const sid = `tools-${randomUUID()}`;
    await runTask(t.base, {}, { query: 'open a session', session_id: sid });
    const w = await json(await exec(t, 'file_write', { arguments: { path: 'notes/a.txt', content: 'hello workspace' }, session_id: sid }));
    expect(w.success, JSON.stringify(w)).toBe(true);
    const read = await json(await exec(t, 'file_read', { arguments: { path: 'notes/a.txt' }, session_id: sid }));
    expect(read.output.content).toBe('hello workspace');
    const listing = await json(await get(t, `/api/v1/sessions/${sid}/files?recursive=true`));
    expect(listing.files.map((f: { path: string }) => f.path)).toContain('/notes/a.txt');
    expect(await (await get(t, `/api/v1/sessions/${sid}/files/notes/a.txt`)).text()).toBe('hello workspace');
    // Without a session the file tools say what they need; an unknown session is 404.
    const none = await json(await exec(t, 'file_read', { arguments: { path: 'a.txt' } }));
    expect(none.success).toBe(false);
    expect(none.error).toMatch(/need a session/);
    expect((await exec(t, 'file_read', { arguments: { path: 'a.txt' }, session_id: 'no-such-session' })).status).toBe(404);
  });

  it('records each execution asynchronously', async () => {
    const marker = Date.now();
    await exec(t, 'calculator', { arguments: { expression: `${marker} + 1` } });
    await waitFor(async () => {
      const [r] = await t.app.store.sql`SELECT count(*)::int AS n FROM tool_calls WHERE tool = 'calculator' AND created_at > now() - interval '1 minute'`;
      return r!.n > 0 ? true : undefined;
    });
  });
});

describe('tool rate limits', () => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    a = await startTestApp({ CALCULATOR_RATE_LIMIT: '3' });
    // A second process on the same NATS shares the window.
    b = await startTestApp({ CALCULATOR_RATE_LIMIT: '3' }, { natsUrl: a.natsUrl });
  });
  afterAll(async () => {
    await b?.stop();
    await a?.stop();
  });

  it('CALCULATOR_RATE_LIMIT calls per minute across processes, then 429 with Retry-After', async () => {
    // Stay clear of a minute boundary: the window is the calendar minute, and each app's first
    // call also starts its calculator worker (seconds on a busy machine).
    const s = new Date().getSeconds();
    if (s > 40) await sleep((61 - s) * 1000);
    const codes: number[] = [];
    for (const app of [a, b, a]) codes.push((await exec(app, 'calculator', { arguments: { expression: '1+1' } })).status);
    expect(codes).toEqual([200, 200, 200]);
    const over = await exec(b, 'calculator', { arguments: { expression: '1+1' } });
    expect(over.status).toBe(429);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await json(over)).error).toBe('rate limit exceeded for tool calculator: 3 calls per minute (CALCULATOR_RATE_LIMIT)');
  }, 60_000);
});
