/**
 * A research task's sources: what its web_search calls returned and its page reads fetched,
 * nothing else. Hits are merged by canonical URL and scored by two documented rules.
 *
 * Canonical URL: scheme and host lower-cased, default port, fragment and tracking parameters
 * (utm_*, gclid, fbclid, ...) dropped, trailing slash of the path dropped.
 *
 * credibility_score (how far the publisher can be trusted, from the URL alone):
 *   government (.gov, .mil, gov.xx, gouv.xx)           0.90
 *   academic (.edu, ac.xx, edu.xx) or international (.int)   0.85
 *   a known reference or standards site (REFERENCE_HOSTS)     0.80
 *   .org                                              0.60
 *   any other public host                              0.50
 *   social and user-generated (SOCIAL_HOSTS)           0.30
 *   an IP address or localhost                          0.20
 *   then +0.10 for https (a plain http page is not raised), clamped to 0..1.
 *
 * quality_score (how much of the source was actually read):
 *   a fetched page: 0.40, + 0.40 × min(1, characters read / 4000), + 0.10 with a title,
 *     + 0.10 when it was read whole (not cut at a length limit);
 *   a search result only: 0.10, + 0.20 × min(1, snippet characters / 300), + 0.10 with a title.
 * Both are rounded to two decimals.
 */
import { OBSERVATION_MODEL_CHARS } from '../agents/index.js';
import { AppError, Code } from '../kernel/index.js';

/** One thing a tool returned about a page: a search result (snippet) or a page read in full. */
export interface SourceHit {
  url: string;
  title: string;
  snippet?: string;
  /** The page's text as it was read (fetched pages only). */
  text?: string;
  fetched: boolean;
  truncated?: boolean;
}

/** A source of the task: every hit of one canonical URL merged. */
export interface Source {
  url: string;
  canonical: string;
  title: string;
  snippet: string;
  text: string;
  fetched: boolean;
  truncated: boolean;
}

/** A citation as metadata.citations holds it. */
export interface Citation {
  url: string;
  title: string;
  source: string;
  credibility_score: number;
  quality_score: number;
}

const TRACKING = new Set(['gclid', 'fbclid', 'msclkid', 'dclid', 'yclid', 'gbraid', 'wbraid', 'mc_cid', 'mc_eid', 'igshid', '_ga', '_gl', 'ref_src', 'spm']);

export function canonicalUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    return raw.trim();
  }
  u.hash = '';
  for (const k of [...u.searchParams.keys()]) if (k.toLowerCase().startsWith('utm_') || TRACKING.has(k.toLowerCase())) u.searchParams.delete(k);
  u.pathname = u.pathname.replace(/\/+$/, '');
  // URL keeps "?" for an emptied query; the canonical form has none.
  const s = u.href.replace(/\?$/, '');
  return s.endsWith('/') && u.pathname === '/' ? s.slice(0, -1) : s;
}

/** Reference works, standards bodies, journals and official documentation. */
const REFERENCE_HOSTS = [
  'wikipedia.org',
  'britannica.com',
  'arxiv.org',
  'nature.com',
  'science.org',
  'sciencedirect.com',
  'springer.com',
  'acm.org',
  'ieee.org',
  'ietf.org',
  'w3.org',
  'iso.org',
  'nih.gov',
  'who.int',
  'developer.mozilla.org',
  'docs.python.org',
  'nodejs.org',
  'postgresql.org',
  'nats.io',
  'reuters.com',
  'apnews.com',
];
const SOCIAL_HOSTS = [
  'reddit.com',
  'twitter.com',
  'x.com',
  'facebook.com',
  'instagram.com',
  'tiktok.com',
  'quora.com',
  'pinterest.com',
  'medium.com',
  'youtube.com',
];

const under = (host: string, domains: string[]) => domains.some((d) => host === d || host.endsWith(`.${d}`));
const round2 = (n: number) => Math.round(Math.min(1, Math.max(0, n)) * 100) / 100;

export function credibilityScore(url: string): number {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 0;
  }
  const host = u.hostname.toLowerCase().replace(/\.$/, '');
  let base: number;
  if (host === 'localhost' || /^[\d.]+$/.test(host) || host.startsWith('[')) base = 0.2;
  else if (/\.(gov|mil)$/.test(host) || /(^|\.)(gov|gouv)\.[a-z]{2}$/.test(host)) base = 0.9;
  else if (/\.(edu|int)$/.test(host) || /(^|\.)(ac|edu)\.[a-z]{2}$/.test(host)) base = 0.85;
  else if (under(host, REFERENCE_HOSTS)) base = 0.8;
  else if (under(host, SOCIAL_HOSTS)) base = 0.3;
  else if (host.endsWith('.org')) base = 0.6;
  else base = 0.5;
  return round2(base + (u.protocol === 'https:' ? 0.1 : 0));
}

