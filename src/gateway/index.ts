/**
 * Gateway: the public HTTP surface on uWebSockets.js — REST /api/v1, SSE and WebSocket
 * streams, health, readiness and /openapi.json. Stateless: it reaches the orchestrator only
 * through Connect clients and events only through NATS, so any number of gateways can run.
 */
import { createHash } from 'node:crypto';
import { create, type JsonObject } from '@bufbuild/protobuf';
import { timestampDate } from '@bufbuild/protobuf/wkt';
import { ConnectError, createClient, type Client, type Transport } from '@connectrpc/connect';
import uWS, { type HttpResponse, type TemplatedApp, type us_listen_socket, type WebSocket } from 'uWebSockets.js';
import { parseResumePoint, type Bus } from '../bus/index.js';
import {
  AppError,
  Code,
  EXECUTION_MODE_NAME,
  MODEL_TIER_BY_NAME,
  SYSTEM_CALLER,
  TASK_STATUS_NAME,
  badRequest,
  callAs,
  callerOfPrincipal,
  isUuid,
  notFound,
  parseTraceparent,
  taskStatusFromName,
  unavailable,
  type Logger,
  type Principal,
} from '../kernel/index.js';
import { REFUSED_RETRY_AFTER_SECONDS } from '../actors/enqueue.js';
import { notAvailableField, notAvailableMessage } from '../actors/not-available.js';
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import { ModelTier } from '../gen/svc/v1/common_pb.js';
import { OrchestratorService, SubmitTaskRequestSchema, type GetTaskStatusResponse, type TaskSummary } from '../gen/svc/v1/orchestrator_pb.js';
import type { TaskUpdate } from '../gen/svc/v1/streaming_pb.js';
import type { Store } from '../store/index.js';
import { createAuthenticator, type AuthService, type Authenticator } from '../auth/index.js';
import { registerAuthRoutes } from './auth-routes.js';
import type { RouteDeps } from './route-deps.js';
import { registerScheduleRoutes } from './schedule-routes.js';
import { registerSessionRoutes } from './session-routes.js';
import { registerTimelineRoute } from './timeline-route.js';
import { registerWorkspaceRoutes } from './workspace-routes.js';
import { RateLimitedError, RateLimiter, rateHeaders, type Limit } from './rate-limit.js';
import { intParam, copyRequest, corsHeaders, errorReply, parseJsonBody, route, writeReply, type CorsPolicy, type Reply, type Req } from './http.js';
import { buildOpenApi } from './openapi.js';
import { TaskSubmitRequest, validator } from './schemas.js';
import { StreamHub, gapFrame, type Encoded, type Feed, type Subscriber } from './streams.js';

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
}

export interface GatewayDeps {
  bus: Bus;
  transport: Transport;
  /** For readiness; absent when the gateway runs without a database connection. */
  store?: Store;
  log: Logger;
  /** Accounts, API keys and JWTs; also the verifier of credentials. */
  authService?: AuthService;
}

const validateSubmit = validator(TaskSubmitRequest);
/** A Map: `model_tier: "constructor"` must not find a prototype member. */
const TIER = MODEL_TIER_BY_NAME;
const iso = (t?: { seconds: bigint; nanos: number }) => (t ? timestampDate(t as never).toISOString() : undefined);
const enc = new TextEncoder();
const PENDING = '"__pending__"';
const dec = new TextDecoder();

function statusJson(s: GetTaskStatusResponse) {
  const status = TASK_STATUS_NAME[s.status];
  const done = status === 'TASK_STATUS_COMPLETED';
  const out: Record<string, unknown> = { task_id: s.taskId, workflow_id: s.taskId, status, progress: s.progress };
  if (done || s.result) out.result = s.result;
  if (s.result) {
    try {
      const parsed = JSON.parse(s.result);
      if (parsed !== null && typeof parsed === 'object') out.response = parsed;
    } catch {
      /* plain text result */
    }
  }
  Object.assign(out, {
    metadata: s.metadata ?? {},
    error: s.errorMessage,
    created_at: iso(s.createdAt),
    updated_at: iso(s.updatedAt),
    completed_at: iso(s.completedAt) ?? null,
    query: s.query,
    session_id: s.sessionId,
    mode: EXECUTION_MODE_NAME[s.mode],
    model_used: s.modelUsed,
    provider: s.provider,
    usage: {
      total_tokens: s.usage?.totalTokens ?? 0,
      input_tokens: s.usage?.promptTokens ?? 0,
      output_tokens: s.usage?.completionTokens ?? 0,
      estimated_cost: s.usage?.costUsd ?? 0,
    },
  });
  return out;
}

