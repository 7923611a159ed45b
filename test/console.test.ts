/**
 * The browser console (src/console) end to end: built with scripts/build-console.mjs, served by
 * the gateway at /, driven in headless Chromium (playwright-core; Debian's `chromium`, or
 * BROWSER_EXECUTABLE_PATH). Sign in with an API key; submit a task and watch its answer stream;
 * reload mid-stream and see it go on with nothing repeated or missing; the task list and detail;
 * cancel a running task; with authentication off, straight in with a notice. axe-core runs on
 * every page (light, dark, phone width): no serious or critical violation. A failing browser
 * test leaves a screenshot in a temporary folder and prints its path.
 */
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:http';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleFile } from '../src/gateway/console-route.js';
import { OfflineProvider } from '../src/llm/index.js';
// @ts-expect-error: a plain JavaScript build script without type declarations
import { buildConsole } from '../scripts/build-console.mjs';
import { json, startTestApp, type TestApp } from './helpers/app.js';
import { expectAccessible, launchBrowser, onPage, signInWithKey } from './helpers/browser.js';
import { registerUser, type TestUser } from './helpers/users.js';

const consoleDir = join(import.meta.dirname, '..', 'dist', 'console');

let t: TestApp;
let user: TestUser;
let browser: Browser;

beforeAll(async () => {
  await buildConsole({ typecheck: false });
  // A paced offline model (one word every 60 ms): an answer streams for a few seconds.
  t = await startTestApp({ GATEWAY_SKIP_AUTH: '0' }, { llm: new OfflineProvider({ chunkDelayMs: 60 }) });
  user = await registerUser(t.base, 'console');
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await t?.stop();
});