export function qualityScore(s: Pick<Source, 'fetched' | 'text' | 'snippet' | 'title' | 'truncated'>): number {
  const title = s.title.trim() ? 0.1 : 0;
  if (s.fetched) return round2(0.4 + 0.4 * Math.min(1, s.text.trim().length / 4000) + title + (s.truncated ? 0 : 0.1));
  return round2(0.1 + 0.2 * Math.min(1, s.snippet.trim().length / 300) + title);
}

export function citationOf(s: Source): Citation {
  let host = '';
  try {
    host = new URL(s.url).hostname.toLowerCase();
  } catch {
    /* not a URL: no host */
  }
  return { url: s.url, title: s.title || s.url, source: host, credibility_score: credibilityScore(s.url), quality_score: qualityScore(s) };
}

const str = (v: unknown) => (typeof v === 'string' ? v : '');
const isWeb = (u: string) => /^https?:\/\//i.test(u);

/** The hits of one successful tool call, from its structured output. */
export function hitsOf(tool: string, output: Record<string, unknown>): SourceHit[] {
  const clip = (s: string) => s.slice(0, OBSERVATION_MODEL_CHARS);
  const page = (p: Record<string, unknown>): SourceHit => ({
    url: str(p.url),
    title: str(p.title).trim(),
    text: clip(str(p.content)),
    fetched: true,
    truncated: p.truncated === true,
  });
  let hits: SourceHit[] = [];
  if (tool === 'web_search' && Array.isArray(output.results)) {
    hits = (output.results as Record<string, unknown>[]).map((r) => ({
      url: str(r?.url),
      title: str(r?.title).trim(),
      snippet: str(r?.snippet).trim(),
      fetched: false,
    }));
  } else if (tool === 'web_fetch') {
    hits = [page(output)];
  } else if ((tool === 'web_subpage_fetch' || tool === 'web_crawl') && Array.isArray(output.pages)) {
    hits = (output.pages as Record<string, unknown>[]).map(page);
  }
  // A fetched page with no text was not read.
  return hits.filter((h) => isWeb(h.url) && (!h.fetched || h.text!.trim().length > 0));
}

/**
 * The task's sources in a stable order: pages read first, then search results only, each in
 * the order first met. A page read twice keeps its longer text; a title or snippet met
 * anywhere is kept.
 */
export function mergeSources(hits: readonly SourceHit[]): Source[] {
  const by = new Map<string, Source>();
  for (const h of hits) {
    const canonical = canonicalUrl(h.url);
    const s = by.get(canonical);
    if (!s) {
      by.set(canonical, {
        url: h.url,
        canonical,
        title: h.title,
        snippet: h.snippet ?? '',
        text: h.text ?? '',
        fetched: h.fetched,
        truncated: !!h.truncated,
      });
      continue;
    }
    if (!s.title) s.title = h.title;
    if (!s.snippet && h.snippet) s.snippet = h.snippet;
    if (h.fetched && (!s.fetched || (h.text ?? '').length > s.text.length)) {
      if (!s.fetched) s.url = h.url;
      s.fetched = true;
      s.text = h.text ?? '';
      s.truncated = !!h.truncated;
    }
  }
  const all = [...by.values()];
  return [...all.filter((s) => s.fetched), ...all.filter((s) => !s.fetched)];
}

/**
 * The sources the synthesiser is given: every hit merged, at most `max`, the pages read first.
 * Only those pages may be cited (citableOf); a search result nobody fetched is context at most.
 * A task that read no page at all has nothing to cite and fails rather than answer as if it
 * had researched.
 */
export function sourcesToCite(hits: readonly SourceHit[], max: number): Source[] {
  const all = mergeSources(hits);
  if (!all.some((s) => s.fetched)) {
    const found = all.length;
    throw new AppError(
      Code.FailedPrecondition,
      `research read no web page: ${found ? `none of the ${found} search results was fetched` : 'the searches found no result'}, so there is nothing to cite`,
    );
  }
  return all.slice(0, max);
}

/** The sources that may be cited: the pages this task fetched, in the order given. */
export const citableOf = (sources: readonly Source[]): Source[] => sources.filter((s) => s.fetched && s.text.trim().length > 0);
