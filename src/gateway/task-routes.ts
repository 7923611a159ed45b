/**
 * /api/v1/tasks: submit (JSON reply, or 201 with the stream URL on /tasks/stream), list
 * (limit/offset/status/session_id, burst-limited), get, stored events, cancel/pause/resume and
 * the control state; and the JSON shapes of tasks, summaries and events. Every call reaches the
 * orchestrator through its Connect client as the caller the principal names, so the
 * orchestrator applies the ownership rule (`ownedTask`). Submission honours Idempotency-Key
 * (admission.ts) and is refused at once with 503 while the bus is down.
 *
 * The checks and calls behind the routes (checkSubmitBody, submitChecked, listTasksOf,
 * controlTask, ownedTask and the JSON shapes) are exported for the other surfaces that offer
 * the same operations (the MCP server at /mcp, mcp-facade.ts).
 */
import { create, type JsonObject } from '@bufbuild/protobuf';
import { timestampDate } from '@bufbuild/protobuf/wkt';
import type { Client } from '@connectrpc/connect';
import type { TemplatedApp } from 'uWebSockets.js';
import {
  EXECUTION_MODE_NAME,
  MODEL_TIER_BY_NAME,
  TASK_STATUS_NAME,
  badRequest,
  callAs,
  callerOfPrincipal,
  isUuid,
  notFound,
  parseTraceparent,
  taskStatusFromName,
  type Principal,
} from '../kernel/index.js';
import { REFUSED_RETRY_AFTER_SECONDS, checkSubmission, queueUnavailable } from '../tasks/index.js';
import { ModelTier } from '../gen/svc/v1/common_pb.js';
import {
  SubmitTaskRequestSchema,
  type GetTaskStatusResponse,
  type OrchestratorService,
  type SubmitTaskResponse,
  type TaskSummary,
} from '../gen/svc/v1/orchestrator_pb.js';
import type { TaskUpdate } from '../gen/svc/v1/streaming_pb.js';
import type { Idempotency } from './admission.js';
import { intParam, parseJsonBody, route, type Reply, type Req } from './http.js';
import { admittedReply, type RouteDeps } from './route-deps.js';
import { TaskSubmitRequest, validator } from './schemas.js';

export type TaskRouteDeps = Pick<RouteDeps, 'ctx' | 'admit' | 'bus' | 'orchestrator'> & { idempotency: Idempotency };

const validateSubmit = validator(TaskSubmitRequest);
/** A Map: `model_tier: "constructor"` must not find a prototype member. */
const TIER = MODEL_TIER_BY_NAME;
const iso = (t?: { seconds: bigint; nanos: number }) => (t ? timestampDate(t as never).toISOString() : undefined);

