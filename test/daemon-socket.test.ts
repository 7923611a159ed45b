/**
 * The daemon socket's limits on the uWebSockets.js side, with a stand-in hub and a real `ws`
 * client that stops reading: a write not drained within the write timeout closes the
 * connection (the spec's 10 s; 600 ms here through the route's test hook), and a daemon that
 * lets more than the send buffer (64 KB) pile up is refused further frames, which makes the hub
 * close it. Either way the server's memory for it is bounded.
 */
import { afterEach, describe, expect, it } from 'vitest';
import uWS from 'uWebSockets.js';
import WebSocket from 'ws';
import type { DaemonSocket } from '../src/daemon/index.js';
import { DAEMON_SEND_BUFFER, registerDaemonRoute } from '../src/gateway/daemon-routes.js';
import { createLogger } from '../src/kernel/index.js';
import { waitFor } from './helpers/app.js';

let stopAll: (() => void) | undefined;
afterEach(() => stopAll?.());

async function serve(writeTimeoutMs: number) {
  const sockets: DaemonSocket[] = [];
  const closed = new Set<string>();
  const app = uWS.App();
  const route = registerDaemonRoute(app, {
    hub: {
      connect: (s) => void sockets.push(s),
      handle: async () => undefined,
      disconnect: (id) => void closed.add(id),
    },
    authenticate: () => ({ kind: 'user', userId: '00000000-0000-4000-8000-000000000001', tenantId: null }) as never,
    log: createLogger({ level: 'silent' }),
    writeTimeoutMs,
  });
  const listen = await new Promise<uWS.us_listen_socket>((res, rej) => app.listen('127.0.0.1', 0, (t) => (t ? res(t) : rej(new Error('listen failed')))));
  const port = uWS.us_socket_local_port(listen);
  stopAll = () => {
    route.stop();
    uWS.us_listen_socket_close(listen);
  };
  const ws = new WebSocket(`ws://127.0.0.1:${port}/v1/ws/messages`);
  await new Promise<void>((res, rej) => {
    ws.once('open', () => res());
    ws.once('error', rej);
  });
  const sock = await waitFor(async () => sockets[0]);
  // The client stops reading: whatever the server sends piles up in the kernel, then in uWS.
  (ws as unknown as { _socket: { pause(): void } })._socket.pause();
  return { ws, sock, closed };
}

const frame = (n: number) => ({ type: 'message', message_id: String(n), payload: { text: 'x'.repeat(1024) } });

describe('daemon socket limits', () => {
  it('a write not drained within the write timeout closes the connection', async () => {
    const { sock, closed } = await serve(600);
    // Send until uWS itself holds unsent bytes (the kernel buffers are full), staying under the send buffer.
    let n = 0;
    while (!(sock.buffered!() > 0) && n < 100_000) {
      expect(sock.send(frame(n++))).toBe(true);
      if (n % 64 === 0) await new Promise((r) => setImmediate(r));
    }
    expect(sock.buffered!()).toBeGreaterThan(0);
    expect(sock.buffered!()).toBeLessThanOrEqual(DAEMON_SEND_BUFFER);
    const stuckAt = Date.now();
    await waitFor(async () => closed.has(sock.id), 5000, 20);
    expect(Date.now() - stuckAt).toBeGreaterThanOrEqual(500);
  }, 30_000);

  it('a daemon that lets more than the send buffer pile up is refused further frames (the hub then closes it): never buffered without bound', async () => {
    const { sock, closed } = await serve(60_000);
    let refused = false;
    let most = 0;
    for (let n = 0; n < 100_000 && !refused; n++) {
      refused = !sock.send(frame(n));
      most = Math.max(most, sock.buffered!());
      if (n % 64 === 0) await new Promise((r) => setImmediate(r));
    }
    expect(refused).toBe(true);
    // At most one frame past the bound.
    expect(most).toBeLessThanOrEqual(DAEMON_SEND_BUFFER + 2048);
    // DaemonHub.offer closes a connection whose send was refused; this stand-in hub does the same.
    sock.close(1013, 'daemon too slow: send buffer full');
    await waitFor(async () => closed.has(sock.id), 5000, 20);
  }, 30_000);
});
