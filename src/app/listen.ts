/** Listening sockets of the process's servers, and closing them without waiting on idle clients. */
import http2 from 'node:http2';
import type { Server as NetServer } from 'node:net';
import { type ConnectRouter, type Interceptor } from '@connectrpc/connect';
import { connectNodeAdapter } from '@connectrpc/connect-node';

/** Listens (port 0: any free one) and resolves to the port taken. */
export async function listenOn(server: NetServer, host: string, port: number): Promise<number> {
  await new Promise<void>((res, rej) => {
    server.once('error', rej);
    server.listen(port, host, () => res());
  });
  const addr = server.address();
  return typeof addr === 'object' && addr ? addr.port : port;
}

/**
 * An HTTP/2 Connect server (gRPC, gRPC-Web and Connect) for `routes` with `interceptors`;
 * close() ends its open client sessions (they would keep it waiting forever).
 */
export async function listenConnect(
  routes: (r: ConnectRouter) => void,
  interceptors: Interceptor[],
  host: string,
  port: number,
): Promise<{ port: number; close(): Promise<void> }> {
  const server = http2.createServer(connectNodeAdapter({ routes, interceptors }));
  const sessions = new Set<http2.Http2Session>();
  server.on('session', (s) => {
    sessions.add(s);
    s.once('close', () => sessions.delete(s));
  });
  return {
    port: await listenOn(server, host, port),
    close: () =>
      new Promise<void>((res) => {
        server.close(() => res());
        for (const s of sessions) s.close();
        setTimeout(() => sessions.forEach((s) => s.destroy()), 2000).unref();
      }),
  };
}
