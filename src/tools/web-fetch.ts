/**
 * Web page tools: `web_fetch` (one page), `web_subpage_fetch` (chosen or discovered pages of one
 * site) and `web_crawl` (a small breadth-first crawl of one origin). Every request goes through the
 * SSRF-guarded client of `./net.ts`. HTML becomes readable markdown: linkedom parses it,
 * Readability keeps the article (the whole body when it finds none), turndown writes markdown.
 * Plain text and JSON pass through. Those three are loaded with the first page a tool reads
 * (its `prepare`, outside its time limit), not at start-up: ~35 MB a process that never reads
 * a page does not hold.
 */
import pLimit from 'p-limit';
import { lazyImport } from '../kernel/index.js';
import { type FetchedPage, type FetchPage } from './net.js';
import { type Tool, type ToolContext, ToolError, type ToolOutput } from './tool.js';

export interface WebFetchDeps {
  /** The guarded HTTP client (`createSafeFetch`); one instance shared by the tools shares its per-host limits. */
  fetch: FetchPage;
}

// ---------------------------------------------------------------------------------------------
// Page -> readable text

const htmlLibs = lazyImport(async () => {
  const [{ parseHTML }, { Readability }, { default: TurndownService }] = await Promise.all([
    import('linkedom'),
    import('@mozilla/readability'),
    import('turndown'),
  ]);
  return { parseHTML, Readability, TurndownService };
});
type HtmlLibs = Awaited<ReturnType<typeof htmlLibs>>;

/** The web tools' `prepare`: the HTML libraries loaded before a call's time limit starts. */
const prepare = async (): Promise<void> => void (await htmlLibs());

export interface ReadablePage {
  /** Final URL (after redirects). */
  url: string;
  status: number;
  contentType: string;
  title: string;
  /** Markdown for HTML, the body itself for text, pretty-printed JSON for JSON. */
  content: string;
  /** Absolute http(s) links of an HTML page, without fragments, deduplicated, in page order. */
  links: string[];
  /** Whether the body was cut at the client's byte limit. */
  bodyTruncated: boolean;
}

/** Elements that never carry readable text. */
const NOISE = ['script', 'style', 'noscript', 'template', 'iframe', 'object', 'embed', 'svg', 'canvas'];
/** Elements that belong in <head> when a document omits its <html>/<head>/<body> tags. */
const HEAD_TAGS = new Set(['TITLE', 'META', 'LINK', 'BASE', 'STYLE', 'SCRIPT']);

/**
 * Parses HTML into a complete document. linkedom builds `<html><head><body>` only when the
 * markup has them; a page that omits those optional tags (or a fragment) is rebuilt into a
 * skeleton, head elements to <head>, everything else to <body>.
 */
function parseDocument(parseHTML: HtmlLibs['parseHTML'], html: string): any {
  const parsed = parseHTML(html).document as any;
  const root = parsed.documentElement;
  if (root && root.tagName === 'HTML' && Array.from(root.children as ArrayLike<any>).some((c) => c.tagName === 'BODY')) return parsed;
  const { document } = parseHTML('<!doctype html><html><head></head><body></body></html>') as any;
  const place = (node: any): void => {
    if (node.nodeType === 1) {
      const tag = String(node.tagName).toUpperCase();
      if (tag === 'HTML' || tag === 'HEAD' || tag === 'BODY') {
        for (const child of Array.from(node.childNodes as ArrayLike<any>)) place(child);
        return;
      }
      if (HEAD_TAGS.has(tag) && document.body.childNodes.length === 0) {
        document.head.appendChild(document.importNode(node, true));
        return;
      }
    } else if (node.nodeType !== 3) {
      return; // doctype, comments, processing instructions
    } else if (document.body.childNodes.length === 0 && !String(node.textContent).trim()) {
      return; // whitespace between head elements
    }
    document.body.appendChild(document.importNode(node, true));
  };
  for (const node of Array.from(parsed.childNodes as ArrayLike<any>)) place(node);
  return document;
}

function absolute(href: string | null, base: URL): URL | null {
  if (!href) return null;
  try {
    return new URL(href.trim(), base);
  } catch {
    return null;
  }
}

function turndown({ TurndownService }: HtmlLibs): InstanceType<HtmlLibs['TurndownService']> {
  const td = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-', emDelimiter: '*' });
  td.remove(NOISE as any);
  return td;
}

