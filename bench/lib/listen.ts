/** Listens on 127.0.0.1 at a free port; resolves with the port (the benchmark's local servers). */
import type { Server } from 'node:net';

export function listenLocal(server: Server, backlog: number): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', backlog, () => {
      const addr = server.address();
      resolve(typeof addr === 'object' && addr ? addr.port : 0);
    });
  });
}
