/**
 * Role gateway: the daemon connections and channels (channels.ts), the HTTP gateway on
 * GATEWAY_PORT and, with GATEWAY_HEALTH_PORT, the HTTP/1.0 health probes. Stopping closes
 * the gateway first: it stops taking requests before anything behind it goes away.
 */
import { resolve } from 'node:path';
import { AuthService } from '../../auth/index.js';
import { ChannelService } from '../../channels/index.js';
import { ScheduleStore } from '../../scheduler/index.js';
import { Sessions, resolveSession, sessionRegistry } from '../../sessions/index.js';
import { TERMINAL_STATUSES } from '../../kernel/index.js';
import { Mailboxes, SwarmBoard, SwarmMessenger } from '../../swarm/index.js';
import type { DaemonHub } from '../../daemon/index.js';
import { Gateway } from '../../gateway/index.js';
import { WaitStore } from '../../tasks/index.js';
import { ReviewService, ReviewStore } from '../../workflows/index.js';
import { startHealthListener } from '../health-listener.js';
import { jwtSecretOf } from '../secrets.js';
import { Teardown } from '../teardown.js';
import { traceSubmissions } from '../traced-submissions.js';
import type { AppContext, RoleStop } from '../types.js';
import { VERSION } from '../version.js';
import { startChannels } from './channels.js';

/** The gateway, built from the shared context: its settings and what it reaches. */
function createGateway(ctx: AppContext, daemon: DaemonHub, reviews: ReviewStore, swarmBoard: SwarmBoard): Gateway {
  const { cfg, dataDir, store, sql, log } = ctx;
  const authService = new AuthService(
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
  return new Gateway(
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
      openai: cfg.openai,
    },
    {
      bus: ctx.bus,
      transport: traceSubmissions(ctx.orchestratorTransport(), ctx.tracer),
      // The domains the gateway serves, so that it holds no SQL handle of its own.
      domains: {
        tasks: store,
        sessions: new Sessions(sql, store),
        sessionLookup: { resolve: (id, p, o) => resolveSession(sql, id, p, o), create: (ref) => sessionRegistry(sql).createSession(ref) },
        schedules: new ScheduleStore(sql),
        channels: new ChannelService(sql, ctx.bus, cfg.channels, log),
        swarm: new SwarmMessenger(swarmBoard, new Mailboxes(ctx.bus.js, ctx.bus.jsm, ctx.bus.events), async (id) => {
          // A swarm task whose lead has not written its task list yet (queued or planning).
          const t = await store.getTask(id);
          if (!t || t.context.force_swarm !== true || (TERMINAL_STATUSES as readonly string[]).includes(t.status)) return undefined;
          return { user_id: t.user_id ?? '', tenant_id: t.tenant_id ?? '' };
        }),
        review: new ReviewService({
          reviews,
          waits: new WaitStore(sql, store, ctx.bus),
          tasks: store,
          bus: ctx.bus,
          llm: ctx.llm,
          usage: ctx.usage,
          maxTokens: cfg.llm.maxTokens,
          temperature: cfg.llm.temperature,
          log,
        }),
      },
      log,
      authService,
      tools: ctx.tools,
      toolsFor: ctx.toolsFor ? (p) => ctx.toolsFor!(p.userId) : undefined,
      toolSources: ctx.toolSources?.registration,
      skills: ctx.skills,
      agents: ctx.agents,
      daemon,
    },
  );
}

export async function startGatewayRole(ctx: AppContext): Promise<RoleStop> {
  const { cfg, log } = ctx;
  const teardown = new Teardown(log);
  try {
    const channels = await startChannels(ctx);
    teardown.push(() => channels.stop());
    ctx.app.daemon = channels.daemon;
    const gateway = createGateway(ctx, channels.daemon, await ReviewStore.open(ctx.bus), await SwarmBoard.open(ctx.bus));
    if (cfg.gateway.healthPort !== undefined) {
      const probes = await startHealthListener(gateway, cfg.gateway.host, cfg.gateway.healthPort);
      ctx.app.healthPort = probes.port;
      teardown.push(() => probes.close());
      log.info({ port: probes.port }, 'health probes (HTTP/1.0 and 1.1) listening');
    }
    ctx.app.gatewayPort = await gateway.listen();
    ctx.app.gateway = gateway;
    // Pushed last so it runs first: stop taking requests before anything else.
    teardown.push(() => gateway.close());
    log.info({ port: ctx.app.gatewayPort }, 'gateway listening');
  } catch (err) {
    await teardown.run();
    throw err;
  }
  return () => teardown.run();
}
