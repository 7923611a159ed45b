/**
 * The web tools' HTTP client (net.ts): the SSRF guard (blocked ranges, allow list, every redirect
 * hop re-checked, no second DNS answer), https, and its limits, against local servers.
 */
import { createServer as createHttpsServer } from 'node:https';
import type { TLSSocket } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import type { Server } from 'node:http';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type HostLookup, isBlockedAddress, parseAllowList, type SafeFetchOptions } from '../src/tools/net.js';
import { client, fakeLookup, servers, startServer, type TestServer, toolError } from './helpers/tools-web.js';

// ---------------------------------------------------------------------------------------------
// Addresses and allow lists

describe('isBlockedAddress / parseAllowList', () => {
  it('blocks every non-public range and lets public unicast through', () => {
    const blocked = [
      '127.0.0.1',
      '127.255.1.2',
      '10.0.0.5',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '0.0.0.0',
      '100.64.0.1',
      '100.127.255.254',
      '224.0.0.1',
      '239.255.255.250',
      '240.0.0.1',
      '255.255.255.255',
      '198.18.0.1',
      '::1',
      '::',
      'fc00::1',
      'fd12:3456::1',
      'fe80::1',
      'fe80::1%eth0',
      'ff02::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:10.0.0.5',
      '::ffff:169.254.169.254',
      '64:ff9b::a00:5',
      '2002:7f00:1::',
      '::127.0.0.1',
      '2001:db8::1',
      'not an ip',
    ];
    for (const ip of blocked) expect(isBlockedAddress(ip), ip).toBe(true);
    const open = [
      '93.184.216.34',
      '8.8.8.8',
      '172.32.0.1',
      '100.128.0.1',
      '192.169.0.1',
      '2606:4700::1111',
      '::ffff:8.8.8.8',
      '64:ff9b::808:808',
      '2002:808:808::',
    ];
    for (const ip of open) expect(isBlockedAddress(ip), ip).toBe(false);
  });

  it('parses hostnames, suffixes, addresses and CIDRs', () => {
    const allow = parseAllowList('localhost, *.corp.example 10.0.0.0/8,::1/128,192.168.1.7');
    expect(allow.allowsHost('localhost')).toBe(true);
    expect(allow.allowsHost('LOCALHOST')).toBe(true);
    expect(allow.allowsHost('wiki.corp.example')).toBe(true);
    expect(allow.allowsHost('corp.example.evil.com')).toBe(false);
    expect(allow.allowsHost('127.0.0.1')).toBe(false);
    expect(allow.allowsAddress('10.200.0.1')).toBe(true);
    expect(allow.allowsAddress('::ffff:10.1.2.3')).toBe(true);
    expect(allow.allowsAddress('11.0.0.1')).toBe(false);
    expect(allow.allowsAddress('::1')).toBe(true);
    expect(allow.allowsAddress('::2')).toBe(false);
    expect(allow.allowsAddress('192.168.1.7')).toBe(true);
    expect(allow.allowsAddress('192.168.1.8')).toBe(false);
    expect(allow.allowsAddress('127.0.0.1')).toBe(false);
    expect(() => parseAllowList('10.0.0.0/33')).toThrow();
    expect(() => parseAllowList('example.com/8')).toThrow();
  });
});

// ---------------------------------------------------------------------------------------------
// The guarded client

