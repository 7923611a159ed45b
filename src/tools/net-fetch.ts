/**
 * A `fetch` with the SSRF guard of `./net-guard.ts` on every hop, for clients that need more
 * than a page: any method, request headers and bodies, and the response body streamed as it
 * arrives (a Server-Sent Events stream reads event by event). OpenAPI tool calls use it, and
 * so does the MCP SDK's streamable HTTP transport (as its `fetch`) for user-registered MCP
 * servers, including long-lived GET event streams and DELETE.
 *
 * Redirects are followed here rather than by a library, so that each hop is vetted and pinned to
 * its checked addresses: at most `maxRedirects`, 303 (and 301/302 after a POST) continue as a GET
 * without the body, and a hop to another origin drops the credentials (Authorization, Cookie,
 * Proxy-Authorization and any header the caller names secret). Bodies compressed with gzip,
 * deflate or br are decompressed. Built on node:http/https: there is no undici to hand a
 * connection-pinning dispatcher to.
 *
 * Every request has its own connection (no pool), so a request that stalls would hold its
 * socket forever: a server that sends no response headers within `headerTimeoutMs`, or goes
 * quiet mid-body for `idleTimeoutMs`, has its connection closed and the request fails.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createUrlVetter, decodedBody, pinnedRequestOptions, trustedCas, type UrlGuardOptions, type VettedTarget } from './net-guard.js';
import { ToolError } from './tool.js';

export interface GuardedFetchOptions extends UrlGuardOptions {
  /** Extra trusted CA certificates (PEM) for https, besides Node's bundled roots. */
  ca?: string | string[];
  userAgent?: string;
  /** Redirects followed at most (default 5). */
  maxRedirects?: number;
  /** Header names dropped, besides Authorization, Cookie and Proxy-Authorization, when a redirect leaves the origin. */
  secretHeaders?: string[];
  /** Milliseconds to wait for a response's headers (default 300 s). */
  headerTimeoutMs?: number;
  /** Milliseconds a response body may go without data before it is cut (default 300 s; an idle event stream is cut too). */
  idleTimeoutMs?: number;
}

/** `RequestInit` plus secret header names for this call alone (dropped on a redirect to another origin, like `secretHeaders`). */
export type GuardedRequestInit = RequestInit & { secretHeaders?: string[] };

export type GuardedFetch = (input: string | URL | Request, init?: GuardedRequestInit) => Promise<Response>;

const DEFAULT_USER_AGENT = 'taskorch-tools/0.1 (+https://github.com/taskorch)';

/** Headers this client sets itself or that belong to one connection: never taken from the caller. */
const OWN_HEADERS = ['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'proxy-connection', 'expect'];
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];
const BODY_HEADERS = ['content-type', 'content-encoding', 'content-language', 'content-location'];
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);
const DEFAULT_TIMEOUT_MS = 300_000;

/** Refuses a URL the guarded fetch would refuse (a tool source's base URL, checked when it is registered). */
export async function vetUrl(url: string | URL, opts: UrlGuardOptions): Promise<void> {
  await createUrlVetter(opts)(url);
}

