/**
 * GET /v1/ws/messages: the daemon WebSocket. Authentication before the upgrade (the same
 * credentials as the REST API; failure is 401 and no upgrade); then `connected`. Frames are
 * JSON envelopes `{type, message_id, payload}` handled by the DaemonHub (src/daemon). Limits of
 * the spec: a ping every 20 s and the connection closed without a pong (or any frame) in 60 s;
 * a frame over 64 KB closes the connection; invalid JSON is ignored; the send buffer is bounded
 * (64 KB) and a write must drain within 10 s (the write timeout): a daemon that does not read
 * is disconnected, never allowed to grow memory.
 *
 * GET /api/v1/daemon/status: the caller's connected daemons on every gateway (src/daemon
 * presence.ts), authenticated and rate-limited like the REST API.
 */
import type { TemplatedApp, WebSocket } from 'uWebSockets.js';
import { STATUS_MAX_WAIT_MS, STATUS_STALL_MS, newConnId, type DaemonHub, type Owner } from '../daemon/index.js';
import type { Logger, Principal } from '../kernel/index.js';
import { route, upgradeWhen } from './http.js';
import { admitted, type RouteDeps } from './route-deps.js';

interface Data {
  connId: string;
  owner: Owner;
}

export const DAEMON_MAX_FRAME = 64 * 1024;
export const DAEMON_SEND_BUFFER = 64 * 1024;
export const DAEMON_PING_MS = 20_000;
/** A write still not drained after this long closes the connection. */
export const DAEMON_WRITE_TIMEOUT_MS = 10_000;

export function registerDaemonRoute(
  app: TemplatedApp,
  d: {
    hub: Pick<DaemonHub, 'connect' | 'handle' | 'disconnect'>;
    authenticate: (headers: Record<string, string>) => Principal | Promise<Principal>;
    log: Logger;
    /** Test hook: the write timeout (default DAEMON_WRITE_TIMEOUT_MS). */
    writeTimeoutMs?: number;
  },
): { stop(): void } {
  const open = new Set<WebSocket<Data>>();
  // Connections with unsent bytes, and since when: drained ones leave, stuck ones are closed.
  const backedUp = new Map<WebSocket<Data>, number>();
  const writeTimeoutMs = d.writeTimeoutMs ?? DAEMON_WRITE_TIMEOUT_MS;
  const watchdog = setInterval(
    () => {
      const now = Date.now();
      for (const [ws, since] of backedUp) {
        if (now - since < writeTimeoutMs) continue;
        backedUp.delete(ws);
        try {
          ws.end(1008, 'write timeout');
        } catch {
          /* already closed */
        }
      }
    },
    Math.min(1000, writeTimeoutMs),
  );
  watchdog.unref();
  const pinger = setInterval(() => {
    for (const ws of open) {
      try {
        ws.ping();
      } catch {
        open.delete(ws);
      }
    }
  }, DAEMON_PING_MS);
  pinger.unref();
  app.ws<Data>('/v1/ws/messages', {
    maxPayloadLength: DAEMON_MAX_FRAME,
    maxBackpressure: DAEMON_SEND_BUFFER,
    closeOnBackpressureLimit: 1 as unknown as number,
    // Nothing received (frames or pongs) for 60 s: closed.
    idleTimeout: 60,
    sendPingsAutomatically: false,
    upgrade: (res, rawReq, context) =>
      upgradeWhen<Data>(res, rawReq, context, {
        log: d.log,
        decide: (req) => {
          const data = (p: Principal): Data => ({ connId: newConnId(), owner: { tenantId: p.tenantId ?? null, userId: p.userId ?? null } });
          const p = d.authenticate(req.headers);
          return p instanceof Promise ? p.then(data) : data(p);
        },
      }),
    open: (ws) => {
      open.add(ws);
      const { connId, owner } = ws.getUserData();
      d.hub.connect({
        id: connId,
        owner,
        send: (frame) => {
          if (!open.has(ws) || ws.getBufferedAmount() > DAEMON_SEND_BUFFER) return false;
          const r = ws.send(JSON.stringify(frame));
          if (r === 0 && !backedUp.has(ws)) backedUp.set(ws, Date.now()); // buffered: must drain in time
          return r !== 2;
        },
        buffered: () => (open.has(ws) ? ws.getBufferedAmount() : 0),
        close: (code, reason) => {
          try {
            ws.end(code, reason);
          } catch {
            /* already closed */
          }
        },
      });
    },
    drain: (ws) => {
      // Bytes went out: the timeout counts again from now (a reading daemon is never cut off).
      if (ws.getBufferedAmount() === 0) backedUp.delete(ws);
      else if (backedUp.has(ws)) backedUp.set(ws, Date.now());
    },
    message: (ws, message) => {
      const text = Buffer.from(message).toString('utf8');
      void d.hub.handle(ws.getUserData().connId, text).catch((err: unknown) => d.log.warn({ err }, 'daemon frame failed'));
    },
    close: (ws) => {
      open.delete(ws);
      backedUp.delete(ws);
      d.hub.disconnect(ws.getUserData().connId);
    },
  });
  return {
    stop: () => {
      clearInterval(pinger);
      clearInterval(watchdog);
    },
  };
}