function summaryJson(t: TaskSummary) {
  return {
    task_id: t.taskId,
    query: t.query,
    status: TASK_STATUS_NAME[t.status],
    mode: EXECUTION_MODE_NAME[t.mode],
    created_at: iso(t.createdAt),
    completed_at: iso(t.completedAt) ?? null,
    total_token_usage: t.totalTokenUsage
      ? {
          total_tokens: t.totalTokenUsage.totalTokens,
          cost_usd: t.totalTokenUsage.costUsd,
          prompt_tokens: t.totalTokenUsage.promptTokens,
          completion_tokens: t.totalTokenUsage.completionTokens,
        }
      : null,
  };
}

function updateJson(u: TaskUpdate) {
  return {
    workflow_id: u.workflowId,
    seq: Number(u.seq),
    stream_id: u.streamId,
    type: u.type,
    agent_id: u.agentId,
    message: u.message,
    timestamp: iso(u.timestamp),
    ...(u.payload ? { payload: u.payload } : {}),
  };
}

export class Gateway {
  readonly app: TemplatedApp;
  readonly hub: StreamHub;
  private listenSocket?: us_listen_socket;
  private readonly client: Client<typeof OrchestratorService>;
  private readonly auth: Authenticator;
  private readonly cors: CorsPolicy;
  private readonly sse = new Set<SseConn>();
  private timers: NodeJS.Timeout[] = [];
  private readonly offReconnect: () => void;
  private readonly limiter: RateLimiter;
  private readonly limits: { perKey: Limit; burst: Limit };
  port = 0;

  constructor(
    private readonly cfg: GatewayConfig,
    private readonly deps: GatewayDeps,
  ) {
    this.app = uWS.App();
    this.client = createClient(OrchestratorService, deps.transport);
    this.auth = createAuthenticator({ skipAuth: cfg.skipAuth, verifier: deps.authService });
    this.cors = { origins: cfg.corsOrigins };
    this.limiter = new RateLimiter(deps.bus.kv.ratelimit, deps.log, () => deps.bus.connected);
    this.limits = {
      perKey: { name: 'key', requests: cfg.rateLimitRequests, windowSeconds: cfg.rateLimitWindowSeconds },
      burst: { name: 'tasklist', requests: cfg.taskListBurstPerSecond, windowSeconds: 1 },
    };
    this.hub = new StreamHub(deps.bus.nc, deps.bus.js, deps.bus.jsm, { ringCapacity: cfg.ringCapacity, maxBufferedBytes: cfg.maxBufferedBytes }, deps.log);
    this.offReconnect = deps.bus.onReconnect(() => this.hub.catchUpAll());
    this.routes();
  }