export function createGuardedFetch(opts: GuardedFetchOptions): GuardedFetch {
  const vet = createUrlVetter(opts);
  const ca = trustedCas(opts.ca);
  const maxRedirects = opts.maxRedirects ?? 5;
  const userAgent = opts.userAgent ?? DEFAULT_USER_AGENT;
  const secretHeaders = (opts.secretHeaders ?? []).map((h) => h.toLowerCase());
  const headerTimeoutMs = opts.headerTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  const idleTimeoutMs = opts.idleTimeoutMs ?? DEFAULT_TIMEOUT_MS;

  return async function guardedFetch(input, init = {}) {
    const req = input instanceof Request ? input : undefined;
    const signal = init.signal ?? req?.signal ?? undefined;
    signal?.throwIfAborted();
    let method = (init.method ?? req?.method ?? 'GET').toUpperCase();
    const headers = new Headers(init.headers ?? req?.headers);
    let body = init.body !== undefined ? requestBody(init.body, headers) : req?.body ? Buffer.from(await req.arrayBuffer()) : undefined;
    const redirectMode = init.redirect ?? req?.redirect ?? 'follow';
    const secrets = [...CREDENTIAL_HEADERS, ...secretHeaders, ...(init.secretHeaders ?? []).map((h) => h.toLowerCase())];
    if (!headers.has('user-agent')) headers.set('user-agent', userAgent);
    if (!headers.has('accept-encoding')) headers.set('accept-encoding', 'gzip, deflate, br');
    for (const h of OWN_HEADERS) headers.delete(h);

    let current: string | URL = input instanceof Request ? input.url : input;
    for (let hop = 0; ; hop++) {
      const target = await vet(current);
      const res = await send(target, method, headers, body, signal);
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if (status < 300 || status >= 400 || status === 304 || !location || redirectMode === 'manual')
        return toResponse(res, target, method, signal, hop > 0, idleTimeoutMs);
      res.destroy();
      if (redirectMode === 'error') throw new ToolError(`${target.url.href} redirected (${status}) and redirects are refused for this request`, 'backend');
      if (hop >= maxRedirects) throw new ToolError(`too many redirects (more than ${maxRedirects}) from ${req?.url ?? String(input)}`, 'backend');
      let next: URL;
      try {
        next = new URL(location, target.url);
      } catch {
        throw new ToolError(`${target.url.href} redirected to an invalid URL: ${location}`, 'backend');
      }
      if ((status === 303 && method !== 'GET' && method !== 'HEAD') || ((status === 301 || status === 302) && method === 'POST')) {
        method = 'GET';
        body = undefined;
        for (const h of BODY_HEADERS) headers.delete(h);
      }
      if (next.origin !== target.url.origin) for (const h of secrets) headers.delete(h);
      current = next;
    }
  };

  /** One request to a vetted target; resolves once the response headers arrive. */
  function send(target: VettedTarget, method: string, headers: Headers, body: Buffer | undefined, signal: AbortSignal | undefined): Promise<IncomingMessage> {
    const { url } = target;
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const outgoing: Record<string, string> = { ...Object.fromEntries(headers), host: url.host };
    if (body || !['GET', 'HEAD', 'OPTIONS', 'DELETE'].includes(method)) outgoing['content-length'] = String(body?.length ?? 0);
    const options = { ...pinnedRequestOptions(target, ca), method, headers: outgoing, signal };
    return new Promise((resolve, reject) => {
      const r = request(options, (res) => {
        clearTimeout(timer);
        resolve(res);
      });
      const timer = setTimeout(() => r.destroy(new Error(`no answer within ${headerTimeoutMs / 1000} s`)), headerTimeoutMs);
      r.on('error', (err) => {
        clearTimeout(timer);
        reject(signal?.aborted ? signal.reason : new ToolError(`request to ${url.host} failed: ${err.message}`, 'backend'));
      });
      r.end(body);
    });
  }
}

/** The bytes of a request body; sets the Content-Type fetch would set when the caller did not. */
function requestBody(body: RequestInit['body'], headers: Headers): Buffer | undefined {
  if (body === null || body === undefined) return undefined;
  const defaultType = (type: string) => {
    if (!headers.has('content-type')) headers.set('content-type', type);
  };
  if (typeof body === 'string') {
    defaultType('text/plain;charset=UTF-8');
    return Buffer.from(body, 'utf8');
  }
  if (body instanceof URLSearchParams) {
    defaultType('application/x-www-form-urlencoded;charset=UTF-8');
    return Buffer.from(body.toString(), 'utf8');
  }
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  if (ArrayBuffer.isView(body)) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  throw new ToolError('request bodies are sent as a string, bytes or URLSearchParams', 'bad_arguments');
}

/** A web Response whose body streams from the node response (decompressed), ended by the caller's signal. */
function toResponse(
  res: IncomingMessage,
  target: VettedTarget,
  method: string,
  signal: AbortSignal | undefined,
  redirected: boolean,
  idleTimeoutMs: number,
): Response {
  const status = res.statusCode ?? 0;
  if (status < 200 || status > 599) {
    res.destroy();
    throw new ToolError(`${target.url.host} answered with status ${status}`, 'backend');
  }
  const headers = new Headers();
  for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) headers.append(res.rawHeaders[i], res.rawHeaders[i + 1]);
  let body: ReadableStream<Uint8Array> | null = null;
  if (method === 'HEAD' || NULL_BODY_STATUSES.has(status)) res.destroy();
  else {
    const stream = decodedBody(res);
    res.setTimeout(idleTimeoutMs, () => res.destroy(new Error(`no data for ${idleTimeoutMs / 1000} s`)));
    if (stream !== res) {
      headers.delete('content-encoding');
      headers.delete('content-length');
    }
    let settled = false;
    const stop = () => {
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      res.destroy();
      if (stream !== res) stream.destroy();
    };
    let onAbort = () => {};
    body = new ReadableStream<Uint8Array>({
      start(controller) {
        onAbort = () => {
          if (settled) return;
          stop();
          controller.error(signal?.reason);
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        stream.on('data', (chunk: Buffer) => {
          if (settled) return; // cancelled: what node had buffered is dropped
          controller.enqueue(chunk);
          if ((controller.desiredSize ?? 1) <= 0) stream.pause();
        });
        stream.on('end', () => {
          if (settled) return;
          stop();
          controller.close();
        });
        const fail = (why: string) => {
          if (settled) return;
          stop();
          controller.error(new ToolError(`reading ${target.url.href} failed: ${why}`, 'backend'));
        };
        stream.on('error', (err) => fail(err.message));
        stream.on('close', () => fail('the connection closed before the body ended'));
      },
      pull() {
        stream.resume();
      },
      cancel() {
        stop();
      },
    });
  }
  const response = new Response(body, { status, statusText: res.statusMessage, headers });
  Object.defineProperties(response, { url: { value: target.url.href }, redirected: { value: redirected } });
  return response;
}
