/**
 * Configuration: every variable is parsed and validated once, here, into one typed,
 * frozen object. Modules receive the slice they need; no other module reads process.env.
 *
 * Flow: defaults (declared beside each field) -> parse each variable -> validate ->
 * runtime form. A bad value fails start-up with the exact variable name and reason.
 */
import { TIERS } from '../kernel/index.js';
import { bool, internalToken, num, oneOf, optStr, str, unset, type Env } from './env.js';
import { ConfigError } from './errors.js';
import { channelsConfig } from './channels.js';
import { browserConfig } from './browser.js';
import { adsVendorsConfig } from './ads-vendors.js';
import { financeVendorsConfig } from './finance-vendors.js';
import { toolSourcesConfig } from './tool-sources.js';
import { otelConfig } from './otel.js';
import { DEFAULT_FEATURES_PATH, loadFeatures } from './features.js';

export const ROLES = ['gateway', 'orchestrator', 'worker', 'archiver', 'llm', 'agent', 'scheduler'] as const;
export type Role = (typeof ROLES)[number];

/**
 * The provider keys the model catalogue may name (its `api_key_env`): every set variable whose
 * name ends in `_API_KEY`. Only such names are collected, so the catalogue cannot read any
 * other variable of the environment.
 */
function providerKeys(env: Env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, v] of Object.entries(env)) {
    if (/^[A-Z][A-Z0-9_]*_API_KEY$/.test(name) && !unset(v)) out[name] = v.trim();
  }
  return out;
}

function syncInterval(env: Env): string | undefined {
  const v = optStr(env, 'NATS_SYNC_INTERVAL')?.trim();
  if (v === undefined) return undefined;
  if (!unset(env.NATS_URL)) {
    throw new ConfigError(
      'NATS_SYNC_INTERVAL',
      "applies only to the embedded nats-server (NATS_URL unset); set sync_interval in your own server's jetstream block instead",
    );
  }
  if (v !== 'always' && !/^\d+(ms|s|m|h)$/.test(v))
    throw new ConfigError('NATS_SYNC_INTERVAL', `must be "always" or a duration such as 30s or 2m, got ${JSON.stringify(v)}`);
  return v;
}

function healthPort(env: Env, roles: Set<Role>): number | undefined {
  if (unset(env.HEALTH_PORT)) return undefined;
  if (roles.has('gateway'))
    throw new ConfigError(
      'HEALTH_PORT',
      'is for processes without the gateway role; the gateway serves /health, /readiness and /metrics on GATEWAY_PORT (and GATEWAY_HEALTH_PORT)',
    );
  return num(env, 'HEALTH_PORT', 0, { min: 0, max: 65535, int: true });
}

