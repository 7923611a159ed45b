/**
 * GET /api/v1/blob/{key} over the whole service: a screenshot over 500 KB taken by a real
 * headless Chromium through the tools API is stored as the caller's blob; the reference in the
 * output serves the PNG to that user, and 404 `Blob not found` to another user (of another
 * tenant or of the same one), for a malformed key and for a well-formed key that was never
 * stored; 401 without credentials. The route is in openapi.json.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import uWS from 'uWebSockets.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Bus } from '../src/bus/index.js';
import { registerBlobRoutes } from '../src/gateway/blob-routes.js';
import type { RouteDeps } from '../src/gateway/route-deps.js';
import { createLogger } from '../src/kernel/index.js';
import { json, startTestApp, waitFor, type TestApp } from './helpers/app.js';
import { colleagueOf, registerUser, type TestUser } from './helpers/users.js';

// A real browser on a shared 2-core CI machine: pages take seconds, not milliseconds.
vi.setConfig({ testTimeout: 60_000 });

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Random pixels over a full page: a PNG of several MB. */
const NOISY_PAGE = `<!doctype html><html><head><title>Noise</title><style>body{margin:0}</style></head><body>
<canvas id="c" width="1280" height="1400" style="display:block"></canvas>
<script>
const c = document.getElementById('c').getContext('2d');
const img = c.createImageData(1280, 1400);
for (let i = 0; i < img.data.length; i++) img.data[i] = (i % 4 === 3) ? 255 : Math.floor(Math.random() * 256);
c.putImageData(img, 0, 0);
</script></body></html>`;

let t: TestApp;
let pages: Server;
let pageBase: string;
let owner: TestUser;
let stranger: TestUser;

beforeAll(async () => {
  pages = createServer((req, res) => {
    if (req.url === '/noise') res.writeHead(200, { 'content-type': 'text/html' }).end(NOISY_PAGE);
    else res.writeHead(200, { 'content-type': 'text/html' }).end('<title>Small</title><h1>small</h1>');
  });
  await new Promise<void>((r) => pages.listen(0, '127.0.0.1', r));
  pageBase = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
  t = await startTestApp({
    GATEWAY_SKIP_AUTH: '0',
    PASSWORD_SCRYPT_N: '1024',
    JWT_SECRET: 'blob-route-test-secret-0123456789abcdefgh',
    RATE_LIMIT_REQUESTS: '100000',
    TOOLS_HTTP_ALLOW_HOSTS: '127.0.0.1',
    BROWSER_MAX_PAGES: '1',
    PATH: process.env.PATH ?? '',
  });
  owner = await registerUser(t.base, 'blob-owner');
  stranger = await registerUser(t.base, 'blob-stranger');
});
afterAll(async () => {
  await t?.stop();
  pages?.close();
});

const screenshot = async (u: TestUser, args: Record<string, unknown>) => {
  const r = await fetch(`${t.base}/api/v1/tools/browser_screenshot/execute`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...u.h },
    body: JSON.stringify({ arguments: args }),
  });
  expect(r.status).toBe(200);
  const b = await json(r);
  expect(b.error).toBeNull();
  return b.output;
};

