/**
 * The `tools.browser` slice: the headless browser of the screenshot and landing-page agents.
 * - BROWSER_EXECUTABLE_PATH: the Chromium (or Chrome) binary. Unset: `chromium`,
 *   `chromium-browser`, `google-chrome` looked up on PATH when the first page is opened; none
 *   found -> the browser tools fail saying what to install or set (start-up does not need it).
 * - BROWSER_MAX_PAGES: pages open at once in one process (default 2); further calls wait.
 * - BROWSER_LAUNCH_TIMEOUT_MS: how long starting the browser may take (default 30000).
 * - PATH: where the browser is looked for when BROWSER_EXECUTABLE_PATH is unset.
 */
import { num, optStr, str, type Env } from './env.js';

export function browserConfig(env: Env = process.env) {
  return {
    executablePath: optStr(env, 'BROWSER_EXECUTABLE_PATH')?.trim(),
    maxPages: num(env, 'BROWSER_MAX_PAGES', 2, { min: 1, max: 32, int: true }),
    launchTimeoutMs: num(env, 'BROWSER_LAUNCH_TIMEOUT_MS', 30_000, { min: 1000, max: 300_000, int: true }),
    searchPath: str(env, 'PATH', ''),
  };
}
export type BrowserConfig = ReturnType<typeof browserConfig>;
