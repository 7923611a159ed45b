/**
 * One page in the headless browser: load it (the guard vets the page's host first, so a refused
 * URL is a clear error and not a blank page), take its screenshot, and optionally its HTML and
 * its sections' screenshots; and the screenshot as a tool output: inline base64 up to 500 KB,
 * a blob reference above (the spec's limit), and within one output at most 500 KB of screenshots
 * inline in all (the rest as blob references), because a tool's output is journaled as one NATS
 * message and must fit the server's max_payload (1 MB by default for an external nats-server).
 */
import type { Page } from 'playwright-core';
import type { BlobOwner, BlobStore } from '../bus/index.js';
import { REFUSED_HEADER, vetHost } from './browser-guard.js';
import type { BrowserPool, Device } from './browser.js';
import { parseAllowList } from './net.js';
import { ToolError } from './tool.js';

export const WAIT_UNTIL = ['load', 'domcontentloaded', 'networkidle'] as const;
export type WaitUntil = (typeof WAIT_UNTIL)[number];

/** Screenshots larger than this are stored as blobs (spec: over 500 KB). */
export const INLINE_SCREENSHOT_MAX_BYTES = 500 * 1024;
/** The largest screenshot kept at all. */
export const SCREENSHOT_MAX_BYTES = 32 * 1024 * 1024;
/** A full-page screenshot stops at this height (CSS px): Chromium cannot paint taller images in one piece. */
export const FULL_PAGE_MAX_HEIGHT = 16_384;

export interface CaptureRequest {
  url: string;
  device: Device;
  fullPage: boolean;
  waitUntil: WaitUntil;
  timeoutMs: number;
  /** Also return the rendered HTML (after scripts ran). */
  html?: boolean;
  /** Also screenshot up to this many sections of the page (0: none). */
  sections?: number;
}

export interface SectionShot {
  index: number;
  /** The element's tag (or `viewport` for a slice of a page without section elements). */
  tag: string;
  heading: string;
  top: number;
  height: number;
  png: Buffer;
}

export interface Capture {
  url: string;
  finalUrl: string;
  /** HTTP status of the main document (0 when the browser did not get one, e.g. a data: redirect). */
  status: number;
  title: string;
  width: number;
  height: number;
  /** The full page was taller than FULL_PAGE_MAX_HEIGHT and was cut there. */
  heightCapped: boolean;
  png: Buffer;
  html?: string;
  sections?: SectionShot[];
}

