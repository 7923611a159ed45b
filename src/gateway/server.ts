/**
 * Gateway: the public HTTP surface on uWebSockets.js — REST /api/v1, SSE and WebSocket
 * streams, the OpenAI-compatible /v1 layer (openai/), health, readiness and /openapi.json.
 * Stateless: it reaches the orchestrator only through Connect clients, events only through
 * NATS and the data of sessions, schedules and channels only through those domains' objects
 * (GatewayDomains, built by the process that runs it), so any number of gateways can run.
 *
 * This file wires it: admission (admission.ts: authentication, rate limits, idempotency), one
 * route file per resource (task-routes.ts, session-routes.ts, ...), the streams
 * (stream-routes.ts over the feeds of streams.ts), CORS preflight, the 404 fallback, health,
 * readiness, listen and an orderly close.
 */
import { ConnectError, createClient, type Client, type Transport } from '@connectrpc/connect';
import uWS, { type TemplatedApp, type us_listen_socket } from 'uWebSockets.js';
import type { Bus } from '../bus/index.js';
import { AppError, Code, SYSTEM_CALLER, callAs, timedCheck, type Logger, type Principal } from '../kernel/index.js';
import { OrchestratorService } from '../gen/svc/v1/orchestrator_pb.js';
import type { ToolRegistry } from '../tools/index.js';
import type { SourceRegistration } from '../toolsources/index.js';
import type { SkillCatalog } from '../skills/index.js';
import type { AuthService } from '../auth/index.js';
import type { AgentCatalogue } from '../agents/index.js';
import { registerAgentRoutes } from './agent-routes.js';
import { Admission } from './admission.js';
import { registerApprovalRoutes } from './approval-routes.js';
import { registerBlobRoutes } from './blob-routes.js';
import { registerReviewRoutes } from './review-routes.js';
import { registerSwarmRoutes } from './swarm-routes.js';
import { registerAuthRoutes } from './auth-routes.js';
import type { GatewayDomains, RouteDeps } from './route-deps.js';
import { registerScheduleRoutes } from './schedule-routes.js';
import { registerSessionRoutes } from './session-routes.js';
import { StreamRoutes, type SseConn } from './stream-routes.js';
import { registerTaskRoutes } from './task-routes.js';
import { registerMcpRoute } from './mcp-route.js';
import { DEFAULT_OPENAI_CONFIG, registerOpenAiRoutes, type OpenAiConfig } from './openai/handlers.js';
import { registerToolRoutes } from './tool-routes.js';
import { registerToolSourceRoutes } from './tool-source-routes.js';
import { registerDaemonRoute, registerDaemonStatusRoute } from './daemon-routes.js';
import type { DaemonHub } from '../daemon/index.js';
import { registerChannelRoutes } from './channel-routes.js';
import { registerSkillRoutes } from './skill-routes.js';
import { registerTimelineRoute } from './timeline-route.js';
import { registerWorkspaceRoutes } from './workspace-routes.js';
import { registerMemoryRoutes } from './memory-routes.js';
import { registerMetricsRoute } from './metrics-route.js';
import { serveConsole } from './console-route.js';
import { copyRequest, corsHeaders, route, writeReply, type CorsPolicy, type Reply } from './http.js';
import { buildOpenApi } from './openapi.js';
import { StreamHub } from './streams.js';

export interface GatewayConfig {
  host: string;
  port: number;
  skipAuth: boolean;
  /** '*' (any), or the allowed origins (none when empty). */
  corsOrigins: '*' | string[];
  ringCapacity: number;
  maxBufferedBytes: number;
  heartbeatSeconds: number;
  inactivitySeconds: number;
  idempotencyTtlSeconds: number;
  version: string;
  rateLimitRequests: number;
  rateLimitWindowSeconds: number;
  taskListBurstPerSecond: number;
  workspaceRoot: string;
  schedules: { maxPerUser: number; minIntervalMinutes: number; maxBudgetUsd: number };
  /** The OpenAI-compatible layer (/v1); default: the spec's limits and the built-in model table. */
  openai?: OpenAiConfig;
}