async function submitTask(page: Page, query: string): Promise<string> {
  await page.getByLabel('Query').fill(query);
  await page.getByLabel('Mode', { exact: true }).selectOption('simple');
  await page.getByRole('button', { name: 'Submit task' }).click();
  await page.waitForURL(/#\/live\//);
  return decodeURIComponent(new URL(page.url()).hash.split('/')[2]);
}

/** GET with exactly this Accept-Encoding (fetch adds its own), the body as sent. */
function rawGet(url: string, acceptEncoding: string): Promise<{ headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: acceptEncoding ? { 'accept-encoding': acceptEncoding } : {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const answerText = (page: Page) => page.getByTestId('answer').innerText();
const taskStatus = async (id: string) => json(await fetch(`${t.base}/api/v1/tasks/${id}`, { headers: user.h }));

describe('serving', () => {
  it('serves index.html at / and the hashed assets with their types and cache headers; API paths stay the API', async () => {
    const index = await fetch(`${t.base}/`);
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toMatch(/^text\/html/);
    expect(index.headers.get('cache-control')).toBe('no-cache');
    expect(index.headers.get('content-security-policy')).toContain("default-src 'self'");
    const html = await index.text();
    expect(html).not.toMatch(/https?:\/\//); // nothing from a CDN
    const js = /src="(\/app\.js\?v=\w+)"/.exec(html)![1];
    const css = /href="(\/app\.css\?v=\w+)"/.exec(html)![1];
    const jsRes = await fetch(`${t.base}${js}`);
    expect(jsRes.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(jsRes.headers.get('cache-control')).toContain('immutable');
    expect((await fetch(`${t.base}${css}`)).headers.get('content-type')).toMatch(/^text\/css/);
    // The assets go gzipped to a client that takes gzip (the build's .gz), as they are to one that does not.
    const plain = await readFile(join(consoleDir, 'app.js'));
    const zipped = await rawGet(`${t.base}${js}`, 'gzip, deflate, br');
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers.vary).toBe('Accept-Encoding');
    expect(gunzipSync(zipped.body).equals(plain)).toBe(true);
    expect(zipped.body.length).toBeLessThan(plain.length / 2);
    for (const ae of ['identity', 'gzip;q=0', '']) {
      const r = await rawGet(`${t.base}${js}`, ae);
      expect(r.headers['content-encoding'], ae).toBeUndefined();
      expect(r.body.equals(plain), ae).toBe(true);
    }
    expect((await fetch(`${t.base}/health`)).status).toBe(200);
    expect((await fetch(`${t.base}/api/v1/tasks`)).status).toBe(401);
    const missing = await fetch(`${t.base}/no-such-page`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: 'Not found: GET /no-such-page' });
  });

  it('without a built console, / answers 404 saying to run npm run build', async () => {
    const r = await consoleFile(join(tmpdir(), 'taskorch-no-console-here'), '/', false);
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ error: expect.stringContaining('npm run build') });
  });

  it('the bundle is at most 150 KB gzipped', async () => {
    const js = gzipSync(await readFile(join(consoleDir, 'app.js'))).length;
    const css = gzipSync(await readFile(join(consoleDir, 'app.css'))).length;
    expect(js + css).toBeLessThanOrEqual(150 * 1024);
  });
});

describe('in the browser', () => {
  it('signs in with an API key, streams an answer, resumes after a reload with nothing repeated, lists and details the task', async () => {
    await onPage(browser, 'stream-reload', async (page) => {
      await page.goto(`${t.base}/`);
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      expect(await page.getByTestId('auth-off').count()).toBe(0);
      await expectAccessible(page, 'sign-in');
      await signInWithKey(page, t.base, user.h['X-API-Key']);
      await expectAccessible(page, 'new task');

      const id = await submitTask(page, 'Explain the water cycle in detail, step by step');
      // Mid-stream: some of the answer is there, the task still runs.
      await expect.poll(async () => (await answerText(page)).length, { timeout: 15_000 }).toBeGreaterThan(40);
      expect((await taskStatus(id)).status).not.toBe('TASK_STATUS_COMPLETED');
      await expectAccessible(page, 'live view');
      const resumedFrom: (string | undefined)[] = [];
      page.on('request', (r) => {
        if (r.url().includes('/api/v1/stream/sse')) resumedFrom.push(r.headers()['last-event-id']);
      });
      await page.reload();

      await expect.poll(() => page.getByTestId('status').innerText(), { timeout: 20_000 }).toBe('COMPLETED');
      const status = await taskStatus(id);
      const norm = (s: string) => s.replace(/\s+/g, ' ').trim();
      const shown = norm(await answerText(page));
      // The whole answer once: nothing repeated after the reload, nothing missing.
      expect(shown).toBe(norm(status.result));
      expect(shown.split(norm(status.result).slice(0, 40)).length - 1).toBe(1);
      // ... because the reloaded page resumed the stream after the last event it had, not from the start.
      expect(resumedFrom.length).toBeGreaterThan(0);
      expect(resumedFrom[0]).toMatch(/^\d+-\d+$/);
      const seqs = await page.locator('.events li').evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-seq'))));
      expect(seqs.length).toBeGreaterThan(2);
      expect(new Set(seqs).size).toBe(seqs.length);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));

      await page.getByRole('link', { name: 'Tasks', exact: true }).click();
      await page.getByRole('heading', { name: 'Tasks' }).waitFor();
      await page.getByRole('link', { name: 'Explain the water cycle in detail, step by step' }).waitFor();
      await page.getByLabel('Status').selectOption('COMPLETED');
      await page.getByRole('link', { name: 'Explain the water cycle in detail, step by step' }).waitFor();
      await expectAccessible(page, 'task list');

      await page.getByRole('link', { name: 'Explain the water cycle in detail, step by step' }).click();
      await page.getByRole('heading', { name: 'Task details' }).waitFor();
      await expect.poll(() => page.getByTestId('detail-status').innerText()).toBe('COMPLETED');
      await page.locator('.raw-events li').first().waitFor();
      await expectAccessible(page, 'task detail');
    });
  }, 60_000);

  it('signs in with an account (email and password) and signs out', async () => {
    const email = `console-login-${Date.now()}@example.com`;
    const reg = await fetch(`${t.base}/api/v1/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: 'password123' }),
    });
    expect(reg.status).toBe(201);
    await onPage(browser, 'login', async (page) => {
      await page.goto(`${t.base}/`);
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill('wrong-password');
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await expect.poll(() => page.getByRole('alert').first().innerText()).not.toBe('');
      await page.getByLabel('Password').fill('password123');
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('heading', { name: 'New task' }).waitFor();
      await page.getByText(email).waitFor();
      // An access token that no longer works is renewed with the refresh token, once, unseen.
      const before = await page.evaluate(() => {
        const store = (globalThis as any).sessionStorage; // the page's (the test has no DOM types)
        const c = JSON.parse(store.getItem('taskorch.credentials'));
        store.setItem('taskorch.credentials', JSON.stringify({ ...c, accessToken: 'expired' }));
        return c.refreshToken as string;
      });
      await page.reload();
      await page.getByRole('link', { name: 'Tasks', exact: true }).click();
      await page.getByRole('heading', { name: 'Tasks' }).waitFor();
      await page.getByText('No tasks match.').waitFor();
      const after = await page.evaluate(() => JSON.parse((globalThis as any).sessionStorage.getItem('taskorch.credentials')));
      expect(after.accessToken).not.toBe('expired');
      expect(after.refreshToken).not.toBe(before);
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    });
  }, 60_000);

  it('cancels a running task and shows CANCELLED (phone width, dark mode)', async () => {
    await onPage(
      browser,
      'cancel',
      async (page) => {
        await signInWithKey(page, t.base, user.h['X-API-Key']);
        await expectAccessible(page, 'new task (phone, dark)');
        const id = await submitTask(page, 'Describe the history of the bicycle in many words');
        await expect.poll(async () => (await answerText(page)).length, { timeout: 15_000 }).toBeGreaterThan(10);
        await page.getByRole('button', { name: 'Cancel' }).click();
        await expect.poll(() => page.getByTestId('status').innerText(), { timeout: 20_000 }).toBe('CANCELLED');
        expect((await taskStatus(id)).status).toBe('TASK_STATUS_CANCELLED');
        await expectAccessible(page, 'live view (phone, dark)');
      },
      { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, colorScheme: 'dark' },
    );
  }, 60_000);

  it('with authentication off it goes straight in and says so', async () => {
    const open = await startTestApp({ GATEWAY_SKIP_AUTH: '1' });
    try {
      await onPage(browser, 'auth-off', async (page) => {
        await page.goto(`${open.base}/`);
        await page.getByRole('heading', { name: 'New task' }).waitFor();
        await expect.poll(() => page.getByTestId('auth-off').innerText()).toContain('Authentication is off');
        await expectAccessible(page, 'new task (auth off)');
      });
    } finally {
      await open.stop();
    }
  }, 60_000);
});