describe('createSafeFetch: SSRF guard', () => {
  let local: TestServer;
  beforeAll(async () => {
    local = await startServer((req, res) => {
      res.setHeader('content-type', 'text/plain');
      res.end(`local secret ${req.url}`);
    });
  });
  afterEach(() => {
    local.requests.length = 0;
  });

  it('reaches a local server only when it is allowed (the control for the refusals below)', async () => {
    const page = await client({ allowHosts: ['127.0.0.1/32'] })(`${local.origin}/x`);
    expect(page).toMatchObject({ status: 200, body: 'local secret /x', url: `${local.origin}/x`, truncated: false, bytes: 15 });
  });

  it.each([
    ['loopback literal', (p: number) => `http://127.0.0.1:${p}/`, /refused: 127\.0\.0\.1 is a loopback address/],
    ['other loopback', (p: number) => `http://127.9.9.9:${p}/`, /loopback/],
    ['decimal IP', (p: number) => `http://2130706433:${p}/`, /refused: 127\.0\.0\.1 is a loopback/],
    ['hex IP', (p: number) => `http://0x7f000001:${p}/`, /refused: 127\.0\.0\.1 is a loopback/],
    ['short IP', (p: number) => `http://127.1:${p}/`, /refused: 127\.0\.0\.1 is a loopback/],
    ['IPv6 loopback', (p: number) => `http://[::1]:${p}/`, /refused: ::1 is a loopback/],
    ['IPv4-mapped IPv6', (p: number) => `http://[::ffff:127.0.0.1]:${p}/`, /refused: ::ffff:7f00:1 is a loopback/],
    ['unspecified', (p: number) => `http://0.0.0.0:${p}/`, /unspecified/],
    ['private 10/8', () => 'http://10.0.0.5/', /refused: 10\.0\.0\.5 is a private address/],
    ['private 192.168', () => 'http://192.168.0.1/', /private/],
    ['metadata endpoint', () => 'http://169.254.169.254/latest/meta-data/', /refused: 169\.254\.169\.254 is a link-local address/],
    ['CGNAT', () => 'http://100.64.0.1/', /CGNAT/],
    ['IPv6 unique local', () => 'http://[fd00::1]/', /private/],
  ])('refuses %s', async (_name, url, message) => {
    const lookup = fakeLookup({});
    const err = await toolError(client({ lookup, timeoutMs: 1_000 })(url(local.port)));
    expect(err.kind).toBe('bad_arguments');
    expect(err.message).toMatch(message);
    expect(local.requests).toHaveLength(0);
    expect(lookup.calls).toHaveLength(0); // literals are never resolved
  });

  it('refuses a name that resolves to a private address, and one with ANY private address', async () => {
    const lookup = fakeLookup({ 'internal.test': ['10.0.0.5'], 'mixed.test': ['93.184.216.34', '127.0.0.1'], 'v6.test': ['::ffff:192.168.0.1'] });
    const fetchPage = client({ lookup });
    let err = await toolError(fetchPage('http://internal.test/'));
    expect(err.kind).toBe('bad_arguments');
    expect(err.message).toBe('refused: internal.test resolves to a private address (10.0.0.5)');
    err = await toolError(fetchPage(`http://mixed.test:${local.port}/`));
    expect(err.message).toBe('refused: mixed.test resolves to a loopback address (127.0.0.1)');
    err = await toolError(fetchPage('https://v6.test/'));
    expect(err.message).toMatch(/v6\.test resolves to a private address/);
    expect(local.requests).toHaveLength(0);
  });

  it('refuses cloud metadata hostnames whatever they resolve to', async () => {
    const lookup = fakeLookup({ 'metadata.google.internal': ['93.184.216.34'] });
    const err = await toolError(client({ lookup })('http://metadata.google.internal/computeMetadata/v1/'));
    expect(err.kind).toBe('bad_arguments');
    expect(err.message).toMatch(/metadata/);
  });

  it('refuses other schemes', async () => {
    for (const url of ['file:///etc/passwd', 'ftp://example.com/', 'gopher://127.0.0.1:70/']) {
      const err = await toolError(client()(url));
      expect(err.kind).toBe('bad_arguments');
      expect(err.message).toMatch(/only http and https/);
    }
  });

  it('connects to the verified address: one lookup, Host header kept, a second answer is never used', async () => {
    // The first answer is the local server (allowed by CIDR); any later lookup would say 10.0.0.5.
    let n = 0;
    const lookup: HostLookup = async () => [{ address: n++ === 0 ? '127.0.0.1' : '10.0.0.5', family: 4 }];
    const page = await client({ lookup, allowHosts: ['127.0.0.1/32'] })(`http://rebind.test:${local.port}/page`);
    expect(page.body).toBe('local secret /page');
    expect(n).toBe(1);
    expect(local.requests[0].headers.host).toBe(`rebind.test:${local.port}`);
  });

  it('an allowed hostname is exempt (its private address included)', async () => {
    const lookup = fakeLookup({ 'intranet.test': ['127.0.0.1'] });
    const page = await client({ lookup, allowHosts: ['intranet.test'] })(`http://intranet.test:${local.port}/wiki`);
    expect(page.body).toBe('local secret /wiki');
  });
});

