/**
 * The browser tools against a real headless Chromium (Debian's `chromium`, installed by .ci/run)
 * and local page servers: a real PNG screenshot, wait_until and timeout_ms, the SSRF guard on
 * the page, its redirects and its subresources, a screenshot over 500 KB stored as a blob with
 * its owner, landing-page analysis (model prompt built from the rendered page, sections, OCR
 * said not performed), the batch limit of 10 URLs, and a clear error when no browser exists.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BlobStore } from '../src/bus/index.js';
import { loadConfig } from '../src/config/index.js';
import { ToolRegistry, type ToolModel, type ToolModelRequest } from '../src/tools/index.js';
import { BrowserPool } from '../src/tools/browser.js';
import { browserScreenshotTool } from '../src/tools/browser-screenshot.js';
import { lpBatchAnalyzeTool } from '../src/tools/lp-batch-analyze.js';
import { lpVisualAnalyzeTool } from '../src/tools/lp-visual-analyze.js';
import { startTestNats, type TestNats } from './harness/nats.js';

// A real browser on a shared 2-core CI machine: pages take seconds, not milliseconds.
vi.setConfig({ testTimeout: 60_000 });

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** A full-page canvas of random pixels: its PNG cannot compress below a few MB. */
const NOISY_PAGE = `<!doctype html><html><head><title>Noise</title><style>body{margin:0}</style></head><body>
<canvas id="c" width="1280" height="1600" style="display:block"></canvas>
<script>
const c = document.getElementById('c').getContext('2d');
const img = c.createImageData(1280, 1600);
for (let i = 0; i < img.data.length; i++) img.data[i] = (i % 4 === 3) ? 255 : Math.floor(Math.random() * 256);
c.putImageData(img, 0, 0);
</script></body></html>`;

const LANDING = `<!doctype html><html><head><title>Acme Rockets</title><meta name="viewport" content="width=device-width"><meta name="description" content="Rockets for everyone"></head><body>
<header style="height:120px"><h1>Acme Rockets: to orbit for less</h1><a class="btn" href="/buy">Buy now</a></header>
<section style="height:400px"><h2>Why Acme</h2><p>Reusable boosters cut launch costs by half.</p><img src="/logo.png"></section>
<section style="height:400px"><h2>Trusted by 200 startups</h2><button>Book a demo</button><form><input name="e"></form></section>
<footer style="height:100px"><h3>Contact</h3></footer></body></html>`;

/** A canvas of random pixels (its PNG does not compress: ~3 bytes a pixel). */
const noise = (id: string, w: number, h: number) =>
  `<canvas id="${id}" width="${w}" height="${h}" style="display:block"></canvas><script>{const c = document.getElementById('${id}').getContext('2d'); const img = c.createImageData(${w}, ${h}); for (let i = 0; i < img.data.length; i++) img.data[i] = (i % 4 === 3) ? 255 : Math.floor(Math.random() * 256); c.putImageData(img, 0, 0);}</script>`;

/** 12 sections of ~150 KB screenshots each: 1.8 MB inline before outputs had a budget. */
const MANY_SECTIONS = `<!doctype html><html><head><title>Many sections</title><style>body{margin:0} section{height:160px}</style></head><body>
${Array.from({ length: 12 }, (_, i) => `<section><h2>Part ${i + 1}</h2>${noise(`c${i}`, 500, 100)}</section>`).join('\n')}
</body></html>`;

/** One ~180 KB noisy block in the first viewport. */
const NOISE_SMALL = `<!doctype html><html><head><title>Small noise</title><style>body{margin:0}</style></head><body>${noise('c', 300, 200)}</body></html>`;

/** Screenshot bytes an output holds inline (base64 decoded), counting screenshot_url's data: URL too. */
function inlineBytes(v: unknown): number {
  if (typeof v === 'string') return v.startsWith('data:image/png;base64,') ? Buffer.from(v.slice(22), 'base64').length : 0;
  if (Array.isArray(v)) return v.reduce((n: number, x) => n + inlineBytes(x), 0);
  if (!v || typeof v !== 'object') return 0;
  return Object.entries(v).reduce((n, [k, x]) => n + (k === 'data_base64' ? Buffer.from(String(x), 'base64').length : inlineBytes(x)), 0);
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

async function serve(host: string, handler: Handler): Promise<{ server: Server; base: string; hits: string[]; connections: number[] }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? '');
    handler(req, res);
  });
  const connections: number[] = [];
  server.on('connection', () => connections.push(Date.now()));
  await new Promise<void>((r) => server.listen(0, host, r));
  return { server, base: `http://${host}:${(server.address() as AddressInfo).port}`, hits, connections };
}

