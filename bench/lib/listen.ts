/**
 * The benchmark's local HTTP servers: no request timeout, 60 s keep-alive, no connection cap
 * (thousands of long streams), listening on 127.0.0.1 at a free port; resolves with the port.
 */
import type { Server } from 'node:http';

export function listenLocal(server: Server, backlog: number): Promise<number> {
  server.requestTimeout = 0;
  server.keepAliveTimeout = 60_000;
  server.maxConnections = Infinity;
  return new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', backlog, () => {
      const addr = server.address();
      resolve(typeof addr === 'object' && addr ? addr.port : 0);
    });
  });
}
