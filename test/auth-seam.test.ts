/** GATEWAY_SKIP_AUTH=0 enforces authentication at the seam; health probes stay open. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startTestApp, type TestApp } from './helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ GATEWAY_SKIP_AUTH: '0' });
});
afterAll(async () => {
  await t?.stop();
});

describe('authentication seam', () => {
  it('rejects protected endpoints without credentials with 401 Authentication required', async () => {
    for (const [method, path] of [
      ['POST', '/api/v1/tasks'],
      ['GET', '/api/v1/tasks'],
      ['GET', '/api/v1/tasks/00000000-0000-4000-8000-000000000000'],
      ['GET', '/api/v1/stream/sse?workflow_id=00000000-0000-4000-8000-000000000000'],
    ]) {
      const r = await fetch(t.base + path, { method, headers: { 'content-type': 'application/json' }, body: method === 'POST' ? '{"query":"x"}' : undefined });
      expect(r.status, path).toBe(401);
      expect(await json(r)).toEqual({ error: 'Authentication required' });
    }
  });

  it('rejects credentials it cannot verify', async () => {
    const r = await fetch(`${t.base}/api/v1/tasks`, { headers: { 'X-API-Key': 'sk_unknown' } });
    expect(r.status).toBe(401);
    expect(await json(r)).toEqual({ error: 'Invalid API key' });
    const r2 = await fetch(`${t.base}/api/v1/tasks`, { headers: { Authorization: 'Bearer eyJhbGciOi.x.y' } });
    expect(r2.status).toBe(401);
    expect(await json(r2)).toEqual({ error: 'Invalid or expired token' });
  });

  it('keeps health, readiness and openapi.json open', async () => {
    for (const p of ['/health', '/readiness', '/openapi.json']) expect((await fetch(t.base + p)).status, p).toBe(200);
  });
});
