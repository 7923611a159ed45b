/**
 * A research task's sources (metadata.citations): numbered as the answer's inline [n] marks
 * them, each a link that opens in a new tab without handing the page to it. Only http(s)
 * addresses become links; anything else is shown as text.
 */
export interface Citation {
  url: string;
  title?: string;
  source?: string;
}

/** The citations of a task's metadata (entries without a URL left out). */
export function citationsOf(metadata: Record<string, unknown> | undefined): Citation[] {
  const list = metadata?.citations;
  if (!Array.isArray(list)) return [];
  return list
    .filter((c): c is Record<string, unknown> => !!c && typeof c === 'object' && typeof (c as { url?: unknown }).url === 'string')
    .map((c) => ({
      url: String(c.url),
      ...(typeof c.title === 'string' && c.title ? { title: c.title } : {}),
      ...(typeof c.source === 'string' && c.source ? { source: c.source } : {}),
    }));
}

const isWebUrl = (u: string) => /^https?:\/\//i.test(u);

/**
 * The answer's inline marks [n] (and [n, m]) as markdown links to their sources, so the rendered
 * answer's citations are links; a mark with no source, or already a link, is left as it is.
 */
export function linkCitations(text: string, items: Citation[]): string {
  if (!items.length) return text;
  const link = (n: number) => {
    const c = items[n - 1];
    return c && isWebUrl(c.url) ? `[${n}](${c.url.replace(/[()\s]/g, encodeURIComponent)})` : String(n);
  };
  return text.replace(
    /\[(\d+(?:\s*,\s*\d+)*)\](?![(:[])/g,
    (_m, list: string) =>
      `[${list
        .split(/\s*,\s*/)
        .map((n) => link(Number(n)))
        .join(', ')}]`,
  );
}

export function Citations({ items }: { items: Citation[] }) {
  if (!items.length) return null;
  return (
    <>
      <h2>Sources</h2>
      <ol class="citations" data-testid="citations">
        {items.map((c, i) => (
          <li key={`${i}-${c.url}`} id={`cite-${i + 1}`}>
            {isWebUrl(c.url) ? (
              <a href={c.url} target="_blank" rel="noopener noreferrer">
                {c.title ?? c.url}
              </a>
            ) : (
              <span>{c.title ?? c.url}</span>
            )}
            {c.source ? <span class="muted"> · {c.source}</span> : null}
          </li>
        ))}
      </ol>
    </>
  );
}
