/**
 * Wires one process from its configuration: the only module that knows every other one.
 * Roles (ROLES, default all) choose what runs; the embedded defaults start a nats-server
 * and PGlite under DATA_DIR when NATS_URL / DATABASE_URL are unset.
 *
 * Shutdown order: stop taking work (gateway, worker hands its actors back), then the
 * orchestrator, archiver, bus, database and embedded servers.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import type { Server as NetServer } from 'node:net';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient, createRouterTransport, type ConnectRouter, type Interceptor, type Transport } from '@connectrpc/connect';
import { create } from '@bufbuild/protobuf';
import { connectNodeAdapter, createGrpcTransport } from '@connectrpc/connect-node';
import { AuthService } from '../auth/index.js';
import { startScheduler } from '../scheduler/index.js';
import { Archiver, Reconciler, Worker } from '../runtime/index.js';
import { runWorkflow } from '../workflows/index.js';
import { ClaimBoard, DaemonHub } from '../daemon/index.js';
import { ChannelAgentRoute, ChannelOutbox, ChannelRouter, ChannelStore, channelKeyOf } from '../channels/index.js';
import { loadTemplates } from '../templates/index.js';
import { loadSkills } from '../skills/index.js';
import { ToolRegistry, ToolUsageStore, builtinTools } from '../tools/index.js';
import { Workspace } from '../workspace/index.js';
import { requireSession, sessionRegistry } from '../sessions/index.js';
import { TaskStore } from '../tasks/index.js';
import { connectBus, type Bus } from '../bus/index.js';
import { reservedSettingWarnings, type Config } from '../config/index.js';
import {
  EMBEDDED_PG_MAX_CONNECTIONS,
  findNatsServerBinary,
  natsServerVersion,
  startEmbeddedPostgres,
  startSupervisedNatsServer,
  supportsSyncInterval,
  type SupervisedNatsServer,
} from '../embedded/index.js';
import { Gateway } from '../gateway/index.js';
import { OrchestratorService, SubmitTaskRequestSchema } from '../gen/svc/v1/orchestrator_pb.js';
import { StreamingService } from '../gen/svc/v1/streaming_pb.js';
import { SessionService } from '../gen/svc/v1/session_pb.js';
import { AgentService } from '../gen/svc/v1/agent_pb.js';
import { LLMService } from '../gen/svc/v1/llm_pb.js';
import {
  BudgetedProvider,
  CachedProvider,
  LlmCache,
  UsageStore,
  createRouter,
  loadCatalogue,
  startModelService,
  type Catalogue,
  type LlmProvider,
  type LlmRouter,
} from '../llm/index.js';
import { SYSTEM_CALLER, secretFileIn, type Logger } from '../kernel/index.js';
import {
  clientAuthInterceptor,
  createAgentService,
  createLlmService,
  createOrchestratorService,
  createSessionService,
  createStreamingService,
  serverAuthInterceptor,
  transportAs,
} from '../rpc/index.js';
import { connectSql, migrate } from '../store/index.js';

export const VERSION: string = (() => {
  try {
    return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
})();

export interface App {
  bus: Bus;
  store: TaskStore;
  gateway?: Gateway;
  worker?: Worker;
  reconciler?: Reconciler;
  grpcPort?: number;
  /** AgentService's port (role agent; AGENT_GRPC_PORT). */
  agentPort?: number;
  gatewayPort?: number;
  /** The daemon connections of this process (role gateway). */
  daemon?: DaemonHub;
  /** The model router (tier shares, model choice checks). */
  llmRouter?: LlmRouter;
  /** The internal model service's port (role llm). */
  modelServicePort?: number;
  /** GATEWAY_HEALTH_PORT's listener, when set. */
  healthPort?: number;
  natsUrl: string;
  /** The supervised embedded nats-server, when NATS_URL is unset. */
  embeddedNats?: SupervisedNatsServer;
  databaseUrl: string;
  stop(): Promise<void>;
}

/**
 * MODELS_CONFIG_PATH. Its default, ./config/models.yaml, falls back to the catalogue shipped
 * with the package (beside src/ or dist/) when the service is started from another directory.
 */
