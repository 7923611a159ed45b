/**
 * The typed API client (src/client) against the real service with authentication on: a user
 * registers, submits a task, reads it back and lists it through the typed calls; the API key
 * (X-API-Key) or a bearer token reaches the gateway and the User-Agent goes along; error answers
 * become ApiError with the service's message and status (404 unknown task, 400 invalid body,
 * 401 no key, Retry-After of a 429); an unreachable address or a silent server becomes a
 * NetworkError.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, NetworkError, apiErrorOf, createClient, createFetch, ok, type ApiClient } from '../src/client/index.js';
import { startTestApp, waitFor, type TestApp } from './helpers/app.js';

let t: TestApp;
let apiKey: string;
let api: ApiClient;
const seen: { url: string; headers: Headers }[] = [];
/** globalThis.fetch, recording what each request carried. */
const recording = (r: Request) => {
  seen.push({ url: r.url, headers: r.headers });
  return fetch(r);
};

beforeAll(async () => {
  t = await startTestApp({ GATEWAY_SKIP_AUTH: '0', PASSWORD_SCRYPT_N: '1024', RATE_LIMIT_REQUESTS: '100000' });
  const reg = ok(
    await createClient({ baseUrl: t.base }).POST('/api/v1/auth/register', {
      body: { email: `client-${Date.now()}-${process.pid}@example.com`, password: 'correct horse battery', name: 'Client' },
    }),
  );
  apiKey = reg.api_key;
  expect(apiKey).toMatch(/^sk_/);
  api = createClient({ baseUrl: `${t.base}/`, apiKey, userAgent: 'client-test/1', timeoutMs: 10_000, fetch: recording });
});
afterAll(async () => {
  await t?.stop();
});

/** A port nothing listens on: one the system just gave out and took back. */
async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise((r) => srv.close(r));
  return port;
}

/** What `fn` throws (or, for an async `fn`, the promise of it, which then rejects with it). */
function thrown(fn: () => unknown): unknown {
  try {
    const v = fn();
    return v instanceof Promise ? v.then(() => Promise.reject(new Error('did not throw'))) : undefined;
  } catch (err) {
    return err;
  }
}

describe('typed calls', () => {
  it('submits a task, reads it back until it completes, and lists it', async () => {
    const sub = ok(await api.POST('/api/v1/tasks', { body: { query: 'What is the capital of France?', mode: 'simple' } }));
    expect(sub.task_id).toMatch(/^[0-9a-f-]{36}$/);
    const id: string = sub.task_id;

    const done = await waitFor(
      async () => {
        const task = ok(await api.GET('/api/v1/tasks/{id}', { params: { path: { id } } }));
        return task.status === 'TASK_STATUS_COMPLETED' ? task : undefined;
      },
      20_000,
      100,
    );
    expect(done).toMatchObject({ task_id: id, status: 'TASK_STATUS_COMPLETED', query: 'What is the capital of France?' });
    expect(typeof done.result).toBe('string');

    const list = ok(await api.GET('/api/v1/tasks', { params: { query: { limit: 100, status: 'COMPLETED' } } }));
    expect(list.tasks.map((x) => x.task_id)).toContain(id);

    // The path-string transport (the CLI's) reaches the same data with the same credentials.
    const res = await createFetch({ baseUrl: t.base, apiKey })(`/api/v1/tasks/${id}`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { task_id: string }).task_id).toBe(id);
  });

  it('sends X-API-Key and User-Agent on every request; a bearer token works too', async () => {
    ok(await api.GET('/api/v1/tasks', { params: { query: { limit: 1 } } }));
    const last = seen.at(-1)!;
    expect(last.url).toBe(`${t.base}/api/v1/tasks?limit=1`); // the trailing slash of baseUrl is dropped
    expect(last.headers.get('x-api-key')).toBe(apiKey);
    expect(last.headers.get('user-agent')).toBe('client-test/1');
    expect(last.headers.get('authorization')).toBeNull();

    const bearer = createClient({ baseUrl: t.base, token: apiKey });
    const me = ok(await bearer.GET('/api/v1/tasks', { params: { query: { limit: 1 } } }));
    expect(Array.isArray(me.tasks)).toBe(true);
  });
});

