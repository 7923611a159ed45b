/**
 * What the roles of one process share (AppContext), the shape of a role (RoleStart), and what
 * startApp hands back (App).
 */
import type { Interceptor, ConnectRouter, Transport } from '@connectrpc/connect';
import type { Tracer } from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { AgentCatalogue } from '../agents/index.js';
import type { Bus } from '../bus/index.js';
import type { Config } from '../config/index.js';
import type { DaemonHub } from '../daemon/index.js';
import type { SupervisedNatsServer } from '../embedded/index.js';
import type { Gateway } from '../gateway/index.js';
import type { Logger } from '../kernel/index.js';
import type { Catalogue, LlmProvider, LlmRouter, UsageStore } from '../llm/index.js';
import type { Reconciler, WaitTimers, Worker } from '../runtime/index.js';
import type { sessionRegistry } from '../sessions/index.js';
import type { loadSkills } from '../skills/index.js';
import type { Sql } from '../store/index.js';
import type { CatalogCheck, TaskStore } from '../tasks/index.js';
import type { loadTemplates } from '../templates/index.js';
import type { ToolRegistry } from '../tools/index.js';
import type { SourceRegistration, ToolSources } from '../toolsources/index.js';

export interface App {
  bus: Bus;
  store: TaskStore;
  gateway?: Gateway;
  worker?: Worker;
  reconciler?: Reconciler;
  /** The durable timers of waits for people (role orchestrator). */
  waitTimers?: WaitTimers;
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
  /** The port of GATEWAY_HEALTH_PORT's or HEALTH_PORT's listener, when set. */
  healthPort?: number;
  natsUrl: string;
  /** The NATS server's version and what an ack means on it (app/nats-durability.ts). */
  natsNote: string;
  /** The supervised embedded nats-server, when NATS_URL is unset. */
  embeddedNats?: SupervisedNatsServer;
  databaseUrl: string;
  stop(): Promise<void>;
}

/** The per-request and per-agent token and cost ceilings (unset: no limit). */
export interface BudgetLimits {
  maxTokensPerRequest?: number;
  maxCostPerRequest?: number;
  tokensPerAgent?: number;
  tokensPerTask?: number;
}

/**
 * What the roles of one process share: opened once before the first role starts, closed
 * after the last one stopped.
 */
export interface AppContext {
  cfg: Config;
  log: Logger;
  /** DATA_DIR, absolute. */
  dataDir: string;
  /** The App being started: roles write their ports and handles into it. */
  app: App;
  bus: Bus;
  store: TaskStore;
  sql: Sql;
  sessions: ReturnType<typeof sessionRegistry>;
  /** The one writer of model-call records (llm_calls) of this process. */
  usage: UsageStore;
  /** The model layer as configured (router, cache)... */
  llmStack: { llm: LlmProvider; router: LlmRouter; catalogue: Catalogue };
  /** ...and what workflows and services call: the stack, or a test's override, behind the budgets when the model layer enforces them. */
  llm: LlmProvider;
  budgetLimits: BudgetLimits;
  templates: ReturnType<typeof loadTemplates>;
  skills: ReturnType<typeof loadSkills>;
  /** The agent catalogue (AGENT_CATALOG_DIR), read once. */
  agents: AgentCatalogue;
  /** Versions of templates and skills by name, and catalogue agents' checked input, for the orchestrator's checks at submission. */
  catalogs: CatalogCheck & { agent: NonNullable<CatalogCheck['agent']> };
  /** One tool registry for the workflows, the agent service and the /api/v1/tools routes (roles worker, agent, gateway). */
  tools?: ToolRegistry;
  /**
   * The tools one owner may use: `tools` with the operator's MCP servers' tools and the
   * owner's own sources' added (where a registry exists).
   */
  toolsFor?: (userId: string | undefined) => Promise<ToolRegistry>;
  /** MCP servers and OpenAPI documents: the pool of connections and users' registrations. */
  toolSources?: { sources: ToolSources; registration: SourceRegistration };
  /** The internal RPC token (configured, or generated once in DATA_DIR); asked for only by roles that use it. */
  internalRpcToken(): string;
  /** The orchestrator's Connect routes and server interceptors, when that role runs in this process. */
  rpc: { routes?: (r: ConnectRouter) => void; interceptors: Interceptor[] };
  /** How this process reaches the orchestrator (in memory, ORCHESTRATOR_URL, or localhost). */
  orchestratorTransport(): Transport;
  /** This process's tracer (src/tracing): a no-op one when traces go nowhere. */
  tracer: Tracer;
}

/** What a caller of startApp puts in place of the configured parts (tests, benchmarks). */
export interface AppOverrides {
  /** The model layer (the budgets still wrap it). */
  llm?: LlmProvider;
  /** Where spans go instead of OTLP, each as it ends (tests: an InMemorySpanExporter). */
  spanExporter?: SpanExporter;
}

/** Stops what a role started; resolves once it is stopped. */
export type RoleStop = () => Promise<void>;

/** Starts a role on the shared context; resolves to its stop once it runs. */
export type RoleStart = (ctx: AppContext) => Promise<RoleStop>;
