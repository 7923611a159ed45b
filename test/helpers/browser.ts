/**
 * The console's browser tests share this: headless Chromium through playwright-core (Debian's
 * `chromium`, or BROWSER_EXECUTABLE_PATH), a fresh page per test that leaves a screenshot in a
 * temporary folder when it fails, axe-core on a page (no serious or critical violation), and
 * signing in with an API key.
 */
import { mkdtemp } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContextOptions, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { resolveBrowserExecutable } from '../../src/tools/browser.js';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: resolveBrowserExecutable(process.env.BROWSER_EXECUTABLE_PATH, process.env.PATH ?? ''), headless: true });
}

let shots: string | undefined;

/** Runs `fn` on a fresh page (its own storage); on failure saves a screenshot and names it. */
export async function onPage(browser: Browser, name: string, fn: (page: Page) => Promise<void>, opts: BrowserContextOptions = {}): Promise<void> {
  const context = await browser.newContext({ bypassCSP: true, ...opts });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  try {
    await fn(page);
    expect(errors, 'errors thrown in the page').toEqual([]);
  } catch (err) {
    shots ??= await mkdtemp(join(tmpdir(), 'taskorch-console-'));
    const file = join(shots, `${name}.png`);
    await page.screenshot({ path: file, fullPage: true }).catch(() => {});
    console.error(`console test "${name}" failed: screenshot at ${file}`);
    throw err;
  } finally {
    await context.close();
  }
}

/** axe-core on the page as it is: no serious or critical violation. */
export async function expectAccessible(page: Page, what: string): Promise<void> {
  await page.addScriptTag({ path: AXE });
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string; nodes: { target: unknown }[] }[] }> } }).axe;
    const r = await axe.run();
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => n.target) }));
  });
  expect(
    violations.filter((v) => v.impact === 'serious' || v.impact === 'critical'),
    `axe on ${what}`,
  ).toEqual([]);
}

/** Opens the console at `base` and signs in with `apiKey`; resolves on the New task page. */
export async function signInWithKey(page: Page, base: string, apiKey: string): Promise<void> {
  await page.goto(`${base}/`);
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  await page.getByLabel('API key').fill(apiKey);
  await page.getByRole('button', { name: 'Sign in with key' }).click();
  await page.getByRole('heading', { name: 'New task' }).waitFor();
}