  private routes(): void {
    const { app } = this;
    const ctx = { cors: this.cors, log: this.deps.log };
    const authed =
      (h: (req: Req, p: Principal) => Promise<Reply> | Reply, o: { burst?: boolean } = {}) =>
      async (req: Req) => {
        const { p, headers } = await this.admit(req, o);
        const r = await h(req, p);
        return { ...r, headers: { ...headers, ...r.headers } };
      };

    app.options('/*', (res, req) => {
      const origin = req.getHeader('origin');
      writeReply(res, { status: 204, headers: { 'Access-Control-Max-Age': '600' } }, corsHeaders(this.cors, origin));
    });

    route(app, 'get', '/health', () => this.health(), ctx);
    route(app, 'get', '/readiness', () => this.readiness(), ctx);
    const openapi = JSON.stringify(buildOpenApi(this.cfg.version));
    route(app, 'get', '/openapi.json', () => ({ status: 200, raw: openapi, headers: { 'Content-Type': 'application/json' } }), ctx);

    route(
      app,
      'post',
      '/api/v1/tasks',
      authed((req, p) => this.submit(req, p, false)),
      ctx,
      { body: true },
    );
    route(
      app,
      'post',
      '/api/v1/tasks/stream',
      authed((req, p) => this.submit(req, p, true)),
      ctx,
      { body: true },
    );
    route(
      app,
      'get',
      '/api/v1/tasks',
      authed((req, p) => this.listTasks(req, p), { burst: true }),
      ctx,
    );
    route(
      app,
      'get',
      '/api/v1/tasks/:id',
      authed((req, p) => this.getTask(req.params[0], p)),
      ctx,
    );
    route(
      app,
      'get',
      '/api/v1/tasks/:id/events',
      authed((req, p) => this.taskEvents(req, p)),
      ctx,
    );
    route(
      app,
      'post',
      '/api/v1/tasks/:id/cancel',
      authed((req, p) => this.control(req, p, 'cancel')),
      ctx,
      { body: true },
    );
    route(
      app,
      'post',
      '/api/v1/tasks/:id/pause',
      authed((req, p) => this.control(req, p, 'pause')),
      ctx,
      { body: true },
    );
    route(
      app,
      'post',
      '/api/v1/tasks/:id/resume',
      authed((req, p) => this.control(req, p, 'resume')),
      ctx,
      { body: true },
    );
    route(
      app,
      'get',
      '/api/v1/tasks/:id/control-state',
      authed((req, p) => this.controlState(req.params[0], p)),
      ctx,
    );

    if (this.deps.authService) registerAuthRoutes(app, ctx, this.deps.authService, (req) => this.admit(req));
    if (this.deps.store) {
      const rd: RouteDeps = {
        ctx,
        admit: (req, o) => this.admit(req, o),
        store: this.deps.store,
        bus: this.deps.bus,
        orchestrator: this.client,
        log: this.deps.log,
        workspaceRoot: this.cfg.workspaceRoot,
        schedules: this.cfg.schedules,
      };
      registerSessionRoutes(app, rd);
      registerTimelineRoute(app, rd);
      registerWorkspaceRoutes(app, rd);
      registerScheduleRoutes(app, rd);
    }

    app.get('/api/v1/stream/sse', (res, req) => this.openSse(res, copyRequest(req, 0)));
    app.get('/api/v1/tasks/:id/stream', (res, req) => {
      const r = copyRequest(req, 1);
      r.query.set('workflow_id', r.params[0]);
      this.openSse(res, r);
    });
    this.wsRoute();

    app.any('/*', (res, req) => {
      const r = copyRequest(req, 0);
      writeReply(res, { status: 404, body: { error: `Not found: ${r.method} ${r.url}` } }, corsHeaders(this.cors, r.headers.origin));
    });
  }

  /**
   * Authenticates and counts the request against the per-key limit (and the burst limit
   * where asked); returns the principal and the X-RateLimit-* headers for the reply.
   */
  async admit(req: Req, o: { burst?: boolean; allowQueryKey?: boolean } = {}): Promise<{ p: Principal; headers: Record<string, string> }> {
    const p = await this.auth.authenticate({ headers: req.headers, query: req.query, allowQueryKey: o.allowQueryKey });
    const headers: Record<string, string> = {};
    if (p.anonymous) return { p, headers };
    if (o.burst) {
      const b = await this.limiter.hit(p, this.limits.burst);
      if (b && !b.allowed) throw new RateLimitedError(b);
    }
    const d = await this.limiter.hit(p, this.limits.perKey);
    if (d) {
      if (!d.allowed) throw new RateLimitedError(d);
      Object.assign(headers, rateHeaders(d));
    }
    return { p, headers };
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
    const timed = async (fn: () => Promise<unknown>) => {
      const t0 = performance.now();
      try {
        await Promise.race([fn(), new Promise((_, rej) => setTimeout(() => rej(new Error('timeout after 2s')), 2000))]);
        return { ok: true, latency_ms: +(performance.now() - t0).toFixed(2) };
      } catch (err) {
        return { ok: false, latency_ms: +(performance.now() - t0).toFixed(2), error: (err as Error).message };
      }
    };
    const [orchestrator, nats, database] = await Promise.all([
      // A real round trip through the orchestrator and its database: NotFound is the answer.
      timed(() =>
        this.client.getTaskStatus({ taskId: '00000000-0000-0000-0000-000000000000' }, callAs(SYSTEM_CALLER)).then(
          () => undefined,
          (err) => {
            if (ConnectError.from(err).code !== Code.NotFound) throw err;
          },
        ),
      ),
      timed(() => (this.deps.bus.connected ? this.deps.bus.nc.rtt() : Promise.reject(new Error('disconnected from NATS; reconnecting')))),
      this.deps.store
        ? timed(() => this.deps.store!.ping())
        : Promise.resolve({ ok: true, latency_ms: 0, error: 'not checked: no database connection in this process' }),
    ]);
    const ok = orchestrator.ok && nats.ok && database.ok;
    return {
      status: ok ? 200 : 503,
      body: { status: ok ? 'ready' : 'not_ready', version: this.cfg.version, time: new Date().toISOString(), checks: { orchestrator, nats, database } },
    };
  }