describe('GET /api/v1/blob/{key}', () => {
  it('serves a large screenshot to its owner only', async () => {
    const out = await screenshot(owner, { url: `${pageBase}/noise`, full_page: true, wait_until: 'load' });
    const ref = out.screenshot;
    expect(ref.data_base64).toBeUndefined();
    expect(ref.size_bytes).toBeGreaterThan(500 * 1024);
    expect(ref.url).toBe(`/api/v1/blob/${ref.blob_key}`);

    const mine = await fetch(t.base + ref.url, { headers: owner.h });
    expect(mine.status).toBe(200);
    expect(mine.headers.get('content-type')).toBe('image/png');
    const bytes = Buffer.from(await mine.arrayBuffer());
    expect(bytes.length).toBe(ref.size_bytes);
    expect(bytes.subarray(0, 8)).toEqual(PNG_SIGNATURE);
    expect(bytes.readUInt32BE(16)).toBe(1280);
    expect(bytes.readUInt32BE(20)).toBe(1400);

    for (const h of [stranger.h, (await colleagueOf(t.app.store.sql, owner)).h]) {
      const other = await fetch(t.base + ref.url, { headers: h });
      expect(other.status).toBe(404);
      expect(await json(other)).toEqual({ error: 'Blob not found' });
    }
    const anonymous = await fetch(t.base + ref.url);
    expect(anonymous.status).toBe(401);
  });

  it('serves the blob of a catalogue agent run (POST /api/v1/agents/browser-screenshot) to its owner only', async () => {
    const r = await fetch(`${t.base}/api/v1/agents/browser-screenshot`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...owner.h },
      body: JSON.stringify({ input: { url: `${pageBase}/noise`, full_page: true, wait_until: 'load' } }),
    });
    expect(r.status).toBe(202);
    const { task_id } = await json(r);
    const done = await waitFor(
      async () => {
        const s = await json(await fetch(`${t.base}/api/v1/tasks/${task_id}`, { headers: owner.h }));
        return s.status === 'TASK_STATUS_COMPLETED' || s.status === 'TASK_STATUS_FAILED' ? s : undefined;
      },
      60_000,
      200,
    );
    expect(done.status).toBe('TASK_STATUS_COMPLETED');
    const ref = JSON.parse(done.result).screenshot;
    expect(ref.size_bytes).toBeGreaterThan(500 * 1024);
    expect(done.result.length).toBeLessThan(10_000); // a reference, not megabytes of base64
    const mine = await fetch(t.base + ref.url, { headers: owner.h });
    expect(mine.status).toBe(200);
    expect(Buffer.from(await mine.arrayBuffer()).subarray(0, 8)).toEqual(PNG_SIGNATURE);
    const other = await fetch(t.base + ref.url, { headers: stranger.h });
    expect(other.status).toBe(404);
  });

  it('keeps a small screenshot inline', async () => {
    const out = await screenshot(owner, { url: `${pageBase}/small` });
    expect(out.screenshot.blob_key).toBeUndefined();
    expect(Buffer.from(out.screenshot.data_base64, 'base64').subarray(0, 8)).toEqual(PNG_SIGNATURE);
  });

  it('answers 404 for a malformed or unknown key, never 5xx', async () => {
    for (const key of ['b' + '0'.repeat(32), 'nope', 'B' + 'a'.repeat(32), 'b%2Fx', 'b' + 'f'.repeat(40)]) {
      const r = await fetch(`${t.base}/api/v1/blob/${key}`, { headers: owner.h });
      expect(r.status, key).toBe(404);
      expect(await json(r)).toEqual({ error: 'Blob not found' });
    }
  });

  it('is described in openapi.json', async () => {
    const doc = await json(await fetch(`${t.base}/openapi.json`));
    const op = doc.paths['/api/v1/blob/{key}'].get;
    expect(op.operationId).toBe('getBlob');
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '404']));
  });
});

describe('the blob route when the store fails', () => {
  it('answers 404, not 5xx', async () => {
    const app = uWS.App();
    const log = createLogger({ level: 'silent' });
    const failing = { kv: { blobs: { getOwned: () => Promise.reject(new Error('nats: timeout')) } } } as unknown as Bus;
    registerBlobRoutes(app, {
      ctx: { cors: { origins: '*' }, log },
      admit: async () => ({ p: { userId: 'u', key: 'u', anonymous: false }, headers: {} }),
      bus: failing,
      log,
    } as unknown as RouteDeps);
    const sock = await new Promise<uWS.us_listen_socket>((resolve) => app.listen('127.0.0.1', 0, resolve));
    const port = uWS.us_socket_local_port(sock);
    try {
      const r = await fetch(`http://127.0.0.1:${port}/api/v1/blob/b${'a'.repeat(32)}`);
      expect(r.status).toBe(404);
      expect(await json(r)).toEqual({ error: 'Blob not found' });
    } finally {
      uWS.us_listen_socket_close(sock);
    }
  });
});
