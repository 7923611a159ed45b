/**
 * `web_search`: web search through the backend the operator configured (WEB_SEARCH_PROVIDER):
 * SearXNG, Brave, Tavily or Serper. Results are normalised to {title, url, snippet}. Without a
 * configured backend the tool fails with `not_configured`; it never makes results up.
 *
 * The backends' URLs come from the operator's configuration, not from a model, so these requests
 * use plain `fetch` and are NOT subject to the SSRF guard of `./net.ts` (a SearXNG instance on
 * the local network is a normal setup).
 *
 * Snippets with markup are read as text by linkedom, loaded by the first search (the tool's
 * `prepare`, outside its time limit) rather than at start-up.
 */
import { lazyImport } from '../kernel/index.js';
import { type Tool, ToolError, type ToolOutput } from './tool.js';

const WEB_SEARCH_PROVIDERS = ['searxng', 'brave', 'tavily', 'serper'] as const;
export type WebSearchProvider = (typeof WEB_SEARCH_PROVIDERS)[number];

export interface WebSearchSettings {
  /** WEB_SEARCH_PROVIDER: `searxng`, `brave`, `tavily` or `serper`; empty when search is not configured. */
  provider: string;
  /** SEARXNG_URL: base URL of a SearXNG instance with the JSON format enabled. */
  searxngUrl?: string;
  /** BRAVE_SEARCH_API_KEY */
  braveApiKey?: string;
  /** BRAVE_SEARCH_URL (default https://api.search.brave.com) */
  braveUrl: string;
  /** TAVILY_API_KEY */
  tavilyApiKey?: string;
  /** TAVILY_URL (default https://api.tavily.com) */
  tavilyUrl: string;
  /** SERPER_API_KEY */
  serperApiKey?: string;
  /** SERPER_URL (default https://google.serper.dev) */
  serperUrl: string;
  /** Time limit of one backend request (default 20 s). */
  timeoutMs?: number;
}

export interface SearchResult {
  title: string;
  url: string;
  snippet: string;
}

export type WebSearchArgs = { query: string; max_results?: number };

const DEFAULT_RESULTS = 5;
const MAX_RESULTS = 20;

const linkedom = lazyImport(() => import('linkedom'));
type ParseHtml = Awaited<ReturnType<typeof linkedom>>['parseHTML'];