  private async submit(req: Req, p: Principal, stream: boolean): Promise<Reply> {
    const idemKey = req.headers['idempotency-key'];
    if (idemKey !== undefined && (idemKey.length === 0 || idemKey.length > 255)) throw badRequest('Idempotency-Key must be 1 to 255 characters');
    const kvKey = idemKey
      ? createHash('sha256')
          .update(`${p.key}\0${stream ? 'stream' : 'task'}\0${idemKey}`)
          .digest('hex')
      : undefined;
    if (kvKey) {
      const cached = await this.cachedReply(kvKey);
      if (cached) return cached;
    }
    const body = validateSubmit(parseJsonBody(req));
    const context = (body.context ?? {}) as Record<string, unknown>;
    // A top-level field wins over its context fallback.
    const pick = (k: 'model_tier' | 'model_override' | 'provider_override') => {
      const top = body[k];
      if (top !== undefined) return top as string;
      const c = context[k];
      if (c === undefined || c === null || c === '') return undefined;
      if (typeof c !== 'string') throw badRequest(`context.${k} must be a string`);
      return c;
    };
    const modelTier = pick('model_tier');
    const modelOverride = pick('model_override');
    if (context.disable_ai === true && (modelTier || modelOverride || pick('provider_override'))) {
      throw badRequest('disable_ai cannot be combined with model_tier, model_override or provider_override');
    }
    if (modelTier && !TIER.has(modelTier)) throw badRequest('model_tier must be one of: small, medium, large');
    // Accepted and ignored would pretend: what nothing implements yet is refused.
    const notYet = notAvailableField(body, context);
    if (notYet) throw badRequest(notAvailableMessage(notYet));
    // Refuse at once rather than after timeouts: nothing can be queued without the bus.
    if (!this.deps.bus.connected)
      throw unavailable(
        'Service temporarily unavailable: the task queue is unreachable, so the task was not accepted; retry later',
        undefined,
        REFUSED_RETRY_AFTER_SECONDS,
      );
    if (kvKey) {
      // Claim the key atomically; a concurrent request with the same key waits for our reply.
      const claimed = await this.deps.bus.kv.idempotency.create(kvKey, enc.encode(PENDING)).then(
        () => true,
        (err: unknown) => {
          if (err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamWrongLastSequence) return false;
          throw unavailable('Service temporarily unavailable: the idempotency store is unreachable; retry later', err, REFUSED_RETRY_AFTER_SECONDS);
        },
      );
      if (!claimed) return this.awaitReply(kvKey);
    }
    try {
      return await this.doSubmit(req, p, stream, body, context, { modelTier, modelOverride, kvKey, idemKey });
    } catch (err) {
      if (kvKey) await this.deps.bus.kv.idempotency.delete(kvKey).catch(() => {});
      throw err;
    }
  }

  private async doSubmit(
    req: Req,
    p: Principal,
    stream: boolean,
    body: TaskSubmitRequest,
    context: Record<string, unknown>,
    o: {
      modelTier?: string;
      modelOverride?: string;
      kvKey?: string;
      idemKey?: string;
    },
  ): Promise<Reply> {
    const { modelTier, modelOverride, kvKey, idemKey } = o;
    const tp = parseTraceparent(req.headers.traceparent);
    const sessionId = body.session_id || undefined;
    const r = await this.client.submitTask(
      create(SubmitTaskRequestSchema, {
        metadata: {
          userId: p.userId ?? '',
          tenantId: p.tenantId ?? '',
          sessionId: sessionId ?? '',
          labels: tp ? { trace_id: tp.traceId, traceparent: req.headers.traceparent! } : {},
        },
        query: body.query,
        context: context as JsonObject,
        options: {
          modeName: body.mode ?? '',
          modelTier: (modelTier && TIER.get(modelTier)) || ModelTier.UNSPECIFIED,
          modelOverride: modelOverride ?? '',
          maxConcurrentAgents: body.max_concurrent_agents ?? 0,
          idempotencyKey: idemKey ?? '',
          traceparent: req.headers.traceparent ?? '',
          stream,
        },
      }),
      callAs(callerOfPrincipal(p)),
    );
    const headers = { 'X-Workflow-ID': r.workflowId, 'X-Session-ID': r.sessionId };
    const reply: Reply = stream
      ? { status: 201, headers, body: { workflow_id: r.workflowId, task_id: r.taskId, stream_url: `/api/v1/stream/sse?workflow_id=${r.workflowId}` } }
      : { status: 200, headers, body: { task_id: r.taskId, status: 'STATUS_CODE_OK', message: r.message, created_at: iso(r.createdAt) } };
    if (kvKey)
      await this.deps.bus.kv.idempotency
        .put(kvKey, enc.encode(JSON.stringify(reply)))
        .catch((err) => this.deps.log.warn({ err }, 'idempotency cache write failed'));
    return reply;
  }

