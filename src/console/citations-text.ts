/**
 * A research task's sources (metadata.citations) and the answer's inline [n] marks made links
 * to them. Only http(s) addresses become links. Text only (no JSX), so it is tested on its own.
 */
import { metadataRecords } from './format.js';

export interface Citation {
  url: string;
  title?: string;
  source?: string;
}

/** The citations of a task's metadata (entries without a URL left out). */
export function citationsOf(metadata: Record<string, unknown> | undefined): Citation[] {
  return metadataRecords(metadata, 'citations', 'url').map((c) => ({
    url: String(c.url),
    ...(typeof c.title === 'string' && c.title ? { title: c.title } : {}),
    ...(typeof c.source === 'string' && c.source ? { source: c.source } : {}),
  }));
}

export const isWebUrl = (u: string) => /^https?:\/\//i.test(u);

/** A URL as a markdown link's target: spaces and parentheses (which encodeURIComponent keeps) escaped. */
const linkTarget = (url: string) => url.replace(/[()\s]/g, (ch) => (ch === '(' ? '%28' : ch === ')' ? '%29' : encodeURIComponent(ch)));

/**
 * Code, where a mark is text (group 1): fenced blocks, to their closing fence or to the end when
 * unclosed, as markdown reads them (group 2: the fence), and inline code spans. Else a mark
 * (group 3: its numbers) that is not a link's text or a reference already.
 */
const CODE_OR_MARK = /((?:^|\n)(```|~~~)[\s\S]*?(?:\n\2[^\n]*(?=\n|$)|$)|``[^\n]*?``|`[^`\n]*`)|\[(\d+(?:\s*,\s*\d+)*)\](?![(:[])/g;

/**
 * The answer's inline marks [n] (and [n, m]) as markdown links to their sources, so the rendered
 * answer's citations are links; a mark with no source, already a link, or inside code is left as
 * it is.
 */
export function linkCitations(text: string, items: Citation[]): string {
  if (!items.length) return text;
  const link = (n: number) => {
    const c = items[n - 1];
    return c && isWebUrl(c.url) ? `[${n}](${linkTarget(c.url)})` : String(n);
  };
  return text.replace(CODE_OR_MARK, (m, code: string | undefined, _fence: string | undefined, list: string | undefined) =>
    code !== undefined || list === undefined
      ? m
      : `[${list
          .split(/\s*,\s*/)
          .map((n) => link(Number(n)))
          .join(', ')}]`,
  );
}
