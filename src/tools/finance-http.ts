/**
 * The one way the financial agents call their vendors: a URL under the operator's base URL, a
 * time limit, a bound on the response size, and every failure as a ToolError that names the
 * vendor and what went wrong (its HTTP status and message, a timeout, an unreachable host).
 * Vendor base URLs come from the operator's settings, not from a model, so these requests do
 * not go through the web tools' SSRF guard (`./net.ts`); the request itself is
 * `./vendor-fetch.ts`'s, shared with the ads tools.
 */
import { ToolError } from './tool.js';
import { fetchBounded } from './vendor-fetch.js';

export interface VendorRequest {
  /** The vendor as errors name it, e.g. `SEC EDGAR`. */
  vendor: string;
  url: URL;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** Sent as JSON. */
  body?: unknown;
  timeoutMs: number;
  /** Responses larger than this fail instead of filling memory. */
  maxBytes: number;
  signal: AbortSignal;
  /** The settings that hold the credential, named when the vendor answers 401 or 403. */
  credential?: string;
  /** Follow redirects (EDGAR, which sends no secret); otherwise a redirect is a failure, so a key never goes elsewhere. */
  followRedirects?: boolean;
}

/** `path` under `base`, keeping any path prefix of the base (https://api.x.ai/v1 + responses). */
export function vendorUrl(base: string, path: string, query: Record<string, string | undefined> = {}): URL {
  const url = new URL(path.replace(/^\//, ''), base.endsWith('/') ? base : `${base}/`);
  for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, v);
  return url;
}

/** The vendor's own words about a failure: `message`, `error`, `error.message`, or the body's start. */
function detailOf(body: string): string {
  let text = body.trim();
  try {
    const j = JSON.parse(text) as Record<string, unknown>;
    const err = j.error;
    const msg = j.message ?? (typeof err === 'object' && err ? (err as Record<string, unknown>).message : err) ?? j.detail;
    if (typeof msg === 'string' && msg) text = msg;
  } catch {
    // not JSON: the text itself
  }
  text = text.replace(/\s+/g, ' ');
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/** The response body as text; any failure is a ToolError of kind `backend`. */
export async function vendorText(req: VendorRequest): Promise<string> {
  const headers: Record<string, string> = { accept: 'application/json', ...req.headers };
  if (req.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetchBounded({
    vendor: req.vendor,
    url: req.url,
    method: req.method ?? (req.body === undefined ? 'GET' : 'POST'),
    headers,
    body: req.body === undefined ? undefined : JSON.stringify(req.body),
    followRedirects: req.followRedirects,
    timeoutMs: req.timeoutMs,
    maxBytes: req.maxBytes,
    signal: req.signal,
    timeoutWords: 'request timed out',
  });
  if (!res.ok) {
    const detail = detailOf(res.text);
    const hint = (res.status === 401 || res.status === 403) && req.credential ? ` (check ${req.credential})` : '';
    throw new ToolError(`${req.vendor} request failed: HTTP ${res.status}${detail ? `: ${detail}` : ''}${hint}`, 'backend');
  }
  return res.text;
}

/** The response body parsed as JSON; a body that is not JSON is a `backend` ToolError. */
export async function vendorJson<T = unknown>(req: VendorRequest): Promise<T> {
  const text = await vendorText(req);
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new ToolError(`${req.vendor} returned a response that is not JSON`, 'backend');
  }
}

/** The UTC calendar day `days` before `now`, as YYYY-MM-DD. */
export function daysAgo(now: Date, days: number): string {
  return new Date(now.getTime() - days * 86_400_000).toISOString().slice(0, 10);
}

/** Comma-separated input (`AAPL, msft`) as trimmed, upper-cased, distinct tokens, in order. */
export function commaList(s: string): string[] {
  return [
    ...new Set(
      s
        .split(',')
        .map((x) => x.trim().toUpperCase())
        .filter(Boolean),
    ),
  ];
}
