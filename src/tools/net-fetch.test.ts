/**
 * The guarded fetch (net-fetch.ts) against local servers: requests of every kind arrive as sent,
 * bodies stream, and the SSRF guard holds on every hop (redirects, DNS answers that change).
 */
import { gzipSync } from 'node:zlib';
import { describe, expect, it, vi } from 'vitest';
import { fakeLookup, servers, startServer, toolError } from '../../test/helpers/tools-web.js';
import type { HostLookup } from './net-guard.js';
import { createGuardedFetch, vetUrl } from './net-fetch.js';

const LOCAL = ['127.0.0.1/32'];

describe('createGuardedFetch', () => {
  it('sends any method with its headers and body, and answers a web Response', async () => {
    const server = await startServer((req, res, body) => {
      res.writeHead(201, { 'content-type': 'application/json', 'x-echo': String(req.headers['x-trace']) });
      res.end(JSON.stringify({ method: req.method, body }));
    });
    const fetch = createGuardedFetch({ allowHosts: LOCAL });

    const put = await fetch(`${server.origin}/items/1?q=a`, {
      method: 'put',
      headers: { 'x-trace': 't1', 'content-type': 'application/json' },
      body: '{"a":1}',
    });
    expect(put.status).toBe(201);
    expect(put.headers.get('x-echo')).toBe('t1');
    expect(put.url).toBe(`${server.origin}/items/1?q=a`);
    expect(await put.json()).toEqual({ method: 'PUT', body: '{"a":1}' });

    await fetch(`${server.origin}/bytes`, { method: 'POST', body: new TextEncoder().encode('raw bytes') });
    await fetch(new Request(`${server.origin}/form`, { method: 'POST', body: new URLSearchParams({ x: '1 2' }) }));
    const del = await fetch(`${server.origin}/items/1`, { method: 'DELETE', headers: new Headers({ authorization: 'Bearer k' }) });
    await del.body?.cancel();

    const [first, bytes, form, deleted] = server.requests;
    expect(first).toMatchObject({ method: 'PUT', url: '/items/1?q=a', body: '{"a":1}' });
    expect(first.headers).toMatchObject({ 'x-trace': 't1', 'content-type': 'application/json', host: `127.0.0.1:${server.port}`, 'content-length': '7' });
    expect(bytes).toMatchObject({ method: 'POST', body: 'raw bytes' });
    expect(form.body).toBe('x=1+2');
    expect(form.headers['content-type']).toBe('application/x-www-form-urlencoded;charset=UTF-8');
    expect(deleted).toMatchObject({ method: 'DELETE', url: '/items/1', body: '' });
    expect(deleted.headers.authorization).toBe('Bearer k');
  });

  it('streams a Server-Sent Events body: the first event is read before the server ends the response', async () => {
    let finish!: () => void;
    const released = new Promise<void>((resolve) => (finish = resolve));
    const server = await startServer(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: one\n\n');
      await released;
      res.end('data: two\n\n');
    });
    const res = await createGuardedFetch({ allowHosts: LOCAL })(`${server.origin}/events`, { headers: { accept: 'text/event-stream' } });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    expect((await reader.read()).value).toBe('data: one\n\n');
    finish();
    let rest = '';
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += r.value;
    expect(rest).toBe('data: two\n\n');
  });

  it('decompresses gzip bodies', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'text/plain' });
      res.end(gzipSync('hello '.repeat(100)));
    });
    const res = await createGuardedFetch({ allowHosts: LOCAL })(server.origin);
    expect(server.requests[0].headers['accept-encoding']).toBe('gzip, deflate, br');
    expect(res.headers.get('content-encoding')).toBeNull();
    expect(await res.text()).toBe('hello '.repeat(100));
  });

  it('refuses a loopback URL unless the allow list exempts it, and vetUrl says the same', async () => {
    const server = await startServer((_req, res) => res.end('ok'));
    const err = await toolError(createGuardedFetch({ allowHosts: [] })(`${server.origin}/`));
    expect(err.message).toBe('refused: 127.0.0.1 is a loopback address');
    expect(err.kind).toBe('bad_arguments');
    expect(server.requests).toHaveLength(0);
    expect((await toolError(vetUrl(`${server.origin}/api`, { allowHosts: [] }))).message).toBe('refused: 127.0.0.1 is a loopback address');
    expect((await toolError(vetUrl('file:///etc/passwd', { allowHosts: LOCAL }))).message).toMatch(/only http and https/);
    expect((await toolError(createGuardedFetch({ allowHosts: LOCAL })('not a url'))).message).toBe('invalid URL: not a url');

    await expect(vetUrl(server.origin, { allowHosts: LOCAL })).resolves.toBeUndefined();
    expect(await (await createGuardedFetch({ allowHosts: LOCAL })(server.origin)).text()).toBe('ok');
  });

  it('vets every redirect hop: an allowed host redirecting to a refused address is refused', async () => {
    const server = await startServer((req, res) => {
      res.writeHead(302, { location: `http://127.0.0.1:${(req.socket.localPort ?? 0).toString()}/inside` });
      res.end();
    });
    const fetch = createGuardedFetch({ allowHosts: ['allowed.test'], lookup: fakeLookup({ 'allowed.test': ['127.0.0.1'] }) });
    const err = await toolError(fetch(`http://allowed.test:${server.port}/out`));
    expect(err.message).toBe('refused: 127.0.0.1 is a loopback address');
    expect(server.requests.map((r) => r.url)).toEqual(['/out']);
  });

  it('re-resolves each hop once and connects to the checked address: a changed DNS answer cannot slip through', async () => {
    const server = await startServer((req, res) => {
      if (req.url === '/first') res.writeHead(302, { location: '/second' });
      res.end('done');
    });
    // The first answer is the local server (allowed by CIDR); every later answer is private.
    let calls = 0;
    const lookup: HostLookup = async () => [{ address: calls++ === 0 ? '127.0.0.1' : '10.0.0.5', family: 4 }];
    const fetch = createGuardedFetch({ allowHosts: LOCAL, lookup });
    const err = await toolError(fetch(`http://rebind.test:${server.port}/first`));
    expect(err.message).toBe('refused: rebind.test resolves to a private address (10.0.0.5)');
    expect(server.requests.map((r) => [r.url, r.headers.host])).toEqual([['/first', `rebind.test:${server.port}`]]);
    expect(calls).toBe(2); // one resolution per hop: the connection never asked DNS again
  });

  it('follows redirects like fetch: 303 continues as GET, 307 keeps the body, another origin loses the credentials', async () => {
    const server = await startServer((req, res) => {
      const to: Record<string, string> = {
        '/see-other': '/landing',
        '/temporary': '/landing',
        '/away': `http://other.test:${(req.socket.localPort ?? 0).toString()}/landing`,
      };
      if (req.url && to[req.url]) res.writeHead(req.url === '/see-other' ? 303 : 307, { location: to[req.url] });
      res.end();
    });
    const fetch = createGuardedFetch({ allowHosts: LOCAL, lookup: fakeLookup({ 'other.test': ['127.0.0.1'] }), secretHeaders: ['X-Api-Key'] });
    const headers = {
      authorization: 'Bearer k',
      cookie: 'c=1',
      'x-api-key': 'secret',
      'x-call-key': 'per-call',
      'x-trace': 't',
      'content-type': 'application/json',
    };

    const seeOther = await fetch(`${server.origin}/see-other`, { method: 'POST', headers, body: '{}' });
    expect(seeOther.redirected).toBe(true);
    await fetch(`${server.origin}/temporary`, { method: 'PATCH', headers, body: '{"p":1}' });
    await fetch(`${server.origin}/away`, { method: 'PUT', headers, body: '{}', secretHeaders: ['x-call-key'] });

    const r = server.requests;
    expect(r[1]).toMatchObject({ method: 'GET', url: '/landing', body: '' });
    expect(r[1].headers['content-type']).toBeUndefined();
    expect(r[1].headers.authorization).toBe('Bearer k'); // same origin
    expect(r[3]).toMatchObject({ method: 'PATCH', url: '/landing', body: '{"p":1}' });
    expect(r[5]).toMatchObject({ method: 'PUT', url: '/landing', body: '{}' });
    expect(r[5].headers.host).toBe(`other.test:${server.port}`);
    for (const h of ['authorization', 'cookie', 'x-api-key', 'x-call-key']) expect(r[5].headers[h], h).toBeUndefined();
    expect(r[5].headers['x-trace']).toBe('t');

    const loop = await startServer((_req, res) => res.writeHead(302, { location: '/again' }).end());
    expect((await toolError(createGuardedFetch({ allowHosts: LOCAL, maxRedirects: 2 })(loop.origin))).message).toMatch(/too many redirects \(more than 2\)/);
    expect(loop.requests).toHaveLength(3);
  });

  it('stops on abort: while waiting for the answer, and while the body streams', async () => {
    const server = await startServer((req, res) => {
      if (req.url === '/silent') return;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: one\n\n');
    });
    const fetch = createGuardedFetch({ allowHosts: LOCAL });

    const waiting = new AbortController();
    const pending = fetch(`${server.origin}/silent`, { signal: waiting.signal });
    await expect.poll(() => server.requests.length).toBe(1);
    waiting.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });

    const streaming = new AbortController();
    const res = await fetch(`${server.origin}/stream`, { signal: streaming.signal });
    const reader = res.body!.getReader();
    expect((await reader.read()).done).toBe(false);
    const next = reader.read();
    streaming.abort(new Error('stop now'));
    await expect(next).rejects.toThrow('stop now');

    await expect(fetch(server.origin, { signal: AbortSignal.abort() })).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('gives up on a server that sends no headers in time, or stalls mid-body, and closes its connection', async () => {
    const server = await startServer((req, res) => {
      if (req.url === '/silent') return;
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('the first part');
    });
    const http = servers.at(-1)!;
    const connections = () => new Promise<number>((resolve) => http.getConnections((_err, n) => resolve(n)));
    const fetch = createGuardedFetch({ allowHosts: LOCAL, headerTimeoutMs: 100, idleTimeoutMs: 100 });

    const silent = await toolError(fetch(`${server.origin}/silent`));
    expect(silent).toMatchObject({ kind: 'backend', message: `request to 127.0.0.1:${server.port} failed: no answer within 0.1 s` });
    const stalled = await fetch(`${server.origin}/stalls`);
    await expect(stalled.text()).rejects.toThrow(`reading ${server.origin}/stalls failed: no data for 0.1 s`);
    await vi.waitFor(async () => expect(await connections()).toBe(0));
  });
});
