/**
 * The console's agents and tools pages end to end (built with scripts/build-console.mjs, served
 * by the gateway, headless Chromium): the agent catalogue and its filter; an agent run from the
 * form built from its input_schema, followed live to COMPLETED with the result the agent
 * produces; the form's own checks next to the field, and the service's 400 shown as it words it;
 * the tool list with the API's category filter, a tool executed from its form with its output, a
 * failure the tool reports, a backend without credentials (502) and a tool refused for direct
 * execution (403) shown with the service's message. axe-core on every page (desktop light, and
 * phone width in dark mode): no serious or critical violation; no sideways scrolling on a phone.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain JavaScript build script without type declarations
import { buildConsole } from '../scripts/build-console.mjs';
import { CALC_AGENT } from './helpers/agents.js';
import { json, startTestApp, type TestApp } from './helpers/app.js';
import { expectAccessible, launchBrowser, onPage, signInWithKey } from './helpers/browser.js';
import { registerUser, type TestUser } from './helpers/users.js';

/** An agent with a field of every kind the form draws (it runs the calculator, which takes none of them but expression: only the form matters). */
const KINDS_AGENT = `id: kinds
name: Kinds
description: Every kind of field.
category: test
tool: calculator
cost_per_call: 0.002
input_schema:
  required: [expression]
  properties:
    expression: { type: string, description: The expression }
    device: { type: string, enum: [desktop, mobile], default: desktop }
    n: { type: integer, minimum: 1, maximum: 10, description: How many }
    flag: { type: boolean }
    list: { type: array, items: { type: string }, maxItems: 2 }
    devices: { type: array, items: { type: string, enum: [desktop, mobile, tablet] }, default: [desktop, mobile] }
    options: { type: object, description: Anything else }
`;

const PHONE_DARK = { viewport: { width: 375, height: 740 }, isMobile: true, hasTouch: true, colorScheme: 'dark' } as const;

let t: TestApp;
let user: TestUser;
let browser: Browser;
let dir: string;