function modelsConfigPath(cfg: Config): string {
  return shipped(cfg.paths.models, './config/models.yaml');
}

/** A configured path, or (when it is the default and missing here) the copy shipped with the package. */
function shipped(p: string, def: string): string {
  if (p !== def || existsSync(p)) return p;
  return fileURLToPath(new URL(`../../${def.slice(2)}`, import.meta.url));
}

/**
 * The model layer of this process: the router over the catalogue's providers (retries,
 * fallback, the offline provider when no real one is configured), behind the response cache
 * (NATS KV, shared by every worker) when ENABLE_CACHE.
 */
export function createLlm(cfg: Config, bus: Bus, log: Logger): { llm: LlmProvider; router: LlmRouter; catalogue: Catalogue } {
  const catalogue = loadCatalogue(modelsConfigPath(cfg));
  const router = createRouter(catalogue, cfg.llm, { log: log.child({ module: 'llm' }) });
  const llm = cfg.llm.cache.enabled
    ? new CachedProvider(router, new LlmCache(bus.kv.llmCache, { ...cfg.llm.cache, embedderFor: (r) => router.embedderFor(r), log }), (r) => {
        try {
          return router.resolveModelChoice({ tier: r.tier, model: r.model, provider: r.provider }).provider === 'offline';
        } catch {
          return false;
        }
      })
    : router;
  return { llm, router, catalogue };
}

/**
 * /health and /readiness on node:http, for load balancers whose probes speak HTTP/1.0 (the
 * uWebSockets.js build at the edge answers HTTP/1.1 only). Same handlers, same answers.
 */