  private async cachedReply(kvKey: string): Promise<Reply | undefined> {
    const e = await this.deps.bus.kv.idempotency.get(kvKey).catch(() => null);
    if (!e || e.operation !== 'PUT' || !e.value.length) return undefined;
    const text = dec.decode(e.value);
    if (text === PENDING) return this.awaitReply(kvKey);
    const reply = JSON.parse(text) as Reply;
    return { ...reply, headers: { ...reply.headers, 'Idempotency-Replayed': 'true' } };
  }

  /** Another request holds the key: wait (up to 10 s) for its reply. */
  private async awaitReply(kvKey: string): Promise<Reply> {
    const end = Date.now() + 10_000;
    while (Date.now() < end) {
      await new Promise((r) => setTimeout(r, 20));
      const e = await this.deps.bus.kv.idempotency.get(kvKey).catch(() => null);
      if (!e || e.operation !== 'PUT') break; // the first request failed; nothing cached
      const text = dec.decode(e.value);
      if (text !== PENDING) {
        const reply = JSON.parse(text) as Reply;
        return { ...reply, headers: { ...reply.headers, 'Idempotency-Replayed': 'true' } };
      }
    }
    throw new AppError(Code.Aborted, 'A request with the same Idempotency-Key is in progress or failed; retry');
  }

  private async listTasks(req: Req, p: Principal): Promise<Reply> {
    const q = req.query;
    const limit = intParam(q, 'limit', 20, 1, 100);
    const offset = intParam(q, 'offset', 0, 0, 1_000_000_000);
    let status = q.get('status')?.toUpperCase() || undefined;
    if (status === 'CANCELED') status = 'CANCELLED';
    let filterStatus = 0;
    if (status) {
      filterStatus = taskStatusFromName(`TASK_STATUS_${status}`);
      if (!filterStatus) throw badRequest('status must be one of: QUEUED, RUNNING, COMPLETED, FAILED, CANCELLED, CANCELED, TIMEOUT, PAUSED');
    }
    const sessionId = q.get('session_id') || '';
    if (sessionId.length > 255) throw badRequest('invalid session_id');
    const r = await this.client.listTasks(
      { limit, offset, sessionId, filterStatus, userId: p.userId ?? '', tenantId: p.tenantId ?? '' },
      callAs(callerOfPrincipal(p)),
    );
    return { status: 200, body: { tasks: r.tasks.map(summaryJson), total_count: r.totalCount } };
  }

  private async getTask(id: string, p: Principal): Promise<Reply> {
    const s = await this.ownedTask(id, p);
    return { status: 200, headers: { 'X-Workflow-ID': s.taskId }, body: statusJson(s) };
  }

  /**
   * The task, if the principal may see it: the anonymous development principal sees all;
   * a user sees their own tasks; another tenant's task is 404 (its existence is not
   * revealed), another user's task in the same tenant is 403. The orchestrator applies the
   * rule to the caller this call names (src/rpc/auth.ts), for this and every other task RPC.
   */
  private async ownedTask(id: string, p: Principal): Promise<GetTaskStatusResponse> {
    if (!isUuid(id)) throw notFound('Task not found');
    return this.client.getTaskStatus({ taskId: id, includeDetails: true }, callAs(callerOfPrincipal(p)));
  }

