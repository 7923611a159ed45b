/** CORS: any origin in development; only the configured origins in production. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';

let prod: TestApp;
beforeAll(async () => {
  prod = await startTestApp({
    ENVIRONMENT: 'prod',
    GATEWAY_SKIP_AUTH: '0',
    JWT_SECRET: 'cors-test-secret-0123456789abcdefghijkl',
    CORS_ALLOWED_ORIGINS: 'https://app.example.com,https://admin.example.com',
  });
});
afterAll(async () => {
  await prod?.stop();
});

describe('CORS in production', () => {
  it('echoes an allowed origin and answers its preflight', async () => {
    const r = await fetch(`${prod.base}/health`, { headers: { Origin: 'https://admin.example.com' } });
    expect(r.headers.get('access-control-allow-origin')).toBe('https://admin.example.com');
    expect(r.headers.get('vary')).toBe('Origin');
    const pre = await fetch(`${prod.base}/api/v1/tasks`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://app.example.com', 'Access-Control-Request-Method': 'POST' },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(pre.headers.get('access-control-allow-headers')).toContain('X-API-Key');
  });

  it('gives no CORS headers to other origins', async () => {
    const r = await fetch(`${prod.base}/health`, { headers: { Origin: 'https://evil.example.net' } });
    expect(r.status).toBe(200);
    expect(r.headers.get('access-control-allow-origin')).toBeNull();
    const pre = await fetch(`${prod.base}/api/v1/tasks`, { method: 'OPTIONS', headers: { Origin: 'https://evil.example.net' } });
    expect(pre.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('requires authentication in production', async () => {
    expect((await fetch(`${prod.base}/api/v1/tasks`)).status).toBe(401);
  });
});