// A self-signed certificate for `tls.test` (valid until 2126), for the https test.
const TLS_CERT = `-----BEGIN CERTIFICATE-----
MIIBkzCCATigAwIBAgIUClNngjT67CrKgVxfMybR3AZkaEwwCgYIKoZIzj0EAwIw
EzERMA8GA1UEAwwIdGxzLnRlc3QwIBcNMjYxMTIyMTc1NzU3WhgPMjEyNjEwMjkx
NzU3NTdaMBMxETAPBgNVBAMMCHRscy50ZXN0MFkwEwYHKoZIzj0CAQYIKoZIzj0D
AQcDQgAEGgBZL8DO/3Aceh9oa7pQZjtedgnezPNQsrLY6nddcMRa4/PJFHKF4GFd
oMTAWlFDNtdB0TKEQD+VQx0Y75a4i6NoMGYwHQYDVR0OBBYEFFkiQXo8aKY1a6CH
n7Gey+tlOBOHMB8GA1UdIwQYMBaAFFkiQXo8aKY1a6CHn7Gey+tlOBOHMBMGA1Ud
EQQMMAqCCHRscy50ZXN0MA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSQAw
RgIhAImsPfvZAiSTkVllXmnmmw0YG0TPWZpwUNhKZkBs7cIZAiEAiJv9i0OAoEV0
ngr4DOMVIZUiFaX7zur0F23tjUc0y9E=
-----END CERTIFICATE-----`;
const TLS_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgS5Ogl4SXe4hMNIAh
ty01WSgv4/znW++8LpvaVSCjz3ihRANCAAQaAFkvwM7/cBx6H2hrulBmO152Cd7M
81Cystjqd11wxFrj88kUcoXgYV2gxMBaUUM210HRMoRAP5VDHRjvlriL
-----END PRIVATE KEY-----`;

describe('createSafeFetch: https', () => {
  it('connects to the verified address while checking the certificate against the hostname (SNI kept)', async () => {
    const seen: Array<{ servername: unknown; host: unknown }> = [];
    const server = createHttpsServer({ cert: TLS_CERT, key: TLS_KEY }, (req, res) => {
      seen.push({ servername: (req.socket as TLSSocket).servername, host: req.headers.host });
      res.end('over tls');
    });
    servers.push(server as unknown as Server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const fetchPage = client({ lookup: fakeLookup({ 'tls.test': ['127.0.0.1'] }), allowHosts: ['127.0.0.1/32'], ca: TLS_CERT });
    const page = await fetchPage(`https://tls.test:${port}/`);
    expect(page.body).toBe('over tls');
    expect(seen).toEqual([{ servername: 'tls.test', host: `tls.test:${port}` }]);
    // The same server by address: the certificate does not name 127.0.0.1, so verification fails.
    const err = await toolError(fetchPage(`https://127.0.0.1:${port}/`));
    expect(err.kind).toBe('backend');
    expect(err.message).toMatch(/IP: 127\.0\.0\.1 is not in the cert|altnames/);
    // Without the CA the self-signed certificate is refused.
    const untrusted = await toolError(client({ lookup: fakeLookup({ 'tls.test': ['127.0.0.1'] }), allowHosts: ['127.0.0.1/32'] })(`https://tls.test:${port}/`));
    expect(untrusted.message).toMatch(/self-signed|self signed/);
  });
});