/** `path` under `base`, keeping any path prefix of base (a SearXNG under /searx/). */
function endpoint(base: string, path: string): URL {
  try {
    return new URL(path.replace(/^\//, ''), base.endsWith('/') ? base : `${base}/`);
  } catch {
    throw new ToolError(`web search backend URL is invalid: ${base}`, 'not_configured');
  }
}

function need<T>(value: T | undefined, variable: string, provider: string): T {
  if (value === undefined || value === '')
    throw new ToolError(`web search is not configured: set ${variable} for WEB_SEARCH_PROVIDER=${provider}`, 'not_configured');
  return value;
}

/** Text of a snippet that may carry markup (<strong>) or entities (&amp;). */
function plain(parseHTML: ParseHtml, s: unknown): string {
  if (typeof s !== 'string') return '';
  if (!s.includes('<') && !s.includes('&')) return s.trim();
  const { document } = parseHTML('<!doctype html><html><head></head><body></body></html>') as any;
  document.body.innerHTML = s;
  return String(document.body.textContent ?? '').trim();
}

function normalise(parseHTML: ParseHtml, items: unknown, title: string, url: string, snippet: string): SearchResult[] {
  if (!Array.isArray(items)) return [];
  const out: SearchResult[] = [];
  for (const item of items) {
    if (!item || typeof item !== 'object') continue;
    const r = item as Record<string, unknown>;
    if (typeof r[url] !== 'string' || !r[url]) continue;
    out.push({ title: plain(parseHTML, r[title]), url: r[url] as string, snippet: plain(parseHTML, r[snippet]) });
  }
  return out;
}

interface BackendRequest {
  url: URL;
  init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string };
  results: (data: any, parseHTML: ParseHtml) => SearchResult[];
}

function backendRequest(settings: WebSearchSettings, provider: WebSearchProvider, query: string, count: number): BackendRequest {
  const json = { accept: 'application/json' };
  switch (provider) {
    case 'searxng': {
      const url = endpoint(need(settings.searxngUrl, 'SEARXNG_URL', provider), 'search');
      url.searchParams.set('q', query);
      url.searchParams.set('format', 'json');
      return { url, init: { method: 'GET', headers: json }, results: (d, parse) => normalise(parse, d?.results, 'title', 'url', 'content') };
    }
    case 'brave': {
      const key = need(settings.braveApiKey, 'BRAVE_SEARCH_API_KEY', provider);
      const url = endpoint(settings.braveUrl, 'res/v1/web/search');
      url.searchParams.set('q', query);
      url.searchParams.set('count', String(count));
      return {
        url,
        init: { method: 'GET', headers: { ...json, 'x-subscription-token': key } },
        results: (d, parse) => normalise(parse, d?.web?.results, 'title', 'url', 'description'),
      };
    }
    case 'tavily': {
      const key = need(settings.tavilyApiKey, 'TAVILY_API_KEY', provider);
      return {
        url: endpoint(settings.tavilyUrl, 'search'),
        // The key goes both ways Tavily has accepted it: the Bearer header and the older body field.
        init: {
          method: 'POST',
          headers: { ...json, 'content-type': 'application/json', authorization: `Bearer ${key}` },
          body: JSON.stringify({ api_key: key, query, max_results: count }),
        },
        results: (d, parse) => normalise(parse, d?.results, 'title', 'url', 'content'),
      };
    }
    case 'serper': {
      const key = need(settings.serperApiKey, 'SERPER_API_KEY', provider);
      return {
        url: endpoint(settings.serperUrl, 'search'),
        init: { method: 'POST', headers: { ...json, 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify({ q: query, num: count }) },
        results: (d, parse) => normalise(parse, d?.organic, 'title', 'link', 'snippet'),
      };
    }
  }
}

/** Runs one search against the configured backend. */
async function searchWeb(settings: WebSearchSettings, query: string, count: number, signal: AbortSignal): Promise<SearchResult[]> {
  const provider = settings.provider.trim().toLowerCase();
  if (!provider) {
    throw new ToolError(`web search is not configured: set WEB_SEARCH_PROVIDER to one of ${WEB_SEARCH_PROVIDERS.join(', ')}`, 'not_configured');
  }
  if (!(WEB_SEARCH_PROVIDERS as readonly string[]).includes(provider)) {
    throw new ToolError(`web search is not configured: WEB_SEARCH_PROVIDER=${provider} is not one of ${WEB_SEARCH_PROVIDERS.join(', ')}`, 'not_configured');
  }
  const req = backendRequest(settings, provider as WebSearchProvider, query, count);
  const timeoutMs = settings.timeoutMs ?? 20_000;
  const timeout = AbortSignal.timeout(timeoutMs);
  let res: Response;
  try {
    res = await fetch(req.url, { ...req.init, signal: AbortSignal.any([signal, timeout]) });
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    if (timeout.aborted) throw new ToolError(`${provider} search timed out after ${timeoutMs} ms`, 'backend');
    const cause = (err as Error & { cause?: Error }).cause;
    throw new ToolError(`${provider} search backend unreachable: ${cause?.message ?? (err as Error).message}`, 'backend');
  }
  if (!res.ok) {
    await res.body?.cancel().catch(() => undefined);
    throw new ToolError(`${provider} search failed: HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`, 'backend');
  }
  let data: unknown;
  try {
    data = await res.json();
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    throw new ToolError(`${provider} search returned a response that is not JSON`, 'backend');
  }
  return req.results(data, (await linkedom()).parseHTML).slice(0, count);
}

export function webSearchTool(settings: WebSearchSettings): Tool<WebSearchArgs> {
  return {
    name: 'web_search',
    description: 'Search the web. Returns a list of results, each with title, url and snippet.',
    category: 'search',
    version: '1.0.0',
    parameters: {
      type: 'object',
      properties: {
        query: { type: 'string', description: 'The search query', minLength: 1, maxLength: 1000 },
        max_results: {
          type: 'integer',
          description: `Results returned at most (default ${DEFAULT_RESULTS})`,
          minimum: 1,
          maximum: MAX_RESULTS,
          default: DEFAULT_RESULTS,
        },
      },
      required: ['query'],
      additionalProperties: false,
    },
    timeoutMs: 30_000,
    costPerUse: 0.001,
    dangerous: false,
    rateLimitSetting: 'WEB_SEARCH_RATE_LIMIT',
    retryable: true,
    // Without a backend the call fails at once: nothing worth loading for it.
    prepare: async () => {
      if (settings.provider.trim()) await linkedom();
    },
    async run(args, ctx): Promise<ToolOutput> {
      const query = typeof args.query === 'string' ? args.query.trim() : '';
      if (!query) throw new ToolError('query is required', 'bad_arguments');
      const n = Number(args.max_results ?? DEFAULT_RESULTS);
      const count = Number.isFinite(n) ? Math.min(MAX_RESULTS, Math.max(1, Math.floor(n))) : DEFAULT_RESULTS;
      const results = await searchWeb(settings, query, count, ctx.signal);
      const text = results.length
        ? results.map((r, i) => `${i + 1}. ${r.title || r.url}\n   ${r.url}${r.snippet ? `\n   ${r.snippet}` : ''}`).join('\n\n')
        : `No results for "${query}".`;
      return {
        output: { query, provider: settings.provider.trim().toLowerCase(), results },
        text,
        metadata: { result_count: results.length },
      };
    },
  };
}
