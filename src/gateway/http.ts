/**
 * A thin layer over uWebSockets.js HTTP: every handler copies what it needs from the request
 * synchronously, registers onAborted, and writes its response corked, once. Errors become
 * the spec's `{ "error": <message> }` body with the status from the one code->status table.
 */
import type { HttpRequest, HttpResponse, TemplatedApp, us_socket_context_t } from 'uWebSockets.js';
import { ClosedConnectionError, ConnectionError, DrainingConnectionError, NoRespondersError, RequestError, TimeoutError } from '@nats-io/transport-node';
import { JetStreamApiError } from '@nats-io/jetstream';
import { AppError, Code, badRequest, httpStatusOf, toAppError, unavailable, type Logger } from '../kernel/index.js';
import { RateLimitedError, rateHeaders } from './rate-limit.js';

export const STATUS_TEXT: Record<number, string> = {
  200: '200 OK',
  201: '201 Created',
  202: '202 Accepted',
  204: '204 No Content',
  400: '400 Bad Request',
  401: '401 Unauthorized',
  403: '403 Forbidden',
  404: '404 Not Found',
  405: '405 Method Not Allowed',
  406: '406 Not Acceptable',
  409: '409 Conflict',
  413: '413 Payload Too Large',
  415: '415 Unsupported Media Type',
  429: '429 Too Many Requests',
  499: '499 Client Closed Request',
  500: '500 Internal Server Error',
  501: '501 Not Implemented',
  502: '502 Bad Gateway',
  503: '503 Service Unavailable',
  504: '504 Gateway Timeout',
};

export const MAX_JSON_BODY = 1024 * 1024;

/** An integer query parameter in [min, max] (400 naming it otherwise), `def` when absent. */
export function intParam(q: URLSearchParams, name: string, def: number, min: number, max: number): number {
  const v = q.get(name);
  if (v === null || v === '') return def;
  if (!/^-?\d+$/.test(v)) throw badRequest(`${name} must be an integer`);
  const n = Number(v);
  if (n < min || n > max) throw badRequest(`${name} must be between ${min} and ${max}`);
  return n;
}

/** What a handler sees of a request: copied out of uWS's stack-allocated HttpRequest. */
export interface Req {
  method: string;
  url: string;
  query: URLSearchParams;
  headers: Record<string, string>;
  params: string[];
  body?: Buffer;
  /**
   * Why no route may serve this request, found while copying it: a NUL (`%00`) in a path or
   * query parameter, which PostgreSQL text cannot hold. route() answers it with 400.
   */
  invalid?: string;
}

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Raw body (already encoded); content type from headers. */
  raw?: string | Buffer;
}

export interface CorsPolicy {
  /** '*': any origin (development default); a list: only those (production); empty: none. */
  origins: '*' | string[];
}

const CORS_METHODS = 'GET, POST, PUT, PATCH, DELETE, OPTIONS';
const CORS_HEADERS =
  'Content-Type, Authorization, X-API-Key, Idempotency-Key, traceparent, tracestate, Last-Event-ID, X-Session-ID, If-Match, Cache-Control, Mcp-Protocol-Version, Mcp-Session-Id';
const EXPOSE_HEADERS = 'X-Workflow-ID, X-Session-ID, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, ETag, Mcp-Session-Id';

export function corsHeaders(policy: CorsPolicy, origin: string | undefined): Record<string, string> {
  let allow: string | undefined;
  if (policy.origins === '*') allow = '*';
  else if (origin && policy.origins.includes(origin)) allow = origin;
  if (!allow) return {};
  return {
    'Access-Control-Allow-Origin': allow,
    'Access-Control-Allow-Methods': CORS_METHODS,
    'Access-Control-Allow-Headers': CORS_HEADERS,
    'Access-Control-Expose-Headers': EXPOSE_HEADERS,
    ...(allow !== '*' ? { Vary: 'Origin' } : {}),
  };
}

export function copyRequest(req: HttpRequest, paramCount: number): Req {
  const headers: Record<string, string> = {};
  req.forEach((k, v) => {
    headers[k] = v;
  });
  let invalid: string | undefined;
  const params: string[] = [];
  for (let i = 0; i < paramCount; i++) {
    const raw = req.getParameter(i) ?? '';
    // A malformed %-escape must not throw out of the uWS handler: keep the raw text, which
    // then simply matches nothing (404) or fails validation (400).
    let v = raw;
    try {
      v = decodeURIComponent(raw);
    } catch {
      /* keep raw */
    }
    if (v.includes('\0')) invalid ??= 'path parameters must not contain NUL (%00)';
    params.push(v);
  }
  const query = new URLSearchParams(req.getQuery() ?? '');
  for (const [k, v] of query) {
    if (k.includes('\0') || v.includes('\0')) {
      invalid ??= `query parameter ${JSON.stringify(k.replaceAll('\0', '%00'))} must not contain NUL (%00)`;
      break;
    }
  }
  return { method: req.getMethod().toUpperCase(), url: req.getUrl(), query, headers, params, ...(invalid ? { invalid } : {}) };
}

