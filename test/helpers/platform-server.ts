/**
 * A local stand-in for the chat platforms' outbound APIs (PLATFORM_A_API_URL and
 * PLATFORM_B_API_URL point here): records every request, and answers from a script of
 * failures before succeeding (status codes, Retry-After, platform_a `{ok: false}` errors).
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface PlatformCall {
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
  at: number;
}

/** One scripted answer: an HTTP status (with optional Retry-After seconds) or a platform_a error body. */
export type Scripted = { status: number; retryAfter?: number } | { okFalse: string };

export interface PlatformServer {
  url: string;
  calls: PlatformCall[];
  /** Answers for the next requests, in order; then 200 `{ok: true}`. */
  script(...answers: Scripted[]): void;
  /** Calls that succeeded (answered 200 ok). */
  delivered(): PlatformCall[];
  close(): Promise<void>;
}

export async function startPlatformServer(): Promise<PlatformServer> {
  const calls: PlatformCall[] = [];
  const ok = new Set<PlatformCall>();
  let queue: Scripted[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        body = Buffer.concat(chunks).toString('utf8');
      }
      const call: PlatformCall = { path: req.url ?? '', headers: req.headers, body, at: Date.now() };
      calls.push(call);
      const next = queue.shift();
      if (next && 'status' in next) {
        res.writeHead(next.status, {
          'content-type': 'application/json',
          ...(next.retryAfter !== undefined ? { 'retry-after': String(next.retryAfter) } : {}),
        });
        res.end(JSON.stringify({ message: 'scripted failure' }));
        return;
      }
      if (next && 'okFalse' in next) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ ok: false, error: next.okFalse }));
        return;
      }
      ok.add(call);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    script: (...answers) => void (queue = [...queue, ...answers]),
    delivered: () => calls.filter((c) => ok.has(c)),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
