/**
 * The SSRF guard of the headless browser: a forward proxy on loopback that every request of
 * the browser goes through (navigations, redirects, images, scripts, XHR, WebSockets; the
 * browser is launched with it as its only proxy and loopback is not exempt). For each request
 * the proxy resolves the host once, refuses it when any address is not public unicast (the
 * web tools' rules, `./net.ts`, with TOOLS_HTTP_ALLOW_HOSTS as the exemption list), and
 * connects to the address it checked, so DNS rebinding between check and connection cannot
 * reach a private address either. A refusal is a 403 carrying REFUSED_HEADER with the reason,
 * which the capture reports as the tool's error when the page itself was refused.
 *
 * The proxy asks for random credentials (known to the browser only), so other local processes
 * cannot use it. One proxy per browser process; closed with it.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { lookup as dnsLookup } from 'node:dns/promises';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect as netConnect, isIP, type AddressInfo, type Socket } from 'node:net';
import { isBlockedAddress, parseAllowList, type AllowList } from './net.js';

/** Header of the proxy's refusal answers: why the request was refused. */
export const REFUSED_HEADER = 'x-taskorch-ssrf-refused';

export interface BrowserGuard {
  /** The proxy server URL and credentials for the browser's launch options. */
  proxy: { server: string; username: string; password: string };
  close(): Promise<void>;
}

type Vetted = { ok: true; address: string } | { ok: false; reason: string };

/** Resolves a host and checks every address; the first checked address is the one to use. */
export async function vetHost(hostname: string, allow: AllowList): Promise<Vetted> {
  const host = hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  const allowedByName = allow.allowsHost(host);
  let addresses: Array<{ address: string }>;
  if (isIP(host)) addresses = [{ address: host }];
  else {
    try {
      addresses = await dnsLookup(host, { all: true, verbatim: true });
    } catch (err) {
      return { ok: false, reason: `could not resolve ${host}: ${(err as Error).message}` };
    }
  }
  if (addresses.length === 0) return { ok: false, reason: `could not resolve ${host}` };
  if (!allowedByName) {
    for (const a of addresses) {
      if (isBlockedAddress(a.address) && !allow.allowsAddress(a.address)) {
        return { ok: false, reason: `${host} resolves to ${a.address}, not a public address (set TOOLS_HTTP_ALLOW_HOSTS to allow it)` };
      }
    }
  }
  return { ok: true, address: addresses[0]!.address };
}

/** Request headers a proxy must not forward (hop-by-hop, and the proxy's own credentials). */
const HOP_BY_HOP = new Set(['proxy-authorization', 'proxy-connection', 'connection', 'keep-alive', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

export async function startBrowserGuard(allowHosts: string): Promise<BrowserGuard> {
  const allow = parseAllowList(allowHosts ? [allowHosts] : []);
  const username = 'browser';
  const password = randomBytes(18).toString('base64url');
  const expected = Buffer.from(`Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`);
  const authorised = (req: IncomingMessage) => {
    const got = Buffer.from(req.headers['proxy-authorization'] ?? '');
    return got.length === expected.length && timingSafeEqual(got, expected);
  };
  const sockets = new Set<Socket>();

  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    if (!authorised(req)) {
      res.writeHead(407, { 'proxy-authenticate': 'Basic realm="browser"' }).end();
      return;
    }
    let target: URL;
    try {
      target = new URL(req.url ?? '');
      if (target.protocol !== 'http:') throw new Error('not http');
    } catch {
      res.writeHead(400).end('proxy: absolute http URL expected');
      return;
    }
    void vetHost(target.hostname, allow).then((v) => {
      if (!v.ok) {
        res.writeHead(403, { 'content-type': 'text/plain', [REFUSED_HEADER]: encodeURIComponent(v.reason) }).end(`refused: ${v.reason}`);
        return;
      }
      const headers: Record<string, string | string[]> = {};
      for (const [k, val] of Object.entries(req.headers)) if (val !== undefined && !HOP_BY_HOP.has(k)) headers[k] = val;
      const upstream = httpRequest(
        { host: v.address, port: target.port || 80, method: req.method, path: `${target.pathname}${target.search}`, headers, setHost: false },
        (up) => {
          const out: Record<string, string | string[]> = {};
          for (const [k, val] of Object.entries(up.headers)) if (val !== undefined && !HOP_BY_HOP.has(k)) out[k] = val;
          res.writeHead(up.statusCode ?? 502, out);
          up.pipe(res);
        },
      );
      upstream.on('error', (err) => {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end(`proxy: ${err.message}`);
        else res.destroy();
      });
      res.on('close', () => upstream.destroy());
      req.pipe(upstream);
    });
  };

  // https and WebSockets: a tunnel to the vetted address (TLS stays end to end between browser and site).
  const onConnect = (req: IncomingMessage, client: Socket, head: Buffer) => {
    client.on('error', () => client.destroy());
    if (!authorised(req)) {
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="browser"\r\n\r\n');
      return;
    }
    const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(req.url ?? '');
    if (!m) {
      client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
      return;
    }
    const port = Number(m[2]);
    void vetHost(m[1]!, allow).then((v) => {
      if (!v.ok) {
        client.end(`HTTP/1.1 403 Forbidden\r\n${REFUSED_HEADER}: ${encodeURIComponent(v.reason)}\r\n\r\n`);
        return;
      }
      const upstream = netConnect(port, v.address, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length) upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      sockets.add(upstream);
      upstream.on('close', () => sockets.delete(upstream));
      upstream.on('error', () => {
        if (!client.destroyed) client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
      });
      client.on('close', () => upstream.destroy());
    });
  };

  const server: Server = createServer(onRequest);
  server.on('connect', onConnect);
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    proxy: { server: `http://127.0.0.1:${port}`, username, password },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
