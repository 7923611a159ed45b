/**
 * GATEWAY_HEALTH_PORT: /health and /readiness on a node:http listener, which answers the
 * HTTP/1.0 probes of load balancers that the uWebSockets.js edge cannot parse.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ GATEWAY_HEALTH_PORT: '0' });
});
afterAll(async () => {
  await t?.stop();
});

function raw(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port });
    let out = '';
    s.setTimeout(5000, () => reject(new Error(`no complete answer: ${JSON.stringify(out)}`)));
    s.on('data', (d) => (out += d.toString()));
    s.on('end', () => resolve(out));
    s.on('error', reject);
    s.write(request);
  });
}

describe('health probe listener', () => {
  it('answers HTTP/1.0 health and readiness probes, with and without Host', async () => {
    const port = t.app.healthPort!;
    expect(port).toBeGreaterThan(0);
    const h = await raw(port, 'GET /health HTTP/1.0\r\n\r\n');
    expect(h).toMatch(/^HTTP\/1\.[01] 200 /);
    expect(JSON.parse(h.slice(h.indexOf('\r\n\r\n') + 4))).toMatchObject({ status: 'healthy' });
    const r = await raw(port, 'GET /readiness HTTP/1.0\r\nHost: lb\r\n\r\n');
    expect(r).toMatch(/^HTTP\/1\.[01] 200 /);
    expect(JSON.parse(r.slice(r.indexOf('\r\n\r\n') + 4))).toMatchObject({ status: 'ready' });
  });

  it('answers other paths 404 and other methods 405, and HTTP/1.1 too', async () => {
    const port = t.app.healthPort!;
    expect(await raw(port, 'GET /api/v1/tasks HTTP/1.0\r\n\r\n')).toMatch(/^HTTP\/1\.[01] 404 /);
    expect(await raw(port, 'POST /health HTTP/1.0\r\nContent-Length: 0\r\n\r\n')).toMatch(/^HTTP\/1\.[01] 405 /);
    const res = await fetch(`http://127.0.0.1:${port}/health`);
    expect(res.status).toBe(200);
  });
});
