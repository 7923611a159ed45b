/**
 * The HTTP client of the web tools (page fetches), guarded against server-side request forgery
 * (SSRF) by `./net-guard.ts`: before every connection — the first request and every redirect
 * hop — the URL is vetted (host resolved once, refused if any address is not public unicast)
 * and the connection goes to the addresses that were checked. It reads at most `maxBytes` of
 * (decompressed) body, limits requests in flight per host, and times a whole fetch.
 *
 * Search backends are configured by the operator and do not go through this client.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import pLimit, { type LimitFunction } from 'p-limit';
import { createUrlVetter, decodedBody, type HostLookup, pinnedRequestOptions, trustedCas, type VettedTarget } from './net-guard.js';
import { ToolError } from './tool.js';

export { isBlockedAddress, parseAllowList } from './net-guard.js';
export type { AllowList, HostLookup } from './net-guard.js';

export interface SafeFetchOptions {
  /** Hostnames (`example.com`, `*.example.com`), IP addresses or CIDRs exempt from the guard. */
  allowHosts: string[];
  /** Bytes of (decompressed) body read at most; the rest is dropped and `truncated` set. */
  maxBytes: number;
  /** Time limit of one `fetchPage` call, redirects and waiting for a host slot included. */
  timeoutMs: number;
  /** Requests in flight to one hostname at most; further ones wait. */
  perHostConcurrency: number;
  userAgent?: string;
  /** Redirects followed at most (default 5). */
  maxRedirects?: number;
  /** Name resolution, replaceable in tests (default: `dns.lookup` with `all: true`). */
  lookup?: HostLookup;
  /** Extra trusted CA certificates (PEM) for https, besides Node's bundled roots: intranet CAs, tests. */
  ca?: string | string[];
}

export interface FetchedPage {
  /** The final URL, after redirects. */
  url: string;
  status: number;
  /** The Content-Type header ('' when absent). */
  contentType: string;
  body: string;
  /** Bytes of body read (after decompression, at most maxBytes). */
  bytes: number;
  /** Whether the body was cut at maxBytes. */
  truncated: boolean;
}

export interface FetchPageOptions {
  signal?: AbortSignal;
  /** Extra request headers (e.g. Accept). */
  headers?: Record<string, string>;
}

export type FetchPage = (url: string, opts?: FetchPageOptions) => Promise<FetchedPage>;

const DEFAULT_USER_AGENT = 'taskorch-web-tools/0.1 (+https://github.com/taskorch)';

class TimeoutError extends Error {}