/** A task as GET /api/v1/tasks/{id} shows it. */
export function statusJson(s: GetTaskStatusResponse) {
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

/** A task as the list GET /api/v1/tasks shows it. */
export function summaryJson(t: TaskSummary) {
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

/**
 * The task, if the principal may see it: the anonymous development principal sees all;
 * a user sees their own tasks; another tenant's task is 404 (its existence is not
 * revealed), another user's task in the same tenant is 403. The orchestrator applies the
 * rule to the caller this call names (src/rpc/auth.ts), for this and every other task RPC.
 */
export async function ownedTask(client: Client<typeof OrchestratorService>, id: string, p: Principal): Promise<GetTaskStatusResponse> {
  if (!isUuid(id)) throw notFound('Task not found');
  return client.getTaskStatus({ taskId: id, includeDetails: true }, callAs(callerOfPrincipal(p)));
}

/**
 * A submission body checked as POST /api/v1/tasks checks it: the request schema (400 naming the
 * field), `force_swarm` only inside context, then the submission rules (tasks/submit.ts), which
 * the orchestrator applies again to every caller.
 */
export function checkSubmitBody(raw: unknown): TaskSubmitRequest {
  const body = validateSubmit(raw);
  // The swarm is asked for inside context only; at the top level it would be ignored.
  if (Object.hasOwn(body, 'force_swarm')) throw badRequest('force_swarm belongs inside context: set context.force_swarm');
  checkSubmission(
    {
      query: body.query,
      context: (body.context ?? {}) as Record<string, unknown>,
      sessionId: body.session_id,
      mode: body.mode,
      modelTier: body.model_tier,
      modelOverride: body.model_override,
      providerOverride: body.provider_override,
      skill: body.skill,
      researchStrategy: body.research_strategy,
      maxIterations: body.max_iterations,
      enableVerification: body.enable_verification,
      maxConcurrentAgents: body.max_concurrent_agents,
      priority: body.priority,
    },
    'small',
  );
  return body;
}

/** Submits a checked body (checkSubmitBody) to the orchestrator as the principal's task. */
export function submitChecked(
  client: Client<typeof OrchestratorService>,
  p: Principal,
  body: TaskSubmitRequest,
  o: { traceparent?: string; idemKey?: string; stream: boolean },
): Promise<SubmitTaskResponse> {
  const tp = parseTraceparent(o.traceparent);
  return client.submitTask(
    create(SubmitTaskRequestSchema, {
      metadata: {
        userId: p.userId ?? '',
        tenantId: p.tenantId ?? '',
        sessionId: body.session_id || '',
        // The priority travels as the reference platform's label; the orchestrator checks it against its PRIORITY_QUEUES.
        labels: { ...(tp ? { trace_id: tp.traceId, traceparent: o.traceparent! } : {}), ...(body.priority ? { priority: body.priority } : {}) },
      },
      query: body.query,
      context: (body.context ?? {}) as JsonObject,
      options: {
        modeName: body.mode ?? '',
        modelTier: (body.model_tier && TIER.get(body.model_tier)) || ModelTier.UNSPECIFIED,
        modelOverride: body.model_override ?? '',
        providerOverride: body.provider_override ?? '',
        maxConcurrentAgents: body.max_concurrent_agents ?? 0,
        maxIterations: body.max_iterations ?? 0,
        skill: body.skill ?? '',
        researchStrategy: body.research_strategy ?? '',
        enableVerification: body.enable_verification ?? false,
        idempotencyKey: o.idemKey ?? '',
        traceparent: o.traceparent ?? '',
        stream: o.stream,
      },
    }),
    callAs(callerOfPrincipal(p)),
  );
}

/**
 * The principal's tasks as GET /api/v1/tasks lists them: `status` a status name without its
 * TASK_STATUS_ prefix (any case; CANCELED too), `sessionId` at most 255 characters (400 otherwise).
 */
export async function listTasksOf(
  client: Client<typeof OrchestratorService>,
  p: Principal,
  q: { limit: number; offset: number; status?: string; sessionId?: string },
): Promise<{ tasks: ReturnType<typeof summaryJson>[]; total_count: number }> {
  let status = q.status?.toUpperCase() || undefined;
  if (status === 'CANCELED') status = 'CANCELLED';
  let filterStatus = 0;
  if (status) {
    filterStatus = taskStatusFromName(`TASK_STATUS_${status}`);
    if (!filterStatus) throw badRequest('status must be one of: QUEUED, RUNNING, COMPLETED, FAILED, CANCELLED, CANCELED, TIMEOUT, PAUSED');
  }
  const sessionId = q.sessionId ?? '';
  if (sessionId.length > 255) throw badRequest('invalid session_id');
  const r = await client.listTasks(
    { limit: q.limit, offset: q.offset, sessionId, filterStatus, userId: p.userId ?? '', tenantId: p.tenantId ?? '' },
    callAs(callerOfPrincipal(p)),
  );
  return { tasks: r.tasks.map(summaryJson), total_count: r.totalCount };
}

export type TaskAction = 'cancel' | 'pause' | 'resume';

/**
 * Cancels, pauses or resumes the principal's task `taskId` (found with ownedTask) for `reason`
 * (cut to 1,000 characters); the orchestrator answers 409 when the task's state does not allow it.
 */
export async function controlTask(
  client: Client<typeof OrchestratorService>,
  p: Principal,
  taskId: string,
  action: TaskAction,
  reason: string,
): Promise<{ success: boolean; message: string; task_id: string }> {
  const r = { taskId, reason: reason.slice(0, 1000), requestedBy: p.userId ?? '' };
  const as = callAs(callerOfPrincipal(p));
  const out = action === 'cancel' ? await client.cancelTask(r, as) : action === 'pause' ? await client.pauseTask(r, as) : await client.resumeTask(r, as);
  return { success: out.success, message: out.message, task_id: taskId };
}

export function registerTaskRoutes(app: TemplatedApp, d: TaskRouteDeps): void {
  const { ctx, admit, bus, idempotency } = d;
  const client = d.orchestrator;

  async function submit(req: Req, p: Principal, stream: boolean): Promise<Reply> {
    const { idemKey, kvKey } = idempotency.keyOf(req, p, stream ? 'stream' : 'task');
    if (kvKey) {
      const cached = await idempotency.cachedReply(kvKey);
      if (cached) return cached;
    }
    // The submission rules before any key is claimed.
    const body = checkSubmitBody(parseJsonBody(req));
    // Refuse at once rather than after timeouts: nothing can be queued without the bus.
    if (!bus.connected) throw queueUnavailable();
    if (kvKey) {
      // Claim the key atomically; a concurrent request with the same key waits for our reply.
      const claimed = await idempotency.claim(kvKey, REFUSED_RETRY_AFTER_SECONDS);
      if (!claimed) return idempotency.awaitReply(kvKey);
    }
    try {
      return await doSubmit(req, p, stream, body, { kvKey, idemKey });
    } catch (err) {
      if (kvKey) await idempotency.release(kvKey);
      throw err;
    }
  }

  async function doSubmit(req: Req, p: Principal, stream: boolean, body: TaskSubmitRequest, o: { kvKey?: string; idemKey?: string }): Promise<Reply> {
    const { kvKey, idemKey } = o;
    const r = await submitChecked(client, p, body, { traceparent: req.headers.traceparent, idemKey, stream });
    const headers = { 'X-Workflow-ID': r.workflowId, 'X-Session-ID': r.sessionId };
    const reply: Reply = stream
      ? { status: 201, headers, body: { workflow_id: r.workflowId, task_id: r.taskId, stream_url: `/api/v1/stream/sse?workflow_id=${r.workflowId}` } }
      : { status: 200, headers, body: { task_id: r.taskId, status: 'STATUS_CODE_OK', message: r.message, created_at: iso(r.createdAt) } };
    if (kvKey) await idempotency.store(kvKey, reply);
    return reply;
  }

  async function listTasks(req: Req, p: Principal): Promise<Reply> {
    const q = req.query;
    const body = await listTasksOf(client, p, {
      limit: intParam(q, 'limit', 20, 1, 100),
      offset: intParam(q, 'offset', 0, 0, 1_000_000_000),
      status: q.get('status') || undefined,
      sessionId: q.get('session_id') || undefined,
    });
    return { status: 200, body };
  }

  async function getTask(id: string, p: Principal): Promise<Reply> {
    const s = await ownedTask(client, id, p);
    return { status: 200, headers: { 'X-Workflow-ID': s.taskId }, body: statusJson(s) };
  }

  /** cancel / pause / resume: optional body {reason}; 409 when the task's state does not allow it. */
  async function control(req: Req, p: Principal, action: TaskAction): Promise<Reply> {
    const s = await ownedTask(client, req.params[0], p);
    let reason = '';
    if (req.body && req.body.length) {
      const b = parseJsonBody(req) as { reason?: unknown } | null;
      if (!b || typeof b !== 'object' || Array.isArray(b)) throw badRequest('request body must be a JSON object');
      if (b.reason !== undefined && typeof b.reason !== 'string') throw badRequest('reason must be a string');
      reason = (b.reason as string | undefined) ?? '';
    }
    return { status: 200, headers: { 'X-Workflow-ID': s.taskId }, body: await controlTask(client, p, s.taskId, action, reason) };
  }

  async function controlState(id: string, p: Principal): Promise<Reply> {
    const s = await ownedTask(client, id, p);
    const c = await client.getControlState({ taskId: s.taskId }, callAs(callerOfPrincipal(p)));
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

  async function taskEvents(req: Req, p: Principal): Promise<Reply> {
    const id = req.params[0];
    await ownedTask(client, id, p);
    const after = intParam(req.query, 'after_seq', 0, 0, Number.MAX_SAFE_INTEGER);
    const limit = intParam(req.query, 'limit', 1000, 1, 5000);
    const r = await client.getTaskEvents({ taskId: id, afterSeq: BigInt(after), limit }, callAs(callerOfPrincipal(p)));
    const events = r.events.map(updateJson);
    return { status: 200, headers: { 'X-Workflow-ID': id }, body: { workflow_id: id, events, count: events.length } };
  }

  route(
    app,
    'post',
    '/api/v1/tasks',
    admittedReply(admit, (req, p) => submit(req, p, false)),
    ctx,
    { body: true },
  );
  route(
    app,
    'post',
    '/api/v1/tasks/stream',
    admittedReply(admit, (req, p) => submit(req, p, true)),
    ctx,
    { body: true },
  );
  route(
    app,
    'get',
    '/api/v1/tasks',
    admittedReply(admit, (req, p) => listTasks(req, p), { burst: true }),
    ctx,
  );
  route(
    app,
    'get',
    '/api/v1/tasks/:id',
    admittedReply(admit, (req, p) => getTask(req.params[0], p)),
    ctx,
  );
  route(
    app,
    'get',
    '/api/v1/tasks/:id/events',
    admittedReply(admit, (req, p) => taskEvents(req, p)),
    ctx,
  );
  route(
    app,
    'post',
    '/api/v1/tasks/:id/cancel',
    admittedReply(admit, (req, p) => control(req, p, 'cancel')),
    ctx,
    { body: true },
  );
  route(
    app,
    'post',
    '/api/v1/tasks/:id/pause',
    admittedReply(admit, (req, p) => control(req, p, 'pause')),
    ctx,
    { body: true },
  );
  route(
    app,
    'post',
    '/api/v1/tasks/:id/resume',
    admittedReply(admit, (req, p) => control(req, p, 'resume')),
    ctx,
    { body: true },
  );
  route(
    app,
    'get',
    '/api/v1/tasks/:id/control-state',
    admittedReply(admit, (req, p) => controlState(req.params[0], p)),
    ctx,
  );
}
