/**
 * /health and /readiness on node:http, for load balancers whose probes speak HTTP/1.0 (the
 * uWebSockets.js build at the edge answers HTTP/1.1 only). Same handlers, same answers.
 */
import http from 'node:http';
import type { Gateway } from '../gateway/index.js';
import { listenOn } from './listen.js';

export async function startHealthListener(gateway: Gateway, host: string, port: number): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    const reply =
      req.method !== 'GET' && req.method !== 'HEAD'
        ? Promise.resolve({ status: 405, body: { error: 'Method not allowed' } })
        : path === '/health'
          ? Promise.resolve(gateway.health())
          : path === '/readiness'
            ? gateway.readiness()
            : Promise.resolve({ status: 404, body: { error: `Not found: ${req.method} ${path}` } });
    void reply.then((r) => {
      res.writeHead(r.status, { 'Content-Type': 'application/json', Connection: 'close' });
      res.end(req.method === 'HEAD' ? undefined : JSON.stringify(r.body));
    });
  });
  server.keepAliveTimeout = 1000;
  return {
    port: await listenOn(server, host, port),
    close: () =>
      new Promise<void>((res) => {
        server.close(() => res());
        server.closeAllConnections();
      }),
  };
}
