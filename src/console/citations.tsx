/** A research task's sources as a list of links that open in a new tab without handing the page to them. */
import { isWebUrl, type Citation } from './citations-text.js';

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
