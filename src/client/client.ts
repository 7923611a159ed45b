/**
 * The typed client of the public HTTP API: an openapi-fetch client over the generated `paths`
 * (schema.gen.ts), with one middleware that authenticates every request (X-API-Key, or
 * Authorization: Bearer), names the caller (User-Agent), bounds it in time and turns a failed
 * fetch into a NetworkError. `createFetch` is the same transport for a path given as a string.
 * Only web APIs (fetch, Request, AbortSignal): it runs in Node and in a browser.
 */
import createFetchClient, { type Client, type Middleware } from 'openapi-fetch';
import { toNetworkError } from './errors.js';
import type { paths } from './schema.gen.js';

/** A fetch as the client calls it: one Request in, its Response out (globalThis.fetch fits). */
export type FetchLike = (input: Request) => Promise<Response>;

/** Who the client talks to and as whom. */
export interface ConnectionOptions {
  /** The gateway, e.g. http://localhost:8080 (no trailing /api/v1). */
  baseUrl: string;
  /** Sent as X-API-Key. */
  apiKey?: string;
  /** Sent as Authorization: Bearer (an API key or a JWT access token). */
  token?: string;
  /** Sent as User-Agent (browsers may not let it through). */
  userAgent?: string;
  /** Replaces globalThis.fetch (tests, proxies). */
  fetch?: FetchLike;
}

export interface ClientOptions extends ConnectionOptions {
  /** Abandon a request (its answer's body included) after this long, with a NetworkError. Default: no limit. */
  timeoutMs?: number;
}

/** The typed client: GET/POST/PUT/DELETE/... over the API's paths (see openapi-fetch). */
export type ApiClient = Client<paths>;

/** The headers that authenticate and name the caller. */
export function authHeaders(opts: Pick<ConnectionOptions, 'apiKey' | 'token' | 'userAgent'>): Record<string, string> {
  const h: Record<string, string> = {};
  if (opts.apiKey) h['X-API-Key'] = opts.apiKey;
  if (opts.token) h.Authorization = `Bearer ${opts.token}`;
  if (opts.userAgent) h['User-Agent'] = opts.userAgent;
  return h;
}

/** `request` with the caller's headers (those it set itself win) and, with a timeout, a signal that ends it. */
function prepare(request: Request, opts: ClientOptions): Request {
  for (const [k, v] of Object.entries(authHeaders(opts))) if (!request.headers.has(k)) request.headers.set(k, v);
  if (opts.timeoutMs === undefined) return request;
  return new Request(request, { signal: AbortSignal.any([request.signal, AbortSignal.timeout(opts.timeoutMs)]) });
}

/** The middleware of createClient: authentication, User-Agent, timeout, NetworkError. */
export function clientMiddleware(opts: ClientOptions): Middleware {
  return {
    onRequest: ({ request }) => prepare(request, opts),
    onError: ({ error, request }) => {
      const e = toNetworkError(error, request.url, opts.timeoutMs);
      return e instanceof Error ? e : undefined;
    },
  };
}

const trimBase = (baseUrl: string) => baseUrl.replace(/\/+$/, '');

/**
 * The typed client of the API at `baseUrl`. Calls answer `{ data, error, response }` (see
 * openapi-fetch); `ok()` turns that into the data or an ApiError. A request that cannot reach
 * the service, or outlives `timeoutMs`, rejects with a NetworkError.
 */
export function createClient(opts: ClientOptions): ApiClient {
  const client = createFetchClient<paths>({ baseUrl: trimBase(opts.baseUrl), fetch: opts.fetch ?? ((r: Request) => globalThis.fetch(r)) });
  client.use(clientMiddleware(opts));
  return client;
}

/**
 * The same transport for a path given as a string (`/api/v1/tasks?limit=5`): the raw Response,
 * whatever its status; a NetworkError when the service cannot be reached or outlives `timeoutMs`.
 */
export function createFetch(opts: ClientOptions): (path: string, init?: RequestInit) => Promise<Response> {
  const base = trimBase(opts.baseUrl);
  const fetchFn = opts.fetch ?? ((r: Request) => globalThis.fetch(r));
  return async (path, init) => {
    const request = prepare(new Request(`${base}${path}`, init), opts);
    try {
      return await fetchFn(request);
    } catch (err) {
      throw toNetworkError(err, request.url, opts.timeoutMs);
    }
  };
}