/** Reads the whole body; rejects bodies over `limit` bytes with 413. */
export function readBody(res: HttpResponse, limit: number, state: { aborted: boolean }): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    res.onData((ab, isLast) => {
      if (failed) return;
      size += ab.byteLength;
      if (size > limit) {
        failed = true;
        reject(new AppError(Code.ResourceExhausted, 'request body too large', { isPublic: true }));
        return;
      }
      chunks.push(Buffer.from(ab.slice(0)));
      if (isLast) resolve(Buffer.concat(chunks));
    });
    if (state.aborted) reject(new Error('aborted'));
  });
}

/**
 * Deepest nesting of objects and arrays a JSON body may have (the body itself is level 1).
 * A task's context crosses the orchestrator RPC as a protobuf Struct, two messages per JSON
 * level, and the protobuf decoder stops at 100 nested messages: about 50 levels. 32 stays
 * clear of that and keeps the recursive code after JSON.parse (Ajv, JSON.stringify, the
 * PostgreSQL driver) far from the end of the stack.
 */
export const MAX_JSON_DEPTH = 32;

const utf8 = new TextDecoder('utf-8', { fatal: true });
const HEX4 = /^[0-9a-fA-F]{4}$/;

/**
 * One pass over the JSON text, before anything parses it, refusing what JSON.parse accepts
 * but the rest of the system cannot hold: nesting deeper than MAX_JSON_DEPTH (JSON.parse itself
 * copes, the recursive consumers after it overflow the stack), `\u0000` in any string or key
 * (PostgreSQL text and jsonb have no NUL) and unpaired surrogate escapes (jsonb refuses them).
 * Raw control characters and malformed escapes are left to JSON.parse, which refuses them.
 */
function checkJsonText(text: string): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (!inString) {
      if (c === 0x22) inString = true;
      else if (c === 0x7b || c === 0x5b) {
        if (++depth > MAX_JSON_DEPTH) throw badRequest(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
      } else if (c === 0x7d || c === 0x5d) depth--;
      continue;
    }
    if (c === 0x22) inString = false;
    else if (c === 0x5c) {
      if (text.charCodeAt(i + 1) !== 0x75 /* u */) {
        i++; // a one-character escape: \" \\ \n ...
        continue;
      }
      const hex = text.slice(i + 2, i + 6);
      if (!HEX4.test(hex)) continue;
      const code = parseInt(hex, 16);
      i += 5;
      if (code === 0) throw badRequest('JSON strings must not contain NUL (\\u0000)');
      if (code >= 0xdc00 && code <= 0xdfff) throw badRequest('JSON strings must not contain unpaired surrogates (\\ud800-\\udfff)');
      if (code >= 0xd800 && code <= 0xdbff) {
        // A high surrogate counts only as the first half of a pair: \uD83D\uDE00.
        const low = text.charCodeAt(i + 1) === 0x5c && text.charCodeAt(i + 2) === 0x75 ? text.slice(i + 3, i + 7) : '';
        const lowCode = HEX4.test(low) ? parseInt(low, 16) : -1;
        if (lowCode < 0xdc00 || lowCode > 0xdfff) throw badRequest('JSON strings must not contain unpaired surrogates (\\ud800-\\udfff)');
        i += 6;
      }
    }
  }
}

/**
 * The one reader of JSON request bodies: bad UTF-8, deep nesting, NUL and unpaired surrogates
 * are refused with a 400 naming the problem before any decoder or database sees the value.
 */
export function parseJsonBody(req: Req): unknown {
  const ct = (req.headers['content-type'] ?? '').toLowerCase();
  if (!req.body || req.body.length === 0) throw badRequest('request body is required');
  if (ct && !ct.includes('application/json') && !ct.includes('+json')) throw badRequest('Content-Type must be application/json');
  let text: string;
  try {
    text = utf8.decode(req.body);
  } catch {
    // Decoding leniently would turn the bytes into U+FFFD and store something the client never sent.
    throw badRequest('request body is not valid UTF-8');
  }
  checkJsonText(text);
  try {
    return JSON.parse(text);
  } catch {
    throw badRequest('invalid JSON body');
  }
}

export function writeReply(res: HttpResponse, reply: Reply, extra: Record<string, string>): void {
  res.cork(() => {
    res.writeStatus(STATUS_TEXT[reply.status] ?? `${reply.status} Status`);
    const headers = { ...extra, ...reply.headers };
    let body: string | Buffer | undefined = reply.raw;
    if (body === undefined && reply.body !== undefined) {
      body = JSON.stringify(reply.body);
      if (!headers['Content-Type']) headers['Content-Type'] = 'application/json';
    }
    for (const [k, v] of Object.entries(headers)) res.writeHeader(k, v);
    // Only 204 and 304 go without a length: any other empty reply says Content-Length: 0, or a client reads until the socket closes.
    if (reply.status === 204 || reply.status === 304) res.endWithoutBody();
    else res.end(body ?? '');
  });
}

/** NATS failures that mean the bus could not be reached in time (not an answer of the bus). */
const BUS_FAILURES = [TimeoutError, NoRespondersError, RequestError, ConnectionError, ClosedConnectionError, DrainingConnectionError];

