/**
 * Markdown rendered as sanitised HTML: marked turns the text into HTML, DOMPurify removes
 * anything that could run (scripts, event handlers, javascript: links) before it is shown.
 */
import DOMPurify from 'dompurify';
import { marked } from 'marked';

export function renderMarkdown(text: string): string {
  const html = marked.parse(text, { async: false, gfm: true, breaks: false });
  return DOMPurify.sanitize(html, { USE_PROFILES: { html: true } });
}

export function Markdown({ text, class: cls }: { text: string; class?: string }) {
  return <div class={`markdown ${cls ?? ''}`} dangerouslySetInnerHTML={{ __html: renderMarkdown(text) }} />;
}
