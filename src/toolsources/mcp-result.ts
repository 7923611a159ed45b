/**
 * An MCP `tools/call` result as our `ToolOutput`: what a model reads is the result's text
 * contents joined; images, audio and binary resources are described in a line (kind, type,
 * size) rather than pasted as base64 a model cannot read, and cut at a length like web_fetch's
 * pages; the full content stays in `output`.
 */
import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/sdk/types.js';
import type { ToolOutput } from '../tools/index.js';

/** Bytes a base64 string decodes to. */
const base64Bytes = (b64: string): number => {
  const s = b64.replace(/\s+/g, '');
  return Math.max(0, Math.floor((s.length * 3) / 4) - (s.endsWith('==') ? 2 : s.endsWith('=') ? 1 : 0));
};

/** One content block as text a model can read. */
export function contentText(c: ContentBlock): string {
  switch (c.type) {
    case 'text':
      return c.text;
    case 'image':
    case 'audio':
      return `[${c.type} ${c.mimeType}, ${base64Bytes(c.data)} bytes]`;
    case 'resource_link':
      return `[resource link ${c.uri}${c.mimeType ? ` ${c.mimeType}` : ''}]`;
    case 'resource': {
      const r = c.resource;
      if ('text' in r && typeof r.text === 'string') return `[resource ${r.uri}]\n${r.text}`;
      const blob = 'blob' in r && typeof r.blob === 'string' ? r.blob : '';
      return `[resource ${r.uri}${r.mimeType ? ` ${r.mimeType}` : ''}, ${base64Bytes(blob)} bytes]`;
    }
    default:
      return `[${(c as { type: string }).type} content]`;
  }
}

/** The text of a result (its content blocks joined; structured content when it has no blocks). */
export function resultText(r: Pick<CallToolResult, 'content' | 'structuredContent'>): string {
  const blocks = r.content ?? [];
  if (blocks.length === 0 && r.structuredContent !== undefined) return JSON.stringify(r.structuredContent);
  return blocks.map(contentText).join('\n');
}

/**
 * A `tools/call` answer in today's shape: servers of protocol 2024-10-07 answer `toolResult`
 * instead of content blocks (the SDK's result type still allows it).
 */
export function callResult(r: CallToolResult | { toolResult: unknown }): CallToolResult {
  if ('content' in r) return r;
  return { content: [{ type: 'text', text: typeof r.toolResult === 'string' ? r.toolResult : JSON.stringify(r.toolResult) }] };
}

/** Text cut to `maxChars`, saying how long it was. */
export function clip(text: string, maxChars: number): string {
  return text.length > maxChars ? `${text.slice(0, maxChars)}\n\n[truncated: ${text.length} characters in all]` : text;
}

export function toolOutput(r: CallToolResult, maxChars: number): ToolOutput {
  return {
    text: clip(resultText(r), maxChars),
    output: r.structuredContent === undefined ? { content: r.content } : { content: r.content, structuredContent: r.structuredContent },
  };
}