/** An HTTP client for tools that refuses private destinations; see the module comment. */
export function createSafeFetch(opts: SafeFetchOptions): FetchPage {
  const vet = createUrlVetter(opts);
  const maxRedirects = opts.maxRedirects ?? 5;
  const userAgent = opts.userAgent ?? DEFAULT_USER_AGENT;
  const perHost = Math.max(1, Math.floor(opts.perHostConcurrency));
  const slots = new Map<string, LimitFunction>();
  const ca = trustedCas(opts.ca);

  /** Runs `fn` in one of the host's slots; a call cancelled while it waits for one ends at once. */
  function withHostSlot<T>(hostname: string, signal: AbortSignal, fn: () => Promise<T>): Promise<T> {
    if (signal.aborted) return Promise.reject(signal.reason);
    let limit = slots.get(hostname);
    if (!limit) {
      limit = pLimit(perHost);
      slots.set(hostname, limit);
    }
    const held = limit;
    const run = held(() => (signal.aborted ? Promise.reject(signal.reason) : fn()));
    const forget = () => {
      if (held.activeCount === 0 && held.pendingCount === 0 && slots.get(hostname) === held) slots.delete(hostname);
    };
    run.then(forget, forget);
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      run.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  /** One request to a vetted target; resolves with the response once headers arrive. */
  function send(target: VettedTarget, headers: Record<string, string>, signal: AbortSignal): Promise<IncomingMessage> {
    const { url } = target;
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const options = { ...pinnedRequestOptions(target, ca), method: 'GET', headers: { ...headers, host: url.host }, signal };
    return new Promise((resolve, reject) => {
      const req = request(options, resolve);
      req.on('error', reject);
      req.end();
    });
  }

  async function readBody(res: IncomingMessage, where: URL, signal: AbortSignal): Promise<{ buf: Buffer; truncated: boolean }> {
    const stream = decodedBody(res);
    const chunks: Buffer[] = [];
    let size = 0;
    let truncated = false;
    const onAbort = () => stream.destroy(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        const room = opts.maxBytes - size;
        if (chunk.length >= room) {
          chunks.push(chunk.subarray(0, room));
          size += room;
          // Anything beyond the limit: even exactly-at-limit bodies are marked when more data follows.
          truncated = chunk.length > room || !res.complete;
          break;
        }
        chunks.push(chunk);
        size += chunk.length;
      }
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      throw new ToolError(`reading ${where.href} failed: ${(err as Error).message}`, 'backend');
    } finally {
      signal.removeEventListener('abort', onAbort);
      if (!res.complete || stream !== res) {
        res.destroy();
        if (stream !== res) stream.destroy();
      }
    }
    return { buf: Buffer.concat(chunks, size), truncated };
  }

  return async function fetchPage(url, fetchOpts = {}) {
    const controller = new AbortController();
    const callerSignal = fetchOpts.signal;
    const onCallerAbort = () => controller.abort(callerSignal?.reason);
    if (callerSignal?.aborted) throw callerSignal.reason;
    callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
    const timer = setTimeout(() => controller.abort(new TimeoutError()), opts.timeoutMs);
    const signal = controller.signal;
    const headers: Record<string, string> = {
      'user-agent': userAgent,
      accept: 'text/html,application/xhtml+xml,application/json;q=0.9,text/plain;q=0.8,*/*;q=0.5',
      'accept-encoding': 'gzip, deflate, br',
      ...Object.fromEntries(Object.entries(fetchOpts.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v])),
    };
    try {
      let current: string | URL = url;
      let hops = 0;
      for (;;) {
        const target = await vet(current);
        const result = await withHostSlot<{ page: FetchedPage } | { redirect: URL }>(target.hostname, signal, async () => {
          let res: IncomingMessage;
          try {
            res = await send(target, headers, signal);
          } catch (err) {
            if (signal.aborted) throw signal.reason;
            throw new ToolError(`request to ${target.url.host} failed: ${(err as Error).message}`, 'backend');
          }
          const status = res.statusCode ?? 0;
          const location = res.headers.location;
          if (status >= 300 && status < 400 && location) {
            res.destroy();
            try {
              return { redirect: new URL(location, target.url) };
            } catch {
              throw new ToolError(`${target.url.href} redirected to an invalid URL: ${location}`, 'backend');
            }
          }
          const { buf, truncated } = await readBody(res, target.url, signal);
          const contentType = String(res.headers['content-type'] ?? '');
          const page: FetchedPage = { url: target.url.href, status, contentType, body: decode(buf, contentType), bytes: buf.length, truncated };
          return { page };
        });
        if ('page' in result) return result.page;
        if (hops++ >= maxRedirects) throw new ToolError(`too many redirects (more than ${maxRedirects}) from ${String(url)}`, 'backend');
        current = result.redirect;
      }
    } catch (err) {
      if (err instanceof TimeoutError || (signal.aborted && signal.reason instanceof TimeoutError && !callerSignal?.aborted)) {
        throw new ToolError(`fetching ${String(url)} timed out after ${opts.timeoutMs} ms`, 'backend');
      }
      throw err;
    } finally {
      clearTimeout(timer);
      callerSignal?.removeEventListener('abort', onCallerAbort);
    }
  };
}

/** Decodes a body with the charset of its Content-Type (UTF-8 when absent or unknown). */
function decode(buf: Buffer, contentType: string): string {
  const charset = contentType
    .split(';')
    .map((p) => p.trim())
    .find((p) => p.toLowerCase().startsWith('charset='))
    ?.slice('charset='.length)
    .replace(/^"|"$/g, '');
  if (charset) {
    try {
      return new TextDecoder(charset).decode(buf);
    } catch {
      // Unknown label: fall through to UTF-8.
    }
  }
  return new TextDecoder('utf-8').decode(buf);
}
