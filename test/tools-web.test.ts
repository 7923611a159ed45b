/**
 * The web tools: web_fetch / web_subpage_fetch / web_crawl (web-fetch.ts) and web_search's four
 * backends (web-search.ts), against local HTTP servers. The guarded client itself: tools-net.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import { createSafeFetch } from '../src/tools/net.js';
import type { Tool } from '../src/tools/tool.js';
import { htmlToMarkdown, webCrawlTool, webFetchTool, webSubpageFetchTool } from '../src/tools/web-fetch.js';
import { type WebSearchSettings, webSearchTool } from '../src/tools/web-search.js';
import { client, ctx, startServer, toolError, type TestServer } from './helpers/tools-web.js';

const ARTICLE = `<!doctype html>
<html><head><title>Sample Article - Example Site</title><script>var secretTracking = 1;</script><style>.x{color:red}</style></head>
<body>
<nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<article>
  <h1>Understanding Actors</h1>
  <p>${'The actor model treats actors as the universal primitives of concurrent computation. '.repeat(6)}</p>
  <h2>Message Passing</h2>
  <p>Actors communicate by sending messages; read <a href="/docs/messages">the messaging guide</a> for details. ${'Each actor processes one message at a time and keeps its own state private. '.repeat(5)}</p>
  <ul><li>Isolation of state</li><li>Asynchronous messages</li></ul>
</article>
<footer>Copyright footer</footer>
</body></html>`;

describe('HTML to markdown', () => {
  it('keeps headings, paragraphs, lists and absolute links; drops scripts', async () => {
    const { title, markdown, links } = await htmlToMarkdown(ARTICLE, 'http://site.test/posts/actors');
    expect(title).toMatch(/Sample Article/);
    expect(markdown).toMatch(/^#+ Understanding Actors$/m);
    expect(markdown).toMatch(/^#+ Message Passing$/m);
    expect(markdown).toContain('[the messaging guide](http://site.test/docs/messages)');
    expect(markdown).toMatch(/^- +Isolation of state$/m);
    expect(markdown).not.toContain('secretTracking');
    expect(markdown).not.toContain('<p>');
    expect(links).toEqual(['http://site.test/', 'http://site.test/about', 'http://site.test/docs/messages']);
  });

  it('falls back to the whole body when Readability finds no article', async () => {
    const html =
      '<html><head><title>Contact</title></head><body><footer><h3>Contact us</h3><p>Write to <a href="/mail">the office</a></p></footer></body></html>';
    const { markdown } = await htmlToMarkdown(html, 'http://site.test/');
    expect(markdown).toContain('### Contact us');
    expect(markdown).toContain('[the office](http://site.test/mail)');
  });

  it('handles markup without html/head/body tags', async () => {
    const { title, markdown } = await htmlToMarkdown(
      '<!doctype html>\n<title>Bare</title>\n<h2>Heading</h2><p>Body <a href="x">link</a></p>',
      'http://site.test/dir/',
    );
    expect(title).toBe('Bare');
    expect(markdown).toContain('Heading');
    expect(markdown).toContain('[link](http://site.test/dir/x)');
  });
});

describe('web tools', () => {
  let site: TestServer;
  let other: TestServer;
  let fetchTool: Tool;
  let subpageTool: Tool;
  let crawlTool: Tool;

  const page = (title: string, links: string[], text = `Text of ${title}.`) =>
    `<!doctype html><html><head><title>${title}</title></head><body><main><h1>${title}</h1><p>${text}</p><ul>${links
      .map((l) => `<li><a href="${l}">${l}</a></li>`)
      .join('')}</ul></main></body></html>`;

  beforeAll(async () => {
    other = await startServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(page('Elsewhere', [])));
    site = await startServer((req, res) => {
      const html = (body: string) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      if (path === '/article') return html(ARTICLE);
      if (path === '/text') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('just some text\nsecond line');
      if (path === '/data.json') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"a":1,"b":[1,2]}');
      if (path === '/image.png') return void res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
      if (path === '/long') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('y'.repeat(5000));
      if (path === '/gone') return void res.writeHead(404, { 'content-type': 'text/html' }).end('<p>not here</p>');
      // A small site: / -> /a, /b, /file.pdf, an off-site link; /a -> /a1 -> /a2 -> /a3; /b -> /a, /b#frag.
      if (path === '/') return html(page('Home', ['/a', '/b', '/file.pdf', `${other.origin}/x`]));
      if (path === '/a') return html(page('Page A', ['/a1']));
      if (path === '/a1') return html(page('Page A1', ['/a2']));
      if (path === '/a2') return html(page('Page A2', ['/a3']));
      if (path === '/a3') return html(page('Page A3', []));
      if (path === '/b') return html(page('Page B', ['/a', '/b#frag']));
      if (path.startsWith('/n/')) {
        // A long chain of wide pages for the page cap: /n/0 links to /n/1 ... /n/30.
        return html(
          page(
            `N ${path}`,
            Array.from({ length: 31 }, (_, i) => `/n/${i}`),
          ),
        );
      }
      res.writeHead(404).end();
    });
    const deps = { fetch: createSafeFetch({ allowHosts: ['127.0.0.1/32'], maxBytes: 1_000_000, timeoutMs: 5_000, perHostConcurrency: 2 }) };
    fetchTool = webFetchTool(deps);
    subpageTool = webSubpageFetchTool(deps);
    crawlTool = webCrawlTool(deps);
  });
  afterEach(() => {
    site.requests.length = 0;
    other.requests.length = 0;
  });

  const fetched = () => site.requests.map((r) => r.url).sort();

  it('declares names, categories and schemas', () => {
    const tools: Tool[] = [fetchTool, subpageTool, crawlTool];
    expect(tools.map((t) => [t.name, t.category, t.retryable, t.dangerous])).toEqual([
      ['web_fetch', 'web', true, false],
      ['web_subpage_fetch', 'web', true, false],
      ['web_crawl', 'web', true, false],
    ]);
    expect(fetchTool.parameters.required).toEqual(['url']);
    expect(crawlTool.parameters.properties.max_pages.maximum).toBe(20);
    expect(crawlTool.parameters.properties.max_depth.maximum).toBe(3);
  });

  it('web_fetch returns the article as markdown with title and final url', async () => {
    const out = await fetchTool.run({ url: `${site.origin}/article` }, ctx());
    expect(out.output.url).toBe(`${site.origin}/article`);
    expect(out.output.title).toMatch(/Sample Article/);
    expect(out.output.content).toMatch(/^#+ Message Passing$/m);
    expect(out.output.content).toContain(`[the messaging guide](${site.origin}/docs/messages)`);
    expect(out.output.truncated).toBe(false);
    expect(out.text).toContain(`Source: ${site.origin}/article`);
  });

  it('web_fetch passes text and JSON through, refuses binary content, reports HTTP errors', async () => {
    expect((await fetchTool.run({ url: `${site.origin}/text` }, ctx())).output.content).toBe('just some text\nsecond line');
    expect((await fetchTool.run({ url: `${site.origin}/data.json` }, ctx())).output.content).toBe(JSON.stringify({ a: 1, b: [1, 2] }, null, 2));
    const binary = await toolError(fetchTool.run({ url: `${site.origin}/image.png` }, ctx()));
    expect(binary.message).toMatch(/image\/png/);
    const gone = await toolError(fetchTool.run({ url: `${site.origin}/gone` }, ctx()));
    expect(gone.kind).toBe('backend');
    expect(gone.message).toMatch(/HTTP 404/);
  });

  it('web_fetch cuts content at max_length', async () => {
    const out = await fetchTool.run({ url: `${site.origin}/long`, max_length: 1000 }, ctx());
    expect(out.output.content).toBe('y'.repeat(1000));
    expect(out.output.truncated).toBe(true);
    expect(out.output.length).toBe(5000);
  });

  it('web_fetch goes through the guard', async () => {
    const guarded = webFetchTool({ fetch: client() });
    const err = await toolError(guarded.run({ url: `${site.origin}/article` }, ctx()));
    expect(err.kind).toBe('bad_arguments');
    expect(err.message).toMatch(/refused/);
    expect(site.requests).toHaveLength(0);
  });

  it('web_subpage_fetch fetches the given same-site paths and refuses other sites', async () => {
    const out = await subpageTool.run({ url: `${site.origin}/`, path: '/a', subpages: ['b', `${site.origin}/a1`] }, ctx());
    const pages = out.output.pages as Array<{ url: string; title: string; content: string }>;
    expect(pages.map((p) => p.title)).toEqual(['Page A', 'Page B', 'Page A1']);
    expect(pages[0].content).toContain('Text of Page A.');
    expect(fetched()).toEqual(['/a', '/a1', '/b']);
    const err = await toolError(subpageTool.run({ url: `${site.origin}/`, subpages: [`${other.origin}/x`] }, ctx()));
    expect(err.kind).toBe('bad_arguments');
    expect(other.requests).toHaveLength(0);
  });

  it('web_subpage_fetch without paths discovers same-site links, up to limit', async () => {
    const out = await subpageTool.run({ url: `${site.origin}/`, limit: 1 }, ctx());
    const pages = out.output.pages as Array<{ title: string }>;
    expect(pages.map((p) => p.title)).toEqual(['Home', 'Page A']);
    const all = await subpageTool.run({ url: `${site.origin}/` }, ctx());
    expect((all.output.pages as Array<{ title: string }>).map((p) => p.title)).toEqual(['Home', 'Page A', 'Page B']);
    expect(other.requests).toHaveLength(0);
    expect(fetched()).not.toContain('/file.pdf');
  });

  it('web_crawl walks the origin breadth-first within max_depth', async () => {
    const out = await crawlTool.run({ url: `${site.origin}/`, max_depth: 1, max_pages: 20 }, ctx());
    const pages = out.output.pages as Array<{ url: string; depth: number; links: string[] }>;
    expect(pages.map((p) => [new URL(p.url).pathname, p.depth])).toEqual([
      ['/', 0],
      ['/a', 1],
      ['/b', 1],
    ]);
    expect(pages[0].links).toContain(`${site.origin}/a`);
    expect(pages[0].links).not.toContain(`${other.origin}/x`); // same origin only
    expect(other.requests).toHaveLength(0);
    expect(fetched()).toEqual(['/', '/a', '/b']);

    site.requests.length = 0;
    const deeper = await crawlTool.run({ url: `${site.origin}/`, max_depth: 2 }, ctx());
    expect((deeper.output.pages as Array<{ url: string }>).map((p) => new URL(p.url).pathname)).toEqual(['/', '/a', '/b', '/a1']);
    expect(fetched()).toEqual(['/', '/a', '/a1', '/b']); // each page once (/b's links to /a and /b#frag are not refetched)
  });

  it('web_crawl stops at max_pages and caps it at 20 and depth at 3', async () => {
    const two = await crawlTool.run({ url: `${site.origin}/`, max_pages: 2 }, ctx());
    expect((two.output.pages as unknown[]).length).toBe(2);
    expect(two.output.unvisited).toBe(1);

    site.requests.length = 0;
    const capped = await crawlTool.run({ url: `${site.origin}/n/0`, max_pages: 100, max_depth: 10 }, ctx());
    expect((capped.output.pages as unknown[]).length).toBe(20);
    expect(site.requests).toHaveLength(20);

    site.requests.length = 0;
    const deep = await crawlTool.run({ url: `${site.origin}/`, max_pages: 20, max_depth: 10 }, ctx());
    expect((deep.output.pages as Array<{ url: string; depth: number }>).map((p) => p.depth)).toEqual([0, 1, 1, 2, 3]);
    expect(fetched()).not.toContain('/a3');
  });
});

// ---------------------------------------------------------------------------------------------
// web_search

describe('web_search', () => {
  let backend: TestServer;
  let failing: TestServer;
  beforeAll(async () => {
    backend = await startServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const json = (v: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(v));
      if (path === '/searx/search')
        return json({
          results: Array.from({ length: 10 }, (_, i) => ({ title: `Searx ${i}`, url: `https://searx.example/${i}`, content: `snippet ${i}` })),
        });
      if (path === '/res/v1/web/search')
        return json({ web: { results: [{ title: 'Brave &amp; co', url: 'https://brave.example/', description: 'The <strong>best</strong> result' }] } });
      if (path === '/search' && req.method === 'POST') {
        if (req.headers['x-api-key']) return json({ organic: [{ title: 'Serper hit', link: 'https://serper.example/', snippet: 'from google' }] });
        return json({ results: [{ title: 'Tavily hit', url: 'https://tavily.example/', content: 'tavily snippet' }] });
      }
      res.writeHead(404).end();
    });
    failing = await startServer((_req, res) => res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"bad key"}'));
  });
  afterEach(() => {
    backend.requests.length = 0;
  });

  const settings = (over: Partial<WebSearchSettings>): WebSearchSettings => ({
    ...loadConfig({}).tools.webSearch,
    braveUrl: backend.origin,
    tavilyUrl: backend.origin,
    serperUrl: backend.origin,
    ...over,
  });
  const search = (s: WebSearchSettings, args: Record<string, unknown>) => webSearchTool(s).run(args as { query: string }, ctx());

  it('declares its name, category and rate limit setting', () => {
    const tool = webSearchTool(settings({}));
    expect([tool.name, tool.category, tool.retryable, tool.rateLimitSetting]).toEqual(['web_search', 'search', true, 'WEB_SEARCH_RATE_LIMIT']);
    expect(tool.parameters.required).toEqual(['query']);
    expect(tool.parameters.properties.max_results).toMatchObject({ minimum: 1, maximum: 20, default: 5 });
  });

  it('takes the settings config parsed from the environment', () => {
    expect(loadConfig({}).tools.webSearch).toMatchObject({
      provider: '',
      braveUrl: 'https://api.search.brave.com',
      tavilyUrl: 'https://api.tavily.com',
      serperUrl: 'https://google.serper.dev',
    });
    expect(loadConfig({ WEB_SEARCH_PROVIDER: ' Brave ', BRAVE_SEARCH_API_KEY: 'k', SEARXNG_URL: 'http://s' }).tools.webSearch).toMatchObject({
      provider: 'brave',
      braveApiKey: 'k',
      searxngUrl: 'http://s',
    });
  });

  it('searxng: GET <url>/search?q=..&format=json, results cut to max_results', async () => {
    const out = await search(settings({ provider: 'searxng', searxngUrl: `${backend.origin}/searx` }), { query: 'actor model', max_results: 3 });
    const req = backend.requests[0];
    expect(req.method).toBe('GET');
    const url = new URL(req.url, 'http://x');
    expect(url.pathname).toBe('/searx/search');
    expect(url.searchParams.get('q')).toBe('actor model');
    expect(url.searchParams.get('format')).toBe('json');
    expect(out.output.results).toEqual([0, 1, 2].map((i) => ({ title: `Searx ${i}`, url: `https://searx.example/${i}`, snippet: `snippet ${i}` })));
    expect(out.text).toContain('https://searx.example/2');
  });

  it('brave: GET /res/v1/web/search with X-Subscription-Token and count; markup removed from snippets', async () => {
    const out = await search(settings({ provider: 'brave', braveApiKey: 'brave-key' }), { query: 'nats jetstream' });
    const req = backend.requests[0];
    expect(req.method).toBe('GET');
    const url = new URL(req.url, 'http://x');
    expect(url.pathname).toBe('/res/v1/web/search');
    expect(url.searchParams.get('q')).toBe('nats jetstream');
    expect(url.searchParams.get('count')).toBe('5');
    expect(req.headers['x-subscription-token']).toBe('brave-key');
    expect(out.output.results).toEqual([{ title: 'Brave & co', url: 'https://brave.example/', snippet: 'The best result' }]);
  });

  it('tavily: POST /search with the key and a JSON body', async () => {
    const out = await search(settings({ provider: 'tavily', tavilyApiKey: 'tvly-key' }), { query: 'pglite', max_results: 7 });
    const req = backend.requests[0];
    expect([req.method, req.url]).toEqual(['POST', '/search']);
    expect(req.headers['content-type']).toMatch(/application\/json/);
    expect(req.headers.authorization).toBe('Bearer tvly-key');
    expect(JSON.parse(req.body)).toEqual({ api_key: 'tvly-key', query: 'pglite', max_results: 7 });
    expect(out.output.results).toEqual([{ title: 'Tavily hit', url: 'https://tavily.example/', snippet: 'tavily snippet' }]);
  });

  it('serper: POST /search with X-API-KEY', async () => {
    const out = await search(settings({ provider: 'serper', serperApiKey: 'serper-key' }), { query: 'readability', max_results: 2 });
    const req = backend.requests[0];
    expect([req.method, req.url]).toEqual(['POST', '/search']);
    expect(req.headers['x-api-key']).toBe('serper-key');
    expect(JSON.parse(req.body)).toEqual({ q: 'readability', num: 2 });
    expect(out.output.results).toEqual([{ title: 'Serper hit', url: 'https://serper.example/', snippet: 'from google' }]);
  });

  it('fails with not_configured, naming the variable, and never invents results', async () => {
    const cases: Array<[Partial<WebSearchSettings>, RegExp]> = [
      [{ provider: '' }, /WEB_SEARCH_PROVIDER/],
      [{ provider: 'bing' }, /WEB_SEARCH_PROVIDER=bing is not one of/],
      [{ provider: 'searxng' }, /SEARXNG_URL/],
      [{ provider: 'brave' }, /BRAVE_SEARCH_API_KEY/],
      [{ provider: 'tavily' }, /TAVILY_API_KEY/],
      [{ provider: 'serper' }, /SERPER_API_KEY/],
    ];
    for (const [over, message] of cases) {
      const err = await toolError(search(settings(over), { query: 'q' }));
      expect(err.kind, JSON.stringify(over)).toBe('not_configured');
      expect(err.message).toMatch(message);
    }
    expect(backend.requests).toHaveLength(0);
  });

  it('turns a backend HTTP error into a backend error naming the status', async () => {
    const err = await toolError(search(settings({ provider: 'brave', braveApiKey: 'wrong', braveUrl: failing.origin }), { query: 'q' }));
    expect(err.kind).toBe('backend');
    expect(err.message).toMatch(/brave search failed: HTTP 401/);
    const down = await toolError(search(settings({ provider: 'searxng', searxngUrl: 'http://127.0.0.1:1' }), { query: 'q' }));
    expect(down.kind).toBe('backend');
  });

  it('is not subject to the SSRF guard (an operator-configured local backend works)', async () => {
    const out = await search(settings({ provider: 'searxng', searxngUrl: `${backend.origin}/searx/` }), { query: 'local' });
    expect((out.output.results as unknown[]).length).toBe(5);
  });
});
