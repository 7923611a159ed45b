/**
 * The console's plan review and approvals inbox in headless Chromium (as test/console.test.ts):
 * a research plan taken through one feedback round to approval (the task then completes), a
 * stale approval refused with the spec's 409 shown; from the inbox one approval approved and
 * another refused with feedback (its task ends FAILED), a tool call's arguments modified. axe-core on both pages, light and dark.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain JavaScript build script without type declarations
import { buildConsole } from '../scripts/build-console.mjs';
import { startTestApp, waitFor, type TestApp } from './helpers/app.js';
import { startResearchWeb } from './helpers/research-web.js';
import { expectAccessible, launchBrowser, onPage, signInWithKey } from './helpers/browser.js';
import { taskApi } from './helpers/task-api.js';
import { registerUser, type TestUser } from './helpers/users.js';

let t: TestApp;
let user: TestUser;
let browser: Browser;
let dir: string | undefined;

beforeAll(async () => {
  await buildConsole({ typecheck: false });
  const web = await startResearchWeb();
  // A tool policy on the calculator and a one-step template using it (no model): a tool approval to modify.
  dir = await mkdtemp(join(tmpdir(), 'console-review-'));
  await writeFile(join(dir, 'features.yaml'), 'approvals:\n  tools: [calculator]\n');
  await mkdir(join(dir, 'templates'));
  await writeFile(
    join(dir, 'templates', 'calc-steps.yaml'),
    "name: calc-steps\nversion: '1.0.0'\ndescription: one calculator step\nsteps:\n" +
      "  - id: sum\n    type: tool\n    tool: calculator\n    arguments:\n      expression: '${query}'\n" +
      "  - id: out\n    type: text\n    text: 'result: ${steps.sum}'\noutput: out\n",
  );
  t = await startTestApp({
    ...web.env,
    GATEWAY_SKIP_AUTH: '0',
    APPROVAL_TIMEOUT_SECONDS: '600',
    // The tests poll the API for the tasks' state: no rate limit in the way.
    RATE_LIMIT_REQUESTS: '100000',
    RATE_LIMIT_TASK_LIST_BURST: '100000',
    CONFIG_PATH: join(dir, 'features.yaml'),
    TEMPLATES_DIR: join(dir, 'templates'),
  });
  user = await registerUser(t.base, 'console-review');
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await t?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const { api, submit, statusOf, ended, pendingOf } = taskApi(() => ({ base: t.base, headers: user.h }));

describe('plan review in the browser', () => {
  it('shows the plan, sends feedback, shows a stale approval as a 409 with the way forward, approves; the task completes', async () => {
    const query = 'How does a fixed window rate limiter work?';
    const id = await submit({ query, context: { require_review: true, review_timeout: 600 } });
    await waitFor(async () => (await statusOf(id)) === 'TASK_STATUS_PAUSED' && (await api('GET', `/api/v1/tasks/${id}/review`)).status === 200, 30_000, 100);
    await onPage(browser, 'review', async (page) => {
      await signInWithKey(page, t.base, user.h['X-API-Key']);
      await page.goto(`${t.base}/#/live/${id}`);
      await page.getByTestId('awaits-review').getByRole('link', { name: 'review the plan' }).click();
      await page.getByRole('heading', { name: 'Plan review' }).waitFor();
      await expect.poll(() => page.getByTestId('plan').innerText()).toContain(query);
      expect(await page.getByTestId('review-version').innerText()).toBe('1');
      await page.getByText('0 of 10240 bytes').waitFor();
      await expectAccessible(page, 'plan review');

      await page.getByLabel('Feedback on the plan').fill('Cover sliding windows too');
      await page.getByRole('button', { name: 'Send feedback' }).click();
      await expect.poll(() => page.getByTestId('review-version').innerText(), { timeout: 20_000 }).toBe('2');
      await page.getByRole('list', { name: 'Rounds' }).getByText('Cover sliding windows too', { exact: true }).waitFor();

      // Someone else's feedback moves the plan on: approving the version shown is a 409, told as such.
      const other = await api('POST', `/api/v1/tasks/${id}/review`, { action: 'feedback', message: 'And token buckets' });
      expect(other.status).toBe(200);
      await page.getByRole('button', { name: 'Approve version 2' }).click();
      await expect.poll(() => page.getByTestId('review-error').innerText()).toMatch(/Conflict: plan has been updated.*reload the plan/);
      expect((await api('GET', `/api/v1/tasks/${id}/review`)).body.status).toBe('reviewing');
      await page.getByRole('button', { name: 'Reload the plan' }).click();
      await expect.poll(() => page.getByTestId('review-version').innerText()).toBe('3');

      await page.getByRole('button', { name: 'Approve version 3' }).click();
      await page.waitForURL(/#\/live\//);
      await page.getByRole('heading', { name: 'Task' }).waitFor();
      expect(await ended(id)).toBe('TASK_STATUS_COMPLETED');
      await expect.poll(() => page.getByTestId('status').innerText(), { timeout: 20_000 }).toBe('COMPLETED');
    });
  }, 80_000);
});

describe('approvals inbox in the browser', () => {
  it('approves one, refuses another with feedback (its task fails), refreshes the list (phone width, dark)', async () => {
    const [first, second] = await Promise.all([
      submit({ query: 'approve me from the console', mode: 'simple', context: { require_approval: true } }),
      submit({ query: 'refuse me from the console', mode: 'simple', context: { require_approval: true } }),
    ]);
    await Promise.all([pendingOf(first), pendingOf(second)]);
    await onPage(
      browser,
      'approvals',
      async (page) => {
        await signInWithKey(page, t.base, user.h['X-API-Key']);
        await page.getByRole('link', { name: 'Approvals', exact: true }).click();
        await page.getByRole('heading', { name: 'Approvals', level: 1 }).waitFor();
        const one = page.locator(`[data-testid="approval"][data-task="${first}"]`);
        const two = page.locator(`[data-testid="approval"][data-task="${second}"]`);
        await one.getByRole('heading', { name: 'Run the task: approve me from the console (simple)' }).waitFor();
        await two.waitFor();
        await expectAccessible(page, 'approvals (phone, dark)');

        await one.getByRole('button', { name: 'Approve' }).click();
        await one.waitFor({ state: 'detached' });
        // Refusing needs a reason.
        await two.getByRole('button', { name: 'Refuse' }).click();
        await expect.poll(() => two.getByRole('alert').innerText()).toContain('feedback');
        await two.getByLabel('Feedback (required to refuse)').fill('not today');
        await two.getByRole('button', { name: 'Refuse' }).click();
        await two.waitFor({ state: 'detached' });
        await page.getByText('No pending approvals.').waitFor();
        await expectAccessible(page, 'approvals, empty');
      },
      { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, colorScheme: 'dark' },
    );
    expect(await ended(first)).toBe('TASK_STATUS_COMPLETED');
    expect(await ended(second)).toBe('TASK_STATUS_FAILED');
    expect((await api('GET', `/api/v1/tasks/${second}`)).body.error).toContain('approval rejected: not today');
  }, 60_000);

  it('modifies a tool call: its arguments as JSON, checked before sending; the step runs with them', async () => {
    const id = await submit({ query: '1+1', context: { template: 'calc-steps', disable_ai: true } });
    await pendingOf(id);
    await onPage(browser, 'modify', async (page) => {
      await signInWithKey(page, t.base, user.h['X-API-Key']);
      await page.goto(`${t.base}/#/approvals`);
      const item = page.locator(`[data-testid="approval"][data-task="${id}"]`);
      await item.getByRole('heading', { name: 'Run the tool calculator' }).waitFor();
      await item.getByRole('button', { name: 'Modify' }).click();
      const args = item.getByLabel('Arguments (JSON object)');
      expect(JSON.parse(await args.inputValue())).toEqual({ expression: '1+1' });
      await expectAccessible(page, 'approvals, modifying');
      await args.fill('{"expression": ');
      await item.getByRole('button', { name: 'Approve with these arguments' }).click();
      await expect.poll(() => item.getByRole('alert').innerText()).toContain('not valid JSON');
      await args.fill('{"expression": "6*7"}');
      await item.getByRole('button', { name: 'Approve with these arguments' }).click();
      await item.waitFor({ state: 'detached' });
    });
    expect(await ended(id)).toBe('TASK_STATUS_COMPLETED');
    expect((await api('GET', `/api/v1/tasks/${id}`)).body.result).toContain('42');
  }, 60_000);
});
