/**
 * The gateway as the client commands reach it: --url / TASKORCH_URL and --api-key /
 * TASKORCH_API_KEY, requests through the API client (src/client: authentication, User-Agent,
 * timeout), and failures (unreachable, timed out, a non-2xx answer) turned into one message a
 * person can act on.
 */
import { ApiError, NetworkError, apiErrorOf, authHeaders, createFetch, type ClientOptions } from '../client/index.js';
import { CliError } from './errors.js';
import { version } from './version.js';

export const DEFAULT_URL = 'http://localhost:8080';
const REQUEST_TIMEOUT_MS = 30_000;

export interface Conn {
  url: string;
  apiKey?: string;
}

export function connOf(values: { url?: string; 'api-key'?: string }): Conn {
  const url = (values.url ?? process.env.TASKORCH_URL ?? '').trim() || DEFAULT_URL;
  try {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
  } catch {
    throw new CliError(`invalid --url / TASKORCH_URL ${JSON.stringify(url)}: expected http(s)://host:port`, 2);
  }
  const apiKey = (values['api-key'] ?? process.env.TASKORCH_API_KEY ?? '').trim() || undefined;
  return { url: url.replace(/\/+$/, ''), apiKey };
}

/** The API client's options for `conn`: its URL and key, the CLI's User-Agent, and the request timeout (none: `undefined`). */
export function clientOptionsOf(conn: Conn, timeoutMs: number | undefined = REQUEST_TIMEOUT_MS): ClientOptions {
  return { baseUrl: conn.url, apiKey: conn.apiKey, userAgent: `taskorch-cli/${version()}`, ...(timeoutMs !== undefined ? { timeoutMs } : {}) };
}

export function headersOf(conn: Conn, extra: Record<string, string> = {}): Record<string, string> {
  return { ...authHeaders(clientOptionsOf(conn)), ...extra };
}

const notAnswered = (conn: Conn, timeoutMs: number) => `${conn.url} did not answer within ${timeoutMs / 1000} s`;

/** A NetworkError of the API client as a message a person can act on. */
export function networkMessage(conn: Conn, e: NetworkError, timeoutMs = REQUEST_TIMEOUT_MS): string {
  if (e.timedOut) return notAnswered(conn, timeoutMs);
  return `cannot reach the gateway at ${conn.url} (${e.reason}). Is the service running (taskorch start)? Use --url or TASKORCH_URL for another address.`;
}

/** An error answer as one line: `<what>: <the gateway's message> (HTTP <status>)`, with a hint for 401/403/429. */
export function apiMessage(e: ApiError, what: string): string {
  let hint = '';
  if (e.status === 401 || e.status === 403) hint = '; pass an API key with --api-key or TASKORCH_API_KEY';
  if (e.status === 429) hint = `; retry in ${e.retryAfter ?? 'a few'} s`;
  return `${what}: ${e.message} (HTTP ${e.status})${hint}`;
}

/** The JSON body of a 2xx answer; otherwise a CliError with the gateway's `error` message (its cause: the ApiError). */
export async function jsonOf(res: Response, what: string): Promise<any> {
  const text = await res.text();
  let body: any;
  try {
    body = text ? JSON.parse(text) : {};
  } catch {
    body = undefined;
  }
  if (res.ok && body !== undefined) return body;
  const e = apiErrorOf(res, body ?? (text || undefined), text);
  throw new CliError(apiMessage(e, what), 1, { cause: e });
}

/** The ApiError behind a CliError of a non-2xx answer (see jsonOf), if that is what it is. */
export function apiErrorOfCli(e: unknown): ApiError | undefined {
  return e instanceof CliError && e.cause instanceof ApiError ? e.cause : undefined;
}

export interface CallOptions {
  /** Request headers of the command's own (e.g. If-Match). */
  headers?: Record<string, string>;
  /** Instead of the usual 30 s (e.g. an answer that waits for a model). */
  timeoutMs?: number;
}

/** One request through the API client: the JSON answer, or a CliError a person can act on. */
export async function call(conn: Conn, method: string, path: string, what: string, body?: unknown, o: CallOptions = {}): Promise<{ body: any; res: Response }> {
  const timeoutMs = o.timeoutMs ?? REQUEST_TIMEOUT_MS;
  const send = createFetch(clientOptionsOf(conn, timeoutMs));
  let res: Response;
  try {
    res = await send(path, {
      method,
      headers: { ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...o.headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    if (err instanceof NetworkError) throw new CliError(networkMessage(conn, err, timeoutMs));
    throw err;
  }
  try {
    return { body: await jsonOf(res, what), res };
  } catch (err) {
    // The timeout covers the answer's body too.
    if ((err as Error | undefined)?.name === 'TimeoutError') throw new CliError(notAnswered(conn, timeoutMs));
    throw err;
  }
}
