/**
 * The console's task pages beyond streaming (src/console): the new-task form's further options
 * reach the service as the API's fields; pause and resume from the live view; a finished task's
 * detail draws its timeline as bars per step and agent, and its usage and cost per model, as the
 * API reports them. Real service, real nats-server, headless Chromium (test/helpers/browser.ts).
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OfflineProvider } from '../src/llm/index.js';
// @ts-expect-error: a plain JavaScript build script without type declarations
import { buildConsole } from '../scripts/build-console.mjs';
import { json, startTestApp, type TestApp } from './helpers/app.js';
import { expectAccessible, launchBrowser, onPage, signInWithKey } from './helpers/browser.js';
import { registerUser, type TestUser } from './helpers/users.js';

let t: TestApp;
let user: TestUser;
let browser: Browser;

beforeAll(async () => {
  await buildConsole({ typecheck: false });
  // A paced offline model: a complex task runs for a few seconds, long enough to pause it.
  t = await startTestApp({ GATEWAY_SKIP_AUTH: '0' }, { llm: new OfflineProvider({ chunkDelayMs: 25 }) });
  user = await registerUser(t.base, 'console-detail');
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await t?.stop();
});

const api = async (path: string) => json(await fetch(`${t.base}${path}`, { headers: user.h }));
const statusText = (page: Page) => page.getByTestId('status').innerText();

async function submit(page: Page, query: string, fill?: (page: Page) => Promise<void>): Promise<string> {
  await page.getByLabel('Query').fill(query);
  await fill?.(page);
  await page.getByRole('button', { name: 'Submit task' }).click();
  await page.waitForURL(/#\/live\//);
  return decodeURIComponent(new URL(page.url()).hash.split('/')[2]);
}

describe('task pages', () => {
  it('submits with mode and model tier, pauses and resumes from the live view, and details the timeline and usage per model', async () => {
    await onPage(browser, 'pause-detail', async (page) => {
      const submitted: unknown[] = [];
      page.on('request', (r) => {
        if (r.method() === 'POST' && new URL(r.url()).pathname === '/api/v1/tasks') submitted.push(r.postDataJSON());
      });
      await signInWithKey(page, t.base, user.h['X-API-Key']);
      const id = await submit(page, 'Research the bicycle. Then compare it with the car. And write it up.', async (p) => {
        await p.getByLabel('Mode', { exact: true }).selectOption('complex');
        await p.getByLabel('Model tier').selectOption('medium');
      });
      expect(submitted).toEqual([{ query: 'Research the bicycle. Then compare it with the car. And write it up.', mode: 'complex', model_tier: 'medium' }]);

      await expect.poll(() => statusText(page), { timeout: 20_000 }).toBe('RUNNING');
      await page.getByRole('button', { name: 'Pause' }).click();
      await expect.poll(() => statusText(page), { timeout: 20_000 }).toBe('PAUSED');
      expect((await api(`/api/v1/tasks/${id}`)).status).toBe('TASK_STATUS_PAUSED');
      expect(await api(`/api/v1/tasks/${id}/control-state`)).toMatchObject({ is_paused: true });
      await expect.poll(() => page.locator('.events li .type').allInnerTexts()).toContain('WORKFLOW_PAUSED');
      await expectAccessible(page, 'live view (paused)');
      await page.getByRole('button', { name: 'Resume' }).click();
      await expect.poll(() => statusText(page), { timeout: 30_000 }).toBe('COMPLETED');
      const types = await page.locator('.events li .type').allInnerTexts();
      expect(types.indexOf('WORKFLOW_RESUMED')).toBeGreaterThan(types.indexOf('WORKFLOW_PAUSED'));

      await page.getByRole('link', { name: 'details and raw events' }).click();
      await page.getByRole('heading', { name: 'Task details' }).waitFor();
      const timeline = await api(`/api/v1/tasks/${id}/timeline`);
      const rows = page.locator('.timeline li');
      await expect.poll(() => rows.count()).toBe(timeline.steps.length);
      expect(timeline.steps.length).toBeGreaterThan(2);
      expect(await rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-step')))).toEqual(timeline.steps.map((s: { name: string }) => s.name));
      // Every bar lies on the task's axis, and the steps after the first start later.
      const bars = await page
        .locator('.t-bar')
        .evaluateAll((els) => els.map((e) => ({ left: parseFloat((e as any).style.left), width: parseFloat((e as any).style.width) })));
      for (const b of bars) {
        expect(b.left).toBeGreaterThanOrEqual(0);
        expect(b.width).toBeGreaterThan(0);
        expect(b.left + b.width).toBeLessThanOrEqual(100.001);
      }
      expect(bars.at(-1)!.left).toBeGreaterThan(bars[0].left);
      const agents = timeline.steps.map((s: { agent: string | null }) => s.agent).filter(Boolean);
      for (const a of new Set(agents)) await expect.poll(() => rows.filter({ hasText: String(a) }).count()).toBeGreaterThan(0);

      const status = await api(`/api/v1/tasks/${id}`);
      const breakdown = status.metadata.model_breakdown as { model: string; executions: number; input_tokens: number; output_tokens: number }[];
      expect(breakdown.length).toBeGreaterThan(0);
      const usage = page.getByTestId('usage');
      for (const m of breakdown) {
        const row = usage.locator('tbody tr').filter({ hasText: m.model });
        const cells = await row.locator('td').allInnerTexts();
        expect(cells.slice(0, 3)).toEqual([String(m.executions), String(m.input_tokens), String(m.output_tokens)]);
      }
      await expectAccessible(page, 'task detail with timeline');
    });
  }, 90_000);

  it('sends research, verification, fact extraction and template choices as the API names them, and shows the service’s refusal', async () => {
    await onPage(
      browser,
      'more-options',
      async (page) => {
        const submitted: unknown[] = [];
        page.on('request', (r) => {
          if (r.method() === 'POST' && new URL(r.url()).pathname === '/api/v1/tasks') submitted.push(r.postDataJSON());
        });
        await signInWithKey(page, t.base, user.h['X-API-Key']);
        await page.getByLabel('Query').fill('What is JetStream?');
        await page.getByText('Research, skill and template').click();
        await page.getByLabel('Template (optional)').fill('no-such-template');
        await page.getByLabel('Research strategy').selectOption('quick');
        await page.getByLabel('Verify the claims').check();
        await page.getByLabel('Extract the facts').check();
        await expectAccessible(page, 'new task, all options (phone, dark)');
        await page.getByRole('button', { name: 'Submit task' }).click();
        await expect.poll(() => submitted.length).toBe(1);
        expect(submitted[0]).toEqual({
          query: 'What is JetStream?',
          research_strategy: 'quick',
          enable_verification: true,
          context: { template: 'no-such-template', enable_fact_extraction: true },
        });
        // The service refuses this mix (research with a template): the page shows its words, and stays.
        const direct = await fetch(`${t.base}/api/v1/tasks`, {
          method: 'POST',
          headers: { ...user.h, 'content-type': 'application/json' },
          body: JSON.stringify(submitted[0]),
        });
        expect(direct.status).toBe(400);
        const { error } = await json(direct);
        expect(error).toMatch(/research.*template/);
        await expect.poll(() => page.getByRole('alert').first().innerText()).toBe(error);
        expect(page.url()).not.toMatch(/#\/live\//);
      },
      { viewport: { width: 375, height: 740 }, isMobile: true, colorScheme: 'dark' },
    );
  }, 60_000);
  it('shows the raw events a page at a time: a full page offers the next, read after the last seq shown', async () => {
    const { task_id: id } = await json(
      await fetch(`${t.base}/api/v1/tasks`, {
        method: 'POST',
        headers: { ...user.h, 'content-type': 'application/json' },
        body: JSON.stringify({ query: '2+2' }),
      }),
    );
    await expect.poll(async () => (await api(`/api/v1/tasks/${id}`)).status, { timeout: 20_000 }).toBe('TASK_STATUS_COMPLETED');
    await onPage(browser, 'raw-event-pages', async (page) => {
      // The service's pages, stood in for (a task with over 1,000 events takes long to make).
      const asked: string[] = [];
      const event = (seq: number) => ({
        workflow_id: id,
        seq,
        stream_id: `1-${seq}`,
        type: 'LLM_PARTIAL',
        agent_id: 'a',
        message: `m${seq}`,
        timestamp: new Date().toISOString(),
      });
      await page.route(`**/api/v1/tasks/${id}/events?**`, (route) => {
        const q = new URL(route.request().url()).searchParams;
        asked.push(`${q.get('after_seq')}/${q.get('limit')}`);
        const from = Number(q.get('after_seq'));
        const n = from === 0 ? 1000 : 3;
        void route.fulfill({ json: { workflow_id: id, events: Array.from({ length: n }, (_, i) => event(from + i + 1)) } });
      });
      await signInWithKey(page, t.base, user.h['X-API-Key']);
      await page.goto(`${t.base}/#/tasks/${id}`);
      const items = page.locator('.raw-events > li');
      await expect.poll(() => items.count()).toBe(1000);
      expect(await page.getByTestId('raw-events-shown').innerText()).toMatch(/^1000 events shown/);
      await page.getByRole('button', { name: 'Load more events' }).click();
      await expect.poll(() => items.count()).toBe(1003);
      expect(await items.last().getAttribute('data-seq')).toBe('1003');
      expect(asked).toEqual(['0/1000', '1000/1000']);
      await expect.poll(() => page.getByRole('button', { name: 'Load more events' }).count()).toBe(0);
    });
  }, 60_000);
});
