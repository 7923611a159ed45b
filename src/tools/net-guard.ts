/**
 * The SSRF guard shared by the tools' HTTP clients (`./net.ts` for pages, `./net-fetch.ts` for
 * any request): which addresses are refused, the operator's exemptions, and the vetting of one
 * URL before a connection is made.
 *
 * A model (or a user registering a tool source) chooses the URLs these clients fetch, so a URL
 * may point at the service's own network: loopback, private ranges, the cloud metadata endpoint
 * (169.254.169.254). `createUrlVetter` resolves the host once and refuses the URL if ANY of its
 * addresses is not a public unicast address; `pinnedRequestOptions` then connects to the
 * addresses that were checked (the socket's `lookup` hands them back instead of asking DNS
 * again), so a name that resolves to a public address for the check and to a private one for
 * the connection (DNS rebinding) cannot slip through. The Host header and the TLS server name
 * stay the URL's hostname. Callers vet every hop, redirects included.
 *
 * `TOOLS_HTTP_ALLOW_HOSTS` (hostnames, `*.suffix` patterns, IP addresses or CIDRs) exempts hosts
 * or address ranges from the guard, for operators with intranet sources and for tests.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import type { IncomingMessage, RequestOptions } from 'node:http';
import { isIP, type LookupFunction } from 'node:net';
import type { Readable } from 'node:stream';
import { rootCertificates } from 'node:tls';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import ipaddr from 'ipaddr.js';
import { ToolError } from './tool.js';

/** Resolves a hostname to all of its addresses (`dns.lookup(host, { all: true })` by default). */
export type HostLookup = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

export interface UrlGuardOptions {
  /** Hostnames (`example.com`, `*.example.com`), IP addresses or CIDRs exempt from the guard. */
  allowHosts: string[];
  /** Name resolution, replaceable in tests (default: `dns.lookup` with `all: true`). */
  lookup?: HostLookup;
}

/** Hostnames of cloud metadata services, refused whatever they resolve to. */
const METADATA_HOSTNAMES = new Set(['metadata.google.internal', 'metadata.goog', 'metadata', 'instance-data', 'instance-data.ec2.internal']);

// ---------------------------------------------------------------------------------------------
// Addresses

type Ip = ipaddr.IPv4 | ipaddr.IPv6;
type Range = [Ip, number];

/**
 * Parses an IPv4 or IPv6 address (brackets and an IPv6 zone id allowed), or null. Only the
 * canonical forms: ipaddr.js alone would also read `127.1` or `0x7f.0.0.1`, which no resolver
 * returns and which the URL parser has already normalised.
 */
function parseIp(s: string): Ip | null {
  const bare = s.startsWith('[') && s.endsWith(']') ? s.slice(1, -1) : s;
  const zone = bare.indexOf('%');
  const plain = zone >= 0 ? bare.slice(0, zone) : bare;
  const family = isIP(plain);
  if (family === 0 || (zone >= 0 && family !== 6)) return null;
  return ipaddr.parse(plain);
}

const matches = (ip: Ip, [net, bits]: Range) => ip.kind() === net.kind() && ip.match(net, bits);

/** Ranges that are not public unicast, by the word used in refusals (first match wins). */
const BLOCKED_V4: Record<string, Array<[ipaddr.IPv4, number]>> = Object.fromEntries(
  Object.entries({
    unspecified: ['0.0.0.0/8'],
    private: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16'],
    'shared (CGNAT)': ['100.64.0.0/10'],
    loopback: ['127.0.0.0/8'],
    'link-local': ['169.254.0.0/16'],
    reserved: ['192.0.0.0/24', '192.0.2.0/24', '192.88.99.0/24', '198.18.0.0/15', '198.51.100.0/24', '203.0.113.0/24', '240.0.0.0/4'],
    multicast: ['224.0.0.0/4'],
  }).map(([why, cidrs]) => [why, cidrs.map((c) => ipaddr.IPv4.parseCIDR(c))]),
);

const v6 = (c: string): Range => ipaddr.IPv6.parseCIDR(c);
const V6 = {
  nat64: v6('64:ff9b::/96'),
  sixToFour: v6('2002::/16'),
  globalUnicast: v6('2000::/3'),
};
/** IPv6 ranges refused outright, checked in order after the ones that carry an IPv4 address. */
const BLOCKED_V6: Array<[Range, string]> = [
  [v6('64:ff9b:1::/48'), 'private'],
  [v6('fc00::/7'), 'private'],
  [v6('fe80::/10'), 'link-local'],
  [v6('fec0::/10'), 'private'],
  [v6('ff00::/8'), 'multicast'],
  [v6('2001:db8::/32'), 'reserved'],
];

/** Why an address is refused ('loopback', 'private', ...), or null for a public unicast address. */
function blockedAddressReason(ip: string): string | null {
  const parsed = parseIp(ip);
  return parsed ? reasonFor(parsed) : 'invalid';
}