beforeAll(async () => {
  await buildConsole({ typecheck: false });
  dir = mkdtempSync(join(tmpdir(), 'console-agents-'));
  writeFileSync(join(dir, 'calc.yaml'), CALC_AGENT);
  writeFileSync(join(dir, 'kinds.yaml'), KINDS_AGENT);
  t = await startTestApp({
    GATEWAY_SKIP_AUTH: '0',
    AGENT_CATALOG_DIR: dir,
    CALCULATOR_RATE_LIMIT: '0',
    WEB_SEARCH_PROVIDER: '',
    RATE_LIMIT_REQUESTS: '100000',
  });
  user = await registerUser(t.base, 'console-agents');
  browser = await launchBrowser();
  // The calculator's worker threads start on first use: warm them before a run is timed.
  await fetch(`${t.base}/api/v1/tools/calculator/execute`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...user.h },
    body: JSON.stringify({ arguments: { expression: '1+1' } }),
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await t?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const taskStatus = async (id: string) => json(await fetch(`${t.base}/api/v1/tasks/${id}`, { headers: user.h }));
const formError = (page: Page) => page.getByTestId('form-error').innerText();
/** Whether the page scrolls sideways (the test has no DOM types: the page's document). */
const scrollsSideways = (page: Page) =>
  page.evaluate(() => {
    const el = (globalThis as any).document.documentElement;
    return el.scrollWidth > el.clientWidth;
  });

describe('agents in the console', () => {
  it('lists the catalogue, runs an agent from its form and follows it live to its result', async () => {
    await onPage(browser, 'agent-run', async (page) => {
      await signInWithKey(page, t.base, user.h['X-API-Key']!);
      await page.getByRole('link', { name: 'Agents', exact: true }).click();
      await page.getByRole('heading', { name: 'Agents', level: 1 }).waitFor();
      await expect.poll(() => page.getByTestId('agent').count()).toBe(2);
      await expect.poll(() => page.getByTestId('agent').first().innerText()).toContain('Exact arithmetic.');
      await expectAccessible(page, 'agent catalogue');
      const shownIds = () => page.getByTestId('agent').evaluateAll((els) => els.map((e) => e.getAttribute('data-id')));
      await page.getByLabel('Category').selectOption('math');
      await expect.poll(shownIds).toEqual(['calc']);
      await page.getByLabel('Category').selectOption('');
      await page.getByLabel('Search').fill('every kind');
      await expect.poll(shownIds).toEqual(['kinds']);
      await page.getByLabel('Search').fill('');

      await page.getByRole('link', { name: 'Calculator', exact: true }).click();
      await page.getByRole('heading', { name: 'Calculator', level: 1 }).waitFor();
      const expression = page.getByLabel('expression', { exact: true });
      expect(await expression.getAttribute('required')).not.toBeNull();
      // The property's description is its help text, tied to the input.
      const help = await expression.getAttribute('aria-describedby');
      expect(await page.locator(`#${help}`).innerText()).toBe('The expression');
      await expectAccessible(page, 'agent form');

      await expression.fill('2^10');
      await page.getByRole('button', { name: 'Run' }).click();
      await page.waitForURL(/#\/live\//);
      const id = decodeURIComponent(new URL(page.url()).hash.split('/')[2]!);
      await expect.poll(() => page.getByTestId('status').innerText(), { timeout: 20_000 }).toBe('COMPLETED');
      const status = await taskStatus(id);
      expect(status.status).toBe('TASK_STATUS_COMPLETED');
      expect(status.metadata).toMatchObject({ agent_id: 'calc', execution_mode: 'agent' });
      expect(JSON.parse(status.result)).toMatchObject({ result: '1024', exact: true });
      // The live view shows the agent's output.
      await expect.poll(() => page.locator('main').innerText()).toContain('1024');
    });
  }, 60_000);

  it('draws every kind of field; its own checks show next to the field, the service 400 on the form (phone, dark)', async () => {
    await onPage(
      browser,
      'agent-form-errors',
      async (page) => {
        await signInWithKey(page, t.base, user.h['X-API-Key']!);
        await page.goto(`${t.base}/#/agents/kinds`);
        await page.getByRole('heading', { name: 'Kinds', level: 1 }).waitFor();
        // An enum is a select with its default chosen; an integer a number input with its bounds;
        // a boolean without default may stay unset; a list of strings is one a line.
        const device = page.getByLabel('device', { exact: true });
        expect(await device.evaluate((el: any) => el.tagName)).toBe('SELECT');
        expect(await device.inputValue()).toBe('0');
        const n = page.getByLabel('n', { exact: true });
        expect([await n.getAttribute('type'), await n.getAttribute('min'), await n.getAttribute('max')]).toEqual(['number', '1', '10']);
        expect(await page.getByLabel('flag', { exact: true }).inputValue()).toBe('');
        expect(await page.getByLabel('list', { exact: true }).evaluate((el: any) => el.tagName)).toBe('TEXTAREA');
        // A list of enum values is a group of checkboxes (its defaults ticked); an object is JSON.
        const devices = page.getByRole('group', { name: 'devices' });
        expect(await devices.getByLabel('mobile', { exact: true }).isChecked()).toBe(true);
        expect(await devices.getByLabel('tablet', { exact: true }).isChecked()).toBe(false);
        const options = page.getByLabel('options', { exact: true });
        expect(await page.locator(`#${await options.getAttribute('aria-describedby')}`).innerText()).toBe('Anything else. JSON (object).');
        await expectAccessible(page, 'agent form (phone, dark)');
        expect(await scrollsSideways(page)).toBe(false);

        // The form's own checks: nothing is sent, each message is next to its field.
        await page.getByRole('button', { name: 'Run' }).click();
        await expect.poll(() => formError(page)).toContain('expression');
        await n.fill('11');
        await page.getByLabel('list', { exact: true }).fill('a\nb\nc');
        await options.fill('{"a": ');
        await page.getByLabel('expression', { exact: true }).fill('1+1');
        await page.getByRole('button', { name: 'Run' }).click();
        await expect.poll(() => formError(page)).toBe('3 fields do not fit: n, list, options.');
        expect(await page.locator('[data-field="options"] .field-error').innerText()).toMatch(/^Not valid JSON: /);
        await options.fill('[1]');
        await page.getByRole('button', { name: 'Run' }).click();
        await expect.poll(() => page.locator('[data-field="options"] .field-error').innerText()).toBe('Must be JSON of type object.');
        expect(await n.getAttribute('aria-invalid')).toBe('true');
        expect(await page.locator('[data-field="n"] .field-error').innerText()).toBe('At most 10.');
        expect(await page.locator('[data-field="list"] .field-error').innerText()).toBe('At most 2 items (3 now).');
        await expectAccessible(page, 'agent form with errors (phone, dark)');
        expect(page.url()).toMatch(/#\/agents\/kinds$/);

        // What only the service knows (the calculator's own limit of 1000 characters, not in the
        // agent's schema): its 400, as it words it, on the form and next to the field.
        await page.goto(`${t.base}/#/agents/calc`);
        await page.getByRole('heading', { name: 'Calculator', level: 1 }).waitFor();
        await page.getByLabel('expression', { exact: true }).fill('1'.repeat(1001));
        await page.getByRole('button', { name: 'Run' }).click();
        const message = 'input validation failed: field expression: must NOT have more than 1000 characters';
        await expect.poll(() => formError(page)).toBe(message);
        expect(await page.locator('[data-field="expression"] .field-error').innerText()).toBe(message);
        expect(page.url()).toMatch(/#\/agents\/calc$/);
        await expectAccessible(page, 'agent form with the service refusal (phone, dark)');
        expect(await scrollsSideways(page)).toBe(false);
      },
      PHONE_DARK,
    );
  }, 60_000);
});

describe('tools in the console', () => {
  it('lists the tools and filters by category; executes the calculator from its form (phone, dark)', async () => {
    await onPage(
      browser,
      'tool-run',
      async (page) => {
        await signInWithKey(page, t.base, user.h['X-API-Key']!);
        await page.getByRole('link', { name: 'Tools', exact: true }).click();
        await page.getByRole('heading', { name: 'Tools', level: 1 }).waitFor();
        await expect.poll(() => page.getByTestId('tool').count()).toBeGreaterThan(5);
        const names = await page.getByTestId('tool').evaluateAll((els) => els.map((e) => e.getAttribute('data-name')));
        expect(names).toContain('calculator');
        expect(names).not.toContain('bash');
        await expectAccessible(page, 'tools list (phone, dark)');
        expect(await scrollsSideways(page)).toBe(false);
        // The category filter is the API's.
        const asked = page.waitForRequest((r) => r.url().includes('/api/v1/tools?category=math'));
        await page.getByLabel('Category').selectOption('math');
        await asked;
        await expect.poll(() => page.getByTestId('tool').evaluateAll((els) => els.map((e) => e.getAttribute('data-name')))).toEqual(['calculator']);

        await page.getByRole('link', { name: 'calculator', exact: true }).click();
        await page.getByRole('heading', { name: 'calculator', level: 1 }).waitFor();
        const expression = page.getByLabel('expression', { exact: true });
        expect(await expression.getAttribute('maxlength')).toBe('1000');
        await expectAccessible(page, 'tool form (phone, dark)');
        await expression.fill('2^10 + 1/4');
        await page.getByRole('button', { name: 'Execute' }).click();
        await expect.poll(() => page.getByTestId('tool-outcome').innerText()).toBe('Succeeded');
        expect(await page.getByTestId('tool-text').innerText()).toContain('1024.25');
        expect(JSON.parse(await page.getByTestId('tool-output').innerText())).toMatchObject({ result: '1024.25', exact: true });
        // Its usage: the synthetic token count (at least 100) and the cost.
        expect(await page.getByTestId('tool-result').innerText()).toMatch(/Tokens\s+100\s+Cost\s+\$0\b/);
        await expectAccessible(page, 'tool result (phone, dark)');
        expect(await scrollsSideways(page)).toBe(false);

        // A failure the tool reports is a result with its error.
        await expression.fill('1/0');
        await page.getByRole('button', { name: 'Execute' }).click();
        await expect.poll(() => page.getByTestId('tool-outcome').innerText()).toBe('Failed');
        expect(await page.getByTestId('tool-reported-error').innerText()).toMatch(/division by zero/i);
      },
      PHONE_DARK,
    );
  }, 60_000);

  it("shows the service's refusals: a backend without credentials, a tool not for direct execution", async () => {
    await onPage(browser, 'tool-refusals', async (page) => {
      await signInWithKey(page, t.base, user.h['X-API-Key']!);
      await page.goto(`${t.base}/#/tools/web_search`);
      await page.getByRole('heading', { name: 'web_search', level: 1 }).waitFor();
      const max = page.getByLabel('max_results', { exact: true });
      expect(await max.inputValue()).toBe('5');
      await page.getByLabel('query', { exact: true }).fill('nats jetstream');
      await page.getByRole('button', { name: 'Execute' }).click();
      await expect.poll(() => formError(page)).toMatch(/^tool backend unavailable: web search is not configured: set WEB_SEARCH_PROVIDER/);
      expect(await page.getByTestId('tool-result').count()).toBe(0);
      await expectAccessible(page, 'tool form with a refusal');

      await page.goto(`${t.base}/#/tools/bash`);
      await page.getByRole('heading', { name: 'bash', level: 1 }).waitFor();
      await expect.poll(() => page.getByTestId('tool-error').innerText()).toBe('Tool not available via direct execution');
      expect(await page.getByRole('button', { name: 'Execute' }).count()).toBe(0);
      await expectAccessible(page, 'a refused tool');
    });
  }, 60_000);
});