  /** cancel / pause / resume: optional body {reason}; 409 when the task's state does not allow it. */
  private async control(req: Req, p: Principal, action: 'cancel' | 'pause' | 'resume'): Promise<Reply> {
    const s = await this.ownedTask(req.params[0], p);
    let reason = '';
    if (req.body && req.body.length) {
      const b = parseJsonBody(req) as { reason?: unknown } | null;
      if (!b || typeof b !== 'object' || Array.isArray(b)) throw badRequest('request body must be a JSON object');
      if (b.reason !== undefined && typeof b.reason !== 'string') throw badRequest('reason must be a string');
      reason = ((b.reason as string | undefined) ?? '').slice(0, 1000);
    }
    const r = { taskId: s.taskId, reason, requestedBy: p.userId ?? '' };
    const as = callAs(callerOfPrincipal(p));
    const out =
      action === 'cancel' ? await this.client.cancelTask(r, as) : action === 'pause' ? await this.client.pauseTask(r, as) : await this.client.resumeTask(r, as);
    return { status: 200, headers: { 'X-Workflow-ID': s.taskId }, body: { success: out.success, message: out.message, task_id: s.taskId } };
  }

  private async controlState(id: string, p: Principal): Promise<Reply> {
    const s = await this.ownedTask(id, p);
    const c = await this.client.getControlState({ taskId: s.taskId }, callAs(callerOfPrincipal(p)));
    return {
      status: 200,
      headers: { 'X-Workflow-ID': s.taskId },
      body: {
        task_id: s.taskId,
        status: TASK_STATUS_NAME[s.status],
        is_paused: c.isPaused,
        is_cancelled: c.isCancelled,
        paused_at: iso(c.pausedAt) ?? null,
        pause_reason: c.pauseReason,
        paused_by: c.pausedBy,
        cancel_reason: c.cancelReason,
        cancelled_by: c.cancelledBy,
      },
    };
  }

  private async taskEvents(req: Req, p: Principal): Promise<Reply> {
    const id = req.params[0];
    await this.ownedTask(id, p);
    const after = intParam(req.query, 'after_seq', 0, 0, Number.MAX_SAFE_INTEGER);
    const limit = intParam(req.query, 'limit', 1000, 1, 5000);
    const r = await this.client.getTaskEvents({ taskId: id, afterSeq: BigInt(after), limit }, callAs(callerOfPrincipal(p)));
    const events = r.events.map(updateJson);
    return { status: 200, headers: { 'X-Workflow-ID': id }, body: { workflow_id: id, events, count: events.length } };
  }

  // --- streaming -------------------------------------------------------------------------