describe('errors', () => {
  it('an unknown task id: ApiError 404 "Task not found"', async () => {
    const r = await api.GET('/api/v1/tasks/{id}', { params: { path: { id: '00000000-0000-4000-8000-000000000000' } } });
    const e = thrown(() => ok(r));
    expect(e).toBeInstanceOf(ApiError);
    expect(e).toMatchObject({ status: 404, message: 'Task not found', body: { error: 'Task not found' } });
  });

  it('an invalid body: ApiError 400 with the gateway message', async () => {
    const r = await api.POST('/api/v1/tasks', { body: { mode: 'simple' } as never });
    const e = thrown(() => ok(r)) as ApiError;
    expect(e).toBeInstanceOf(ApiError);
    expect(e.status).toBe(400);
    expect(e.message).toMatch(/query/i);
    expect(e.message).toBe((e.body as { error: string }).error);
  });

  it('no credentials or a wrong key: ApiError 401', async () => {
    for (const client of [createClient({ baseUrl: t.base }), createClient({ baseUrl: t.base, apiKey: 'sk_wrong' })]) {
      const e = thrown(async () => ok(await client.GET('/api/v1/tasks')));
      await expect(e).rejects.toBeInstanceOf(ApiError);
      await expect(e).rejects.toMatchObject({ status: 401 });
    }
  });

  it('Retry-After (header or body) becomes retryAfter in seconds', () => {
    const fromHeader = apiErrorOf(new Response(null, { status: 429, headers: { 'Retry-After': '7' } }), {
      error: 'Rate limit exceeded',
      retry_after: 9,
    });
    expect(fromHeader).toMatchObject({ status: 429, message: 'Rate limit exceeded', retryAfter: 7 });
    const fromBody = apiErrorOf(new Response(null, { status: 429 }), { error: 'Rate limit exceeded', retry_after: 9 });
    expect(fromBody.retryAfter).toBe(9);
    const text = apiErrorOf(new Response(null, { status: 502, statusText: 'Bad Gateway' }), 'upstream down');
    expect(text).toMatchObject({ status: 502, message: 'upstream down', retryAfter: undefined });
  });

  it('an address nothing listens on: NetworkError with the cause', async () => {
    const base = `http://127.0.0.1:${await closedPort()}`;
    const e = await createClient({ baseUrl: base })
      .GET('/api/v1/tasks')
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(e).toBeInstanceOf(NetworkError);
    const n = e as NetworkError;
    expect(n.timedOut).toBe(false);
    expect(n.reason).toBe('ECONNREFUSED');
    expect(n.cause).toBeInstanceOf(Error);
    expect(n.url).toBe(`${base}/api/v1/tasks`);
    expect(n.message).toBe(`cannot reach ${base} (ECONNREFUSED)`);
    await expect(createFetch({ baseUrl: base })('/health')).rejects.toBeInstanceOf(NetworkError);
  });

  it('a server that never answers: NetworkError (timed out) after timeoutMs', async () => {
    const sockets = new Set<net.Socket>();
    const silent = net.createServer((s) => sockets.add(s));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const { port } = silent.address() as net.AddressInfo;
      const started = Date.now();
      const e = await createClient({ baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 300 })
        .GET('/health')
        .then(
          () => undefined,
          (err: unknown) => err,
        );
      expect(e).toBeInstanceOf(NetworkError);
      expect(e).toMatchObject({ timedOut: true, message: `http://127.0.0.1:${port} did not answer within 0.3 s` });
      expect(Date.now() - started).toBeLessThan(5_000);
      // The caller's own abort is not a network failure: it is passed on as it is.
      const ac = new AbortController();
      const aborted = createClient({ baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 5_000 }).GET('/health', { signal: ac.signal });
      ac.abort();
      await expect(aborted).rejects.toMatchObject({ name: 'AbortError' });
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((r) => silent.close(r));
    }
  });
});