describe('createSafeFetch: redirects', () => {
  let site: TestServer;
  let target: TestServer;
  beforeAll(async () => {
    target = await startServer((req, res) => res.end(`target ${req.url}`));
    site = await startServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const to = url.searchParams.get('to');
      if (url.pathname === '/go' && to) {
        res.writeHead(302, { location: to.replace('TARGET', String(target.port)) }).end();
      } else if (url.pathname.startsWith('/chain/')) {
        const left = Number(url.pathname.split('/')[2]);
        if (left > 0) res.writeHead(301, { location: `/chain/${left - 1}` }).end();
        else res.end('end of chain');
      } else {
        res.end(`site ${req.url}`);
      }
    });
  });
  afterEach(() => {
    site.requests.length = 0;
    target.requests.length = 0;
  });

  // `allowed.test` (a name only the fake resolver knows) is exempt by name; 127.0.0.1 itself is not.
  const lookup = () => fakeLookup({ 'allowed.test': ['127.0.0.1'], 'internal.test': ['10.0.0.5'] });

  it('follows a redirect between allowed hosts (the control)', async () => {
    const fetchPage = client({ lookup: lookup(), allowHosts: ['allowed.test', '127.0.0.1/32'] });
    const page = await fetchPage(`http://allowed.test:${site.port}/go?to=${encodeURIComponent('http://127.0.0.1:TARGET/secret')}`);
    expect(page).toMatchObject({ status: 200, body: 'target /secret', url: `http://127.0.0.1:${target.port}/secret` });
  });

  it('re-checks every hop: a redirect from an allowed host to a loopback literal is refused', async () => {
    const fetchPage = client({ lookup: lookup(), allowHosts: ['allowed.test'] });
    const err = await toolError(fetchPage(`http://allowed.test:${site.port}/go?to=${encodeURIComponent('http://127.0.0.1:TARGET/secret')}`));
    expect(err.kind).toBe('bad_arguments');
    expect(err.message).toBe('refused: 127.0.0.1 is a loopback address');
    expect(site.requests).toHaveLength(1); // the first hop was made ...
    expect(target.requests).toHaveLength(0); // ... the second never
  });

  it('re-checks every hop: a redirect to a name resolving to a private address is refused', async () => {
    const fetchPage = client({ lookup: lookup(), allowHosts: ['allowed.test'] });
    const err = await toolError(fetchPage(`http://allowed.test:${site.port}/go?to=${encodeURIComponent('http://internal.test/admin')}`));
    expect(err.message).toBe('refused: internal.test resolves to a private address (10.0.0.5)');
    const err2 = await toolError(fetchPage(`http://allowed.test:${site.port}/go?to=${encodeURIComponent('file:///etc/passwd')}`));
    expect(err2.message).toMatch(/only http and https/);
  });

  it('follows at most 5 redirects', async () => {
    const fetchPage = client({ allowHosts: ['127.0.0.1/32'] });
    const page = await fetchPage(`${site.origin}/chain/5`);
    expect(page.body).toBe('end of chain');
    expect(page.url).toBe(`${site.origin}/chain/0`);
    const err = await toolError(fetchPage(`${site.origin}/chain/6`));
    expect(err.message).toMatch(/too many redirects/);
  });
});

