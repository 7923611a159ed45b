/**
 * The gateway as the client commands reach it: --url / TASKORCH_URL and --api-key /
 * TASKORCH_API_KEY, and failures (unreachable, timed out, a non-2xx answer) turned into one
 * message a person can act on.
 */
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

export function headersOf(conn: Conn, extra: Record<string, string> = {}): Record<string, string> {
  return { ...(conn.apiKey ? { 'X-API-Key': conn.apiKey } : {}), 'User-Agent': `taskorch-cli/${version()}`, ...extra };
}

/** fetch, with network failures turned into a message a person can act on. */
async function send(conn: Conn, path: string, init: RequestInit = {}): Promise<Response> {
  try {
    return await fetch(`${conn.url}${path}`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS), ...init });
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } };
    if (e.name === 'TimeoutError') throw new CliError(`${conn.url} did not answer within ${REQUEST_TIMEOUT_MS / 1000} s`);
    const why = e.cause?.code ?? e.cause?.message ?? e.message;
    throw new CliError(
      `cannot reach the gateway at ${conn.url} (${why}). Is the service running (taskorch start)? Use --url or TASKORCH_URL for another address.`,
    );
  }
}

/** The JSON body of a 2xx answer; otherwise a CliError with the gateway's `error` message. */
export async function jsonOf(res: Response, what: string): Promise<any> {
  const text = await res.text();
  let body: any;
  try {
    body = text ? JSON.parse(text) : {};
  } catch {
    body = undefined;
  }
  if (res.ok && body !== undefined) return body;
  const message = (body && typeof body.error === 'string' && body.error) || text.trim().slice(0, 300) || res.statusText;
  let hint = '';
  if (res.status === 401 || res.status === 403) hint = '; pass an API key with --api-key or TASKORCH_API_KEY';
  if (res.status === 429) hint = `; retry in ${res.headers.get('retry-after') ?? body?.retry_after ?? 'a few'} s`;
  throw new CliError(`${what}: ${message} (HTTP ${res.status})${hint}`);
}

export async function call(conn: Conn, method: string, path: string, what: string, body?: unknown): Promise<{ body: any; res: Response }> {
  const res = await send(conn, path, {
    method,
    headers: headersOf(conn, body === undefined ? {} : { 'Content-Type': 'application/json' }),
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { body: await jsonOf(res, what), res };
}
