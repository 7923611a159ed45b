/**
 * The one bounded request of the vendor tools (ads-client.ts, finance-http.ts): `fetch` with a
 * time limit and the caller's abort, the body read up to a size bound, and every transport
 * failure (timeout, unreachable host, oversized or unreadable body) as a `backend` ToolError
 * naming the vendor. What a non-2xx answer means is the caller's business: it gets the status
 * and the text. Also the time limit of a vendor tool, derived from its vendor setting.
 */
import { ToolError } from './tool.js';

export interface BoundedRequest {
  /** The vendor as errors name it. */
  vendor: string;
  url: URL;
  method?: 'GET' | 'POST';
  headers: Record<string, string>;
  /** Sent as is (already serialised). */
  body?: string;
  /** Follow redirects; otherwise a redirect is a failure, so a key never goes elsewhere. */
  followRedirects?: boolean;
  timeoutMs: number;
  /** Responses larger than this fail instead of filling memory. */
  maxBytes: number;
  signal: AbortSignal;
  /** How a timeout reads: `<vendor> <timeoutWords> after N ms` (default `timed out`). */
  timeoutWords?: string;
}

export interface BoundedResponse {
  status: number;
  ok: boolean;
  text: string;
}

/** The body of a response, refused past `max` bytes (by Content-Length or while reading). */
export async function readBounded(res: Response, max: number, vendor: string): Promise<string> {
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > max) {
    await res.body?.cancel().catch(() => undefined);
    throw new ToolError(`${vendor} response too large: ${declared} bytes (limit ${max})`, 'backend');
  }
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      throw new ToolError(`${vendor} response too large: over ${max} bytes`, 'backend');
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** One vendor request: status and body text, or a `backend` ToolError; the caller's abort is rethrown as is. */
export async function fetchBounded(req: BoundedRequest): Promise<BoundedResponse> {
  const timeout = AbortSignal.timeout(req.timeoutMs);
  const signal = AbortSignal.any([req.signal, timeout]);
  const timedOut = () => new ToolError(`${req.vendor} ${req.timeoutWords ?? 'timed out'} after ${req.timeoutMs} ms`, 'backend');
  let res: Response;
  try {
    res = await fetch(req.url, {
      method: req.method ?? 'GET',
      headers: req.headers,
      body: req.body,
      signal,
      redirect: req.followRedirects ? 'follow' : 'error',
    });
  } catch (err) {
    if (req.signal.aborted) throw req.signal.reason;
    if (timeout.aborted) throw timedOut();
    const cause = (err as Error & { cause?: Error }).cause;
    throw new ToolError(`${req.vendor} unreachable: ${cause?.message ?? (err as Error).message}`, 'backend');
  }
  try {
    return { status: res.status, ok: res.ok, text: await readBounded(res, req.maxBytes, req.vendor) };
  } catch (err) {
    if (req.signal.aborted) throw req.signal.reason;
    if (err instanceof ToolError) throw err;
    if (timeout.aborted) throw timedOut();
    throw new ToolError(`${req.vendor} response could not be read: ${(err as Error).message}`, 'backend');
  }
}

/** Secrets never reach an error message, even when a vendor echoes them; long messages are cut. */
export function redact(s: string, secrets: (string | undefined)[] = [], max = 500): string {
  let out = s;
  for (const x of secrets) if (x) out = out.split(x).join('***');
  return out.length > max ? `${out.slice(0, max)}…` : out;
}

/** Time a vendor tool keeps for its own work besides its requests (parsing, a model call's share is added by the tool). */
export const VENDOR_TOOL_MARGIN_MS = 15_000;

/**
 * A vendor tool's time limit: `sequential` requests made one after another (the longest chain;
 * parallel ones count once), each allowed its vendor setting's `requestMs`, plus `marginMs`. So
 * a vendor timeout setting does what it says instead of being cut short by a fixed tool limit.
 */
export function vendorToolTimeoutMs(sequential: number, requestMs: number, marginMs = VENDOR_TOOL_MARGIN_MS): number {
  return Math.max(1, sequential) * requestMs + marginMs;
}
