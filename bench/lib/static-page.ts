/**
 * The console benchmark's reference server (bench/console.ts), in its own process: bare
 * node:http serving a static page from a folder — its index.html at `/` and its app.css at
 * `/app.css` — read once into memory, with the types and cache headers the gateway gives the
 * console's files (index.html revalidated, the hashed stylesheet cached for good). Driven over
 * IPC: `listen` answers the port.
 */
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { serve } from './ipc.js';
import { listenLocal } from './listen.js';

const dir = process.argv[2];
if (!dir) throw new Error('usage: static-page.ts <folder with index.html and app.css>');

const FILES: Record<string, { body: Buffer; type: string; cache: string }> = {
  '/': { body: readFileSync(join(dir, 'index.html')), type: 'text/html; charset=utf-8', cache: 'no-cache' },
  '/app.css': { body: readFileSync(join(dir, 'app.css')), type: 'text/css; charset=utf-8', cache: 'public, max-age=31536000, immutable' },
};

const server = http.createServer((req, res) => {
  const f = FILES[(req.url ?? '/').split('?')[0]];
  if (!f || (req.method !== 'GET' && req.method !== 'HEAD')) {
    res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
    return;
  }
  res.writeHead(200, { 'Content-Type': f.type, 'Content-Length': f.body.length, 'Cache-Control': f.cache, 'X-Content-Type-Options': 'nosniff' });
  res.end(req.method === 'HEAD' ? undefined : f.body);
});

serve({ listen: () => listenLocal(server, 511) }, () => server.close());