describe('createSafeFetch: limits', () => {
  let server: TestServer;
  const big = 'x'.repeat(100_000);
  let inFlight = 0;
  let maxInFlight = 0;
  beforeAll(async () => {
    server = await startServer(async (req, res) => {
      switch (req.url) {
        case '/big':
          res.setHeader('content-type', 'text/plain');
          res.end(big);
          return;
        case '/big-gzip':
          res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' }).end(gzipSync(big));
          return;
        case '/gzip':
          res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'content-encoding': 'gzip' }).end(gzipSync('héllo gzip'));
          return;
        case '/br':
          res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'br' }).end(brotliCompressSync('hello br'));
          return;
        case '/deflate':
          res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'deflate' }).end(deflateSync('hello deflate'));
          return;
        case '/latin1':
          res.writeHead(200, { 'content-type': 'text/plain; charset=iso-8859-1' }).end(Buffer.from([0x63, 0x61, 0x66, 0xe9]));
          return;
        case '/hang':
          return; // never answers
        case '/trickle':
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.write('start ');
          return; // headers and a little body, then nothing
        case '/slow':
          inFlight++;
          maxInFlight = Math.max(maxInFlight, inFlight);
          await sleep(300);
          inFlight--;
          res.end('slow');
          return;
        default:
          res.writeHead(404).end('nope');
      }
    });
  });
  const fetchPage = (over: Partial<SafeFetchOptions> = {}) => client({ allowHosts: ['127.0.0.1/32'], ...over });

  it('stops reading at maxBytes and marks the body truncated', async () => {
    const page = await fetchPage({ maxBytes: 1000 })(`${server.origin}/big`);
    expect(page.body).toBe('x'.repeat(1000));
    expect(page.bytes).toBe(1000);
    expect(page.truncated).toBe(true);
    const whole = await fetchPage({ maxBytes: 200_000 })(`${server.origin}/big`);
    expect(whole.bytes).toBe(100_000);
    expect(whole.truncated).toBe(false);
  });

  it('applies the limit to the decompressed body', async () => {
    const page = await fetchPage({ maxBytes: 5000 })(`${server.origin}/big-gzip`);
    expect(page.bytes).toBe(5000);
    expect(page.body).toBe('x'.repeat(5000));
    expect(page.truncated).toBe(true);
  });

  it('decompresses gzip, br and deflate and honours the charset', async () => {
    const f = fetchPage();
    expect((await f(`${server.origin}/gzip`)).body).toBe('héllo gzip');
    expect((await f(`${server.origin}/br`)).body).toBe('hello br');
    expect((await f(`${server.origin}/deflate`)).body).toBe('hello deflate');
    expect((await f(`${server.origin}/latin1`)).body).toBe('café');
    expect(server.requests.at(-1)?.headers['accept-encoding']).toMatch(/gzip/);
  });

  it('returns error statuses to the caller', async () => {
    const page = await fetchPage()(`${server.origin}/missing`);
    expect(page.status).toBe(404);
  });

  it('gives up after timeoutMs, for a silent server and for a stalled body', async () => {
    for (const path of ['/hang', '/trickle']) {
      const started = Date.now();
      const err = await toolError(fetchPage({ timeoutMs: 300 })(`${server.origin}${path}`));
      expect(err.kind).toBe('backend');
      expect(err.message).toMatch(/timed out after 300 ms/);
      expect(Date.now() - started).toBeLessThan(2_000);
    }
  });

  it('stops when the caller aborts', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('cancelled by test')), 100);
    const started = Date.now();
    await expect(fetchPage({ timeoutMs: 10_000 })(`${server.origin}/hang`, { signal: controller.signal })).rejects.toThrow('cancelled by test');
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('keeps at most perHostConcurrency requests in flight per host', async () => {
    maxInFlight = 0;
    const f = fetchPage({ perHostConcurrency: 2 });
    const pages = await Promise.all(Array.from({ length: 6 }, () => f(`${server.origin}/slow`)));
    expect(pages.every((p) => p.body === 'slow')).toBe(true);
    expect(maxInFlight).toBe(2);
    maxInFlight = 0;
    const g = fetchPage({ perHostConcurrency: 4 });
    await Promise.all(Array.from({ length: 6 }, () => g(`${server.origin}/slow`)));
    expect(maxInFlight).toBeGreaterThan(2); // the limit, not the server, held the first run to 2
    expect(maxInFlight).toBeLessThanOrEqual(4);
  });
});

// ---------------------------------------------------------------------------------------------
// web_fetch, web_subpage_fetch, web_crawl