/** Squeezes runs of blank lines and trailing spaces that turndown leaves behind. */
function tidy(markdown: string): string {
  return markdown
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/**
 * HTML to markdown with links resolved against `pageUrl` (or the page's <base href>).
 * Readability picks the main content; when it finds nothing, the whole body is converted.
 */
export async function htmlToMarkdown(html: string, pageUrl: string): Promise<{ title: string; markdown: string; links: string[] }> {
  const libs = await htmlLibs();
  const document = parseDocument(libs.parseHTML, html);
  let base = new URL(pageUrl);
  const baseHref = absolute(document.querySelector('base[href]')?.getAttribute('href') ?? null, base);
  if (baseHref) base = baseHref;

  for (const el of Array.from(document.querySelectorAll(NOISE.join(',')) as ArrayLike<any>)) el.remove();
  const links: string[] = [];
  const seen = new Set<string>();
  for (const a of Array.from(document.querySelectorAll('a[href]') as ArrayLike<any>)) {
    const u = absolute(a.getAttribute('href'), base);
    if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:')) {
      if (u?.protocol === 'javascript:') a.removeAttribute('href');
      continue;
    }
    a.setAttribute('href', u.href);
    u.hash = '';
    if (!seen.has(u.href)) {
      seen.add(u.href);
      links.push(u.href);
    }
  }
  for (const img of Array.from(document.querySelectorAll('img') as ArrayLike<any>)) {
    const u = absolute(img.getAttribute('src'), base);
    // Inline images (data: URIs) would fill the text with base64.
    if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:')) img.remove();
    else img.setAttribute('src', u.href);
    img.removeAttribute('srcset');
  }

  const docTitle = String(document.title ?? '').trim();
  const bodyHtml: string = document.body?.innerHTML ?? '';
  let contentHtml = '';
  let title = docTitle;
  try {
    const article = new libs.Readability(document, { charThreshold: 200 }).parse();
    if (article?.content && (article.textContent ?? '').trim()) {
      contentHtml = article.content;
      title = (article.title ?? '').trim() || docTitle;
    }
  } catch {
    // Readability gave up on this markup: use the whole body.
  }
  if (!contentHtml) contentHtml = bodyHtml;
  return { title, markdown: tidy(turndown(libs).turndown(contentHtml)), links };
}

type Kind = 'html' | 'json' | 'text';

function kindOf(page: FetchedPage): Kind | null {
  const type = page.contentType.split(';')[0].trim().toLowerCase();
  if (type === 'text/html' || type === 'application/xhtml+xml') return 'html';
  if (type === 'application/json' || type.endsWith('+json')) return 'json';
  if (type.startsWith('text/') || type === 'application/xml' || type.endsWith('+xml') || type === 'application/javascript') return 'text';
  if (type === '') {
    const head = page.body.trimStart().slice(0, 64).toLowerCase();
    if (head.startsWith('<!doctype html') || head.startsWith('<html')) return 'html';
    return 'text';
  }
  return null;
}

/** A fetched page as readable text; throws ToolError for content that is not text. */
async function toReadable(page: FetchedPage): Promise<ReadablePage> {
  const kind = kindOf(page);
  if (!kind) throw new ToolError(`${page.url} is ${page.contentType.split(';')[0]}, not a web page or text`, 'bad_arguments');
  const base = { url: page.url, status: page.status, contentType: page.contentType, bodyTruncated: page.truncated };
  if (kind === 'html') {
    const { title, markdown, links } = await htmlToMarkdown(page.body, page.url);
    return { ...base, title, content: markdown, links };
  }
  if (kind === 'json') {
    let content = page.body;
    try {
      content = JSON.stringify(JSON.parse(page.body), null, 2);
    } catch {
      // Not valid (or truncated) JSON: pass it through as it came.
    }
    return { ...base, title: '', content, links: [] };
  }
  return { ...base, title: '', content: page.body, links: [] };
}

// ---------------------------------------------------------------------------------------------
// Shared helpers

function clip(content: string, max: number): { content: string; clipped: boolean } {
  if (content.length <= max) return { content, clipped: false };
  return { content: content.slice(0, max), clipped: true };
}

function intArg(v: unknown, def: number, min: number, max: number): number {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  if (!Number.isFinite(n)) return def;
  return Math.min(max, Math.max(min, Math.floor(n)));
}