/**
 * Whether `err` (or what it wraps, short of a deliberate application error) is the message bus
 * unreachable: a NATS request that timed out or found no responder, a closed or draining
 * connection, or JetStream answering 503 (a stream without a leader while a node restarts).
 */
function busUnreachable(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (e instanceof AppError && e.code !== Code.Internal) return false;
    if (BUS_FAILURES.some((c) => e instanceof c)) return true;
    if (e instanceof JetStreamApiError && e.status === 503) return true;
  }
  return false;
}

/**
 * The reply to a failure: the spec's `{error}` body, the status of its code, and Retry-After
 * whenever the error names one (every Unavailable does: src/kernel/errors.ts). A failed RPC
 * call (toAppError) and an unreachable bus are 503 with Retry-After, never a 500 or a
 * transport message.
 */
export function errorReply(err: unknown, log: Logger): Reply {
  if (err instanceof RateLimitedError) {
    return { status: 429, headers: rateHeaders(err.decision), body: { error: 'Rate limit exceeded', retry_after: err.decision.retryAfter } };
  }
  const app = busUnreachable(err) ? unavailable('Service temporarily unavailable: the message bus is unreachable; retry', err) : toAppError(err);
  const status = app.code === Code.ResourceExhausted && app.message === 'request body too large' ? 413 : httpStatusOf(app.code);
  if (status >= 500 && status !== 503) log.error({ err }, 'request failed');
  const headers: Record<string, string> | undefined = app.retryAfter ? { 'Retry-After': String(app.retryAfter) } : undefined;
  return { status, headers, body: { error: app.isPublic ? app.message : 'Internal server error' } };
}

/** What a route's handler may reach beyond the request: the response, for one that streams. */
export interface RouteIo {
  res: HttpResponse;
  /** `aborted` once the client is gone; `onAbort` (set by a handler) is then called once. */
  state: { aborted: boolean; onAbort?: () => void };
  /** The CORS headers of this request (a handler that writes its own head sends them). */
  cors: Record<string, string>;
}

/** Answers with a Reply, or with undefined when it wrote (or is writing) the response itself. */
export type Handler = (req: Req, io: RouteIo) => Promise<Reply | undefined> | Reply | undefined;

export interface RouteOptions {
  /** Read and buffer the request body (POST/PUT/PATCH). */
  body?: boolean;
  bodyLimit?: number;
  /** How failures are answered (default: the gateway's `{error: <message>}`). */
  errors?: (err: unknown, log: Logger) => Reply;
  /** The CORS headers of a request (default: the policy's). */
  cors?: (req: Req) => Record<string, string>;
}

/** Registers a JSON route. Pattern parameters (":id") arrive in req.params in order. */
export function route(
  app: TemplatedApp,
  method: 'get' | 'post' | 'put' | 'patch' | 'del',
  pattern: string,
  handler: Handler,
  ctx: { cors: CorsPolicy; log: Logger },
  opts: RouteOptions = {},
): void {
  const paramCount = (pattern.match(/:/g) ?? []).length;
  const fail = opts.errors ?? errorReply;
  app[method](pattern, (res, rawReq) => {
    const state: RouteIo['state'] = { aborted: false };
    res.onAborted(() => {
      state.aborted = true;
      state.onAbort?.();
    });
    const req = copyRequest(rawReq, paramCount);
    const cors = opts.cors ? opts.cors(req) : corsHeaders(ctx.cors, req.headers.origin);
    const bodyP = opts.body ? readBody(res, opts.bodyLimit ?? MAX_JSON_BODY, state) : undefined;
    void (async () => {
      let reply: Reply | undefined;
      try {
        if (bodyP) req.body = await bodyP;
        if (req.invalid) throw badRequest(req.invalid);
        reply = await handler(req, { res, state, cors });
      } catch (err) {
        reply = fail(err, ctx.log);
      }
      if (reply && !state.aborted) writeReply(res, reply, cors);
    })();
  });
}

/**
 * A WebSocket upgrade decided by `decide` (synchronously or not): it returns the socket's user
 * data, or throws (or rejects) with the error the client gets as an HTTP answer (never an
 * upgrade), with `headers(req)` (e.g. CORS). A client gone meanwhile gets nothing.
 */
export function upgradeWhen<T>(
  res: HttpResponse,
  rawReq: HttpRequest,
  context: us_socket_context_t,
  o: { decide: (req: Req) => T | Promise<T>; log: Logger; headers?: (req: Req) => Record<string, string> },
): void {
  const req = copyRequest(rawReq, 0);
  const key = req.headers['sec-websocket-key'];
  const protocol = req.headers['sec-websocket-protocol'] ?? '';
  const extensions = req.headers['sec-websocket-extensions'] ?? '';
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  const go = (data: T) => {
    if (!aborted) res.cork(() => res.upgrade<T>(data, key, protocol, extensions, context));
  };
  const reject = (err: unknown) => {
    if (!aborted) writeReply(res, errorReply(err, o.log), o.headers?.(req) ?? {});
  };
  try {
    const d = o.decide(req);
    if (d instanceof Promise) d.then(go, reject);
    else go(d);
  } catch (err) {
    reject(err);
  }
}
