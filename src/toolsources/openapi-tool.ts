/**
 * The operations of a registered OpenAPI document as tools (`openapi.<source>.<operationId>`).
 * A call builds the request from the arguments (path parameters percent-encoded, query and
 * header parameters serialised by their OpenAPI style, `body` sent as JSON), adds the source's
 * registered headers (credentials: they win over header parameters, are dropped on a redirect
 * to another origin and never appear in a message or in what the model reads) and sends it
 * through the SSRF-guarded fetch. A 2xx answer is the result (JSON parsed; the text cut for
 * the model like web_fetch's); a 4xx is a failure the model reads ('failed'), a 5xx or an
 * unreachable API a backend failure, each message naming the source.
 */
import { WEB_FETCH_DEFAULT_CHARS, type GuardedFetch, type Tool, type ToolContext, ToolError, type ToolOutput } from '../tools/index.js';
import type { OpenApiOperation, OpenApiParam } from './openapi-doc.js';
import { redactor } from './redact.js';

export interface OpenApiSource {
  name: string;
  baseUrl: string;
  /** Registered request headers (an API key): secret. */
  headers: Record<string, string>;
  timeoutMs: number;
  /** Calls per minute across the source's tools (0: no limit of its own). */
  rateLimitPerMinute: number;
  rateLimitKey: string;
  /** The document's info.version. */
  version: string;
}

export interface OpenApiToolOptions {
  /** The guarded fetch. */
  fetch: GuardedFetch;
  /** Characters of an answer the model reads at most (default web_fetch's, WEB_FETCH_DEFAULT_CHARS). */
  maxResponseChars?: number;
  /** Bytes of an answer read at most; the rest is dropped unread (default 2 MiB). */
  maxResponseBytes?: number;
}

const MAX_DESCRIPTION = 1_000;
const DEFAULT_MAX_RESPONSE_BYTES = 2 * 1024 * 1024;
/** Characters of an error answer quoted in the failure message. */
const ERROR_HEAD = 300;
const JSON_TYPE_RE = /^application\/(?:[\w.+-]*\+)?json\s*(?:;|$)/i;
/** Header values may not carry control characters (a CR/LF would start another header). */
const HEADER_VALUE_RE = /^[\t\x20-\x7e\x80-\xff]*$/;

export function openApiTools(source: OpenApiSource, ops: OpenApiOperation[], o: OpenApiToolOptions): Tool[] {
  const maxChars = o.maxResponseChars ?? WEB_FETCH_DEFAULT_CHARS;
  const maxBytes = o.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const redact = redactor(Object.values(source.headers));
  const label = `OpenAPI tool source ${JSON.stringify(source.name)}`;

  return ops.map((op): Tool => {
    const name = `openapi.${source.name}.${op.operationId}`;
    const own = [op.summary, op.description].filter((x): x is string => !!x && !!x.trim());
    const description = (own.length === 2 && own[1].startsWith(own[0]) ? own[1] : own.join('\n\n')).slice(0, MAX_DESCRIPTION);
    return {
      name,
      description: description || `${op.method} ${op.path} on ${label}`,
      category: 'openapi',
      version: source.version,
      parameters: op.inputSchema,
      timeoutMs: source.timeoutMs,
      costPerUse: 0,
      dangerous: false,
      retryable: op.method === 'GET' || op.method === 'HEAD',
      ...(source.rateLimitPerMinute > 0 ? { rateLimit: { perMinute: source.rateLimitPerMinute, key: source.rateLimitKey } } : {}),
      async run(args, ctx: ToolContext): Promise<ToolOutput> {
        const { url, path } = requestUrl(source.baseUrl, op, args);
        const what = `${label}: ${op.method} ${path}`;
        const headers = new Headers({ accept: 'application/json, */*;q=0.5' });
        for (const p of op.params) {
          if (p.in !== 'header' || args[p.key] === undefined || args[p.key] === null) continue;
          const value = serialise(args[p.key], p, ',');
          if (!HEADER_VALUE_RE.test(value)) throw new ToolError(`header parameter ${p.key} may not contain control characters`, 'bad_arguments');
          headers.set(p.name, value);
        }
        let body: string | undefined;
        if (op.body && args.body !== undefined) {
          headers.set('content-type', op.body.contentType);
          body = JSON.stringify(args.body);
        }
        for (const [k, v] of Object.entries(source.headers)) headers.set(k, v);

        let res: Response;
        try {
          res = await o.fetch(url, { method: op.method, headers, body, signal: ctx.signal, secretHeaders: Object.keys(source.headers) });
        } catch (err) {
          if (ctx.signal.aborted) throw err;
          const kind = err instanceof ToolError ? err.kind : 'backend';
          throw new ToolError(redact(`${what} failed: ${(err as Error).message}`), kind);
        }
        let answer: { text: string; cut: boolean };
        try {
          answer = await readAnswer(res, maxBytes);
        } catch (err) {
          if (ctx.signal.aborted) throw err;
          throw new ToolError(redact(`${what} failed while answering: ${(err as Error).message}`), 'backend');
        }
        const text = redact(answer.text);
        if (res.status >= 400) {
          const head = text.replace(/\s+/g, ' ').trim().slice(0, ERROR_HEAD);
          throw new ToolError(`${what} answered ${res.status}: ${head || '(empty body)'}`, res.status < 500 ? 'failed' : 'backend');
        }
        return result(res, text, answer.cut, maxChars);
      },
    };
  });
}

