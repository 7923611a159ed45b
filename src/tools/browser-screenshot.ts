/**
 * `browser_screenshot` (catalogue agent `browser-screenshot`): one page rendered by the headless
 * browser, as a PNG screenshot with what the browser saw of it (final URL after redirects,
 * status, title, size). A screenshot over 500 KB is stored as the caller's blob and the output
 * holds a reference (`screenshot.blob_key`, `screenshot.url` = /api/v1/blob/<key>) instead.
 */
import type { BlobStore } from '../bus/index.js';
import { WAIT_UNTIL, capturePage, screenshotRef, type WaitUntil } from './browser-capture.js';
import type { BrowserPool } from './browser.js';
import type { Tool, ToolOutput } from './tool.js';

export interface BrowserToolDeps {
  pool: BrowserPool;
  /** TOOLS_HTTP_ALLOW_HOSTS (the guard's exemptions). */
  allowHosts: string;
  /** Where screenshots over 500 KB go; without it such a screenshot fails the call, saying so. */
  blobs?: BlobStore;
}

export type BrowserScreenshotArgs = { url: string; full_page?: boolean; wait_until?: WaitUntil; timeout_ms?: number };

export function browserScreenshotTool(deps: BrowserToolDeps): Tool<BrowserScreenshotArgs> & { close(): Promise<void> } {
  return {
    name: 'browser_screenshot',
    description:
      'Open a web page in a headless browser (scripts run) and take a PNG screenshot of the viewport or the full page. Returns the final URL, HTTP status, title and image size; screenshots over 500 KB are returned as a blob reference.',
    category: 'web',
    version: '1.0.0',
    parameters: {
      type: 'object',
      properties: {
        url: { type: 'string', description: 'The http(s) page to open', minLength: 1, maxLength: 4096 },
        full_page: { type: 'boolean', description: 'The whole scrollable page instead of the first viewport (1280x800)', default: false },
        wait_until: {
          type: 'string',
          enum: [...WAIT_UNTIL],
          description: 'When the page counts as loaded: load, domcontentloaded or networkidle (no requests for 500 ms)',
          default: 'domcontentloaded',
        },
        timeout_ms: { type: 'integer', description: 'Time for the page to load and be captured, ms', minimum: 1000, maximum: 120_000, default: 30_000 },
      },
      required: ['url'],
      additionalProperties: false,
    },
    // The page's own timeout_ms (at most 120 s) plus waiting for a free browser page.
    timeoutMs: 180_000,
    costPerUse: 0,
    dangerous: false,
    // Not offered to models where no browser is installed (a direct call says what to install).
    get available() {
      return deps.pool.installed();
    },
    retryable: true,
    async run(args, ctx): Promise<ToolOutput> {
      const timeoutMs = args.timeout_ms ?? 30_000;
      const waitUntil = args.wait_until ?? 'domcontentloaded';
      const fullPage = args.full_page ?? false;
      const c = await capturePage(deps.pool, deps.allowHosts, { url: args.url, device: 'desktop', fullPage, waitUntil, timeoutMs }, ctx.signal);
      const screenshot = await screenshotRef(c.png, deps.blobs, { userId: ctx.userId, tenantId: ctx.tenantId });
      const where = 'url' in screenshot ? `stored as a blob at ${screenshot.url}` : 'inline (base64)';
      return {
        output: {
          url: c.url,
          final_url: c.finalUrl,
          status: c.status,
          title: c.title,
          width: c.width,
          height: c.height,
          full_page: fullPage,
          height_capped: c.heightCapped,
          wait_until: waitUntil,
          screenshot,
          timestamp: new Date().toISOString(),
        },
        text: `Screenshot of ${c.title ? `"${c.title}" ` : ''}${c.finalUrl} (HTTP ${c.status}): ${c.width}x${c.height} PNG, ${c.png.length} bytes, ${where}.`,
        metadata: { bytes: c.png.length, blob: 'url' in screenshot },
      };
    },
    close: () => deps.pool.close(),
  };
}
