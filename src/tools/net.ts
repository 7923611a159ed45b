/**
 * The HTTP client of the web tools, guarded against server-side request forgery (SSRF).
 *
 * A model chooses the URLs these tools fetch, so a URL may point at the service's own network:
 * loopback, private ranges, the cloud metadata endpoint (169.254.169.254). Before every
 * connection — the first request and every redirect hop — the host is resolved once and the
 * request is refused if ANY of its addresses is not a public unicast address. The connection
 * then goes to the address that was checked (the socket's `lookup` hands back the verified
 * addresses instead of asking DNS again), so a name that resolves to a public address for the
 * check and to a private one for the connection (DNS rebinding) cannot slip through. The Host
 * header and the TLS server name stay the URL's hostname.
 *
 * `TOOLS_HTTP_ALLOW_HOSTS` (hostnames, `*.suffix` patterns, IP addresses or CIDRs) exempts hosts
 * or address ranges from the guard, for operators with intranet sources and for tests.
 *
 * Search backends are configured by the operator and do not go through this client.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { rootCertificates } from 'node:tls';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Readable } from 'node:stream';
import { ToolError } from './tool.js';

/** Resolves a hostname to all of its addresses (`dns.lookup(host, { all: true })` by default). */
export type HostLookup = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

export interface SafeFetchOptions {
  /** Hostnames (`example.com`, `*.example.com`), IP addresses or CIDRs exempt from the guard. */
  allowHosts: string[];
  /** Bytes of (decompressed) body read at most; the rest is dropped and `truncated` set. */
  maxBytes: number;
  /** Time limit of one `fetchPage` call, redirects and waiting for a host slot included. */
  timeoutMs: number;
  /** Requests in flight to one hostname at most; further ones wait. */
  perHostConcurrency: number;
  userAgent?: string;
  /** Redirects followed at most (default 5). */
  maxRedirects?: number;
  /** Name resolution, replaceable in tests (default: `dns.lookup` with `all: true`). */
  lookup?: HostLookup;
  /** Extra trusted CA certificates (PEM) for https, besides Node's bundled roots: intranet CAs, tests. */
  ca?: string | string[];
}

export interface FetchedPage {
  /** The final URL, after redirects. */
  url: string;
  status: number;
  /** The Content-Type header ('' when absent). */
  contentType: string;
  body: string;
  /** Bytes of body read (after decompression, at most maxBytes). */
  bytes: number;
  /** Whether the body was cut at maxBytes. */
  truncated: boolean;
}

export interface FetchPageOptions {
  signal?: AbortSignal;
  /** Extra request headers (e.g. Accept). */
  headers?: Record<string, string>;
}

export type FetchPage = (url: string, opts?: FetchPageOptions) => Promise<FetchedPage>;

export const DEFAULT_USER_AGENT = 'taskorch-web-tools/0.1 (+https://github.com/taskorch)';

/** Hostnames of cloud metadata services, refused whatever they resolve to. */
const METADATA_HOSTNAMES = new Set(['metadata.google.internal', 'metadata.goog', 'metadata', 'instance-data', 'instance-data.ec2.internal']);

// ---------------------------------------------------------------------------------------------
// Addresses

/** An IP address as bytes (4 for IPv4, 16 for IPv6). */
type IpBytes = Uint8Array;

function parseIPv4(s: string): IpBytes | null {
  if (isIP(s) !== 4) return null;
  return Uint8Array.from(s.split('.').map(Number));
}

function parseIPv6(input: string): IpBytes | null {
  let s = input;
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  if (isIP(s) !== 6) return null;
  // A dotted IPv4 tail (::ffff:1.2.3.4) becomes its two hexadecimal groups.
  const lastColon = s.lastIndexOf(':');
  if (s.includes('.', lastColon)) {
    const v4 = parseIPv4(s.slice(lastColon + 1));
    if (!v4) return null;
    s = `${s.slice(0, lastColon + 1)}${((v4[0] << 8) | v4[1]).toString(16)}:${((v4[2] << 8) | v4[3]).toString(16)}`;
  }
  const double = s.indexOf('::');
  const head = double < 0 ? s.split(':') : s.slice(0, double) ? s.slice(0, double).split(':') : [];
  const rest = double < 0 ? [] : s.slice(double + 2) ? s.slice(double + 2).split(':') : [];
  const groups = double < 0 ? head : [...head, ...new Array<string>(8 - head.length - rest.length).fill('0'), ...rest];
  if (groups.length !== 8) return null;
  const out = new Uint8Array(16);
  for (let i = 0; i < 8; i++) {
    const v = parseInt(groups[i], 16);
    if (!Number.isFinite(v) || v < 0 || v > 0xffff) return null;
    out[i * 2] = v >> 8;
    out[i * 2 + 1] = v & 0xff;
  }
  return out;
}