/** The request URL: base URL + the path with its parameters, then the query parameters. */
function requestUrl(baseUrl: string, op: OpenApiOperation, args: Record<string, unknown>): { url: URL; path: string } {
  const path = op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
    const p = op.params.find((x) => x.in === 'path' && x.name === name);
    const value = p ? args[p.key] : undefined;
    if (!p || value === undefined || value === null) throw new ToolError(`path parameter ${name} is required`, 'bad_arguments');
    const segment = serialise(value, p, ',', encodeURIComponent);
    // A dot segment would move the request up the API's path, even percent-encoded.
    if (/^(?:\.|%2e){1,2}$/i.test(segment)) throw new ToolError(`path parameter ${name} may not be "." or ".."`, 'bad_arguments');
    return segment;
  });
  const url = new URL(baseUrl);
  url.pathname = url.pathname.replace(/\/+$/, '') + path;
  for (const p of op.params) {
    const value = args[p.key];
    if (p.in !== 'query' || value === undefined || value === null) continue;
    for (const [k, v] of queryPairs(p, value)) url.searchParams.append(k, v);
  }
  return { url, path };
}

/** A query parameter as name=value pairs, by its style (form, spaceDelimited, pipeDelimited, deepObject). */
function queryPairs(p: OpenApiParam, value: unknown): Array<[string, string]> {
  if (p.json) return [[p.name, JSON.stringify(value)]];
  if (Array.isArray(value)) {
    if (p.explode) return value.map((v) => [p.name, scalar(v)]);
    const sep = p.style === 'spaceDelimited' ? ' ' : p.style === 'pipeDelimited' ? '|' : ',';
    return [[p.name, value.map(scalar).join(sep)]];
  }
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    if (p.style === 'deepObject') return entries.map(([k, v]) => [`${p.name}[${k}]`, scalar(v)]);
    if (p.explode) return entries.map(([k, v]) => [k, scalar(v)]);
    return [[p.name, entries.flatMap(([k, v]) => [k, scalar(v)]).join(',')]];
  }
  return [[p.name, scalar(value)]];
}

/** A path or header parameter in the `simple` style (arrays and objects comma-separated), each part encoded. */
function serialise(value: unknown, p: OpenApiParam, sep: string, encode: (s: string) => string = (s) => s): string {
  if (p.json) return encode(JSON.stringify(value));
  if (Array.isArray(value)) return value.map((v) => encode(scalar(v))).join(sep);
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    return entries.map(([k, v]) => (p.explode ? `${encode(k)}=${encode(scalar(v))}` : `${encode(k)}${sep}${encode(scalar(v))}`)).join(sep);
  }
  return encode(scalar(value));
}

function scalar(v: unknown): string {
  return typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v);
}

/** The answer's text, at most maxBytes of it (the rest is not read). */
async function readAnswer(res: Response, maxBytes: number): Promise<{ text: string; cut: boolean }> {
  if (!res.body) return { text: '', cut: false };
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let cut = false;
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    const room = maxBytes - size;
    if (r.value.byteLength > room) {
      chunks.push(r.value.subarray(0, room));
      size += room;
      cut = true;
      await reader.cancel();
      break;
    }
    chunks.push(r.value);
    size += r.value.byteLength;
  }
  return { text: new TextDecoder().decode(Buffer.concat(chunks, size)), cut };
}

function result(res: Response, text: string, bytesCut: boolean, maxChars: number): ToolOutput {
  const contentType = res.headers.get('content-type') ?? '';
  let body: unknown = text;
  if (JSON_TYPE_RE.test(contentType) && !bytesCut && text.trim()) {
    try {
      body = JSON.parse(text);
    } catch {
      // Not the JSON it claims to be: the model reads the text as it is.
    }
  }
  const clipped = text.length > maxChars;
  const truncated = clipped || bytesCut;
  const shown = clipped ? text.slice(0, maxChars) : text;
  const output: Record<string, unknown> = { status: res.status, body: typeof body === 'string' ? shown : body };
  if (truncated && typeof body === 'string') output.truncated = true;
  const marker = bytesCut ? '\n\n[truncated]' : clipped ? `\n\n[truncated: ${text.length} characters in all]` : '';
  return { output, text: `${shown || `(${res.status}, no content)`}${marker}` };
}
