/**
 * A catalogue agent's tool runs as the task's user and tenant: the screenshot blob a
 * browser-screenshot agent run stores (a real headless Chromium, a page over 500 KB) carries
 * the owner's tenant in its metadata, so the owner reads it within that tenant and nobody reads
 * it from another one (a blob stored without a tenant would be readable from any tenant).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { json, startTestApp, waitFor, type TestApp } from './helpers/app.js';
import { registerUser, type TestUser } from './helpers/users.js';

// A real browser on a shared 2-core machine: pages take seconds.
vi.setConfig({ testTimeout: 90_000 });

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

beforeAll(async () => {
  pages = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(NOISY_PAGE));
  await new Promise<void>((r) => pages.listen(0, '127.0.0.1', r));
  pageBase = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
  t = await startTestApp({
    GATEWAY_SKIP_AUTH: '0',
    PASSWORD_SCRYPT_N: '1024',
    JWT_SECRET: 'agents-blob-tenant-secret-0123456789abcdef',
    RATE_LIMIT_REQUESTS: '100000',
    TOOLS_HTTP_ALLOW_HOSTS: '127.0.0.1',
    BROWSER_MAX_PAGES: '1',
    PATH: process.env.PATH ?? '',
  });
  owner = await registerUser(t.base, 'agent-blob-owner');
}, 60_000);
afterAll(async () => {
  await t?.stop();
  pages?.close();
});

describe('a catalogue agent stores its blobs under the task tenant', () => {
  it("browser-screenshot's blob carries the owner's tenant: readable in it, not from another tenant", async () => {
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
      80_000,
      200,
    );
    expect(done.status, done.error).toBe('TASK_STATUS_COMPLETED');
    const ref = JSON.parse(done.result).screenshot as { blob_key: string; size_bytes: number; url: string };
    expect(ref.size_bytes).toBeGreaterThan(500 * 1024);
    expect(owner.tenantId).toBeTruthy();
    const blobs = t.app.bus.kv.blobs;
    expect(await blobs.getOwned(ref.blob_key, { userId: owner.userId, tenantId: owner.tenantId })).toBeDefined();
    // The same user id claimed from another tenant: refused because the blob names its tenant.
    expect(await blobs.getOwned(ref.blob_key, { userId: owner.userId, tenantId: '00000000-0000-4000-8000-000000000000' })).toBeUndefined();
    expect(await blobs.getOwned(ref.blob_key, { userId: owner.userId })).toBeUndefined();
    expect((await fetch(t.base + ref.url, { headers: owner.h })).status).toBe(200);
  });
});