function urlArg(v: unknown): URL {
  if (typeof v !== 'string' || !v.trim()) throw new ToolError('url is required', 'bad_arguments');
  let u: URL;
  try {
    u = new URL(v.trim());
  } catch {
    throw new ToolError(`invalid URL: ${v}`, 'bad_arguments');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new ToolError(`only http and https URLs are fetched (got ${u.protocol})`, 'bad_arguments');
  return u;
}

function withoutHash(u: URL | string): string {
  const c = new URL(u);
  c.hash = '';
  return c.href;
}

/** Fetches one page and makes it readable; HTTP errors become ToolError('backend'). */
async function fetchReadable(deps: WebFetchDeps, url: string, ctx: ToolContext): Promise<ReadablePage> {
  const page = await deps.fetch(url, { signal: ctx.signal });
  if (page.status >= 400) throw new ToolError(`${page.url} answered HTTP ${page.status}`, 'backend');
  return toReadable(page);
}

interface PageEntry {
  url: string;
  status: number;
  title: string;
  content: string;
  truncated: boolean;
  [key: string]: unknown;
}

interface Failure {
  url: string;
  error: string;
}

function entry(page: ReadablePage, maxLength: number): PageEntry {
  const { content, clipped } = clip(page.content, maxLength);
  return { url: page.url, status: page.status, title: page.title, content, truncated: clipped || page.bodyTruncated };
}

function pagesText(pages: PageEntry[], failed: Failure[]): string {
  const parts = pages.map((p) => `## ${p.title || p.url}\nSource: ${p.url}\n\n${p.content}${p.truncated ? '\n\n[truncated]' : ''}`);
  if (failed.length) parts.push(`Not fetched:\n${failed.map((f) => `- ${f.url}: ${f.error}`).join('\n')}`);
  return parts.join('\n\n---\n\n');
}

function failure(url: string, err: unknown, signal: AbortSignal): Failure {
  if (signal.aborted) throw signal.reason;
  if (err instanceof ToolError) return { url, error: err.message };
  throw err;
}

const PARALLEL_PAGES = 3;

/** Links that are clearly not pages (skipped by the crawl and subpage discovery). */
const BINARY_EXTENSIONS = new Set([
  'pdf',
  'zip',
  'gz',
  'tgz',
  'tar',
  'rar',
  '7z',
  'png',
  'jpg',
  'jpeg',
  'gif',
  'webp',
  'svg',
  'ico',
  'bmp',
  'mp3',
  'mp4',
  'webm',
  'avi',
  'mov',
  'wav',
  'ogg',
  'exe',
  'dmg',
  'iso',
  'woff',
  'woff2',
  'ttf',
  'css',
  'js',
]);

function looksLikePage(u: URL): boolean {
  const last = u.pathname.split('/').pop() ?? '';
  const dot = last.lastIndexOf('.');
  return dot < 0 || !BINARY_EXTENSIONS.has(last.slice(dot + 1).toLowerCase());
}

// ---------------------------------------------------------------------------------------------
// Tools

export type WebFetchArgs = { url: string; max_length?: number };

/** Characters of content web_fetch returns by default; also the default cut of an OpenAPI tool's answer. */
export const FETCH_DEFAULT_LENGTH = 20_000;
const FETCH_MAX_LENGTH = 200_000;

export function webFetchTool(deps: WebFetchDeps): Tool<WebFetchArgs> {
  return {
    name: 'web_fetch',
    description:
      'Fetch one web page (http or https) and return its main content as markdown, with its title and final URL. Plain text and JSON are returned as they are.',
    category: 'web',
    version: '1.0.0',
    parameters: {
      type: 'object',
      properties: {
        url: { type: 'string', description: 'The http(s) URL to fetch', minLength: 1, maxLength: 4096 },
        max_length: {
          type: 'integer',
          description: `Characters of content returned at most (default ${FETCH_DEFAULT_LENGTH})`,
          minimum: 100,
          maximum: FETCH_MAX_LENGTH,
          default: FETCH_DEFAULT_LENGTH,
        },
      },
      required: ['url'],
      additionalProperties: false,
    },
    timeoutMs: 30_000,
    costPerUse: 0,
    dangerous: false,
    retryable: true,
    prepare,
    async run(args, ctx): Promise<ToolOutput> {
      const url = urlArg(args.url);
      const maxLength = intArg(args.max_length, FETCH_DEFAULT_LENGTH, 100, FETCH_MAX_LENGTH);
      const page = await fetchReadable(deps, url.href, ctx);
      const { content, clipped } = clip(page.content, maxLength);
      const truncated = clipped || page.bodyTruncated;
      const heading = page.title ? `# ${page.title}\n` : '';
      return {
        output: {
          url: page.url,
          status: page.status,
          content_type: page.contentType,
          title: page.title,
          content,
          length: page.content.length,
          truncated,
        },
        text: `${heading}Source: ${page.url}\n\n${content}${truncated ? `\n\n[truncated: ${page.content.length} characters in all]` : ''}`,
        metadata: { body_truncated: page.bodyTruncated, links: page.links.length },
      };
    },
  };
}

export type WebSubpageFetchArgs = { url: string; path?: string; subpages?: string[]; limit?: number; max_length?: number };

const SUBPAGE_DEFAULT_LIMIT = 5;
const SUBPAGE_MAX_LIMIT = 10;
const SUBPAGE_DEFAULT_LENGTH = 5_000;

export function webSubpageFetchTool(deps: WebFetchDeps): Tool<WebSubpageFetchArgs> {
  return {
    name: 'web_subpage_fetch',
    description:
      'Fetch pages of one website. Give `path` or `subpages` (paths or URLs on the same site) to fetch those; give neither to fetch the page at `url` and the first same-site pages it links to. Returns each page as markdown.',
    category: 'web',
    version: '1.0.0',
    parameters: {
      type: 'object',
      properties: {
        url: { type: 'string', description: 'The site or page URL (http or https) the subpages belong to', minLength: 1, maxLength: 4096 },
        path: { type: 'string', description: 'One path (or same-site URL) to fetch, resolved against url', maxLength: 4096 },
        subpages: {
          type: 'array',
          description: 'Paths (or same-site URLs) to fetch, resolved against url',
          items: { type: 'string', maxLength: 4096 },
          maxItems: SUBPAGE_MAX_LIMIT,
        },
        limit: {
          type: 'integer',
          description: `Pages fetched at most (default ${SUBPAGE_DEFAULT_LIMIT})`,
          minimum: 1,
          maximum: SUBPAGE_MAX_LIMIT,
          default: SUBPAGE_DEFAULT_LIMIT,
        },
        max_length: {
          type: 'integer',
          description: `Characters of content per page at most (default ${SUBPAGE_DEFAULT_LENGTH})`,
          minimum: 100,
          maximum: 50_000,
          default: SUBPAGE_DEFAULT_LENGTH,
        },
      },
      required: ['url'],
      additionalProperties: false,
    },
    timeoutMs: 60_000,
    costPerUse: 0,
    dangerous: false,
    retryable: true,
    prepare,
    async run(args, ctx): Promise<ToolOutput> {
      const base = urlArg(args.url);
      const limit = intArg(args.limit, SUBPAGE_DEFAULT_LIMIT, 1, SUBPAGE_MAX_LIMIT);
      const maxLength = intArg(args.max_length, SUBPAGE_DEFAULT_LENGTH, 100, 50_000);
      const requested = [...(typeof args.path === 'string' && args.path.trim() ? [args.path] : []), ...(Array.isArray(args.subpages) ? args.subpages : [])];
      const pages: PageEntry[] = [];
      const failed: Failure[] = [];
      let targets: string[];

      if (requested.length) {
        const seen = new Set<string>();
        targets = [];
        for (const p of requested) {
          if (typeof p !== 'string' || !p.trim()) continue;
          const u = absolute(p, base);
          if (!u) throw new ToolError(`invalid subpage: ${p}`, 'bad_arguments');
          if (u.origin !== base.origin) throw new ToolError(`${u.href} is not on ${base.origin}: subpages must be on the same site`, 'bad_arguments');
          const key = withoutHash(u);
          if (!seen.has(key)) {
            seen.add(key);
            targets.push(key);
          }
        }
        targets = targets.slice(0, limit);
      } else {
        // Discovery: the page itself, then the same-site pages it links to.
        const index = await fetchReadable(deps, base.href, ctx);
        pages.push(entry(index, maxLength));
        const self = new Set([withoutHash(base), withoutHash(index.url)]);
        targets = index.links
          .filter((l) => {
            const u = new URL(l);
            return u.origin === base.origin && !self.has(l) && looksLikePage(u);
          })
          .slice(0, limit);
      }

      const results = await pLimit(PARALLEL_PAGES).map(targets, async (t) => {
        try {
          return entry(await fetchReadable(deps, t, ctx), maxLength);
        } catch (err) {
          return failure(t, err, ctx.signal);
        }
      });
      for (const r of results) {
        if ('error' in r) failed.push(r as Failure);
        else pages.push(r);
      }
      if (pages.length === 0 && failed.length > 0)
        throw new ToolError(`no page could be fetched: ${failed.map((f) => `${f.url}: ${f.error}`).join('; ')}`, 'backend');
      return {
        output: { url: base.href, pages, failed },
        text: pages.length ? pagesText(pages, failed) : `No subpages of ${base.href} found.`,
        metadata: { fetched: pages.length, failed: failed.length },
      };
    },
  };
}

export type WebCrawlArgs = { url: string; max_pages?: number; max_depth?: number; max_length?: number };

const CRAWL_MAX_PAGES = 20;
const CRAWL_MAX_DEPTH = 3;
const CRAWL_DEFAULT_PAGES = 5;
const CRAWL_DEFAULT_DEPTH = 1;
const CRAWL_DEFAULT_LENGTH = 3_000;
const CRAWL_LINKS_PER_PAGE = 50;

export function webCrawlTool(deps: WebFetchDeps): Tool<WebCrawlArgs> {
  return {
    name: 'web_crawl',
    description: `Crawl one website breadth-first from a URL, following only links on the same origin, and return each page as markdown with its links. At most ${CRAWL_MAX_PAGES} pages and depth ${CRAWL_MAX_DEPTH}.`,
    category: 'web',
    version: '1.0.0',
    parameters: {
      type: 'object',
      properties: {
        url: { type: 'string', description: 'The http(s) URL to start from', minLength: 1, maxLength: 4096 },
        max_pages: {
          type: 'integer',
          description: `Pages fetched at most (default ${CRAWL_DEFAULT_PAGES}, at most ${CRAWL_MAX_PAGES})`,
          minimum: 1,
          maximum: CRAWL_MAX_PAGES,
          default: CRAWL_DEFAULT_PAGES,
        },
        max_depth: {
          type: 'integer',
          description: `Link hops from the start page at most (default ${CRAWL_DEFAULT_DEPTH}, at most ${CRAWL_MAX_DEPTH}; 0 fetches only the start page)`,
          minimum: 0,
          maximum: CRAWL_MAX_DEPTH,
          default: CRAWL_DEFAULT_DEPTH,
        },
        max_length: {
          type: 'integer',
          description: `Characters of content per page at most (default ${CRAWL_DEFAULT_LENGTH})`,
          minimum: 100,
          maximum: 20_000,
          default: CRAWL_DEFAULT_LENGTH,
        },
      },
      required: ['url'],
      additionalProperties: false,
    },
    timeoutMs: 120_000,
    costPerUse: 0,
    dangerous: false,
    retryable: true,
    prepare,
    async run(args, ctx): Promise<ToolOutput> {
      const start = urlArg(args.url);
      const maxPages = intArg(args.max_pages, CRAWL_DEFAULT_PAGES, 1, CRAWL_MAX_PAGES);
      const maxDepth = intArg(args.max_depth, CRAWL_DEFAULT_DEPTH, 0, CRAWL_MAX_DEPTH);
      const maxLength = intArg(args.max_length, CRAWL_DEFAULT_LENGTH, 100, 20_000);
      const origin = start.origin;
      const pages: PageEntry[] = [];
      const failed: Failure[] = [];
      const seen = new Set<string>([withoutHash(start)]);
      let level: string[] = [withoutHash(start)];
      let attempts = 0;
      let unvisited = 0;

      for (let depth = 0; level.length > 0; depth++) {
        const batch = level.slice(0, maxPages - attempts);
        unvisited = level.length - batch.length;
        attempts += batch.length;
        const results = await pLimit(PARALLEL_PAGES).map(batch, async (u) => {
          try {
            return await fetchReadable(deps, u, ctx);
          } catch (err) {
            if (depth === 0) throw err; // the start page itself failed: nothing to crawl
            return failure(u, err, ctx.signal);
          }
        });
        const next: string[] = [];
        for (const r of results) {
          if ('error' in r) {
            failed.push(r as Failure);
            continue;
          }
          const page = r as ReadablePage;
          if (new URL(page.url).origin !== origin) {
            failed.push({ url: page.url, error: `redirected off ${origin}` });
            continue;
          }
          seen.add(withoutHash(page.url));
          const sameOrigin = page.links.filter((l) => new URL(l).origin === origin);
          pages.push({ ...entry(page, maxLength), depth, links: sameOrigin.slice(0, CRAWL_LINKS_PER_PAGE) });
          if (depth < maxDepth) {
            for (const l of sameOrigin) {
              if (!seen.has(l) && looksLikePage(new URL(l))) {
                seen.add(l);
                next.push(l);
              }
            }
          }
        }
        if (attempts >= maxPages) {
          unvisited += next.length;
          break;
        }
        level = next;
      }
      return {
        output: { url: start.href, pages, failed, unvisited },
        text: pagesText(pages, failed) + (unvisited ? `\n\n(${unvisited} more linked pages not visited: page limit ${maxPages})` : ''),
        metadata: { fetched: pages.length, failed: failed.length, max_pages: maxPages, max_depth: maxDepth },
      };
    },
  };
}