export function loadConfig(env: Env = process.env) {
  const environment = oneOf(env, 'ENVIRONMENT', 'dev', ['dev', 'staging', 'prod'] as const);
  const rolesRaw = str(env, 'ROLES', 'all');
  const roles = new Set<Role>();
  for (const r of rolesRaw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    if (r === 'all') ROLES.forEach((x) => roles.add(x));
    else if ((ROLES as readonly string[]).includes(r)) roles.add(r as Role);
    else throw new ConfigError('ROLES', `unknown role ${JSON.stringify(r)}; known: all, ${ROLES.join(', ')}`);
  }
  if (roles.size === 0) throw new ConfigError('ROLES', `no role given in ${JSON.stringify(rolesRaw)}; known: all, ${ROLES.join(', ')}`);
  const temperature = num(env, 'TEMPERATURE', 0.7, { min: 0, max: 2 });
  const trigger = num(env, 'COMPRESSION_TRIGGER_RATIO', 0.75, { min: 0, max: 1 });
  const llmBaseUrl = optStr(env, 'LLM_BASE_URL') ?? optStr(env, 'OPENAI_BASE_URL');
  const llmApiKey = optStr(env, 'LLM_API_KEY') ?? optStr(env, 'OPENAI_API_KEY');
  const provider = oneOf(env, 'LLM_PROVIDER', llmBaseUrl || llmApiKey ? 'openai' : 'offline', ['offline', 'openai'] as const);
  if (provider === 'openai' && !llmBaseUrl && !llmApiKey) {
    throw new ConfigError('LLM_PROVIDER', 'openai needs LLM_BASE_URL (a compatible server) or LLM_API_KEY (api.openai.com)');
  }
  const corsOrigins = str(env, 'CORS_ALLOWED_ORIGINS', '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

  const cfg = {
    environment,
    debug: bool(env, 'DEBUG', false),
    logLevel: oneOf(env, 'LOG_LEVEL', bool(env, 'DEBUG', false) ? 'debug' : 'info', ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const),
    /** `auto`: human-readable lines when stdout is a terminal, JSON lines otherwise. */
    logFormat: oneOf(env, 'LOG_FORMAT', 'auto', ['auto', 'json', 'pretty'] as const),
    roles,
    /** Where the embedded nats-server store, PGlite database and workspaces live. */
    dataDir: str(env, 'DATA_DIR', './data'),
    instanceId: str(env, 'INSTANCE_ID', `${process.pid}`),
    /**
     * Unset: off. /health, /readiness and /metrics on a node:http listener (GATEWAY_HOST) for a
     * process without the gateway role; the gateway serves them on its own port(s).
     */
    healthPort: healthPort(env, roles),
    nats: {
      /** Unset: start an embedded nats-server with JetStream under dataDir. */
      url: optStr(env, 'NATS_URL'),
      /** Replicas for streams and buckets (3 in a production cluster). */
      replicas: num(env, 'NATS_REPLICAS', 1, { min: 1, max: 5, int: true }),
      /**
       * JetStream fsync policy of the embedded server (`always` or a duration such as `30s`);
       * unset: `always` where the server supports it (nats-server >= 2.10).
       */
      syncInterval: syncInterval(env),
    },
    db: {
      /** Unset: embedded PGlite served on a local socket. */
      url: optStr(env, 'DATABASE_URL'),
      maxConnections: num(env, 'DATABASE_MAX_CONNECTIONS', 10, { min: 1, int: true }),
    },
    gateway: {
      host: str(env, 'GATEWAY_HOST', '0.0.0.0'),
      port: num(env, 'GATEWAY_PORT', num(env, 'PORT', 8080, { min: 0, max: 65535, int: true }), { min: 0, max: 65535, int: true }),
      /**
       * Unset: off. A plain node:http listener for /health and /readiness that also answers
       * HTTP/1.0 probes, which the uWebSockets.js edge cannot (deploy/http-edge.md).
       */
      healthPort: unset(env.GATEWAY_HEALTH_PORT) ? undefined : num(env, 'GATEWAY_HEALTH_PORT', 0, { min: 0, max: 65535, int: true }),
      /** Default on in development; 0 turns authentication on. */
      skipAuth: bool(env, 'GATEWAY_SKIP_AUTH', environment === 'dev'),
      corsOrigins,
      /** Orchestrator address for the Connect clients; unset with the orchestrator role in-process: in-memory Connect transport. */
      orchestratorUrl: optStr(env, 'ORCHESTRATOR_URL'),
      /**
       * Requests per key per window. The spec states both "60 requests per minute per API key
       * (default)" and "RATE_LIMIT_REQUESTS default 100"; the per-key default of 60 is what a
       * client observes, so it wins.
       */
      rateLimitRequests: num(env, 'RATE_LIMIT_REQUESTS', 60, { min: 1, int: true }),
      rateLimitWindowSeconds: num(env, 'RATE_LIMIT_WINDOW', 60, { min: 1, max: 3600, int: true }),
      /** Burst limit on the task list: requests per second per key. */
      taskListBurstPerSecond: num(env, 'RATE_LIMIT_TASK_LIST_BURST', 20, { min: 1, int: true }),
      // The spec's HTTP timeouts (read 30 s, write 30 s, idle 60 s) are not settings:
      // uWebSockets.js 20.30 fixes one ~10 s timer for all three (README, "HTTP timeouts").
    },
    streaming: {
      ringCapacity: num(env, 'STREAMING_RING_CAPACITY', 1000, { min: 16, int: true }),
      /** Seconds between SSE heartbeat comments. */
      heartbeatSeconds: num(env, 'SSE_HEARTBEAT_SECONDS', 15, { min: 1, int: true }),
      /** Close an SSE stream after this long without an event (spec: 5 minutes). */
      inactivitySeconds: num(env, 'SSE_INACTIVITY_SECONDS', 300, { min: 1, int: true }),
      /** Bytes buffered per connection before a slow client is dropped (spec: 1 MB). */
      maxBufferedBytes: num(env, 'STREAM_MAX_BUFFER_BYTES', 1024 * 1024, { min: 1024, int: true }),
      /** How long events stay in JetStream (spec: 24 h). */
      eventsMaxAgeSeconds: num(env, 'EVENTS_MAX_AGE_SECONDS', 24 * 3600, { min: 1, int: true }),
      /** Events kept per workflow in JetStream: at least the spec's ~256-event replay buffer; 1000 = the ring capacity, and margin for the archiver. */
      eventsMaxPerWorkflow: num(env, 'EVENTS_MAX_PER_WORKFLOW', 1000, { min: 16, int: true }),
    },
    rpc: {
      /**
       * Loopback by default: in one process the gateway calls the orchestrator in memory, so
       * nothing outside needs the port. Split deployments set 0.0.0.0 (and INTERNAL_RPC_TOKEN).
       */
      host: str(env, 'GRPC_HOST', '127.0.0.1'),
      port: num(env, 'ORCHESTRATOR_GRPC_PORT', 50052, { min: 0, max: 65535, int: true }),
      /**
       * Shared secret every internal RPC caller presents (`authorization: Bearer <token>`).
       * Unset: one generated once in DATA_DIR/internal-rpc-token, shared by the processes of
       * one machine; processes on different machines must all be given the same value.
       */
      token: internalToken(env, 'INTERNAL_RPC_TOKEN'),
    },
    /** AgentService (role agent): its own HTTP/2 Connect/gRPC port, same host and token as the orchestrator's. */
    agent: {
      host: str(env, 'GRPC_HOST', '127.0.0.1'),
      port: num(env, 'AGENT_GRPC_PORT', 50051, { min: 0, max: 65535, int: true }),
    },
    worker: {
      /**
       * Workflows (and swarm agents) live at once in one worker process. They mostly wait on
       * models and people, so a thousand streaming tasks fit one process (bench `live`); CPU-heavy
       * tools have their own limits (the calculator's and Python's worker threads, browser pages).
       */
      concurrency: num(env, 'WORKER_CONCURRENCY', 1024, { min: 1, int: true }),
      /** JetStream ack wait; a dead worker's task is redelivered after this. Kept alive with in-progress acks. */
      ackWaitMs: num(env, 'WORKER_ACK_WAIT_MS', 15000, { min: 500, int: true }),
      maxDeliver: num(env, 'WORKER_MAX_DELIVER', 10, { min: 1, int: true }),
      /** A workflow that runs longer than this ends in TIMEOUT. */
      taskTimeoutSeconds: num(env, 'TASK_TIMEOUT_SECONDS', 1800, { min: 1, int: true }),
    },
    /**
     * PRIORITY_QUEUES (`off` default, `on`): whether a submission may ask for a priority other
     * than normal (tasks/submit.ts priorityOf). It only chooses where new tasks go: workers
     * drain every priority's queue either way (runtime/task-intake.ts).
     */
    priorityQueues: oneOf(env, 'PRIORITY_QUEUES', 'off', ['on', 'off'] as const) === 'on',
    agents: {
      /**
       * AGENT_TIMEOUT_SECONDS: the longest one agent's execution may take (every agent of a
       * workflow, and AgentService runs that name no config.timeout_seconds); it then ends with
       * a timeout error naming the setting (src/agents/timeout.ts).
       */
      timeoutSeconds: num(env, 'AGENT_TIMEOUT_SECONDS', 600, { min: 1, int: true }),
    },
    llm: {
      provider,
      baseUrl: llmBaseUrl,
      apiKey: llmApiKey,
      defaultModel: optStr(env, 'LLM_MODEL'),
      defaultTier: oneOf(env, 'DEFAULT_MODEL_TIER', 'small', TIERS),
      maxTokens: num(env, 'MAX_TOKENS', 2000, { min: 1, int: true }),
      temperature,
      requestTimeoutMs: num(env, 'LLM_TIMEOUT_MS', 120000, { min: 100, int: true }),
      /** Offline provider pacing: milliseconds per streamed chunk (0 = as fast as possible). */
      offlineChunkDelayMs: num(env, 'OFFLINE_LLM_CHUNK_DELAY_MS', 0, { min: 0, int: true }),
      /** LLM_PROVIDER=offline given explicitly: every call is served by the offline provider, whatever keys are set. */
      offlineOnly: !unset(env.LLM_PROVIDER) && provider === 'offline',
      /** Values of the `*_API_KEY` variables, by name: the keys the catalogue's providers name (api_key_env). */
      providerKeys: providerKeys(env),
      /** Response cache (NATS KV, shared by workers). */
      cache: {
        enabled: bool(env, 'ENABLE_CACHE', true),
        /** Cosine similarity at or above which a similar earlier request's answer is reused. */
        similarityThreshold: num(env, 'CACHE_SIMILARITY_THRESHOLD', 0.95, { min: 0, max: 1 }),
      },
      /** The internal model service (GET /providers/models). */
      servicePort: num(env, 'LLM_SERVICE_PORT', 8000, { min: 0, max: 65535, int: true }),
    },
    history: {
      windowMessages: num(env, 'HISTORY_WINDOW_MESSAGES', 50, { min: 1, int: true }),
      windowDebugMessages: num(env, 'HISTORY_WINDOW_DEBUG_MESSAGES', 75, { min: 1, int: true }),
      compressionTriggerRatio: trigger,
    },
    workflow: {
      synthBypassSingle: bool(env, 'WORKFLOW_SYNTH_BYPASS_SINGLE', true),
      partialChunkChars: num(env, 'PARTIAL_CHUNK_CHARS', 512, { min: 1, int: true }),
    },
    budgets: {
      /** LLM_DISABLE_BUDGETS: 1 (default) the workflow enforces them (with BUDGET_THRESHOLD events); 0 the model layer does. */
      inWorkflow: bool(env, 'LLM_DISABLE_BUDGETS', true),
      /** Hard token budget of a task (all its model calls); 0 = unlimited. */
      maxTokensPerRequest: num(env, 'MAX_TOKENS_PER_REQUEST', 10000, { min: 0, int: true }),
      /** Hard cost budget of a task, USD; 0 = unlimited. */
      maxCostPerRequest: num(env, 'MAX_COST_PER_REQUEST', 0.5, { min: 0 }),
      /** Tokens one agent of a task may use; 0 = unlimited (the default). */
      tokensPerAgent: num(env, 'TOKEN_BUDGET_PER_AGENT', 0, { min: 0, int: true }),
      /** Tokens a task may use; 0 = unlimited (the default). */
      tokensPerTask: num(env, 'TOKEN_BUDGET_PER_TASK', 0, { min: 0, int: true }),
    },
    tools: {
      /** ENABLE_TOOL_SELECTION: a planned subtask's agent gets only the tools the planner named for it. */
      selection: bool(env, 'ENABLE_TOOL_SELECTION', true),
      /** Calls per minute, shared by every process; 0 = unlimited. */
      rateLimits: {
        WEB_SEARCH_RATE_LIMIT: num(env, 'WEB_SEARCH_RATE_LIMIT', 120, { min: 0, int: true }),
        CALCULATOR_RATE_LIMIT: num(env, 'CALCULATOR_RATE_LIMIT', 2000, { min: 0, int: true }),
        PYTHON_EXECUTOR_RATE_LIMIT: num(env, 'PYTHON_EXECUTOR_RATE_LIMIT', 60, { min: 0, int: true }),
      },
      /** Tool calls of one model turn run this many at a time (1 = one after another). */
      parallelism: num(env, 'TOOL_PARALLELISM', 1, { min: 1, max: 64, int: true }),
      /** Hosts or CIDRs (comma list) the web tools' SSRF guard lets through (intranets, tests). */
      httpAllowHosts: str(env, 'TOOLS_HTTP_ALLOW_HOSTS', ''),
      /** The headless browser of the screenshot agents (BROWSER_*; config/browser.ts). */
      browser: browserConfig(env),
      /** The ads-research catalogue agents' vendors: SerpApi-style search, Graph-API-style ad library (config/ads-vendors.ts). */
      adsVendors: adsVendorsConfig(env),
      /** The financial catalogue agents' vendors: SEC EDGAR, xAI, Alpaca (config/finance-vendors.ts). */
      finance: financeVendorsConfig(env),
      /** The bash tool (developer role only; not a sandbox). Off unless TOOLS_ENABLE_BASH=1. */
      bash: { enabled: bool(env, 'TOOLS_ENABLE_BASH', false), timeoutMs: num(env, 'TOOLS_BASH_TIMEOUT_MS', 60_000, { min: 100, int: true }) },
      python: {
        timeoutMs: num(env, 'PYTHON_EXECUTOR_TIMEOUT_MS', 30_000, { min: 100, int: true }),
        memoryMb: num(env, 'PYTHON_EXECUTOR_MEMORY_MB', 256, { min: 32, max: 4096, int: true }),
      },
      webSearch: {
        provider: oneOf(env, 'WEB_SEARCH_PROVIDER', '', ['', 'searxng', 'brave', 'tavily', 'serper'] as const),
        searxngUrl: optStr(env, 'SEARXNG_URL'),
        braveApiKey: optStr(env, 'BRAVE_SEARCH_API_KEY'),
        braveUrl: str(env, 'BRAVE_SEARCH_URL', 'https://api.search.brave.com'),
        tavilyApiKey: optStr(env, 'TAVILY_API_KEY'),
        tavilyUrl: str(env, 'TAVILY_URL', 'https://api.tavily.com'),
        serperApiKey: optStr(env, 'SERPER_API_KEY'),
        serperUrl: str(env, 'SERPER_URL', 'https://google.serper.dev'),
      },
    },
    /** Tools from elsewhere: the operator's MCP servers (MCP_CONFIG_PATH), limits of users' MCP servers and OpenAPI documents (config/tool-sources.ts). */
    toolSources: toolSourcesConfig(env),
    workspace: {
      /** One folder per session under this root. */
      root: str(env, 'WORKSPACE_ROOT', `${str(env, 'DATA_DIR', './data')}/workspaces`),
    },
    schedules: {
      maxPerUser: num(env, 'SCHEDULE_MAX_PER_USER', 50, { min: 1, int: true }),
      minIntervalMinutes: num(env, 'SCHEDULE_MIN_INTERVAL_MINS', 60, { min: 1, int: true }),
      maxBudgetUsd: num(env, 'SCHEDULE_MAX_BUDGET_USD', 10, { min: 0 }),
    },
    paths: {
      models: str(env, 'MODELS_CONFIG_PATH', './config/models.yaml'),
      /** The feature-flag file (CONFIG_PATH): today its `approvals` section (features.ts). */
      features: str(env, 'CONFIG_PATH', DEFAULT_FEATURES_PATH),
    },
    /** config/features.yaml, read once here. */
    features: loadFeatures(str(env, 'CONFIG_PATH', DEFAULT_FEATURES_PATH), !unset(env.CONFIG_PATH), env),
    approvals: {
      /** An approval not decided within this long is decided as rejected with reason `timeout`. */
      timeoutSeconds: num(env, 'APPROVAL_TIMEOUT_SECONDS', 3600, { min: 1, int: true }),
    },
    /** Folders read once at start-up: workflow templates (*.yaml), skills (markdown with front matter) and catalogue agents (*.yaml). */
    catalogs: {
      templatesDir: str(env, 'TEMPLATES_DIR', './config/templates'),
      skillsDir: str(env, 'SKILLS_DIR', './config/skills'),
      /** The agent catalogue: one `<id>.yaml` per single-purpose agent (src/agents/catalogue-parse.ts). */
      agentsDir: str(env, 'AGENT_CATALOG_DIR', './config/agents'),
      /** AGENT_CATALOG_DIR was set: its folder must exist (the default's absence is an empty catalogue). */
      agentsDirNamed: !unset(env.AGENT_CATALOG_DIR),
    },
    auth: {
      /** HS256 secret for JWTs. Unset: a random secret kept in DATA_DIR/jwt-secret (one machine only). */
      jwtSecret: optStr(env, 'JWT_SECRET'),
      accessTtlSeconds: num(env, 'JWT_ACCESS_TTL_SECONDS', 900, { min: 10, int: true }),
      refreshTtlSeconds: num(env, 'JWT_REFRESH_TTL_SECONDS', 7 * 24 * 3600, { min: 60, int: true }),
      /** scrypt cost (N) for password hashes: 2^15 = 32 MiB per hash. */
      passwordScryptN: num(env, 'PASSWORD_SCRYPT_N', 1 << 15, { min: 1024, max: 1 << 20, int: true }),
      apiKeyCacheSeconds: num(env, 'API_KEY_CACHE_SECONDS', 5, { min: 0, max: 300, int: true }),
    },
    /** The OpenAI-compatible layer (/v1/chat/completions, /v1/completions, /v1/models). */
    openai: {
      /**
       * A YAML file that replaces the built-in model table (svc-chat, svc-*-research, svc-complex;
       * format in src/gateway/openai/models.ts, `loadModelTable`). Unset: the built-in table.
       */
      modelsPath: optStr(env, 'OPENAI_MODELS_CONFIG_PATH'),
      /** Per API key and model, per minute (spec: 60 requests, 200,000 tokens). */
      requestsPerMinute: num(env, 'OPENAI_RATE_LIMIT_REQUESTS', 60, { min: 1, int: true }),
      tokensPerMinute: num(env, 'OPENAI_RATE_LIMIT_TOKENS', 200_000, { min: 1, int: true }),
      /** A non-streaming completion not finished after this long is answered 504 and its task cancelled (spec: 35 minutes). */
      completionTimeoutSeconds: num(env, 'OPENAI_COMPLETION_TIMEOUT_SECONDS', 35 * 60, { min: 1, int: true }),
    },
    daemon: {
      /** A claim not replied within this long expires and the message is offered again. */
      claimTtlSeconds: num(env, 'DAEMON_CLAIM_TTL_SECONDS', 60, { min: 1, int: true }),
      /** How long a dispatched message is kept for claims and re-dispatch (spec: 90 s). */
      pendingTtlSeconds: num(env, 'DAEMON_PENDING_TTL_SECONDS', 90, { min: 1, int: true }),
    },
    /** Messaging channels (platform_a, platform_b): credential encryption and outbound API base URLs. */
    channels: channelsConfig(env),
    idempotencyTtlSeconds: num(env, 'IDEMPOTENCY_TTL_SECONDS', 24 * 3600, { min: 1, int: true }),
    /** Traces: OTLP export when OTEL_EXPORTER_OTLP_ENDPOINT is set, else none (src/tracing). */
    otel: otelConfig(env),
  } as const;

  if (environment === 'prod' && cfg.gateway.skipAuth) {
    // Allowed, but loud: production without authentication is almost always a mistake.
    process.emitWarning('GATEWAY_SKIP_AUTH=1 in ENVIRONMENT=prod: authentication is disabled');
  }
  return deepFreeze(cfg);
}

/** Freezes plain objects and arrays all the way down (Sets such as `roles` stay as they are). */
function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object' && (Array.isArray(o) || Object.getPrototypeOf(o) === Object.prototype)) {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}

export type Config = ReturnType<typeof loadConfig>;
