/**
 * /health, /readiness and /metrics on node:http: for load balancers whose probes speak
 * HTTP/1.0 (GATEWAY_HEALTH_PORT: the uWebSockets.js edge answers HTTP/1.1 only; same handlers,
 * same answers), and for processes without a gateway (HEALTH_PORT), which otherwise listen on
 * no HTTP port an orchestrator or Prometheus could probe.
 */
import http from 'node:http';
import type { Bus } from '../bus/index.js';
import { timedCheck } from '../kernel/index.js';
import { scrape } from '../metrics/index.js';
import { listenOn } from './listen.js';
import type { Teardown } from './teardown.js';
import type { AppContext } from './types.js';
import { VERSION } from './version.js';

export interface ProbeReply {
  status: number;
  body?: unknown;
}

/** What answers /health and /readiness: the gateway, or processProbes() where there is none. */
export interface Probes {
  health(): ProbeReply;
  readiness(): Promise<ProbeReply>;
}

interface Answer {
  status: number;
  contentType: string;
  text: string;
}

const asJson = (r: ProbeReply): Answer => ({ status: r.status, contentType: 'application/json', text: JSON.stringify(r.body) });

function answer(method: string | undefined, path: string, probes: Probes): Promise<Answer> {
  if (method !== 'GET' && method !== 'HEAD') return Promise.resolve(asJson({ status: 405, body: { error: 'Method not allowed' } }));
  if (path === '/health') return Promise.resolve(asJson(probes.health()));
  if (path === '/readiness') return probes.readiness().then(asJson);
  if (path === '/metrics') return scrape().then(({ contentType, text }) => ({ status: 200, contentType, text }));
  return Promise.resolve(asJson({ status: 404, body: { error: `Not found: ${method} ${path}` } }));
}

export async function startHealthListener(probes: Probes, host: string, port: number): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    void answer(req.method, path, probes).then(
      (a) => {
        res.writeHead(a.status, { 'Content-Type': a.contentType, Connection: 'close' });
        res.end(req.method === 'HEAD' ? undefined : a.text);
      },
      (err: Error) => {
        res.writeHead(500, { 'Content-Type': 'application/json', Connection: 'close' });
        res.end(JSON.stringify({ error: err.message }));
      },
    );
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

/**
 * The probes of a process without a gateway (a worker, an orchestrator): alive while connected
 * to NATS, as the gateway's /health; ready once its roles have started, with NATS answering a
 * round trip and the database a query (the gateway's own checks, less the orchestrator call
 * that only the gateway makes).
 */
export function processProbes(deps: { bus: Bus; ping(): Promise<unknown>; started(): boolean }): Probes {
  return {
    health() {
      const nats = deps.bus.connected ? { ok: true } : { ok: false, error: 'disconnected from NATS; reconnecting' };
      return {
        status: nats.ok ? 200 : 503,
        body: { status: nats.ok ? 'healthy' : 'unhealthy', version: VERSION, time: new Date().toISOString(), checks: { nats } },
      };
    },
    async readiness() {
      const roles = deps.started() ? { ok: true } : { ok: false, error: 'roles starting or stopping' };
      const [nats, database] = await Promise.all([
        timedCheck(() => (deps.bus.connected ? deps.bus.nc.rtt() : Promise.reject(new Error('disconnected from NATS; reconnecting')))),
        timedCheck(() => deps.ping()),
      ]);
      const ok = roles.ok && nats.ok && database.ok;
      return {
        status: ok ? 200 : 503,
        body: { status: ok ? 'ready' : 'not_ready', version: VERSION, time: new Date().toISOString(), checks: { roles, nats, database } },
      };
    },
  };
}

/**
 * HEALTH_PORT (when set; config refuses it with the gateway role, whose port serves the same):
 * listens from before the roles start, so that liveness holds during a slow start while
 * readiness waits for `started`. Closed by `teardown`. Returns the switch of `started`.
 */
export async function startProcessHealth(ctx: AppContext, teardown: Teardown): Promise<(started: boolean) => void> {
  let started = false;
  const { cfg, log } = ctx;
  if (cfg.healthPort === undefined) return () => {};
  const probes = processProbes({ bus: ctx.bus, ping: () => ctx.store.ping(), started: () => started });
  const listener = await startHealthListener(probes, cfg.gateway.host, cfg.healthPort);
  teardown.push(() => listener.close());
  ctx.app.healthPort = listener.port;
  log.info({ port: listener.port }, 'health, readiness and metrics listening');
  return (s) => {
    started = s;
  };
}