/** Parses an IPv4 or IPv6 address (brackets and a zone id allowed), or null. */
function parseIp(s: string): IpBytes | null {
  const bare = s.startsWith('[') && s.endsWith(']') ? s.slice(1, -1) : s;
  return parseIPv4(bare) ?? parseIPv6(bare);
}

function formatIp(b: IpBytes): string {
  if (b.length === 4) return b.join('.');
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((b[i] << 8) | b[i + 1]).toString(16));
  return groups.join(':');
}

function inPrefix(ip: IpBytes, net: IpBytes, bits: number): boolean {
  if (ip.length !== net.length) return false;
  let i = 0;
  for (; bits >= 8; bits -= 8, i++) if (ip[i] !== net[i]) return false;
  if (bits === 0) return true;
  const mask = (0xff << (8 - bits)) & 0xff;
  return (ip[i] & mask) === (net[i] & mask);
}

interface Cidr {
  net: IpBytes;
  bits: number;
}

function cidr(s: string): Cidr {
  const [addr, bits] = s.split('/');
  const net = parseIp(addr);
  if (!net) throw new Error(`bad CIDR ${s}`);
  return { net, bits: bits === undefined ? net.length * 8 : Number(bits) };
}

/** IPv4 ranges that are not public unicast, with the word used in refusals. */
const BLOCKED_V4: Array<[Cidr, string]> = (
  [
    ['0.0.0.0/8', 'unspecified'],
    ['10.0.0.0/8', 'private'],
    ['100.64.0.0/10', 'shared (CGNAT)'],
    ['127.0.0.0/8', 'loopback'],
    ['169.254.0.0/16', 'link-local'],
    ['172.16.0.0/12', 'private'],
    ['192.0.0.0/24', 'reserved'],
    ['192.0.2.0/24', 'reserved'],
    ['192.88.99.0/24', 'reserved'],
    ['192.168.0.0/16', 'private'],
    ['198.18.0.0/15', 'reserved'],
    ['198.51.100.0/24', 'reserved'],
    ['203.0.113.0/24', 'reserved'],
    ['224.0.0.0/4', 'multicast'],
    ['240.0.0.0/4', 'reserved'],
  ] as const
).map(([c, why]) => [cidr(c), why]);

const V6 = {
  mapped: cidr('::ffff:0:0/96'),
  nat64: cidr('64:ff9b::/96'),
  nat64Local: cidr('64:ff9b:1::/48'),
  sixToFour: cidr('2002::/16'),
  globalUnicast: cidr('2000::/3'),
  documentation: cidr('2001:db8::/32'),
  uniqueLocal: cidr('fc00::/7'),
  linkLocal: cidr('fe80::/10'),
  siteLocal: cidr('fec0::/10'),
  multicast: cidr('ff00::/8'),
};

/** Why an address is refused ('loopback', 'private', ...), or null for a public unicast address. */
export function blockedAddressReason(ip: string): string | null {
  const b = parseIp(ip);
  if (!b) return 'invalid';
  return reasonFor(b);
}

function reasonFor(b: IpBytes): string | null {
  if (b.length === 4) {
    for (const [range, why] of BLOCKED_V4) if (inPrefix(b, range.net, range.bits)) return why;
    return null;
  }
  if (b.every((x) => x === 0)) return 'unspecified';
  if (b.slice(0, 15).every((x) => x === 0) && b[15] === 1) return 'loopback';
  // Addresses that carry an IPv4 address are judged by it.
  if (inPrefix(b, V6.mapped.net, V6.mapped.bits) || inPrefix(b, V6.nat64.net, V6.nat64.bits)) return reasonFor(b.slice(12));
  if (inPrefix(b, V6.sixToFour.net, V6.sixToFour.bits)) return reasonFor(b.slice(2, 6));
  if (inPrefix(b, V6.nat64Local.net, V6.nat64Local.bits)) return 'private';
  if (inPrefix(b, V6.uniqueLocal.net, V6.uniqueLocal.bits)) return 'private';
  if (inPrefix(b, V6.linkLocal.net, V6.linkLocal.bits)) return 'link-local';
  if (inPrefix(b, V6.siteLocal.net, V6.siteLocal.bits)) return 'private';
  if (inPrefix(b, V6.multicast.net, V6.multicast.bits)) return 'multicast';
  if (inPrefix(b, V6.documentation.net, V6.documentation.bits)) return 'reserved';
  // Everything outside global unicast (IPv4-compatible ::/96, discard 100::/64, ...) is reserved.
  if (!inPrefix(b, V6.globalUnicast.net, V6.globalUnicast.bits)) return 'reserved';
  return null;
}