async function startHealthListener(gateway: Gateway, host: string, port: number): Promise<{ port: number; close(): Promise<void> }> {
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

/** Listens (port 0: any free one) and resolves to the port taken. */
async function listenOn(server: NetServer, host: string, port: number): Promise<number> {
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
async function listenConnect(
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

/** JWT secret: JWT_SECRET, else one generated once and kept in DATA_DIR (single machine). */
function jwtSecretOf(cfg: Config, dataDir: string, log: Logger): string {
  if (cfg.auth.jwtSecret) return cfg.auth.jwtSecret;
  const s = secretFileIn(dataDir, 'jwt-secret', () => randomBytes(48).toString('base64url'));
  if (s.created && cfg.environment === 'prod') log.warn('JWT_SECRET is not set: generated one in DATA_DIR; set JWT_SECRET to share it between gateways');
  return s.value;
}

/** INTERNAL_RPC_TOKEN, else one generated once in DATA_DIR/internal-rpc-token (secretFileIn). */
export function internalRpcTokenOf(cfg: Config, dataDir: string, log: Logger): string {
  if (cfg.rpc.token) return cfg.rpc.token;
  const s = secretFileIn(dataDir, 'internal-rpc-token', () => randomBytes(48).toString('base64url'));
  if (s.created && (cfg.gateway.orchestratorUrl || !['127.0.0.1', '::1', 'localhost'].includes(cfg.rpc.host))) {
    log.warn('INTERNAL_RPC_TOKEN is not set: generated one in DATA_DIR; give every process on another machine the same INTERNAL_RPC_TOKEN');
  }
  if (s.value.length < 32) throw new Error(`${s.file} holds no usable internal RPC token: delete it, or set INTERNAL_RPC_TOKEN`);
  return s.value;
}

function createAuthService(cfg: Config, dataDir: string, store: TaskStore, log: Logger): AuthService {
  return new AuthService(
    store.sql,
    {
      jwtSecret: jwtSecretOf(cfg, dataDir, log),
      accessTtlSeconds: cfg.auth.accessTtlSeconds,
      refreshTtlSeconds: cfg.auth.refreshTtlSeconds,
      apiKeyCacheSeconds: cfg.auth.apiKeyCacheSeconds,
      scrypt: { N: cfg.auth.passwordScryptN, r: 8, p: 1 },
    },
    log,
  );
}

export async function startApp(cfg: Config, log: Logger, overrides: { llm?: LlmProvider } = {}): Promise<App> {
  // Settings of the spec that nothing implements yet: say so rather than pretend.
  for (const w of reservedSettingWarnings(cfg)) log.warn(w);
  const cleanups: (() => Promise<unknown> | unknown)[] = [];
  const stopAll = async () => {
    for (const c of cleanups.reverse()) {
      try {
        await c();
      } catch (err) {
        log.warn({ err }, 'shutdown step failed');
      }
    }
  };
  try {
    const dataDir = resolve(cfg.dataDir);
    let natsUrl = cfg.nats.url;
    let embeddedNats: SupervisedNatsServer | undefined;
    if (!natsUrl) {
      mkdirSync(join(dataDir, 'nats'), { recursive: true });
      // No acknowledged event lost: an ack means written to the store file (survives a kill of
      // the server); with sync_interval "always" (nats-server >= 2.10) also fsynced (survives
      // a power loss). Older servers fsync every 2 minutes: say so.
      const bin = findNatsServerBinary();
      const canSync = supportsSyncInterval(bin ? natsServerVersion(bin) : undefined);
      const syncInterval = cfg.nats.syncInterval ?? (canSync ? 'always' : undefined);
      if (!canSync && !cfg.nats.syncInterval) {
        log.warn(
          'nats-server < 2.10: acknowledged events survive a crash of the server process but not a power loss (fsync every 2 minutes); see deploy/README.md',
        );
      }
      const srv = await startSupervisedNatsServer({ storeDir: join(dataDir, 'nats'), port: 0, host: '127.0.0.1', logger: log, syncInterval });
      cleanups.push(() => srv.stop());
      embeddedNats = srv;
      natsUrl = srv.url;
      log.info({ url: natsUrl }, 'embedded nats-server started');
    }
    let dbUrl = cfg.db.url;
    let maxConn = cfg.db.maxConnections;
    if (!dbUrl) {
      mkdirSync(join(dataDir, 'pglite'), { recursive: true });
      const pg = await startEmbeddedPostgres({ dataDir: join(dataDir, 'pglite') });
      cleanups.push(() => pg.stop());
      dbUrl = pg.url;
      maxConn = EMBEDDED_PG_MAX_CONNECTIONS;
      log.info('embedded PGlite started');
    }
    const sql = connectSql(dbUrl, { max: maxConn, log });
    const sessionDir = sessionRegistry(sql);
    const store = new TaskStore(sql, sessionDir);
    cleanups.push(() => store.close());
    await migrate(sql, log);

    const bus = await connectBus(
      {
        url: natsUrl,
        name: `taskorch-${cfg.instanceId}`,
        replicas: cfg.nats.replicas,
        ackWaitMs: cfg.worker.ackWaitMs,
        maxDeliver: cfg.worker.maxDeliver,
        eventsMaxAgeSeconds: cfg.streaming.eventsMaxAgeSeconds,
        eventsMaxPerWorkflow: Math.max(cfg.streaming.eventsMaxPerWorkflow, 1),
        idempotencyTtlSeconds: cfg.idempotencyTtlSeconds,
      },
      log,
    );
    cleanups.push(() => bus.close());

    const app: App = { bus, store, natsUrl, embeddedNats, databaseUrl: dbUrl, stop: stopAll };
    const toolUsage = new ToolUsageStore(sql, log);
    const stack = createLlm(cfg, bus, log);
    // Workflow templates and skills, read once (a bad file stops start-up naming it).
    const templates = loadTemplates(shipped(cfg.catalogs.templatesDir, './config/templates'));
    const skills = loadSkills(shipped(cfg.catalogs.skillsDir, './config/skills'));
    const catalogs = {
      template: (name: string, version?: string) => templates.get(name, version).version,
      skill: (name: string, version?: string) => skills.get(name, version).version,
    };
    const budgetLimits = {
      maxTokensPerRequest: cfg.budgets.maxTokensPerRequest || undefined,
      maxCostPerRequest: cfg.budgets.maxCostPerRequest || undefined,
      tokensPerAgent: cfg.budgets.tokensPerAgent || undefined,
      tokensPerTask: cfg.budgets.tokensPerTask || undefined,
    };
    // LLM_DISABLE_BUDGETS=0: the model layer enforces the budgets instead of the workflow.
    const llm = cfg.budgets.inWorkflow
      ? (overrides.llm ?? stack.llm)
      : new BudgetedProvider(overrides.llm ?? stack.llm, budgetLimits, new UsageStore(sql, log));
    app.llmRouter = stack.router;
    if (cfg.roles.has('llm')) {
      const usage = new UsageStore(sql, log);
      const ms = await startModelService({
        host: cfg.rpc.host,
        port: cfg.llm.servicePort,
        catalogue: stack.catalogue,
        settings: cfg.llm,
        log,
        // Tier shares of every process's model calls (llm_calls), against the 50/40/10 target;
        // and what this process's router routed.
        metrics: async () => ({
          tier_shares: { window_hours: 24, target: { small: 0.5, medium: 0.4, large: 0.1 }, ...(await usage.tierShares(24)) },
          router_tier_calls: stack.router.tierShares(),
        }),
      });
      app.modelServicePort = ms.port;
      cleanups.push(() => ms.close());
      log.info({ host: cfg.rpc.host, port: ms.port }, 'model service (GET /providers/models) listening');
    }

    // Internal RPC authentication (src/rpc/auth.ts): the same server interceptors on the
    // HTTP/2 port and on the in-memory transport; every client presents the token.
    let rpcToken: string | undefined;
    const internalRpcToken = () => (rpcToken ??= internalRpcTokenOf(cfg, dataDir, log));
    let routes: ((r: ConnectRouter) => void) | undefined;
    let rpcInterceptors: Interceptor[] = [];
    if (cfg.roles.has('orchestrator')) {
      rpcInterceptors = [serverAuthInterceptor(internalRpcToken())];
      const orch = createOrchestratorService({
        bus,
        store,
        log,
        defaultTier: cfg.llm.defaultTier,
        checkModel: (c) => void stack.router.resolveModelChoice(c),
        catalogs,
        templates,
      });
      const streaming = createStreamingService({ bus, store, log });
      const sessionsRpc = createSessionService({ sql: store.sql, tasks: store, log });
      const llmRpc = createLlmService({
        llm,
        usage: new UsageStore(sql, log),
        router: stack.router,
        log,
        defaultTier: cfg.llm.defaultTier,
        maxTokens: cfg.llm.maxTokens,
        temperature: cfg.llm.temperature,
      });
      routes = (r) => {
        r.service(OrchestratorService, orch);
        r.service(StreamingService, streaming);
        r.service(SessionService, sessionsRpc);
        r.service(LLMService, llmRpc);
      };
      const rpcServer = await listenConnect(routes, rpcInterceptors, cfg.rpc.host, cfg.rpc.port);
      app.grpcPort = rpcServer.port;
      cleanups.push(() => rpcServer.close());
      log.info({ host: cfg.rpc.host, port: app.grpcPort }, 'orchestrator (Connect, gRPC, gRPC-Web) listening');
      const reconciler = new Reconciler(bus, store, log);
      reconciler.start();
      app.reconciler = reconciler;
      cleanups.push(() => reconciler.stop());
    }

    if (cfg.roles.has('archiver')) {
      const archiver = new Archiver(bus, store, log);
      await archiver.start();
      cleanups.push(() => archiver.stop());
    }

    // One tool registry for the workflows of this process and the /api/v1/tools routes.
    let tools: ToolRegistry | undefined;
    if (cfg.roles.has('worker') || cfg.roles.has('gateway') || cfg.roles.has('agent')) {
      const registry = new ToolRegistry(builtinTools(cfg.tools, { workspace: new Workspace(resolve(cfg.workspace.root)) }), {
        rateLimits: cfg.tools.rateLimits,
        rateKv: bus.kv.ratelimit,
        log,
        onUsage: (u) => toolUsage.record(u),
      });
      tools = registry;
      cleanups.push(() => registry.close());
    }

    if (cfg.roles.has('worker')) {
      const workflowDeps = {
        templates,
        skills,
        tasks: store,
        sessions: sessionDir,
        llm,
        tools,
        usage: new UsageStore(sql, log),
        partialChunkChars: cfg.workflow.partialChunkChars,
        maxTokens: cfg.llm.maxTokens,
        temperature: cfg.llm.temperature,
        synthBypassSingle: cfg.workflow.synthBypassSingle,
        toolParallelism: cfg.tools.parallelism,
        enableToolSelection: cfg.tools.selection,
        budgets: cfg.budgets.inWorkflow ? budgetLimits : undefined,
        history: {
          windowMessages: cfg.history.windowMessages,
          debugWindowMessages: cfg.history.windowDebugMessages,
          triggerRatio: cfg.history.compressionTriggerRatio,
        },
      };
      const worker = new Worker(
        bus,
        store,
        (ctx, task) => runWorkflow(ctx, workflowDeps, task),
        {
          concurrency: cfg.worker.concurrency,
          ackWaitMs: cfg.worker.ackWaitMs,
          maxDeliver: cfg.worker.maxDeliver,
          taskTimeoutSeconds: cfg.worker.taskTimeoutSeconds,
        },
        log,
      );
      await worker.start();
      app.worker = worker;
      cleanups.push(() => worker.stop());
    }

    // AgentService (not durable: runs live in this process's memory; src/rpc/agent.ts) on its
    // own HTTP/2 port, behind the same internal RPC authentication as the orchestrator's.
    if (cfg.roles.has('agent') && tools) {
      const agentRpc = createAgentService({
        llm,
        usage: new UsageStore(sql, log),
        tools,
        log,
        version: VERSION,
        maxConcurrent: cfg.worker.concurrency,
        defaultTier: cfg.llm.defaultTier,
        maxTokens: cfg.llm.maxTokens,
        temperature: cfg.llm.temperature,
        parallelism: cfg.tools.parallelism,
        partialChunkChars: cfg.workflow.partialChunkChars,
        budgets: cfg.budgets.inWorkflow ? budgetLimits : undefined,
        maxMemoryMb: cfg.tools.python.memoryMb,
        checkModel: (c) => void stack.router.resolveModelChoice(c),
        resolveSession: async (p, id) => (await requireSession(sql, id, p)).id,
      });
      const srv = await listenConnect((r) => r.service(AgentService, agentRpc), [serverAuthInterceptor(internalRpcToken())], cfg.agent.host, cfg.agent.port);
      app.agentPort = srv.port;
      cleanups.push(() => srv.close());
      log.info({ host: cfg.agent.host, port: srv.port }, 'agent service (Connect, gRPC, gRPC-Web) listening');
    }

    // How this process reaches the orchestrator: ORCHESTRATOR_URL over gRPC; in the same
    // process, Connect's in-memory transport (full serialisation, no sockets); else localhost.
    let transport: Transport | undefined;
    const orchestratorTransport = (): Transport => {
      const interceptors = [clientAuthInterceptor(internalRpcToken())];
      return (transport ??= cfg.gateway.orchestratorUrl
        ? createGrpcTransport({ baseUrl: cfg.gateway.orchestratorUrl, interceptors })
        : routes
          ? createRouterTransport(routes, { router: { interceptors: rpcInterceptors }, transport: { interceptors } })
          : createGrpcTransport({ baseUrl: `http://127.0.0.1:${cfg.rpc.port}`, interceptors }));
    };

    if (cfg.roles.has('scheduler')) {
      const scheduler = await startScheduler({
        bus,
        store,
        log,
        // The scheduler submits and cancels schedule runs for their owners: a system caller.
        orchestrator: createClient(OrchestratorService, transportAs(orchestratorTransport(), SYSTEM_CALLER)),
        instanceId: cfg.instanceId,
        maxBudgetUsd: cfg.schedules.maxBudgetUsd,
      });
      cleanups.push(() => scheduler.stop());
    }

    // Daemon connections of this gateway: claims arbitrated through NATS KV (any gateway).
    let daemon: DaemonHub | undefined;
    if (cfg.roles.has('gateway')) {
      const board = await ClaimBoard.open(bus.nc, { ttlSeconds: cfg.daemon.claimTtlSeconds, replicas: cfg.nats.replicas });
      // Channels: inbound messages to the owners' daemons, or to the default agent route when
      // none claims them in time; replies and results posted back through the outbox.
      const outbox = new ChannelOutbox(bus, new ChannelStore(sql, channelKeyOf(cfg.channels.secretKey, cfg.channels.dataDir)), cfg.channels, log);
      await outbox.start();
      cleanups.push(() => outbox.stop());
      // The channel's owner is named by this system caller (as the scheduler does).
      const orchestrator = createClient(OrchestratorService, transportAs(orchestratorTransport(), SYSTEM_CALLER));
      const agentRoute = await ChannelAgentRoute.start({
        bus,
        outbox,
        log,
        tasks: (ids) => store.getTasks(ids),
        submit: async (r) => {
          const res = await orchestrator.submitTask(
            create(SubmitTaskRequestSchema, {
              metadata: { userId: r.userId ?? '', tenantId: r.tenantId ?? '', sessionId: r.sessionId, labels: r.labels },
              query: r.query,
              options: r.skill ? { skill: r.skill } : {},
            }),
            { timeoutMs: 15_000 },
          );
          return res.workflowId;
        },
      });
      cleanups.push(() => agentRoute.stop());
      // The hub's hooks reach the router, which needs the hub: bound once both exist.
      const late: { router?: ChannelRouter } = {};
      daemon = await DaemonHub.start(
        bus.nc,
        board,
        {
          claimTtlSeconds: cfg.daemon.claimTtlSeconds,
          pendingTtlSeconds: cfg.daemon.pendingTtlSeconds,
          deliverReply: (r) => late.router!.deliverReply(r),
          unclaimed: (m, owner) => late.router!.toAgent(m, owner),
        },
        log,
      );
      app.daemon = daemon;
      const hub = daemon;
      cleanups.push(() => hub.stop());
      const router = new ChannelRouter(bus, hub, agentRoute, outbox, log);
      late.router = router;
      await router.start();
      cleanups.push(() => router.stop());
    }

    if (cfg.roles.has('gateway')) {
      const gateway = new Gateway(
        {
          host: cfg.gateway.host,
          port: cfg.gateway.port,
          skipAuth: cfg.gateway.skipAuth,
          // Development: any origin unless a list is configured; staging/prod: only the list.
          corsOrigins: cfg.gateway.corsOrigins.length ? cfg.gateway.corsOrigins : cfg.environment === 'dev' ? '*' : [],
          ringCapacity: Math.max(cfg.streaming.ringCapacity, cfg.streaming.eventsMaxPerWorkflow),
          maxBufferedBytes: cfg.streaming.maxBufferedBytes,
          heartbeatSeconds: cfg.streaming.heartbeatSeconds,
          inactivitySeconds: cfg.streaming.inactivitySeconds,
          idempotencyTtlSeconds: cfg.idempotencyTtlSeconds,
          version: VERSION,
          rateLimitRequests: cfg.gateway.rateLimitRequests,
          rateLimitWindowSeconds: cfg.gateway.rateLimitWindowSeconds,
          taskListBurstPerSecond: cfg.gateway.taskListBurstPerSecond,
          workspaceRoot: resolve(cfg.workspace.root),
          schedules: cfg.schedules,
          channels: cfg.channels,
          openai: cfg.openai,
        },
        { bus, transport: orchestratorTransport(), store, log, authService: createAuthService(cfg, dataDir, store, log), tools, skills, daemon },
      );
      if (cfg.gateway.healthPort !== undefined) {
        const probes = await startHealthListener(gateway, cfg.gateway.host, cfg.gateway.healthPort);
        app.healthPort = probes.port;
        cleanups.push(() => probes.close());
        log.info({ port: probes.port }, 'health probes (HTTP/1.0 and 1.1) listening');
      }
      app.gatewayPort = await gateway.listen();
      app.gateway = gateway;
      // Registered last so it runs first: stop taking requests before anything else.
      cleanups.push(() => gateway.close());
      log.info({ port: app.gatewayPort }, 'gateway listening');
    }
    return app;
  } catch (err) {
    await stopAll();
    throw err;
  }
}

export { startupBanner } from './banner.js';
