/** Local HTTP servers and fakes for the web tools' tests (tools-net, tools-web). */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, expect } from 'vitest';
import { createSafeFetch, type HostLookup, type SafeFetchOptions } from '../../src/tools/net.js';
import { type ToolContext, ToolError } from '../../src/tools/tool.js';

export interface Recorded {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export interface TestServer {
  port: number;
  /** http://127.0.0.1:<port> */
  origin: string;
  requests: Recorded[];
  close(): Promise<void>;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => unknown;

/** Servers closed after the file's tests (an https server started by a test goes here too). */
export const servers: Server[] = [];

export async function startServer(handler: Handler, host = '127.0.0.1'): Promise<TestServer> {
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

/** Closes every server a test file started (registered in the importing file's run). */
afterAll(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
});

export function ctx(signal: AbortSignal = new AbortController().signal): ToolContext {
  return { signal };
}

/** The ToolError a promise rejects with (fails the test if it resolves or throws something else). */
export async function toolError(p: Promise<unknown>): Promise<ToolError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(ToolError);
    return err as ToolError;
  }
  throw new Error('expected a ToolError, but the call succeeded');
}

/** A resolver from a fixed table (names not in it fail like NXDOMAIN), counting calls. */
export function fakeLookup(table: Record<string, string[]>): HostLookup & { calls: string[] } {
  const calls: string[] = [];
  const fn = async (host: string) => {
    calls.push(host);
    const addrs = table[host];
    if (!addrs) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return addrs.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(fn, { calls });
}

export function client(over: Partial<SafeFetchOptions> = {}) {
  return createSafeFetch({ allowHosts: [], maxBytes: 1_000_000, timeoutMs: 3_000, perHostConcurrency: 4, ...over });
}