export interface GatewayDeps {
  bus: Bus;
  transport: Transport;
  /**
   * Tasks, sessions, schedules and channels behind /api/v1 (and readiness's database check);
   * absent when the gateway runs without a database connection.
   */
  domains?: GatewayDomains;
  log: Logger;
  /** Accounts, API keys and JWTs; also the verifier of credentials. */
  authService?: AuthService;
  /** The tool registry behind /api/v1/tools. */
  tools?: ToolRegistry;
  /** The tools one caller may see and run (RouteDeps.toolsFor); absent: `tools` for everyone. */
  toolsFor?: (p: Principal) => Promise<ToolRegistry>;
  /** Users registering MCP servers and OpenAPI documents (tool-source-routes.ts). */
  toolSources?: SourceRegistration;
  /** The skills behind /api/v1/skills. */
  skills?: SkillCatalog;
  /** The agent catalogue behind /api/v1/agents. */
  agents?: AgentCatalogue;
  /** The daemon connections of this process (GET /v1/ws/messages). */
  daemon?: DaemonHub;
}

export class Gateway {
  readonly app: TemplatedApp;
  readonly hub: StreamHub;
  /** Open SSE connections (owned by the stream routes). */
  readonly sse: Set<SseConn>;
  private listenSocket?: us_listen_socket;
  private readonly client: Client<typeof OrchestratorService>;
  private readonly admission: Admission;
  private readonly streams: StreamRoutes;
  private readonly cors: CorsPolicy;
  private readonly offReconnect: () => void;
  port = 0;
  private daemonRoute?: { stop(): void };

  constructor(
    private readonly cfg: GatewayConfig,
    private readonly deps: GatewayDeps,
  ) {
    this.app = uWS.App();
    this.client = createClient(OrchestratorService, deps.transport);
    this.admission = new Admission(cfg, deps);
    this.cors = { origins: cfg.corsOrigins };
    this.hub = new StreamHub(deps.bus.nc, deps.bus.js, deps.bus.jsm, { ringCapacity: cfg.ringCapacity, maxBufferedBytes: cfg.maxBufferedBytes }, deps.log);
    this.offReconnect = deps.bus.onReconnect(() => this.hub.catchUpAll());
    this.streams = new StreamRoutes(cfg, { hub: this.hub, admission: this.admission, orchestrator: this.client, cors: this.cors, log: deps.log });
    this.sse = this.streams.sse;
    this.routes();
  }

  private routes(): void {
    const { app } = this;
    const ctx = { cors: this.cors, log: this.deps.log };
    const admit: RouteDeps['admit'] = (req, o) => this.admission.admit(req, o);

    app.options('/*', (res, req) => {
      const origin = req.getHeader('origin');
      writeReply(res, { status: 204, headers: { 'Access-Control-Max-Age': '600' } }, corsHeaders(this.cors, origin));
    });

    route(app, 'get', '/health', () => this.health(), ctx);
    route(app, 'get', '/readiness', () => this.readiness(), ctx);
    registerMetricsRoute(app, ctx);
    const openapi = JSON.stringify(buildOpenApi(this.cfg.version));
    route(app, 'get', '/openapi.json', () => ({ status: 200, raw: openapi, headers: { 'Content-Type': 'application/json' } }), ctx);

    registerTaskRoutes(app, { ctx, admit, bus: this.deps.bus, orchestrator: this.client, idempotency: this.admission.idempotency });
    registerApprovalRoutes(app, { ctx, admit, orchestrator: this.client });

    if (this.deps.authService) registerAuthRoutes(app, ctx, this.deps.authService, (req) => this.admission.admit(req));
    if (this.deps.domains) {
      const rd: RouteDeps = {
        ctx,
        admit,
        domains: this.deps.domains,
        bus: this.deps.bus,
        orchestrator: this.client,
        log: this.deps.log,
        workspaceRoot: this.cfg.workspaceRoot,
        scheduleLimits: this.cfg.schedules,
        toolsFor: this.deps.toolsFor ?? (this.deps.tools ? async () => this.deps.tools! : undefined),
      };
      registerSessionRoutes(app, rd);
      registerTimelineRoute(app, rd);
      registerWorkspaceRoutes(app, rd);
      registerMemoryRoutes(app, rd);
      registerBlobRoutes(app, rd);
      registerScheduleRoutes(app, rd);
      if (rd.toolsFor) registerToolRoutes(app, { ...rd, toolsFor: rd.toolsFor });
      if (this.deps.toolSources) registerToolSourceRoutes(app, { ...rd, sources: this.deps.toolSources });
      if (this.deps.skills) registerSkillRoutes(app, { ...rd, skills: this.deps.skills });
      if (this.deps.agents) registerAgentRoutes(app, { ...rd, agents: this.deps.agents, tools: this.deps.tools });
      registerMcpRoute(app, { ...rd, hub: this.hub, agents: this.deps.agents, tools: this.deps.tools, version: this.cfg.version });
      registerChannelRoutes(app, rd);
      if (this.deps.domains.review) registerReviewRoutes(app, rd, this.deps.domains.review);
      if (this.deps.domains.swarm) registerSwarmRoutes(app, rd, this.deps.domains.swarm);
    }

    this.streams.register(app);
    if (this.deps.daemon) {
      const auth = this.admission.auth;
      this.daemonRoute = registerDaemonRoute(app, { hub: this.deps.daemon, authenticate: (headers) => auth.authenticate({ headers }), log: this.deps.log });
      registerDaemonStatusRoute(app, { ctx, admit, hub: this.deps.daemon });
    }
    registerOpenAiRoutes(app, {
      ctx,
      auth: this.admission.auth,
      bus: this.deps.bus,
      hub: this.hub,
      orchestrator: this.client,
      sessions: this.deps.domains?.sessionLookup,
      config: this.cfg.openai ?? DEFAULT_OPENAI_CONFIG,
      heartbeatSeconds: this.cfg.heartbeatSeconds,
    });

    app.any('/*', (res, req) => {
      const r = copyRequest(req, 0);
      // The browser console (GET /, /app.js, /app.css): files, not API routes.
      if (serveConsole(res, r, corsHeaders(this.cors, r.headers.origin))) return;
      writeReply(res, { status: 404, body: { error: `Not found: ${r.method} ${r.url}` } }, corsHeaders(this.cors, r.headers.origin));
    });
  }

