/**
 * Opens what the roles of one process share (AppContext): the embedded servers when not
 * configured, the database (migrated) and the bus, the model layer, the catalogues, the tool
 * registry, the internal RPC token and the way to the orchestrator. Everything opened is
 * registered on `teardown`, which closes it after the roles have stopped.
 */
import { resolve } from 'node:path';
import { createRouterTransport, type Transport } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { checkAgentInput, loadAgentCatalogue } from '../agents/index.js';
import { connectBus } from '../bus/index.js';
import type { Config } from '../config/index.js';
import { badRequest, type Logger } from '../kernel/index.js';
import { BudgetedProvider, UsageStore } from '../llm/index.js';
import { watchProcess } from '../metrics/index.js';
import { clientAuthInterceptor } from '../rpc/index.js';
import { sessionRegistry } from '../sessions/index.js';
import { loadSkills } from '../skills/index.js';
import { SWARM_DISABLED } from '../swarm/index.js';
import { connectSql, migrate } from '../store/index.js';
import { TaskStore } from '../tasks/index.js';
import { loadTemplates } from '../templates/index.js';
import { ToolRegistry, ToolUsageStore, builtinTools } from '../tools/index.js';
import { startTracing } from '../tracing/index.js';
import { Workspace } from '../workspace/index.js';
import { createDirectTransport } from './direct-transport.js';
import { startBackends } from './embedded.js';
import { natsDurability } from './nats-durability.js';
import { createLlm } from './llm-stack.js';
import { internalRpcTokenOf } from './secrets.js';
import { shipped } from './shipped.js';
import { toolModel } from './tool-model.js';
import { openToolSources } from './tool-sources.js';
import type { Teardown } from './teardown.js';
import type { App, AppContext, AppOverrides, BudgetLimits } from './types.js';
import { VERSION } from './version.js';

