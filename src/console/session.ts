/**
 * Who the console talks to the service as: no one (authentication off), an API key, or an
 * account's JWT pair (access + single-use refresh token). Kept in sessionStorage (it survives a
 * reload, not the tab). `call` runs a request with the typed client and, when an access token has
 * expired (401), refreshes it once and runs the request again.
 */
import { ApiError, createClient, ok, type ApiClient } from '../client/index.js';

export type Credentials = { kind: 'none' } | { kind: 'key'; apiKey: string } | { kind: 'jwt'; accessToken: string; refreshToken: string; email: string };

const STORE_KEY = 'taskorch.credentials';

/** The gateway serving this page is the API's origin. */
export const baseUrl = location.origin;

let current: Credentials | undefined = load();
const listeners = new Set<() => void>();

function load(): Credentials | undefined {
  try {
    const raw = sessionStorage.getItem(STORE_KEY);
    return raw ? (JSON.parse(raw) as Credentials) : undefined;
  } catch {
    return undefined;
  }
}

export function credentials(): Credentials | undefined {
  return current;
}

export function setCredentials(c: Credentials | undefined): void {
  current = c;
  if (c && c.kind !== 'none') sessionStorage.setItem(STORE_KEY, JSON.stringify(c));
  else sessionStorage.removeItem(STORE_KEY);
  for (const l of listeners) l();
}

export function onCredentials(l: () => void): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}

/** The connection options of these credentials (for createClient and followStream). */
export function auth(c: Credentials | undefined = current): { baseUrl: string; apiKey?: string; token?: string } {
  if (c?.kind === 'key') return { baseUrl, apiKey: c.apiKey };
  if (c?.kind === 'jwt') return { baseUrl, token: c.accessToken };
  return { baseUrl };
}

export function clientFor(c: Credentials | undefined = current): ApiClient {
  return createClient(auth(c));
}

/** Whether the service lets anyone in (GATEWAY_SKIP_AUTH): a list of tasks without credentials succeeds. */
export async function authIsOff(): Promise<boolean> {
  const r = await createClient({ baseUrl }).GET('/api/v1/tasks', { params: { query: { limit: 1 } } });
  return r.response.ok;
}

/** Checks an API key (GET /api/v1/auth/me) and keeps it. */
export async function signInWithKey(apiKey: string): Promise<void> {
  const c: Credentials = { kind: 'key', apiKey };
  ok(await clientFor(c).GET('/api/v1/auth/me'));
  setCredentials(c);
}

/** Logs in with an account and keeps its tokens. */
export async function signInWithPassword(email: string, password: string): Promise<void> {
  const t = ok(await createClient({ baseUrl }).POST('/api/v1/auth/login', { body: { email, password } }));
  setCredentials({ kind: 'jwt', accessToken: t.access_token, refreshToken: t.refresh_token, email });
}

let refreshing: Promise<boolean> | undefined;

/** Trades the refresh token for a new pair; false (and signed out) when it is no longer valid. */
export function refresh(): Promise<boolean> {
  const c = current;
  if (c?.kind !== 'jwt') return Promise.resolve(false);
  refreshing ??= (async () => {
    try {
      const t = ok(await createClient({ baseUrl }).POST('/api/v1/auth/refresh', { body: { refresh_token: c.refreshToken } }));
      setCredentials({ ...c, accessToken: t.access_token, refreshToken: t.refresh_token });
      return true;
    } catch {
      setCredentials(undefined);
      return false;
    } finally {
      refreshing = undefined;
    }
  })();
  return refreshing;
}

/** Runs `fn` with a client of the current credentials; an expired access token is refreshed once. */
export async function call<T>(fn: (api: ApiClient) => Promise<T>): Promise<T> {
  try {
    return await fn(clientFor());
  } catch (err) {
    if (err instanceof ApiError && err.status === 401 && (await refresh())) return fn(clientFor());
    if (err instanceof ApiError && err.status === 401) setCredentials(undefined);
    throw err;
  }
}

/** The message of a failure, for the page. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