  /**
   * Liveness with the truth about the bus: without NATS no task can start and no event can
   * be stored, so while the connection is down (the client reconnects on its own; the
   * embedded server is restarted by its supervisor) the answer is 503 `unhealthy`.
   */
  health(): Reply {
    const nats = this.deps.bus.connected ? { ok: true } : { ok: false, error: 'disconnected from NATS; reconnecting' };
    return {
      status: nats.ok ? 200 : 503,
      body: { status: nats.ok ? 'healthy' : 'unhealthy', version: this.cfg.version, time: new Date().toISOString(), checks: { nats } },
    };
  }

  async readiness(): Promise<Reply> {
    const [orchestrator, nats, database] = await Promise.all([
      // A real round trip through the orchestrator and its database: NotFound is the answer.
      timedCheck(() =>
        this.client.getTaskStatus({ taskId: '00000000-0000-0000-0000-000000000000' }, callAs(SYSTEM_CALLER)).then(
          () => undefined,
          (err) => {
            if (ConnectError.from(err).code !== Code.NotFound) throw err;
          },
        ),
      ),
      timedCheck(() => (this.deps.bus.connected ? this.deps.bus.nc.rtt() : Promise.reject(new Error('disconnected from NATS; reconnecting')))),
      this.deps.domains
        ? timedCheck(() => this.deps.domains!.tasks.ping())
        : Promise.resolve({ ok: true, latency_ms: 0, error: 'not checked: no database connection in this process' }),
    ]);
    const ok = orchestrator.ok && nats.ok && database.ok;
    return {
      status: ok ? 200 : 503,
      body: { status: ok ? 'ready' : 'not_ready', version: this.cfg.version, time: new Date().toISOString(), checks: { orchestrator, nats, database } },
    };
  }

  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      this.app.listen(this.cfg.host, this.cfg.port, (sock) => {
        if (!sock) return reject(new AppError(Code.Unavailable, `gateway could not listen on ${this.cfg.host}:${this.cfg.port}`));
        this.listenSocket = sock;
        this.port = uWS.us_socket_local_port(sock);
        this.streams.startTimers();
        resolve(this.port);
      });
    });
  }

  /** Stops accepting; ends open streams so clients reconnect elsewhere with Last-Event-ID. */
  async close(): Promise<void> {
    this.streams.stopTimers();
    this.daemonRoute?.stop();
    if (this.listenSocket) uWS.us_listen_socket_close(this.listenSocket);
    this.listenSocket = undefined;
    this.streams.closeAll();
    this.offReconnect();
    this.hub.close();
    (this.app as unknown as { close?: () => void }).close?.();
  }
}