  private openSse(res: HttpResponse, req: Req): void {
    const cors = corsHeaders(this.cors, req.headers.origin);
    const conn = new SseConn(res, this);
    res.onAborted(() => conn.onAborted());
    const fail = (err: unknown) => {
      if (!conn.closed) {
        conn.closed = true;
        writeReply(res, errorReply(err, this.deps.log), cors);
      }
    };
    try {
      const wf = req.query.get('workflow_id') ?? '';
      if (!wf) throw badRequest('workflow_id is required');
      if (!isUuid(wf)) throw badRequest('invalid workflow_id');
      const typesRaw = req.query.get('types');
      const filter = typesRaw
        ? new Set(
            typesRaw
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean),
          )
        : undefined;
      const resumeRaw = req.query.get('last_event_id') ?? req.headers['last-event-id'];
      const after = parseResumePoint(resumeRaw);
      if (resumeRaw !== undefined && resumeRaw !== '' && after === undefined)
        throw badRequest('last_event_id must be a stream id (<ms>-<seq>) or a sequence number');
      const principal = this.auth.authenticate({ headers: req.headers, query: req.query, allowQueryKey: true });
      const start = () => {
        if (conn.closed) return;
        conn.filter = filter && filter.size ? filter : undefined;
        res.cork(() => {
          res.writeStatus('200 OK');
          for (const [k, v] of Object.entries({
            'Content-Type': 'text/event-stream',
            'Cache-Control': 'no-cache',
            Connection: 'keep-alive',
            'X-Accel-Buffering': 'no',
            'X-Workflow-ID': wf,
            ...cors,
          }))
            res.writeHeader(k, v);
          res.write(': stream open\n\n');
        });
        this.sse.add(conn);
        void this.hub
          .attach(wf, conn, after ?? 0, (a, first) => conn.writeRaw(gapFrame(a, first).frame))
          .then((feed) => {
            conn.feed = feed;
            if (conn.closed) feed.remove(conn);
          })
          .catch((err) => {
            this.deps.log.warn({ err, workflow_id: wf }, 'stream attach failed');
            conn.drop('stream unavailable');
          });
      };
      if (principal instanceof Promise || !principal.anonymous) this.authorizeStream(principal, wf).then(start, fail);
      else start();
    } catch (err) {
      fail(err);
    }
  }

  /** A user may stream only their own workflows (the anonymous development principal: any). */
  private async authorizeStream(principal: Principal | Promise<Principal>, wf: string): Promise<void> {
    const p = await principal;
    if (p.anonymous) return;
    const d = await this.limiter.hit(p, this.limits.perKey);
    if (d && !d.allowed) throw new RateLimitedError(d);
    await this.ownedTask(wf, p);
  }

  forgetSse(c: SseConn): void {
    this.sse.delete(c);
  }

  private wsRoute(): void {
    interface WsData {
      wf: string;
      after: number;
      sub?: WsSub;
    }
    this.app.ws<WsData>('/api/v1/stream/ws', {
      maxPayloadLength: 64 * 1024,
      // The feed stops writing at the first sign of backpressure and drops a client more
      // than maxBufferedBytes behind, so uWS's own limit (which would drop messages
      // silently, then close) is only a last guard: one batch over the feed's bound.
      maxBackpressure: 4 * this.cfg.maxBufferedBytes,
      closeOnBackpressureLimit: 1 as unknown as number,
      idleTimeout: 120,
      sendPingsAutomatically: true,
      upgrade: (res, rawReq, context) => {
        const req = copyRequest(rawReq, 0);
        const key = req.headers['sec-websocket-key'];
        const protocol = req.headers['sec-websocket-protocol'] ?? '';
        const extensions = req.headers['sec-websocket-extensions'] ?? '';
        let aborted = false;
        res.onAborted(() => {
          aborted = true;
        });
        const cors = corsHeaders(this.cors, req.headers.origin);
        const reject = (err: unknown) => {
          if (!aborted) writeReply(res, errorReply(err, this.deps.log), cors);
        };
        try {
          const wf = req.query.get('workflow_id') ?? '';
          if (!wf) throw badRequest('workflow_id is required');
          if (!isUuid(wf)) throw badRequest('invalid workflow_id');
          const resumeRaw = req.query.get('last_event_id') ?? req.headers['last-event-id'];
          const after = parseResumePoint(resumeRaw);
          if (resumeRaw !== undefined && resumeRaw !== '' && after === undefined)
            throw badRequest('last_event_id must be a stream id (<ms>-<seq>) or a sequence number');
          const p = this.auth.authenticate({ headers: req.headers });
          const go = () => {
            if (aborted) return;
            res.cork(() => res.upgrade<WsData>({ wf, after: after ?? 0 }, key, protocol, extensions, context));
          };
          if (p instanceof Promise || !p.anonymous) this.authorizeStream(p, wf).then(go, reject);
          else go();
        } catch (err) {
          reject(err);
        }
      },
      open: (ws) => {
        const data = ws.getUserData();
        const sub = new WsSub(ws);
        data.sub = sub;
        void this.hub
          .attach(data.wf, sub, data.after, (a, first) => sub.sendJson(gapFrame(a, first).json))
          .then((feed) => {
            sub.feed = feed;
            if (sub.closed) feed.remove(sub);
          })
          .catch(() => sub.drop('stream unavailable'));
      },
      message: () => {
        /* clients only listen on this socket */
      },
      drain: (ws) => ws.getUserData().sub?.onDrain(),
      close: (ws) => {
        const sub = ws.getUserData().sub;
        if (sub) {
          sub.closed = true;
          sub.feed?.remove(sub);
        }
      },
    });
  }

  /** Heartbeats and the inactivity timeout for SSE connections. */
  private startTimers(): void {
    const hb = setInterval(
      () => {
        const now = Date.now();
        const idleMs = this.cfg.inactivitySeconds * 1000;
        for (const c of this.sse) {
          if (now - c.lastEventAt > idleMs) c.timeout(this.cfg.inactivitySeconds);
          else c.heartbeat();
        }
      },
      Math.min(this.cfg.heartbeatSeconds, this.cfg.inactivitySeconds) * 1000,
    );
    hb.unref();
    this.timers.push(hb);
  }

  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      this.app.listen(this.cfg.host, this.cfg.port, (sock) => {
        if (!sock) return reject(new AppError(Code.Unavailable, `gateway could not listen on ${this.cfg.host}:${this.cfg.port}`));
        this.listenSocket = sock;
        this.port = uWS.us_socket_local_port(sock);
        this.startTimers();
        resolve(this.port);
      });
    });
  }

  /** Stops accepting; ends open streams so clients reconnect elsewhere with Last-Event-ID. */
  async close(): Promise<void> {
    this.timers.forEach(clearInterval);
    if (this.listenSocket) uWS.us_listen_socket_close(this.listenSocket);
    this.listenSocket = undefined;
    for (const c of [...this.sse]) c.close();
    this.offReconnect();
    this.hub.close();
    (this.app as unknown as { close?: () => void }).close?.();
  }
}

