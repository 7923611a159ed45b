/**
 * The browser console at `/`: GET / answers dist/console/index.html, GET /app.js and
 * GET /app.css the bundle `npm run build` made (scripts/build-console.mjs). They are served from
 * the gateway's fallback (server.ts's catch-all, before its 404), not as routes: the console is
 * no part of the API, so it stays out of the route table and /openapi.json. index.html is
 * revalidated on every load (no-cache); the assets, named in it with their content hash
 * (`?v=<hash>`), are cached for a year and sent gzipped (the build's .gz) to clients that take
 * it. Only these three paths are served, so no API path
 * (/api/..., /v1/..., /health, /metrics, /openapi.json, /mcp) is shadowed. Without a built
 * console, each answers 404 `{"error": ...}` saying to run `npm run build`.
 *
 * The folder is found from this file: src/gateway/ (tests, tsx) and dist/gateway/ (npm start)
 * both sit two levels below the package root, whose dist/console/ it serves.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HttpResponse } from 'uWebSockets.js';
import { writeReply, type Reply, type Req } from './http.js';

export const DEFAULT_CONSOLE_DIR = join(fileURLToPath(new URL('../..', import.meta.url)), 'dist', 'console');

const FILES: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/app.css': { file: 'app.css', type: 'text/css; charset=utf-8' },
};

/** The page may load only its own scripts and styles and talk only to this origin. */
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";

/** Whether an Accept-Encoding header takes gzip (and does not refuse it with q=0). */
export function acceptsGzip(acceptEncoding: string | undefined): boolean {
  return (acceptEncoding ?? '').split(',').some((part) => {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    return (coding === 'gzip' || coding === '*') && (q === undefined || Number(q) > 0);
  });
}

/**
 * The reply for console file `path` ('/', '/app.js', '/app.css') of `dir`; `versioned`: asked for
 * with ?v=<hash>; `gzip`: the client accepts it, so an asset's .gz (written by the build) is sent
 * when there is one.
 */
export async function consoleFile(dir: string, path: string, versioned: boolean, gzip = false): Promise<Reply> {
  const f = FILES[path];
  const zipped = gzip && path !== '/' ? await readFile(join(dir, `${f.file}.gz`)).catch(() => undefined) : undefined;
  let raw: Buffer;
  try {
    raw = zipped ?? (await readFile(join(dir, f.file)));
  } catch {
    return { status: 404, body: { error: 'The console is not built: run `npm run build` (it writes dist/console), then reload' } };
  }
  const headers: Record<string, string> = {
    'Content-Type': f.type,
    'X-Content-Type-Options': 'nosniff',
    'Cache-Control': versioned ? 'public, max-age=31536000, immutable' : 'no-cache',
  };
  if (path !== '/') headers.Vary = 'Accept-Encoding';
  if (zipped) headers['Content-Encoding'] = 'gzip';
  if (path === '/') Object.assign(headers, { 'Content-Security-Policy': CSP, 'Referrer-Policy': 'no-referrer', 'X-Frame-Options': 'DENY' });
  return { status: 200, raw, headers };
}

/**
 * Answers `req` when it asks for a file of the console (GET or HEAD of /, /app.js, /app.css)
 * and says so (true); false for any other request, which the caller answers (404).
 */
export function serveConsole(res: HttpResponse, req: Req, cors: Record<string, string>, dir = DEFAULT_CONSOLE_DIR): boolean {
  if ((req.method !== 'GET' && req.method !== 'HEAD') || !Object.hasOwn(FILES, req.url)) return false;
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  void consoleFile(dir, req.url, req.url !== '/' && req.query.has('v'), acceptsGzip(req.headers['accept-encoding'])).then((reply) => {
    if (!aborted) writeReply(res, req.method === 'HEAD' ? { ...reply, raw: '' } : reply, cors);
  });
  return true;
}