/** GET /api/v1/daemon/status: `{daemons: [{connection_id, connected_since, claims_held}], count}`, oldest connection first. */
export function registerDaemonStatusRoute(app: TemplatedApp, d: Pick<RouteDeps, 'ctx' | 'admit'> & { hub: Pick<DaemonHub, 'status'> }): void {
  route(
    app,
    'get',
    '/api/v1/daemon/status',
    admitted(d.admit, async (_req, p) => {
      const daemons = await d.hub.status({ tenantId: p.tenantId ?? null, userId: p.userId ?? null });
      return { daemons, count: daemons.length };
    }),
    d.ctx,
  );
}

const security = [{ ApiKeyAuth: [] }, { BearerAuth: [] }];
const errorBody = { type: 'object', properties: { error: { type: 'string' } }, required: ['error'] };

/** The daemon routes in /openapi.json. */
export const daemonPaths = {
  '/v1/ws/messages': {
    get: {
      summary: 'Daemon WebSocket: inbound chat messages offered to daemon clients, claimed once',
      description:
        'Authentication before the upgrade (401, no upgrade). Frames are JSON {type, message_id, payload}. Server to client: connected, ' +
        'message {channel, thread_id, sender, text, agent_name, timestamp}, claim_ack {granted}, system {text}. Client to server: claim, ' +
        'progress (extends the claim), reply {channel, thread_id, text, format: text|markdown}, disconnect. The first claim of a message wins ' +
        "on any gateway; a reply is posted to the message's thread through the platform API (a reply from a connection not holding the claim " +
        'gets a system frame); a claim not replied within DAEMON_CLAIM_TTL_SECONDS (60) expires and the message is offered again. Ping every 20 s, ' +
        'closed without a pong in 60 s or on a frame over 64 KB; invalid JSON is ignored.',
      operationId: 'daemonWs',
      security,
      responses: {
        101: { description: 'Switching protocols' },
        401: { description: 'Authentication required', content: { 'application/json': { schema: errorBody } } },
      },
    },
  },
  '/api/v1/daemon/status': {
    get: {
      summary: "The caller's connected daemons (GET /v1/ws/messages), on every gateway of the fleet",
      description:
        'Every gateway holding a connection of the caller answers one NATS request; answers are collected until ' +
        `${STATUS_STALL_MS} ms pass without another (at most ${STATUS_MAX_WAIT_MS} ms). claims_held: claims the connection won that are ` +
        'not replied and whose lease (DAEMON_CLAIM_TTL_SECONDS) has not expired.',
      operationId: 'daemonStatus',
      security,
      responses: {
        200: {
          description: 'OK',
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['daemons', 'count'],
                properties: {
                  daemons: {
                    type: 'array',
                    items: {
                      type: 'object',
                      required: ['connection_id', 'connected_since', 'claims_held'],
                      properties: {
                        connection_id: { type: 'string', format: 'uuid' },
                        connected_since: { type: 'string', format: 'date-time' },
                        claims_held: { type: 'integer', minimum: 0 },
                      },
                    },
                  },
                  count: { type: 'integer', minimum: 0 },
                },
              },
            },
          },
        },
        401: { description: 'Authentication required', content: { 'application/json': { schema: errorBody } } },
        429: { description: 'Rate limit exceeded', content: { 'application/json': { schema: errorBody } } },
      },
    },
  },
};