export async function openContext(cfg: Config, log: Logger, teardown: Teardown, stop: () => Promise<void>, overrides: AppOverrides): Promise<AppContext> {
  const tracing = await startTracing({
    serviceName: cfg.otel.serviceName,
    instanceId: cfg.instanceId,
    version: VERSION,
    endpoint: cfg.otel.tracesEndpoint,
    headers: cfg.otel.headers,
    exporter: overrides.spanExporter,
  });
  // First in, last out: the spans that end while everything else stops are exported too.
  teardown.push(() => tracing.shutdown());
  if (tracing.enabled) log.info({ endpoint: cfg.otel.tracesEndpoint, service: cfg.otel.serviceName }, 'traces exported over OTLP');
  const dataDir = resolve(cfg.dataDir);
  const backends = await startBackends(cfg, dataDir, log, teardown);
  const sql = connectSql(backends.databaseUrl, { max: backends.maxConnections, log });
  const sessions = sessionRegistry(sql);
  const store = new TaskStore(sql, sessions);
  teardown.push(() => store.close());
  await migrate(sql, log);

  const bus = await connectBus(
    {
      url: backends.natsUrl,
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
  teardown.push(() => bus.close());
  teardown.push(watchProcess(bus));

  const natsNote = natsDurability({
    version: bus.nc.info?.version,
    embedded: !!backends.embeddedNats,
    syncInterval: backends.natsSyncInterval,
    replicas: cfg.nats.replicas,
  });
  log.info({ nats: natsNote }, 'bus durability');
  const app: App = { bus, store, natsUrl: backends.natsUrl, natsNote, embeddedNats: backends.embeddedNats, databaseUrl: backends.databaseUrl, stop };
  const usage = new UsageStore(sql, log);
  const llmStack = createLlm(cfg, bus, log, tracing.tracer);
  app.llmRouter = llmStack.router;
  // Workflow templates and skills, read once (a bad file stops start-up naming it).
  const templates = loadTemplates(shipped(cfg.catalogs.templatesDir, './config/templates'));
  const skills = loadSkills(shipped(cfg.catalogs.skillsDir, './config/skills'));
  const agents = loadAgentCatalogue(shipped(cfg.catalogs.agentsDir, './config/agents'), { named: cfg.catalogs.agentsDirNamed });
  const budgetLimits: BudgetLimits = {
    maxTokensPerRequest: cfg.budgets.maxTokensPerRequest || undefined,
    maxCostPerRequest: cfg.budgets.maxCostPerRequest || undefined,
    tokensPerAgent: cfg.budgets.tokensPerAgent || undefined,
    tokensPerTask: cfg.budgets.tokensPerTask || undefined,
  };
  // LLM_DISABLE_BUDGETS=0: the model layer enforces the budgets instead of the workflow.
  const base = overrides.llm ?? llmStack.llm;
  const llm = cfg.budgets.inWorkflow ? base : new BudgetedProvider(base, budgetLimits, usage);

  let tools: ToolRegistry | undefined;
  let toolsFor: AppContext['toolsFor'];
  let toolSources: AppContext['toolSources'];
  // The orchestrator too: a catalogue agent's input is checked against its tool's schema at submission.
  if (cfg.roles.has('worker') || cfg.roles.has('gateway') || cfg.roles.has('agent') || cfg.roles.has('orchestrator')) {
    const toolUsage = new ToolUsageStore(sql, log);
    const registry = new ToolRegistry(
      builtinTools(cfg.tools, {
        workspace: new Workspace(resolve(cfg.workspace.root)),
        model: toolModel(llm, { tier: cfg.llm.defaultTier, maxTokens: cfg.llm.maxTokens, temperature: cfg.llm.temperature }),
        blobs: bus.kv.blobs,
      }),
      {
        rateLimits: cfg.tools.rateLimits,
        rateKv: bus.kv.ratelimit,
        log,
        onUsage: (u) => toolUsage.record(u),
        tracer: tracing.tracer,
      },
    );
    tools = registry;
    teardown.push(() => registry.close());
    // Every catalogue agent's tool is a registered one (else start-up fails naming both).
    agents.checkTools(registry);
    toolSources = openToolSources(cfg, sql, bus, log);
    const { sources } = toolSources;
    teardown.push(() => sources.close());
    toolsFor = (userId) => sources.registryFor(registry, userId);
  }

  let rpcToken: string | undefined;
  const internalRpcToken = () => (rpcToken ??= internalRpcTokenOf(cfg, dataDir, log));
  const rpc: AppContext['rpc'] = { interceptors: [] };
  // ORCHESTRATOR_URL over gRPC; in the same process, the implementation called directly
  // through both sides' interceptors (streaming calls: Connect's in-memory transport, full
  // serialisation, no sockets); else localhost. Asked for after the orchestrator role started.
  let transport: Transport | undefined;
  const orchestratorTransport = (): Transport => {
    const interceptors = [clientAuthInterceptor(internalRpcToken())];
    if (transport) return transport;
    if (cfg.gateway.orchestratorUrl) return (transport = createGrpcTransport({ baseUrl: cfg.gateway.orchestratorUrl, interceptors }));
    if (!rpc.routes) return (transport = createGrpcTransport({ baseUrl: `http://127.0.0.1:${cfg.rpc.port}`, interceptors }));
    const fallback = createRouterTransport(rpc.routes, { router: { interceptors: rpc.interceptors }, transport: { interceptors } });
    return (transport = createDirectTransport({ routes: rpc.routes, clientInterceptors: interceptors, serverInterceptors: rpc.interceptors, fallback }));
  };

  return {
    cfg,
    log,
    dataDir,
    app,
    bus,
    store,
    sql,
    sessions,
    usage,
    llmStack,
    llm,
    budgetLimits,
    templates,
    skills,
    agents,
    catalogs: {
      template: (name, version) => templates.get(name, version).version,
      skill: (name, version) => skills.get(name, version).version,
      agent: (id, input) => {
        const a = agents.get(id);
        // The agent's rules, then its tool's own schema (the registry exists wherever the orchestrator runs).
        return { id: a.id, tool: a.tool, input: checkAgentInput(a, input, (tool, args) => tools?.argumentProblem(tool, args)) };
      },
      swarm: () => {
        if (!cfg.features.swarm.enabled) throw badRequest(SWARM_DISABLED);
      },
    },
    tools,
    toolsFor,
    toolSources,
    internalRpcToken,
    rpc,
    orchestratorTransport,
    tracer: tracing.tracer,
  };
}
