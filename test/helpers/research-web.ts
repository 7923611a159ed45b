/**
 * A local web for research tasks: a search backend speaking SearXNG's JSON API whose every
 * search returns one result, and the page it names. `env` configures an app to use them (the
 * research workflow fails at once without a working search backend).
 */
import { startServer } from './tools-web.js';

export interface ResearchWeb {
  env: Record<string, string>;
  pageUrl: string;
}

export async function startResearchWeb(text = 'A fixed window counter counts requests per window and resets at its end.'): Promise<ResearchWeb> {
  const pages = await startServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(text));
  const pageUrl = `${pages.origin}/page`;
  const search = await startServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ results: [{ title: 'Page', url: pageUrl, content: text.slice(0, 80) }] })),
  );
  return { env: { WEB_SEARCH_PROVIDER: 'searxng', SEARXNG_URL: search.origin, TOOLS_HTTP_ALLOW_HOSTS: '127.0.0.1/32' }, pageUrl };
}