const html = (res: ServerResponse, body: string, status = 200) => res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' }).end(body);

let nats: TestNats;
let nc: NatsConnection;
let blobs: BlobStore;
let pages: Awaited<ReturnType<typeof serve>>;
let other: Awaited<ReturnType<typeof serve>>;
let pool: BrowserPool;
let registry: ToolRegistry;
const prompts: ToolModelRequest[] = [];
const hanging = new Set<ServerResponse>();
const held = { now: 0, max: 0 };

/** A model that answers with JSON built from what it was given (so the test sees the prompt reached it). */
const model: ToolModel = async (req) => {
  prompts.push(req);
  const title = /Title: (.*)/.exec(req.prompt)?.[1] ?? '';
  return { text: JSON.stringify({ headline: title, recommendations: ['x'] }), model: 'test-model', provider: 'test', tokens: 42, costUsd: 0.0021 };
};

beforeAll(async () => {
  nats = await startTestNats();
  nc = await connect({ servers: nats.url });
  blobs = await BlobStore.open(jetstream(nc), await jetstreamManager(nc), { replicas: 1 });
  // A second host (127.0.0.2, not in the allow list) that the guard must keep the browser from.
  other = await serve('127.0.0.2', (_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(PNG_SIGNATURE));
  pages = await serve('127.0.0.1', (req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    if (u.pathname === '/plain') return html(res, '<title>Plain page</title><h1>Hello</h1>');
    if (u.pathname === '/noise') return html(res, NOISY_PAGE);
    if (u.pathname === '/landing') return html(res, LANDING);
    if (u.pathname === '/many-sections') return html(res, MANY_SECTIONS);
    if (u.pathname === '/noise-small') return html(res, NOISE_SMALL);
    if (u.pathname === '/logo.png') return res.writeHead(200, { 'content-type': 'image/png' }).end(PNG_SIGNATURE);
    if (u.pathname === '/missing') return html(res, '<title>Gone</title>', 404);
    // An image that never arrives: `load` never fires, `domcontentloaded` does.
    if (u.pathname === '/slow') return html(res, '<title>Slow</title><img src="/hang">');
    if (u.pathname === '/hang') {
      hanging.add(res);
      return;
    }
    // The title changes after a request made 200 ms in: only networkidle waits for it.
    if (u.pathname === '/late')
      return html(
        res,
        `<title>before</title><script>setTimeout(() => fetch('/late-data').then((r) => r.text()).then((t) => (document.title = t)), 200)</script>`,
      );
    if (u.pathname === '/late-data') return res.writeHead(200, { 'content-type': 'text/plain' }).end('after');
    if (u.pathname === '/offsite-image') return html(res, `<title>Offsite</title><img src="${other.base}/pixel.png">`);
    if (u.pathname === '/hold') {
      // Answers after 1 s, counting how many are being answered at once.
      held.now++;
      held.max = Math.max(held.max, held.now);
      setTimeout(() => {
        held.now--;
        html(res, '<title>Held</title>');
      }, 1000);
      return;
    }
    if (u.pathname === '/offsite-ws') {
      const ws = other.base.replace('http:', 'ws:');
      return html(
        res,
        `<title>ws</title><script>const w = new WebSocket('${ws}/ws'); w.onerror = () => (document.title = 'ws refused'); w.onopen = () => (document.title = 'ws open')</script>`,
      );
    }
    if (u.pathname === '/redirect-out') return res.writeHead(302, { location: `${other.base}/landing` }).end();
    if (u.pathname === '/redirect-in') return res.writeHead(302, { location: '/plain' }).end();
    html(res, 'not found', 404);
  });
  pool = new BrowserPool({ maxPages: 2, launchTimeoutMs: 30_000, searchPath: process.env.PATH }, '127.0.0.1');
  const deps = { pool, allowHosts: '127.0.0.1', blobs };
  registry = new ToolRegistry([browserScreenshotTool(deps), lpVisualAnalyzeTool({ ...deps, model }), lpBatchAnalyzeTool({ ...deps, model })]);
});

afterAll(async () => {
  for (const r of hanging) r.destroy();
  await registry?.close();
  pages?.server.close();
  other?.server.close();
  await nc?.close();
  await nats?.stop();
});

/** Browser processes this test process started (playwright spawns chromium as a direct child). */
function browserChildren(): number[] {
  let out = '';
  try {
    out = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' });
  } catch {
    // ps exits 1 when there is no child at all
  }
  return out
    .split('\n')
    .filter((l) => /chrom/.test(l) && /--proxy-server=/.test(l))
    .map((l) => Number(l.trim().split(/\s+/)[0]));
}

const shot = (args: Record<string, unknown>, o: { userId?: string; tenantId?: string } = {}) => registry.execute('browser_screenshot', args, o);

describe('browser_screenshot', () => {
  it('takes a real PNG of the viewport with the page facts', async () => {
    const e = await shot({ url: `${pages.base}/plain` });
    expect(e.error).toBeNull();
    const o = e.output as any;
    expect(o).toMatchObject({
      url: `${pages.base}/plain`,
      final_url: `${pages.base}/plain`,
      status: 200,
      title: 'Plain page',
      width: 1280,
      height: 800,
      full_page: false,
    });
    expect(o.wait_until).toBe('domcontentloaded');
    expect(o.screenshot.content_type).toBe('image/png');
    const png = Buffer.from(o.screenshot.data_base64, 'base64');
    expect(png.subarray(0, 8)).toEqual(PNG_SIGNATURE);
    expect(o.screenshot.size_bytes).toBe(png.length);
    expect(png.readUInt32BE(16)).toBe(1280);
    expect(Date.parse(o.timestamp)).toBeGreaterThan(Date.now() - 60_000);
    expect(e.text).toContain('Plain page');
    expect(e.text).not.toContain(o.screenshot.data_base64.slice(0, 50));
  });

  it('follows redirects and reports the final URL and an error status as it is', async () => {
    const r = (await shot({ url: `${pages.base}/redirect-in` })).output as any;
    expect(r.final_url).toBe(`${pages.base}/plain`);
    const m = (await shot({ url: `${pages.base}/missing` })).output as any;
    expect(m).toMatchObject({ status: 404, title: 'Gone' });
  });

  it('waits as wait_until says, and gives up after timeout_ms', async () => {
    const quick = await shot({ url: `${pages.base}/slow`, timeout_ms: 2000 });
    expect(quick.error).toBeNull();
    expect((quick.output as any).title).toBe('Slow');
    const started = Date.now();
    const stuck = await shot({ url: `${pages.base}/slow`, wait_until: 'load', timeout_ms: 1500 });
    expect(stuck.success).toBe(false);
    expect(stuck.error).toBe(`browser: ${pages.base}/slow did not reach load within 1500 ms`);
    expect(Date.now() - started).toBeLessThan(10_000);

    expect(((await shot({ url: `${pages.base}/late` })).output as any).title).toBe('before');
    expect(((await shot({ url: `${pages.base}/late`, wait_until: 'networkidle' })).output as any).title).toBe('after');
  });

  it('refuses bad arguments with the field named', async () => {
    await expect(shot({ url: `${pages.base}/plain`, wait_until: 'idle' })).rejects.toThrow(/arguments\.wait_until must be equal to one of the allowed values/);
    await expect(shot({ url: `${pages.base}/plain`, timeout_ms: 10 })).rejects.toThrow(/arguments\.timeout_ms must be >= 1000/);
    const ftp = await shot({ url: 'ftp://example.com/x' });
    expect(ftp.error).toBe('only http and https pages are opened (got ftp:)');
  });

  it('keeps the browser off hosts the SSRF guard refuses: the page, its redirects, its subresources', async () => {
    const direct = await shot({ url: `${other.base}/landing` });
    expect(direct.success).toBe(false);
    expect(direct.error).toMatch(/^refused: 127\.0\.0\.2 resolves to 127\.0\.0\.2, not a public address/);
    const redirected = await shot({ url: `${pages.base}/redirect-out` });
    expect(redirected.success).toBe(false);
    expect(redirected.error).toMatch(/^refused: 127\.0\.0\.2 resolves to 127\.0\.0\.2/);
    const page = await shot({ url: `${pages.base}/offsite-image`, wait_until: 'load' });
    expect(page.error).toBeNull();
    const ws = await shot({ url: `${pages.base}/offsite-ws`, wait_until: 'networkidle' });
    expect((ws.output as any).title).toBe('ws refused');
    expect(other.hits).toEqual([]);
    expect(other.connections).toEqual([]);
  });

  it('stores a screenshot over 500 KB as a blob of its owner and returns a reference', async () => {
    const e = await shot({ url: `${pages.base}/noise`, full_page: true, wait_until: 'load' }, { userId: 'user-1', tenantId: 'tenant-1' });
    expect(e.error).toBeNull();
    const s = (e.output as any).screenshot;
    expect(s.data_base64).toBeUndefined();
    expect(s.size_bytes).toBeGreaterThan(500 * 1024);
    expect(s.blob_key).toMatch(/^b[0-9a-f]{32}$/);
    expect(s.url).toBe(`/api/v1/blob/${s.blob_key}`);
    expect((e.output as any).height).toBe(1600);
    const mine = await blobs.getOwned(s.blob_key, { userId: 'user-1', tenantId: 'tenant-1' });
    expect(Buffer.from(mine!.bytes).subarray(0, 8)).toEqual(PNG_SIGNATURE);
    expect(mine!.bytes.length).toBe(s.size_bytes);
    expect(mine!.contentType).toBe('image/png');
    expect(await blobs.getOwned(s.blob_key, { userId: 'user-2', tenantId: 'tenant-1' })).toBeUndefined();
    expect(await blobs.getOwned(s.blob_key, { userId: 'user-1', tenantId: 'tenant-2' })).toBeUndefined();
  });

  it('opens at most BROWSER_MAX_PAGES (2) pages at once; the other calls wait their turn', async () => {
    const runs = await Promise.all([0, 1, 2, 3, 4].map((i) => shot({ url: `${pages.base}/hold?${i}` })));
    expect(runs.map((r) => r.error)).toEqual([null, null, null, null, null]);
    expect(held.max).toBeGreaterThan(0);
    expect(held.max).toBeLessThanOrEqual(2);
  });

  it('fails with what to install or set when there is no browser', async () => {
    const missing = new BrowserPool({ executablePath: '/nonexistent/chromium', maxPages: 1, launchTimeoutMs: 5000 }, '127.0.0.1');
    const r = new ToolRegistry([browserScreenshotTool({ pool: missing, allowHosts: '127.0.0.1' })]);
    expect(r.get('browser_screenshot')!.available).toBe(false);
    expect(registry.get('browser_screenshot')!.available).toBe(true);
    const e = await r.execute('browser_screenshot', { url: `${pages.base}/plain` });
    expect(e.success).toBe(false);
    expect(e.errorKind).toBe('not_configured');
    expect(e.error).toBe(
      "browser: BROWSER_EXECUTABLE_PATH /nonexistent/chromium is not an executable file; install Debian's chromium (apt-get install chromium) or set BROWSER_EXECUTABLE_PATH to a Chromium or Chrome binary",
    );
    const none = new BrowserPool({ maxPages: 1, launchTimeoutMs: 5000, searchPath: '/nonexistent:/also-not-here' }, '');
    const e2 = await new ToolRegistry([browserScreenshotTool({ pool: none, allowHosts: '' })]).execute('browser_screenshot', { url: 'https://example.com/' });
    expect(e2.error).toMatch(
      /^browser: no headless browser found \(looked for chromium, chromium-browser, google-chrome, google-chrome-stable on PATH\); install Debian's chromium/,
    );
    await r.close();
  });

  it('keeps the answer to "is a browser installed?" (asked by every workflow) instead of searching PATH each time', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'browser-path-'));
    try {
      const pool = new BrowserPool({ maxPages: 1, launchTimeoutMs: 5000, searchPath: dir }, '');
      expect(pool.installed()).toBe(false);
      const bin = join(dir, 'chromium');
      await writeFile(bin, '#!/bin/sh\n', { mode: 0o755 });
      expect(pool.installed()).toBe(false); // the answer is kept for a while
      expect(new BrowserPool({ maxPages: 1, launchTimeoutMs: 5000, searchPath: dir }, '').installed()).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('lp_visual_analyze', () => {
  it("analyses the rendered page's text and structure with the model and says what was analysed", async () => {
    prompts.length = 0;
    const e = await registry.execute('lp_visual_analyze', { url: `${pages.base}/landing`, analysis_prompt: 'focus on the offer' });
    expect(e.error).toBeNull();
    const o = e.output as any;
    expect(o.url).toBe(`${pages.base}/landing`);
    expect(o.screenshot_url).toMatch(/^data:image\/png;base64,iVBORw0KGgo/);
    expect(o.vision_analysis).toMatchObject({
      success: true,
      format: 'json',
      structured: { headline: 'Acme Rockets', recommendations: ['x'] },
      model: 'test-model',
      cost_usd: { vision: 0.0021, scrape: 0, ocr: 0, total: 0.0021 },
    });
    expect(o.vision_analysis.analysed).toMatch(/text and structure/);
    expect(e.costUsd).toBe(0.0021);
    expect(o.markdown).toContain('Reusable boosters cut launch costs by half');
    expect(o.page_structure).toMatchObject({ meta_description: 'Rockets for everyone', forms: 1, images: 1, images_without_alt: 1 });
    expect(o.page_structure.calls_to_action).toEqual(['Buy now', 'Book a demo']);
    expect(o.ocr).toEqual({ requested: false, performed: false, reason: 'not requested' });
    expect(prompts).toHaveLength(1);
    expect(prompts[0]!.prompt).toContain('What to focus on: focus on the offer');
    expect(prompts[0]!.prompt).toContain('Trusted by 200 startups');
  });

  it('captures sections (at most max_sections), and says OCR was not performed for ja', async () => {
    const e = await registry.execute('lp_visual_analyze', {
      url: `${pages.base}/landing`,
      capture_mode: 'sections',
      max_sections: 3,
      language: 'ja',
      include_markdown: false,
      device: 'mobile',
    });
    expect(e.error).toBeNull();
    const o = e.output as any;
    expect(o.sections.map((s: any) => [s.tag, s.heading])).toEqual([
      ['header', 'Acme Rockets: to orbit for less'],
      ['section', 'Why Acme'],
      ['section', 'Trusted by 200 startups'],
    ]);
    for (const s of o.sections) expect(Buffer.from(s.screenshot.data_base64, 'base64').subarray(0, 8)).toEqual(PNG_SIGNATURE);
    expect(o.width).toBe(390);
    expect(o.markdown).toBeUndefined();
    expect(o.ocr.requested).toBe(true);
    expect(o.ocr.performed).toBe(false);
    expect(o.ocr.reason).toMatch(/no OCR engine is available/);
    const off = await registry.execute('lp_visual_analyze', { url: `${pages.base}/plain`, language: 'ja', enable_ocr: false });
    expect((off.output as any).ocr.requested).toBe(false);
  });

  it('refuses enable_ocr: true (no OCR engine is installed) before opening the page', async () => {
    const before = pages.hits.length;
    const e = await registry.execute('lp_visual_analyze', { url: `${pages.base}/plain?ocr`, enable_ocr: true, language: 'ja' });
    expect(e.errorKind).toBe('bad_arguments');
    expect(e.error).toMatch(/^enable_ocr: true cannot be honoured: no OCR engine is installed/);
    expect(pages.hits.slice(before)).toEqual([]);
  });

  it('keeps at most 500 KB of screenshots inline in one output and stores the rest as blobs (many sections)', async () => {
    const owner = { userId: 'user-3', tenantId: 'tenant-1' };
    const e = await registry.execute(
      'lp_visual_analyze',
      { url: `${pages.base}/many-sections`, capture_mode: 'sections', max_sections: 12, include_markdown: false },
      owner,
    );
    expect(e.error).toBeNull();
    const o = e.output as any;
    expect(o.sections).toHaveLength(12);
    const sizes = o.sections.map((s: any) => s.screenshot.size_bytes as number);
    // Without the budget all 12 would be inline: well over the 1 MB of an external nats-server's max_payload.
    expect(sizes.reduce((a: number, b: number) => a + b, 0)).toBeGreaterThan(1024 * 1024);
    expect(inlineBytes(o)).toBeLessThanOrEqual(500 * 1024);
    expect(Buffer.byteLength(JSON.stringify(o))).toBeLessThan(1000 * 1000);
    const stored = o.sections.filter((s: any) => s.screenshot.blob_key);
    expect(stored.length).toBeGreaterThan(0);
    expect(o.sections.some((s: any) => s.screenshot.data_base64)).toBe(true);
    for (const s of stored) {
      expect(s.screenshot.url).toBe(`/api/v1/blob/${s.screenshot.blob_key}`);
      const b = await blobs.getOwned(s.screenshot.blob_key, owner);
      expect(Buffer.from(b!.bytes).subarray(0, 8)).toEqual(PNG_SIGNATURE);
      expect(b!.bytes.length).toBe(s.screenshot.size_bytes);
    }
  });
});

describe('lp_batch_analyze', () => {
  it('analyses each URL, counts successes and failures and totals the cost', async () => {
    const e = await registry.execute('lp_batch_analyze', { urls: [`${pages.base}/landing`, `${pages.base}/plain`, `${other.base}/landing`] });
    expect(e.error).toBeNull();
    const o = e.output as any;
    expect(o).toMatchObject({ total_urls: 3, successful: 2, failed: 1 });
    expect(o.batch_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(o.results.map((r: any) => [r.url, r.success])).toEqual([
      [`${pages.base}/landing`, true],
      [`${pages.base}/plain`, true],
      [`${other.base}/landing`, false],
    ]);
    expect(o.results[2].error).toMatch(/^refused: /);
    expect(o.results[0].markdown).toBeUndefined();
    expect(o.cost_usd.total).toBeCloseTo(0.0042, 10);
    expect(e.costUsd).toBeCloseTo(0.0042, 10);
  });

  it("shares one output's 500 KB of inline screenshots across its pages; the rest are blobs", async () => {
    const urls = [1, 2, 3].map((i) => `${pages.base}/noise-small?${i}`);
    const e = await registry.execute('lp_batch_analyze', { urls }, { userId: 'user-3', tenantId: 'tenant-1' });
    expect(e.error).toBeNull();
    const o = e.output as any;
    expect(o.successful).toBe(3);
    const sizes = o.results.map((r: any) => r.screenshot.size_bytes as number);
    // Each page inline alone (screenshot and screenshot_url) would fit; all three would not.
    expect(sizes.every((n: number) => n < 250 * 1024)).toBe(true);
    expect(sizes.reduce((a: number, b: number) => a + 2 * b, 0)).toBeGreaterThan(500 * 1024);
    expect(inlineBytes(o)).toBeLessThanOrEqual(500 * 1024);
    const stored = o.results.filter((r: any) => r.screenshot.blob_key);
    expect(stored.length).toBeGreaterThan(0);
    for (const r of stored) expect(r.screenshot_url).toBe(`/api/v1/blob/${r.screenshot.blob_key}`);
  });

  it('refuses more than 10 URLs', async () => {
    const urls = Array.from({ length: 11 }, (_, i) => `${pages.base}/plain?${i}`);
    await expect(registry.execute('lp_batch_analyze', { urls })).rejects.toThrow('arguments.urls must NOT have more than 10 items');
  });
});

describe('the browser process', () => {
  it('is started again after it died, and ends with the registry', async () => {
    const before = browserChildren();
    expect(before).toHaveLength(1);
    process.kill(before[0]!, 'SIGKILL');
    await sleep(300);
    const again = await shot({ url: `${pages.base}/plain` });
    expect(again.error).toBeNull();
    const now = browserChildren();
    expect(now).toHaveLength(1);
    expect(now[0]).not.toBe(before[0]);
    await registry.close();
    expect(browserChildren()).toEqual([]);
    const closed = await shot({ url: `${pages.base}/plain` });
    expect(closed.error).toBe('browser: the service is shutting down');
  });
});

describe('settings', () => {
  it('BROWSER_* have their defaults and refuse bad values naming the variable', () => {
    expect(loadConfig({ PATH: '/usr/bin:/bin' }).tools.browser).toEqual({
      executablePath: undefined,
      maxPages: 2,
      launchTimeoutMs: 30_000,
      searchPath: '/usr/bin:/bin',
    });
    expect(loadConfig({ BROWSER_EXECUTABLE_PATH: ' /opt/chrome/chrome ', BROWSER_MAX_PAGES: '4' }).tools.browser).toMatchObject({
      executablePath: '/opt/chrome/chrome',
      maxPages: 4,
    });
    expect(() => loadConfig({ BROWSER_MAX_PAGES: '0' })).toThrow(/BROWSER_MAX_PAGES/);
    expect(() => loadConfig({ BROWSER_LAUNCH_TIMEOUT_MS: 'soon' })).toThrow(/BROWSER_LAUNCH_TIMEOUT_MS/);
  });
});