/** The size a PNG says it has (its IHDR chunk). */
export function pngSize(png: Buffer): { width: number; height: number } {
  if (png.length < 24 || png.readUInt32BE(0) !== 0x89504e47) throw new ToolError('browser: the screenshot is not a PNG', 'backend');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

/** An http(s) URL, or ToolError('bad_arguments'). */
export function pageUrl(raw: unknown): URL {
  if (typeof raw !== 'string' || !raw.trim()) throw new ToolError('url is required', 'bad_arguments');
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    throw new ToolError(`invalid URL: ${raw}`, 'bad_arguments');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new ToolError(`only http and https pages are opened (got ${u.protocol})`, 'bad_arguments');
  return u;
}

export async function capturePage(pool: BrowserPool, allowHosts: string, req: CaptureRequest, signal: AbortSignal): Promise<Capture> {
  const url = pageUrl(req.url);
  pool.executable(); // no browser: say so before anything else
  const vetted = await vetHost(url.hostname, parseAllowList(allowHosts ? [allowHosts] : []));
  if (!vetted.ok) throw new ToolError(`refused: ${vetted.reason}`, 'bad_arguments');
  return pool.withPage({ device: req.device, signal }, async (page) => {
    const deadline = Date.now() + req.timeoutMs;
    const left = () => Math.max(1, deadline - Date.now());
    let response;
    try {
      response = await page.goto(url.href, { waitUntil: req.waitUntil, timeout: req.timeoutMs });
    } catch (err) {
      const msg = (err as Error).message.split('\n')[0] ?? '';
      if ((err as Error).name === 'TimeoutError')
        throw new ToolError(`browser: ${url.href} did not reach ${req.waitUntil} within ${req.timeoutMs} ms`, 'backend');
      throw new ToolError(`browser: could not open ${url.href}: ${msg}`, 'backend');
    }
    const refused = response?.headers()[REFUSED_HEADER];
    if (refused) throw new ToolError(`refused: ${decodeURIComponent(refused)}`, 'bad_arguments');
    const title = await page.title();
    const png = await screenshot(page, req.fullPage, left());
    const size = pngSize(png);
    const out: Capture = {
      url: url.href,
      finalUrl: page.url(),
      status: response?.status() ?? 0,
      title,
      ...size,
      heightCapped: req.fullPage && size.height >= FULL_PAGE_MAX_HEIGHT,
      png,
    };
    if (req.html) out.html = await page.content();
    if (req.sections) out.sections = await sectionShots(page, req.sections, left);
    return out;
  });
}

async function screenshot(page: Page, fullPage: boolean, timeout: number): Promise<Buffer> {
  if (!fullPage) return page.screenshot({ type: 'png', timeout });
  const height = await page.evaluate<number>('Math.max(document.documentElement.scrollHeight, document.body ? document.body.scrollHeight : 0)');
  if (height <= FULL_PAGE_MAX_HEIGHT) return page.screenshot({ type: 'png', fullPage: true, timeout });
  const width = page.viewportSize()?.width ?? 1280;
  return page.screenshot({ type: 'png', fullPage: true, clip: { x: 0, y: 0, width, height: FULL_PAGE_MAX_HEIGHT }, timeout });
}

/** Runs in the page (plain JavaScript: the service is not compiled against the DOM's types). */
const SECTIONS_SCRIPT = `(limit) => {
  const vw = window.innerWidth;
  const candidates = Array.from(document.querySelectorAll('header, nav, section, article, footer, main > *, [role="banner"], [role="contentinfo"]'));
  const picked = [];
  for (const el of candidates) {
    if (picked.some((p) => p.contains(el))) continue;
    const r = el.getBoundingClientRect();
    if (r.height < 40 || r.width < vw / 2) continue;
    picked.push(el);
    if (picked.length >= limit) break;
  }
  return picked.map((el) => {
    const r = el.getBoundingClientRect();
    const h = el.querySelector('h1, h2, h3, h4');
    return {
      tag: el.tagName.toLowerCase(),
      heading: ((h && h.textContent) || '').trim().replace(/\\s+/g, ' ').slice(0, 200),
      top: Math.round(r.top + window.scrollY),
      height: Math.round(r.height),
    };
  });
}`;

/**
 * Up to `max` sections in document order: the page's header, nav, section, article, main's
 * children and footer elements that are not inside another one (at least 40 px tall and half
 * the page wide); a page without such elements is cut into viewport-high slices instead.
 */
async function sectionShots(page: Page, max: number, left: () => number): Promise<SectionShot[]> {
  const boxes = await page.evaluate<Array<{ tag: string; heading: string; top: number; height: number }>>(`(${SECTIONS_SCRIPT})(${Math.floor(max)})`);
  const width = page.viewportSize()?.width ?? 1280;
  let parts = boxes;
  if (parts.length === 0) {
    const vh = page.viewportSize()?.height ?? 800;
    const total = await page.evaluate<number>('document.documentElement.scrollHeight');
    parts = [];
    for (let top = 0; top < total && parts.length < max; top += vh) parts.push({ tag: 'viewport', heading: '', top, height: Math.min(vh, total - top) });
  }
  const shots: SectionShot[] = [];
  for (const [index, b] of parts.entries()) {
    const height = Math.min(b.height, FULL_PAGE_MAX_HEIGHT);
    const png = await page.screenshot({ type: 'png', fullPage: true, clip: { x: 0, y: b.top, width, height }, timeout: left() });
    shots.push({ index, ...b, height, png });
  }
  return shots;
}

/** How a screenshot appears in a tool's output. */
export type ScreenshotRef =
  { content_type: 'image/png'; size_bytes: number; data_base64: string } | { content_type: 'image/png'; size_bytes: number; blob_key: string; url: string };

/**
 * Screenshot bytes one tool output holds inline in all (683 KB as base64): a tool's output is
 * journaled as one NATS message, which must fit the server's max_payload (1 MB by default for an
 * external nats-server, 8 MB for the embedded one), with room left for the rest of the output.
 */
export const OUTPUT_INLINE_SCREENSHOTS_MAX_BYTES = 500 * 1024;

/** What is left of one output's inline screenshot bytes; shared by every screenshot of that output. */
export class InlineBudget {
  constructor(private left = OUTPUT_INLINE_SCREENSHOTS_MAX_BYTES) {}
  /** Takes `bytes` when they fit (and keeps them taken); false when they do not. */
  take(bytes: number): boolean {
    if (bytes > this.left) return false;
    this.left -= bytes;
    return true;
  }
  get remaining(): number {
    return this.left;
  }
}

/**
 * Inline when it is at most 500 KB and fits what is left of the output's budget (`copies`: how
 * often the output repeats it, e.g. also as a data: URL); otherwise stored as the caller's blob
 * and referenced.
 */
export async function screenshotRef(
  png: Buffer,
  blobs: BlobStore | undefined,
  owner: BlobOwner,
  budget = new InlineBudget(),
  copies = 1,
): Promise<ScreenshotRef> {
  if (png.length <= INLINE_SCREENSHOT_MAX_BYTES && budget.take(png.length * copies)) {
    return { content_type: 'image/png', size_bytes: png.length, data_base64: png.toString('base64') };
  }
  if (png.length > SCREENSHOT_MAX_BYTES) {
    throw new ToolError(`browser: the screenshot is ${png.length} bytes, over the ${SCREENSHOT_MAX_BYTES} byte limit; take it without full_page`, 'limit');
  }
  if (!blobs) {
    const why =
      png.length > INLINE_SCREENSHOT_MAX_BYTES
        ? 'over 500 KB'
        : `over what is left (${budget.remaining} bytes) of the ${OUTPUT_INLINE_SCREENSHOTS_MAX_BYTES} screenshot bytes one output holds inline`;
    throw new ToolError(`browser: the screenshot is ${png.length} bytes (${why}) and no blob store is available to keep it`, 'not_configured');
  }
  const b = await blobs.put(png, 'image/png', owner);
  return { content_type: 'image/png', size_bytes: b.sizeBytes, blob_key: b.key, url: blobUrl(b.key) };
}

export const blobUrl = (key: string) => `/api/v1/blob/${key}`;

/** A screenshot's URL: the blob route for a stored one, a data: URL for an inline one. */
export const screenshotUrl = (r: ScreenshotRef) => ('url' in r ? r.url : `data:${r.content_type};base64,${r.data_base64}`);