/** Whether the guard refuses this address (loopback, private, link-local, reserved, ...). Unparseable input counts as blocked. */
export function isBlockedAddress(ip: string): boolean {
  return blockedAddressReason(ip) !== null;
}

// ---------------------------------------------------------------------------------------------
// Allow list

export interface AllowList {
  /** Whether the hostname (lowercase, without brackets) is exempt. */
  allowsHost(hostname: string): boolean;
  /** Whether the address falls in an exempt range. */
  allowsAddress(ip: string): boolean;
}

/**
 * Parses TOOLS_HTTP_ALLOW_HOSTS: comma- or whitespace-separated hostnames (`example.com`),
 * suffix patterns (`*.corp.example`), IP addresses (`127.0.0.1`, `::1`) and CIDRs (`10.0.0.0/8`).
 * An IPv4-mapped IPv6 address matches IPv4 entries.
 */
export function parseAllowList(s: string | string[]): AllowList {
  const entries = (Array.isArray(s) ? s : [s])
    .flatMap((x) => x.split(/[\s,]+/))
    .map((x) => x.trim().toLowerCase())
    .filter(Boolean);
  const hosts = new Set<string>();
  const suffixes: string[] = [];
  const ranges: Cidr[] = [];
  for (const e of entries) {
    const [addr, bits] = e.split('/');
    const ip = parseIp(addr);
    if (ip) {
      const max = ip.length * 8;
      const n = bits === undefined ? max : Number(bits);
      if (!Number.isInteger(n) || n < 0 || n > max) throw new Error(`TOOLS_HTTP_ALLOW_HOSTS: bad prefix length in ${e}`);
      ranges.push({ net: ip, bits: n });
    } else if (bits !== undefined) {
      throw new Error(`TOOLS_HTTP_ALLOW_HOSTS: ${e} is not a CIDR`);
    } else if (e.startsWith('*.')) {
      suffixes.push(e.slice(1));
    } else if (e.startsWith('.')) {
      suffixes.push(e);
    } else {
      hosts.add(e.replace(/\.$/, ''));
    }
  }
  return {
    allowsHost(hostname) {
      const h = hostname.toLowerCase().replace(/\.$/, '');
      return hosts.has(h) || suffixes.some((suf) => h.endsWith(suf));
    },
    allowsAddress(ip) {
      const b = parseIp(ip);
      if (!b) return false;
      const v4 = b.length === 16 && inPrefix(b, V6.mapped.net, V6.mapped.bits) ? b.slice(12) : null;
      return ranges.some((r) => inPrefix(b, r.net, r.bits) || (v4 !== null && inPrefix(v4, r.net, r.bits)));
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Per-host concurrency

class Semaphore {
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  constructor(private readonly limit: number) {}

  get idle(): boolean {
    return this.active === 0 && this.waiting.length === 0;
  }

  acquire(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.active < this.limit) {
      this.active++;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const grant = () => {
        signal.removeEventListener('abort', onAbort);
        this.active++;
        resolve();
      };
      const onAbort = () => {
        const i = this.waiting.indexOf(grant);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(signal.reason);
      };
      this.waiting.push(grant);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  release(): void {
    this.active--;
    const next = this.waiting.shift();
    if (next) next();
  }
}

// ---------------------------------------------------------------------------------------------
// Fetching

interface Target {
  url: URL;
  /** Hostname without brackets, lowercase. */
  hostname: string;
  /** Verified addresses to connect to. */
  addresses: Array<{ address: string; family: number }>;
}

class TimeoutError extends Error {}

/** An HTTP client for tools that refuses private destinations; see the module comment. */
export function createSafeFetch(opts: SafeFetchOptions): FetchPage {
  const allow = parseAllowList(opts.allowHosts);
  const resolve: HostLookup = opts.lookup ?? ((host) => dnsLookup(host, { all: true, verbatim: true }));
  const maxRedirects = opts.maxRedirects ?? 5;
  const userAgent = opts.userAgent ?? DEFAULT_USER_AGENT;
  const perHost = Math.max(1, Math.floor(opts.perHostConcurrency));
  const slots = new Map<string, Semaphore>();
  const ca = opts.ca ? [...rootCertificates, ...(Array.isArray(opts.ca) ? opts.ca : [opts.ca])] : undefined;

  /** Checks a URL and resolves its host once; throws ToolError('bad_arguments') on refusal. */
  async function vet(raw: string | URL): Promise<Target> {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new ToolError(`invalid URL: ${String(raw)}`, 'bad_arguments');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new ToolError(`refused: only http and https URLs are fetched (got ${url.protocol})`, 'bad_arguments');
    const hostname = url.hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
    if (!hostname) throw new ToolError(`invalid URL: ${url.href} has no host`, 'bad_arguments');
    const hostAllowed = allow.allowsHost(hostname);
    const literal = parseIp(hostname);
    if (literal) {
      const address = formatIp(literal);
      const why = reasonFor(literal);
      if (why && !hostAllowed && !allow.allowsAddress(address)) throw refusal(hostname, why, address);
      return { url, hostname, addresses: [{ address: hostname, family: literal.length === 4 ? 4 : 6 }] };
    }
    if (!hostAllowed && METADATA_HOSTNAMES.has(hostname.replace(/\.$/, ''))) {
      throw new ToolError(`refused: ${hostname} is a cloud metadata hostname`, 'bad_arguments');
    }
    let addresses: Array<{ address: string; family: number }>;
    try {
      addresses = await resolve(hostname);
    } catch (err) {
      throw new ToolError(`could not resolve ${hostname}: ${(err as Error).message}`, 'backend');
    }
    if (addresses.length === 0) throw new ToolError(`could not resolve ${hostname}: no addresses`, 'backend');
    if (!hostAllowed) {
      for (const a of addresses) {
        const why = blockedAddressReason(a.address);
        if (why && !allow.allowsAddress(a.address)) throw refusal(hostname, why, a.address);
      }
    }
    return { url, hostname, addresses };
  }

  async function withHostSlot<T>(hostname: string, signal: AbortSignal, fn: () => Promise<T>): Promise<T> {
    let sem = slots.get(hostname);
    if (!sem) {
      sem = new Semaphore(perHost);
      slots.set(hostname, sem);
    }
    const held = sem;
    await held.acquire(signal);
    try {
      return await fn();
    } finally {
      held.release();
      if (held.idle && slots.get(hostname) === held) slots.delete(hostname);
    }
  }

  /** One request to a vetted target; resolves with the response once headers arrive. */
  function send(target: Target, headers: Record<string, string>, signal: AbortSignal): Promise<IncomingMessage> {
    const { url, addresses } = target;
    // Hands the socket the verified addresses: no second DNS query between check and connect.
    const lookup: LookupFunction = (_host, options, callback) => {
      const family = options.family === 4 || options.family === 6 ? options.family : 0;
      const candidates = family ? addresses.filter((a) => a.family === family) : addresses;
      if (candidates.length === 0) {
        const err = Object.assign(new Error(`no IPv${family} address for ${target.hostname}`), { code: 'ENOTFOUND' });
        callback(err, '', 0);
        return;
      }
      if (options.all) (callback as unknown as (e: null, a: typeof candidates) => void)(null, candidates);
      else callback(null, candidates[0].address, candidates[0].family);
    };
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const options: RequestOptions & { servername?: string; ca?: string[] } = {
      protocol: url.protocol,
      host: target.hostname,
      port: url.port || undefined,
      path: `${url.pathname}${url.search}`,
      method: 'GET',
      headers: { ...headers, host: url.host },
      lookup,
      agent: false,
      signal,
    };
    if (url.protocol === 'https:') {
      // The certificate is checked against the hostname, not the address connected to.
      if (!isIP(target.hostname)) options.servername = target.hostname;
      if (ca) options.ca = ca;
    }
    return new Promise((resolve, reject) => {
      const req = request(options, resolve);
      req.on('error', reject);
      req.end();
    });
  }

  async function readBody(res: IncomingMessage, where: URL, signal: AbortSignal): Promise<{ buf: Buffer; truncated: boolean }> {
    const encoding = String(res.headers['content-encoding'] ?? '')
      .trim()
      .toLowerCase();
    let stream: Readable = res;
    if (encoding === 'gzip' || encoding === 'x-gzip') stream = res.pipe(createGunzip());
    else if (encoding === 'br') stream = res.pipe(createBrotliDecompress());
    else if (encoding === 'deflate') stream = res.pipe(createInflate());
    if (stream !== res) res.on('error', (err) => stream.destroy(err));
    const chunks: Buffer[] = [];
    let size = 0;
    let truncated = false;
    const onAbort = () => stream.destroy(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        const room = opts.maxBytes - size;
        if (chunk.length >= room) {
          chunks.push(chunk.subarray(0, room));
          size += room;
          // Anything beyond the limit: even exactly-at-limit bodies are marked when more data follows.
          truncated = chunk.length > room || !res.complete;
          break;
        }
        chunks.push(chunk);
        size += chunk.length;
      }
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      throw new ToolError(`reading ${where.href} failed: ${(err as Error).message}`, 'backend');
    } finally {
      signal.removeEventListener('abort', onAbort);
      if (!res.complete || stream !== res) {
        res.destroy();
        if (stream !== res) stream.destroy();
      }
    }
    return { buf: Buffer.concat(chunks, size), truncated };
  }

  return async function fetchPage(url, fetchOpts = {}) {
    const controller = new AbortController();
    const callerSignal = fetchOpts.signal;
    const onCallerAbort = () => controller.abort(callerSignal?.reason);
    if (callerSignal?.aborted) throw callerSignal.reason;
    callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
    const timer = setTimeout(() => controller.abort(new TimeoutError()), opts.timeoutMs);
    const signal = controller.signal;
    const headers: Record<string, string> = {
      'user-agent': userAgent,
      accept: 'text/html,application/xhtml+xml,application/json;q=0.9,text/plain;q=0.8,*/*;q=0.5',
      'accept-encoding': 'gzip, deflate, br',
      ...Object.fromEntries(Object.entries(fetchOpts.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v])),
    };
    try {
      let current: string | URL = url;
      let hops = 0;
      for (;;) {
        const target = await vet(current);
        const result = await withHostSlot<{ page: FetchedPage } | { redirect: URL }>(target.hostname, signal, async () => {
          let res: IncomingMessage;
          try {
            res = await send(target, headers, signal);
          } catch (err) {
            if (signal.aborted) throw signal.reason;
            throw new ToolError(`request to ${target.url.host} failed: ${(err as Error).message}`, 'backend');
          }
          const status = res.statusCode ?? 0;
          const location = res.headers.location;
          if (status >= 300 && status < 400 && location) {
            res.destroy();
            try {
              return { redirect: new URL(location, target.url) };
            } catch {
              throw new ToolError(`${target.url.href} redirected to an invalid URL: ${location}`, 'backend');
            }
          }
          const { buf, truncated } = await readBody(res, target.url, signal);
          const contentType = String(res.headers['content-type'] ?? '');
          const page: FetchedPage = { url: target.url.href, status, contentType, body: decode(buf, contentType), bytes: buf.length, truncated };
          return { page };
        });
        if ('page' in result) return result.page;
        if (hops++ >= maxRedirects) throw new ToolError(`too many redirects (more than ${maxRedirects}) from ${String(url)}`, 'backend');
        current = result.redirect;
      }
    } catch (err) {
      if (err instanceof TimeoutError || (signal.aborted && signal.reason instanceof TimeoutError && !callerSignal?.aborted)) {
        throw new ToolError(`fetching ${String(url)} timed out after ${opts.timeoutMs} ms`, 'backend');
      }
      throw err;
    } finally {
      clearTimeout(timer);
      callerSignal?.removeEventListener('abort', onCallerAbort);
    }
  };
}

function refusal(hostname: string, why: string, address: string): ToolError {
  const article = /^[aeiou]/.test(why) ? 'an' : 'a';
  const what =
    hostname === address || parseIp(hostname) ? `${hostname} is ${article} ${why} address` : `${hostname} resolves to ${article} ${why} address (${address})`;
  return new ToolError(`refused: ${what}`, 'bad_arguments');
}

/** Decodes a body with the charset of its Content-Type (UTF-8 when absent or unknown). */
function decode(buf: Buffer, contentType: string): string {
  const charset = contentType
    .split(';')
    .map((p) => p.trim())
    .find((p) => p.toLowerCase().startsWith('charset='))
    ?.slice('charset='.length)
    .replace(/^"|"$/g, '');
  if (charset) {
    try {
      return new TextDecoder(charset).decode(buf);
    } catch {
      // Unknown label: fall through to UTF-8.
    }
  }
  return new TextDecoder('utf-8').decode(buf);
}

/** Builds the web tools' client from the environment (TOOLS_HTTP_ALLOW_HOSTS) with the given limits. */
export function safeFetchFromEnv(env: Record<string, string | undefined> = process.env, limits: Partial<Omit<SafeFetchOptions, 'allowHosts'>> = {}): FetchPage {
  return createSafeFetch({
    allowHosts: env.TOOLS_HTTP_ALLOW_HOSTS ? [env.TOOLS_HTTP_ALLOW_HOSTS] : [],
    maxBytes: 5 * 1024 * 1024,
    timeoutMs: 20_000,
    perHostConcurrency: 2,
    ...limits,
  });
}
