/**
 * The headless browser of the screenshot and landing-page tools: Debian's `chromium` (or any
 * Chromium/Chrome binary, BROWSER_EXECUTABLE_PATH) driven by playwright-core.
 *
 * Lifecycle: one browser process per service process, launched on the first page asked for
 * (start-up never needs it, nor loads playwright-core, ~90 MB of memory once imported),
 * relaunched on the next call if it crashed, and closed with the tool registry
 * (ToolRegistry.close at shutdown), its guard proxy with it. Concurrency: at most
 * BROWSER_MAX_PAGES pages at once; further calls wait their turn (their own time limit and
 * cancellation still apply while they wait). Isolation: every call gets its own browser context
 * (no cookies, storage or cache shared between calls or users), closed when the call ends or is
 * aborted. Every request of the browser goes through the SSRF guard (`./browser-guard.ts`).
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { LRUCache } from 'lru-cache';
import pLimit from 'p-limit';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { lazyImport } from '../kernel/index.js';
import { startBrowserGuard, type BrowserGuard } from './browser-guard.js';
import { ToolError } from './tool.js';

export interface BrowserSettings {
  /** BROWSER_EXECUTABLE_PATH; unset: chromium (or chromium-browser, google-chrome) on PATH. */
  executablePath?: string;
  /** BROWSER_MAX_PAGES: pages open at once. */
  maxPages: number;
  /** BROWSER_LAUNCH_TIMEOUT_MS. */
  launchTimeoutMs: number;
  /** Folders searched for the binary when executablePath is unset (the PATH the service started with). */
  searchPath?: string;
}

export const DEVICES = ['desktop', 'mobile', 'tablet'] as const;
export type Device = (typeof DEVICES)[number];

/** Viewports (CSS pixels, scale 1 so a screenshot's pixels are its CSS size). */
const VIEWPORTS: Record<Device, { width: number; height: number; isMobile: boolean; hasTouch: boolean }> = {
  desktop: { width: 1280, height: 800, isMobile: false, hasTouch: false },
  tablet: { width: 820, height: 1180, isMobile: true, hasTouch: true },
  mobile: { width: 390, height: 844, isMobile: true, hasTouch: true },
};

const playwright = lazyImport(() => import('playwright-core'));

const INSTALL_HINT = "install Debian's chromium (apt-get install chromium) or set BROWSER_EXECUTABLE_PATH to a Chromium or Chrome binary";
/** How long the answer to "is a browser installed?" is kept (file system checks per workflow were 20% of a busy intake's CPU). */
const INSTALLED_TTL_MS = 30_000;
const PATH_NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The browser binary to launch, or a ToolError('not_configured') saying what to install or set. */
export function resolveBrowserExecutable(configured: string | undefined, searchPath: string): string {
  if (configured) {
    if (!executable(configured))
      throw new ToolError(`browser: BROWSER_EXECUTABLE_PATH ${configured} is not an executable file; ${INSTALL_HINT}`, 'not_configured');
    return configured;
  }
  for (const dir of searchPath.split(delimiter).filter(Boolean)) {
    for (const name of PATH_NAMES) {
      const p = join(dir, name);
      if (executable(p)) return p;
    }
  }
  throw new ToolError(`browser: no headless browser found (looked for ${PATH_NAMES.join(', ')} on PATH); ${INSTALL_HINT}`, 'not_configured');
}

interface Running {
  browser: Browser;
  guard: BrowserGuard;
}

export class BrowserPool {
  private running?: Promise<Running>;
  private readonly slots: ReturnType<typeof pLimit>;
  private closed = false;
  private readonly found = new LRUCache<true, boolean>({ max: 1, ttl: INSTALLED_TTL_MS });

  constructor(
    private readonly s: BrowserSettings,
    /** TOOLS_HTTP_ALLOW_HOSTS: exempt from the guard (intranets, tests). */
    private readonly allowHosts: string,
  ) {
    this.slots = pLimit(Math.max(1, s.maxPages));
  }

  /** The binary that will be launched; throws the ToolError saying what to install or set. */
  executable(): string {
    return resolveBrowserExecutable(this.s.executablePath, this.s.searchPath ?? '');
  }

  /**
   * Whether a browser binary is there (tools without one are not offered to models). Asked by
   * every workflow's preparation, once per browser tool: the answer is kept for
   * INSTALLED_TTL_MS, so a browser installed while the service runs is seen within that time.
   */
  installed(): boolean {
    let found = this.found.get(true);
    if (found === undefined) {
      try {
        this.executable();
        found = true;
      } catch {
        found = false;
      }
      this.found.set(true, found);
    }
    return found;
  }

  /** Runs `fn` on a fresh page of its own context; the context is closed after, or at once on abort. */
  async withPage<T>(o: { device: Device; signal: AbortSignal }, fn: (page: Page) => Promise<T>): Promise<T> {
    if (this.closed) throw new ToolError('browser: the service is shutting down', 'backend');
    const executablePath = this.executable();
    o.signal.throwIfAborted();
    return this.slots(async () => {
      o.signal.throwIfAborted();
      const { browser } = await this.start(executablePath);
      const vp = VIEWPORTS[o.device];
      const context: BrowserContext = await browser.newContext({
        viewport: { width: vp.width, height: vp.height },
        deviceScaleFactor: 1,
        isMobile: vp.isMobile,
        hasTouch: vp.hasTouch,
        serviceWorkers: 'block',
        acceptDownloads: false,
      });
      const onAbort = () => void context.close().catch(() => undefined);
      o.signal.addEventListener('abort', onAbort, { once: true });
      try {
        const page = await context.newPage();
        return await fn(page);
      } catch (err) {
        // A call aborted mid-way sees playwright's "context closed" errors: report the abort.
        if (o.signal.aborted) throw o.signal.reason;
        throw err;
      } finally {
        o.signal.removeEventListener('abort', onAbort);
        await context.close().catch(() => undefined);
      }
    });
  }

  private start(executablePath: string): Promise<Running> {
    if (!this.running) {
      const p = this.launch(executablePath);
      this.running = p;
      // A failed launch is not kept: the next call tries again.
      p.catch(() => {
        if (this.running === p) this.running = undefined;
      });
    }
    return this.running;
  }

  private async launch(executablePath: string): Promise<Running> {
    const { chromium } = await playwright();
    const guard = await startBrowserGuard(this.allowHosts);
    let browser: Browser;
    try {
      browser = await chromium.launch({
        executablePath,
        headless: true,
        timeout: this.s.launchTimeoutMs,
        // Every request through the guard, loopback included (playwright adds <-loopback>).
        proxy: guard.proxy,
        args: ['--disable-dev-shm-usage', '--disable-gpu', '--no-first-run', '--mute-audio'],
      });
    } catch (err) {
      await guard.close();
      throw new ToolError(`browser: could not start ${executablePath}: ${(err as Error).message.split('\n')[0]}`, 'backend');
    }
    const running = { browser, guard };
    browser.on('disconnected', () => {
      void guard.close();
      if (this.running && !this.closed) {
        void this.running.then((r) => {
          if (r === running) this.running = undefined;
        });
      }
    });
    if (this.closed) {
      await browser.close().catch(() => undefined);
      throw new ToolError('browser: the service is shutting down', 'backend');
    }
    return running;
  }

  /** Closes the browser process and its guard (nothing outlives the service). */
  async close(): Promise<void> {
    this.closed = true;
    const r = await this.running?.catch(() => undefined);
    this.running = undefined;
    if (!r) return;
    await r.browser.close().catch(() => undefined);
    await r.guard.close();
  }
}
