/**
 * Role orchestrator: OrchestratorService, StreamingService, SessionService and LLMService on
 * ORCHESTRATOR_GRPC_PORT (Connect, gRPC, gRPC-Web), behind the internal RPC authentication;
 * the same routes serve the in-memory transport of this process (ctx.rpc); the reconciler and
 * the durable timers of waits for people.
 */
import type { ConnectRouter } from '@connectrpc/connect';
import { ApprovalService } from '../../approvals/index.js';
import { LLMService } from '../../gen/svc/v1/llm_pb.js';
import { OrchestratorService } from '../../gen/svc/v1/orchestrator_pb.js';
import { SessionService } from '../../gen/svc/v1/session_pb.js';
import { StreamingService } from '../../gen/svc/v1/streaming_pb.js';
import { createLlmService, createOrchestratorService, createSessionService, createStreamingService, serverAuthInterceptor } from '../../rpc/index.js';
import { Reconciler, WaitTimers } from '../../runtime/index.js';
import { WaitStore } from '../../tasks/index.js';
import { listenConnect } from '../listen.js';
import { Teardown } from '../teardown.js';
import type { AppContext, RoleStop } from '../types.js';

export async function startOrchestratorRole(ctx: AppContext): Promise<RoleStop> {
  const { cfg, log, bus, store, llmStack } = ctx;
  const teardown = new Teardown(log);
  try {
    ctx.rpc.interceptors = [serverAuthInterceptor(ctx.internalRpcToken())];
    const waits = new WaitStore(store.sql, store, bus);
    const orch = createOrchestratorService({
      bus,
      store,
      log,
      defaultTier: cfg.llm.defaultTier,
      checkModel: (c) => void llmStack.router.resolveModelChoice(c),
      catalogs: ctx.catalogs,
      templates: ctx.templates,
      priorityQueues: cfg.priorityQueues,
      approvals: new ApprovalService(waits),
    });
    const streaming = createStreamingService({ bus, store, log });
    const sessionsRpc = createSessionService({ sql: store.sql, tasks: store, log });
    const llmRpc = createLlmService({
      llm: ctx.llm,
      usage: ctx.usage,
      router: llmStack.router,
      log,
      defaultTier: cfg.llm.defaultTier,
      maxTokens: cfg.llm.maxTokens,
      temperature: cfg.llm.temperature,
    });
    const routes = (r: ConnectRouter) => {
      r.service(OrchestratorService, orch);
      r.service(StreamingService, streaming);
      r.service(SessionService, sessionsRpc);
      r.service(LLMService, llmRpc);
    };
    ctx.rpc.routes = routes;
    const rpcServer = await listenConnect(routes, ctx.rpc.interceptors, cfg.rpc.host, cfg.rpc.port);
    teardown.push(() => rpcServer.close());
    ctx.app.grpcPort = rpcServer.port;
    log.info({ host: cfg.rpc.host, port: rpcServer.port }, 'orchestrator (Connect, gRPC, gRPC-Web) listening');
    const reconciler = new Reconciler(bus, store, log);
    reconciler.start();
    ctx.app.reconciler = reconciler;
    teardown.push(() => reconciler.stop());
    const waitTimers = new WaitTimers(waits, log);
    waitTimers.start();
    ctx.app.waitTimers = waitTimers;
    teardown.push(() => waitTimers.stop());
  } catch (err) {
    await teardown.run();
    throw err;
  }
  return () => teardown.run();
}