function reasonFor(ip: Ip): string | null {
  if (ip.kind() === 'ipv4') {
    const why = ipaddr.subnetMatch(ip, BLOCKED_V4, '');
    return why || null;
  }
  const v6ip = ip as ipaddr.IPv6;
  const bytes = v6ip.toByteArray();
  if (bytes.every((x) => x === 0)) return 'unspecified';
  if (bytes.slice(0, 15).every((x) => x === 0) && bytes[15] === 1) return 'loopback';
  // Addresses that carry an IPv4 address are judged by it.
  if (v6ip.isIPv4MappedAddress()) return reasonFor(v6ip.toIPv4Address());
  if (matches(v6ip, V6.nat64)) return reasonFor(new ipaddr.IPv4(bytes.slice(12)));
  if (matches(v6ip, V6.sixToFour)) return reasonFor(new ipaddr.IPv4(bytes.slice(2, 6)));
  for (const [range, why] of BLOCKED_V6) if (matches(v6ip, range)) return why;
  // Everything outside global unicast (IPv4-compatible ::/96, discard 100::/64, ...) is reserved.
  return matches(v6ip, V6.globalUnicast) ? null : 'reserved';
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
  const ranges: Range[] = [];
  for (const e of entries) {
    const [addr, bits] = e.split('/');
    const ip = parseIp(addr);
    if (ip) {
      const max = ip.kind() === 'ipv4' ? 32 : 128;
      const n = bits === undefined ? max : Number(bits);
      if (!Number.isInteger(n) || n < 0 || n > max) throw new Error(`TOOLS_HTTP_ALLOW_HOSTS: bad prefix length in ${e}`);
      ranges.push([ip, n]);
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
      const v4 = b.kind() === 'ipv6' && (b as ipaddr.IPv6).isIPv4MappedAddress() ? (b as ipaddr.IPv6).toIPv4Address() : null;
      return ranges.some((r) => matches(b, r) || (v4 !== null && matches(v4, r)));
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Vetting and connecting

/** A URL that passed the guard, with the addresses its connection must use. */
export interface VettedTarget {
  url: URL;
  /** Hostname without brackets, lowercase. */
  hostname: string;
  /** Verified addresses to connect to. */
  addresses: Array<{ address: string; family: number }>;
}

/** Checks a URL and resolves its host once; rejects with ToolError('bad_arguments') on refusal. */
export type UrlVetter = (raw: string | URL) => Promise<VettedTarget>;

export function createUrlVetter(opts: UrlGuardOptions): UrlVetter {
  const allow = parseAllowList(opts.allowHosts);
  const resolve: HostLookup = opts.lookup ?? ((host) => dnsLookup(host, { all: true, verbatim: true }));
  return async function vet(raw) {
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
      const address = literal.toString();
      const why = reasonFor(literal);
      if (why && !hostAllowed && !allow.allowsAddress(address)) throw refusal(hostname, why, address);
      return { url, hostname, addresses: [{ address: hostname, family: literal.kind() === 'ipv4' ? 4 : 6 }] };
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
  };
}

function refusal(hostname: string, why: string, address: string): ToolError {
  const article = /^[aeiou]/.test(why) ? 'an' : 'a';
  const what =
    hostname === address || parseIp(hostname) ? `${hostname} is ${article} ${why} address` : `${hostname} resolves to ${article} ${why} address (${address})`;
  return new ToolError(`refused: ${what}`, 'bad_arguments');
}

/** Node's bundled roots plus the operator's extra CAs, or undefined (Node's default) when there are none. */
export function trustedCas(ca: string | string[] | undefined): string[] | undefined {
  return ca ? [...rootCertificates, ...(Array.isArray(ca) ? ca : [ca])] : undefined;
}

/**
 * Request options that connect to a vetted target's checked addresses only (no second DNS
 * query between check and connect); the caller adds method, headers and signal.
 */
export function pinnedRequestOptions(target: VettedTarget, ca: string[] | undefined): RequestOptions & { servername?: string; ca?: string[] } {
  const { url, addresses } = target;
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
  const options: RequestOptions & { servername?: string; ca?: string[] } = {
    protocol: url.protocol,
    host: target.hostname,
    port: url.port || undefined,
    path: `${url.pathname}${url.search}`,
    lookup,
    agent: false,
  };
  if (url.protocol === 'https:') {
    // The certificate is checked against the hostname, not the address connected to.
    if (!isIP(target.hostname)) options.servername = target.hostname;
    if (ca) options.ca = ca;
  }
  return options;
}

/** The response body decoded by its Content-Encoding (gzip, deflate, br), or the response itself. */
export function decodedBody(res: IncomingMessage): Readable {
  const encoding = String(res.headers['content-encoding'] ?? '')
    .trim()
    .toLowerCase();
  let stream: Readable = res;
  if (encoding === 'gzip' || encoding === 'x-gzip') stream = res.pipe(createGunzip());
  else if (encoding === 'br') stream = res.pipe(createBrotliDecompress());
  else if (encoding === 'deflate') stream = res.pipe(createInflate());
  if (stream !== res) res.on('error', (err) => stream.destroy(err));
  return stream;
}