/** One SSE client. */
export class SseConn implements Subscriber {
  cursor = 0;
  filter?: Set<string>;
  backpressured = false;
  closed = false;
  feed?: Feed;
  lastEventAt = Date.now();

  constructor(
    private readonly res: HttpResponse,
    private readonly gw: Gateway,
  ) {}

  onAborted(): void {
    this.closed = true;
    this.feed?.remove(this);
    this.gw.forgetSse(this);
  }

  write(events: Encoded[], shared?: Buffer): boolean {
    if (this.closed) return false;
    const buf = shared ?? (events.length === 1 ? events[0].frame : Buffer.concat(events.map((e) => e.frame)));
    this.lastEventAt = Date.now();
    return this.writeRaw(buf);
  }

  writeRaw(buf: Buffer | string): boolean {
    if (this.closed) return false;
    let ok = true;
    this.res.cork(() => {
      ok = this.res.write(buf);
    });
    if (!ok) {
      this.backpressured = true;
      this.res.onWritable(() => {
        this.backpressured = false;
        this.feed?.flushOne(this);
        // While an onWritable handler is registered uWS drains its own buffer only on a write;
        // with nothing new to send, an empty cork/uncork does it (else the tail would wait for the next event).
        if (!this.closed && !this.backpressured) this.res.cork(() => {});
        return true;
      });
    }
    return ok;
  }

  heartbeat(): void {
    if (!this.closed && !this.backpressured) this.writeRaw(': heartbeat\n\n');
  }

  private finish(tail: string): void {
    if (this.closed) return;
    this.closed = true;
    this.feed?.remove(this);
    this.gw.forgetSse(this);
    this.res.cork(() => this.res.end(tail));
  }

  end(): void {
    this.finish('event: done\ndata: [DONE]\n\n');
  }

  timeout(seconds: number): void {
    this.finish(`: closing after ${seconds} seconds without events; reconnect with Last-Event-ID to resume\n\n`);
  }

  drop(reason: string): void {
    this.finish(`event: error\ndata: ${JSON.stringify({ error: reason })}\n\n`);
  }

  close(): void {
    this.finish(': server shutting down; reconnect with Last-Event-ID to resume\n\n');
  }
}

/** One WebSocket stream client: a JSON event per message, STREAM_END last. */
class WsSub implements Subscriber {
  cursor = 0;
  filter = undefined;
  backpressured = false;
  closed = false;
  feed?: Feed;

  constructor(private readonly ws: WebSocket<unknown>) {}

  sendJson(json: string): void {
    if (!this.closed) this.ws.send(json, false);
  }

  /** Like SSE: stops at the first write the socket cannot take; `drain` resumes it. */
  write(events: Encoded[]): boolean {
    if (this.closed) return false;
    this.ws.cork(() => {
      for (const e of events) this.ws.send(e.json, false);
    });
    if (this.ws.getBufferedAmount() > 0) {
      this.backpressured = true;
      return false;
    }
    return true;
  }

  onDrain(): void {
    if (this.closed || this.ws.getBufferedAmount() > 0) return;
    this.backpressured = false;
    this.feed?.flushOne(this);
  }

  end(): void {
    if (this.closed) return;
    this.closed = true;
    this.feed?.remove(this);
    this.ws.end(1000, 'stream end');
  }

  drop(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.feed?.remove(this);
    this.ws.end(1008, reason.slice(0, 120));
  }
}
