/**
 * The web tools: the SSRF-guarded client (net.ts), web_fetch / web_subpage_fetch / web_crawl
 * (web-fetch.ts) and web_search's four backends (web-search.ts), against local HTTP servers.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { TLSSocket } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSafeFetch, type HostLookup, isBlockedAddress, parseAllowList, type SafeFetchOptions } from '../src/tools/net.js';
import { type Tool, type ToolContext, ToolError } from '../src/tools/tool.js';
import { htmlToMarkdown, webCrawlTool, webFetchTool, webSubpageFetchTool } from '../src/tools/web-fetch.js';
import { type WebSearchSettings, webSearchSettingsFromEnv, webSearchTool } from '../src/tools/web-search.js';

// ---------------------------------------------------------------------------------------------
// Helpers

interface Recorded {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

interface TestServer {
  port: number;
  /** http://127.0.0.1:<port> */
  origin: string;
  requests: Recorded[];
  close(): Promise<void>;
}

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => unknown;

const servers: Server[] = [];

async function startServer(handler: Handler, host = '127.0.0.1'): Promise<TestServer> {
  const requests: Recorded[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      void handler(req, res, body);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    origin: host.includes(':') ? `http://[${host}]:${port}` : `http://${host}:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

afterAll(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
});

function ctx(signal: AbortSignal = new AbortController().signal): ToolContext {
  return { signal };
}

/** The ToolError a promise rejects with (fails the test if it resolves or throws something else). */
async function toolError(p: Promise<unknown>): Promise<ToolError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(ToolError);
    return err as ToolError;
  }
  throw new Error('expected a ToolError, but the call succeeded');
}

/** A resolver from a fixed table (names not in it fail like NXDOMAIN), counting calls. */
function fakeLookup(table: Record<string, string[]>): HostLookup & { calls: string[] } {
  const calls: string[] = [];
  const fn = async (host: string) => {
    calls.push(host);
    const addrs = table[host];
    if (!addrs) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return addrs.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(fn, { calls });
}

function client(over: Partial<SafeFetchOptions> = {}) {
  return createSafeFetch({ allowHosts: [], maxBytes: 1_000_000, timeoutMs: 3_000, perHostConcurrency: 4, ...over });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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

const ARTICLE = `<!doctype html>
<html><head><title>Sample Article - Example Site</title><script>var secretTracking = 1;</script><style>.x{color:red}</style></head>
<body>
<nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<article>
  <h1>Understanding Actors</h1>
  <p>${'The actor model treats actors as the universal primitives of concurrent computation. '.repeat(6)}</p>
  <h2>Message Passing</h2>
  <p>Actors communicate by sending messages; read <a href="/docs/messages">the messaging guide</a> for details. ${'Each actor processes one message at a time and keeps its own state private. '.repeat(5)}</p>
  <ul><li>Isolation of state</li><li>Asynchronous messages</li></ul>
</article>
<footer>Copyright footer</footer>
</body></html>`;

describe('HTML to markdown', () => {
  it('keeps headings, paragraphs, lists and absolute links; drops scripts', () => {
    const { title, markdown, links } = htmlToMarkdown(ARTICLE, 'http://site.test/posts/actors');
    expect(title).toMatch(/Sample Article/);
    expect(markdown).toMatch(/^#+ Understanding Actors$/m);
    expect(markdown).toMatch(/^#+ Message Passing$/m);
    expect(markdown).toContain('[the messaging guide](http://site.test/docs/messages)');
    expect(markdown).toMatch(/^- +Isolation of state$/m);
    expect(markdown).not.toContain('secretTracking');
    expect(markdown).not.toContain('<p>');
    expect(links).toEqual(['http://site.test/', 'http://site.test/about', 'http://site.test/docs/messages']);
  });

  it('falls back to the whole body when Readability finds no article', () => {
    const html =
      '<html><head><title>Contact</title></head><body><footer><h3>Contact us</h3><p>Write to <a href="/mail">the office</a></p></footer></body></html>';
    const { markdown } = htmlToMarkdown(html, 'http://site.test/');
    expect(markdown).toContain('### Contact us');
    expect(markdown).toContain('[the office](http://site.test/mail)');
  });

  it('handles markup without html/head/body tags', () => {
    const { title, markdown } = htmlToMarkdown(
      '<!doctype html>\n<title>Bare</title>\n<h2>Heading</h2><p>Body <a href="x">link</a></p>',
      'http://site.test/dir/',
    );
    expect(title).toBe('Bare');
    expect(markdown).toContain('Heading');
    expect(markdown).toContain('[link](http://site.test/dir/x)');
  });
});

describe('web tools', () => {
  let site: TestServer;
  let other: TestServer;
  let fetchTool: Tool;
  let subpageTool: Tool;
  let crawlTool: Tool;

  const page = (title: string, links: string[], text = `Text of ${title}.`) =>
    `<!doctype html><html><head><title>${title}</title></head><body><main><h1>${title}</h1><p>${text}</p><ul>${links
      .map((l) => `<li><a href="${l}">${l}</a></li>`)
      .join('')}</ul></main></body></html>`;

  beforeAll(async () => {
    other = await startServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(page('Elsewhere', [])));
    site = await startServer((req, res) => {
      const html = (body: string) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      if (path === '/article') return html(ARTICLE);
      if (path === '/text') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('just some text\nsecond line');
      if (path === '/data.json') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"a":1,"b":[1,2]}');
      if (path === '/image.png') return void res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
      if (path === '/long') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('y'.repeat(5000));
      if (path === '/gone') return void res.writeHead(404, { 'content-type': 'text/html' }).end('<p>not here</p>');
      // A small site: / -> /a, /b, /file.pdf, an off-site link; /a -> /a1 -> /a2 -> /a3; /b -> /a, /b#frag.
      if (path === '/') return html(page('Home', ['/a', '/b', '/file.pdf', `${other.origin}/x`]));
      if (path === '/a') return html(page('Page A', ['/a1']));
      if (path === '/a1') return html(page('Page A1', ['/a2']));
      if (path === '/a2') return html(page('Page A2', ['/a3']));
      if (path === '/a3') return html(page('Page A3', []));
      if (path === '/b') return html(page('Page B', ['/a', '/b#frag']));
      if (path.startsWith('/n/')) {
        // A long chain of wide pages for the page cap: /n/0 links to /n/1 ... /n/30.
        return html(
          page(
            `N ${path}`,
            Array.from({ length: 31 }, (_, i) => `/n/${i}`),
          ),
        );
      }
      res.writeHead(404).end();
    });
    const deps = { fetch: createSafeFetch({ allowHosts: ['127.0.0.1/32'], maxBytes: 1_000_000, timeoutMs: 5_000, perHostConcurrency: 2 }) };
    fetchTool = webFetchTool(deps);
    subpageTool = webSubpageFetchTool(deps);
    crawlTool = webCrawlTool(deps);
  });
  afterEach(() => {
    site.requests.length = 0;
    other.requests.length = 0;
  });

  const fetched = () => site.requests.map((r) => r.url).sort();

  it('declares names, categories and schemas', () => {
    const tools: Tool[] = [fetchTool, subpageTool, crawlTool];
    expect(tools.map((t) => [t.name, t.category, t.retryable, t.dangerous])).toEqual([
      ['web_fetch', 'web', true, false],
      ['web_subpage_fetch', 'web', true, false],
      ['web_crawl', 'web', true, false],
    ]);
    expect(fetchTool.parameters.required).toEqual(['url']);
    expect(crawlTool.parameters.properties.max_pages.maximum).toBe(20);
    expect(crawlTool.parameters.properties.max_depth.maximum).toBe(3);
  });

  it('web_fetch returns the article as markdown with title and final url', async () => {
    const out = await fetchTool.run({ url: `${site.origin}/article` }, ctx());
    expect(out.output.url).toBe(`${site.origin}/article`);
    expect(out.output.title).toMatch(/Sample Article/);
    expect(out.output.content).toMatch(/^#+ Message Passing$/m);
    expect(out.output.content).toContain(`[the messaging guide](${site.origin}/docs/messages)`);
    expect(out.output.truncated).toBe(false);
    expect(out.text).toContain(`Source: ${site.origin}/article`);
  });

  it('web_fetch passes text and JSON through, refuses binary content, reports HTTP errors', async () => {
    expect((await fetchTool.run({ url: `${site.origin}/text` }, ctx())).output.content).toBe('just some text\nsecond line');
    expect((await fetchTool.run({ url: `${site.origin}/data.json` }, ctx())).output.content).toBe(JSON.stringify({ a: 1, b: [1, 2] }, null, 2));
    const binary = await toolError(fetchTool.run({ url: `${site.origin}/image.png` }, ctx()));
    expect(binary.message).toMatch(/image\/png/);
    const gone = await toolError(fetchTool.run({ url: `${site.origin}/gone` }, ctx()));
    expect(gone.kind).toBe('backend');
    expect(gone.message).toMatch(/HTTP 404/);
  });

  it('web_fetch cuts content at max_length', async () => {
    const out = await fetchTool.run({ url: `${site.origin}/long`, max_length: 1000 }, ctx());
    expect(out.output.content).toBe('y'.repeat(1000));
    expect(out.output.truncated).toBe(true);
    expect(out.output.length).toBe(5000);
  });

  it('web_fetch goes through the guard', async () => {
    const guarded = webFetchTool({ fetch: client() });
    const err = await toolError(guarded.run({ url: `${site.origin}/article` }, ctx()));
    expect(err.kind).toBe('bad_arguments');
    expect(err.message).toMatch(/refused/);
    expect(site.requests).toHaveLength(0);
  });

  it('web_subpage_fetch fetches the given same-site paths and refuses other sites', async () => {
    const out = await subpageTool.run({ url: `${site.origin}/`, path: '/a', subpages: ['b', `${site.origin}/a1`] }, ctx());
    const pages = out.output.pages as Array<{ url: string; title: string; content: string }>;
    expect(pages.map((p) => p.title)).toEqual(['Page A', 'Page B', 'Page A1']);
    expect(pages[0].content).toContain('Text of Page A.');
    expect(fetched()).toEqual(['/a', '/a1', '/b']);
    const err = await toolError(subpageTool.run({ url: `${site.origin}/`, subpages: [`${other.origin}/x`] }, ctx()));
    expect(err.kind).toBe('bad_arguments');
    expect(other.requests).toHaveLength(0);
  });

  it('web_subpage_fetch without paths discovers same-site links, up to limit', async () => {
    const out = await subpageTool.run({ url: `${site.origin}/`, limit: 1 }, ctx());
    const pages = out.output.pages as Array<{ title: string }>;
    expect(pages.map((p) => p.title)).toEqual(['Home', 'Page A']);
    const all = await subpageTool.run({ url: `${site.origin}/` }, ctx());
    expect((all.output.pages as Array<{ title: string }>).map((p) => p.title)).toEqual(['Home', 'Page A', 'Page B']);
    expect(other.requests).toHaveLength(0);
    expect(fetched()).not.toContain('/file.pdf');
  });

  it('web_crawl walks the origin breadth-first within max_depth', async () => {
    const out = await crawlTool.run({ url: `${site.origin}/`, max_depth: 1, max_pages: 20 }, ctx());
    const pages = out.output.pages as Array<{ url: string; depth: number; links: string[] }>;
    expect(pages.map((p) => [new URL(p.url).pathname, p.depth])).toEqual([
      ['/', 0],
      ['/a', 1],
      ['/b', 1],
    ]);
    expect(pages[0].links).toContain(`${site.origin}/a`);
    expect(pages[0].links).not.toContain(`${other.origin}/x`); // same origin only
    expect(other.requests).toHaveLength(0);
    expect(fetched()).toEqual(['/', '/a', '/b']);

    site.requests.length = 0;
    const deeper = await crawlTool.run({ url: `${site.origin}/`, max_depth: 2 }, ctx());
    expect((deeper.output.pages as Array<{ url: string }>).map((p) => new URL(p.url).pathname)).toEqual(['/', '/a', '/b', '/a1']);
    expect(fetched()).toEqual(['/', '/a', '/a1', '/b']); // each page once (/b's links to /a and /b#frag are not refetched)
  });

  it('web_crawl stops at max_pages and caps it at 20 and depth at 3', async () => {
    const two = await crawlTool.run({ url: `${site.origin}/`, max_pages: 2 }, ctx());
    expect((two.output.pages as unknown[]).length).toBe(2);
    expect(two.output.unvisited).toBe(1);

    site.requests.length = 0;
    const capped = await crawlTool.run({ url: `${site.origin}/n/0`, max_pages: 100, max_depth: 10 }, ctx());
    expect((capped.output.pages as unknown[]).length).toBe(20);
    expect(site.requests).toHaveLength(20);

    site.requests.length = 0;
    const deep = await crawlTool.run({ url: `${site.origin}/`, max_pages: 20, max_depth: 10 }, ctx());
    expect((deep.output.pages as Array<{ url: string; depth: number }>).map((p) => p.depth)).toEqual([0, 1, 1, 2, 3]);
    expect(fetched()).not.toContain('/a3');
  });
});

// ---------------------------------------------------------------------------------------------
// web_search

describe('web_search', () => {
  let backend: TestServer;
  let failing: TestServer;
  beforeAll(async () => {
    backend = await startServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const json = (v: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(v));
      if (path === '/searx/search')
        return json({
          results: Array.from({ length: 10 }, (_, i) => ({ title: `Searx ${i}`, url: `https://searx.example/${i}`, content: `snippet ${i}` })),
        });
      if (path === '/res/v1/web/search')
        return json({ web: { results: [{ title: 'Brave &amp; co', url: 'https://brave.example/', description: 'The <strong>best</strong> result' }] } });
      if (path === '/search' && req.method === 'POST') {
        if (req.headers['x-api-key']) return json({ organic: [{ title: 'Serper hit', link: 'https://serper.example/', snippet: 'from google' }] });
        return json({ results: [{ title: 'Tavily hit', url: 'https://tavily.example/', content: 'tavily snippet' }] });
      }
      res.writeHead(404).end();
    });
    failing = await startServer((_req, res) => res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"bad key"}'));
  });
  afterEach(() => {
    backend.requests.length = 0;
  });

  const settings = (over: Partial<WebSearchSettings>): WebSearchSettings => ({
    ...webSearchSettingsFromEnv({}),
    braveUrl: backend.origin,
    tavilyUrl: backend.origin,
    serperUrl: backend.origin,
    ...over,
  });
  const search = (s: WebSearchSettings, args: Record<string, unknown>) => webSearchTool(s).run(args as { query: string }, ctx());

  it('declares its name, category and rate limit setting', () => {
    const tool = webSearchTool(settings({}));
    expect([tool.name, tool.category, tool.retryable, tool.rateLimitSetting]).toEqual(['web_search', 'search', true, 'WEB_SEARCH_RATE_LIMIT']);
    expect(tool.parameters.required).toEqual(['query']);
    expect(tool.parameters.properties.max_results).toMatchObject({ minimum: 1, maximum: 20, default: 5 });
  });

  it('reads its settings from the environment', () => {
    expect(webSearchSettingsFromEnv({})).toMatchObject({
      provider: '',
      braveUrl: 'https://api.search.brave.com',
      tavilyUrl: 'https://api.tavily.com',
      serperUrl: 'https://google.serper.dev',
    });
    expect(webSearchSettingsFromEnv({ WEB_SEARCH_PROVIDER: ' Brave ', BRAVE_SEARCH_API_KEY: 'k', SEARXNG_URL: 'http://s' })).toMatchObject({
      provider: 'brave',
      braveApiKey: 'k',
      searxngUrl: 'http://s',
    });
  });

  it('searxng: GET <url>/search?q=..&format=json, results cut to max_results', async () => {
    const out = await search(settings({ provider: 'searxng', searxngUrl: `${backend.origin}/searx` }), { query: 'actor model', max_results: 3 });
    const req = backend.requests[0];
    expect(req.method).toBe('GET');
    const url = new URL(req.url, 'http://x');
    expect(url.pathname).toBe('/searx/search');
    expect(url.searchParams.get('q')).toBe('actor model');
    expect(url.searchParams.get('format')).toBe('json');
    expect(out.output.results).toEqual([0, 1, 2].map((i) => ({ title: `Searx ${i}`, url: `https://searx.example/${i}`, snippet: `snippet ${i}` })));
    expect(out.text).toContain('https://searx.example/2');
  });

  it('brave: GET /res/v1/web/search with X-Subscription-Token and count; markup removed from snippets', async () => {
    const out = await search(settings({ provider: 'brave', braveApiKey: 'brave-key' }), { query: 'nats jetstream' });
    const req = backend.requests[0];
    expect(req.method).toBe('GET');
    const url = new URL(req.url, 'http://x');
    expect(url.pathname).toBe('/res/v1/web/search');
    expect(url.searchParams.get('q')).toBe('nats jetstream');
    expect(url.searchParams.get('count')).toBe('5');
    expect(req.headers['x-subscription-token']).toBe('brave-key');
    expect(out.output.results).toEqual([{ title: 'Brave & co', url: 'https://brave.example/', snippet: 'The best result' }]);
  });

  it('tavily: POST /search with the key and a JSON body', async () => {
    const out = await search(settings({ provider: 'tavily', tavilyApiKey: 'tvly-key' }), { query: 'pglite', max_results: 7 });
    const req = backend.requests[0];
    expect([req.method, req.url]).toEqual(['POST', '/search']);
    expect(req.headers['content-type']).toMatch(/application\/json/);
    expect(req.headers.authorization).toBe('Bearer tvly-key');
    expect(JSON.parse(req.body)).toEqual({ api_key: 'tvly-key', query: 'pglite', max_results: 7 });
    expect(out.output.results).toEqual([{ title: 'Tavily hit', url: 'https://tavily.example/', snippet: 'tavily snippet' }]);
  });

  it('serper: POST /search with X-API-KEY', async () => {
    const out = await search(settings({ provider: 'serper', serperApiKey: 'serper-key' }), { query: 'readability', max_results: 2 });
    const req = backend.requests[0];
    expect([req.method, req.url]).toEqual(['POST', '/search']);
    expect(req.headers['x-api-key']).toBe('serper-key');
    expect(JSON.parse(req.body)).toEqual({ q: 'readability', num: 2 });
    expect(out.output.results).toEqual([{ title: 'Serper hit', url: 'https://serper.example/', snippet: 'from google' }]);
  });

  it('fails with not_configured, naming the variable, and never invents results', async () => {
    const cases: Array<[Partial<WebSearchSettings>, RegExp]> = [
      [{ provider: '' }, /WEB_SEARCH_PROVIDER/],
      [{ provider: 'bing' }, /WEB_SEARCH_PROVIDER=bing is not one of/],
      [{ provider: 'searxng' }, /SEARXNG_URL/],
      [{ provider: 'brave' }, /BRAVE_SEARCH_API_KEY/],
      [{ provider: 'tavily' }, /TAVILY_API_KEY/],
      [{ provider: 'serper' }, /SERPER_API_KEY/],
    ];
    for (const [over, message] of cases) {
      const err = await toolError(search(settings(over), { query: 'q' }));
      expect(err.kind, JSON.stringify(over)).toBe('not_configured');
      expect(err.message).toMatch(message);
    }
    expect(backend.requests).toHaveLength(0);
  });

  it('turns a backend HTTP error into a backend error naming the status', async () => {
    const err = await toolError(search(settings({ provider: 'brave', braveApiKey: 'wrong', braveUrl: failing.origin }), { query: 'q' }));
    expect(err.kind).toBe('backend');
    expect(err.message).toMatch(/brave search failed: HTTP 401/);
    const down = await toolError(search(settings({ provider: 'searxng', searxngUrl: 'http://127.0.0.1:1' }), { query: 'q' }));
    expect(down.kind).toBe('backend');
  });

  it('is not subject to the SSRF guard (an operator-configured local backend works)', async () => {
    const out = await search(settings({ provider: 'searxng', searxngUrl: `${backend.origin}/searx/` }), { query: 'local' });
    expect((out.output.results as unknown[]).length).toBe(5);
  });
});
