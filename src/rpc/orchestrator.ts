/**
 * OrchestratorService and StreamingService (Connect, gRPC and gRPC-Web compatible).
 *
 * SubmitTask: the task row is committed (QUEUED) before the start message is published to
 * the TASKS work queue with de-duplication id = task id, so an acknowledged submission is
 * never lost and never started twice. Everything else reads Postgres or the event stream.
 *
 * Identity: every handler takes its caller from the context value set by the internal RPC
 * interceptor (./auth.ts), not from the request body, and applies task ownership to it.
 */
import { create, type JsonObject } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import { DeliverPolicy } from '@nats-io/jetstream';
import { STREAMS, SeqOrder, decodeEvent, parseResumePoint, replayGap, subjects, type Bus, type WorkflowEvent } from '../bus/index.js';
import { ExecutionMetricsSchema, ExecutionMode, ModelTier, StatusCode, TokenUsageSchema } from '../gen/svc/v1/common_pb.js';
import { GetTaskStatusResponseSchema, type OrchestratorService, TaskSummarySchema } from '../gen/svc/v1/orchestrator_pb.js';
import { type StreamingService, TaskUpdateSchema, type TaskUpdate } from '../gen/svc/v1/streaming_pb.js';
import {
  AppError,
  Code,
  MODE_BY_ENUM,
  TASK_STATUS_NAME,
  TIER_BY_ENUM,
  badRequest,
  executionModeFromName,
  isUuid,
  notFound,
  taskStatusFromName,
  toConnectError,
  type Logger,
  type Tier,
} from '../kernel/index.js';
import {
  cancelTask,
  checkSubmission,
  pauseTask,
  readControl,
  resumeTask,
  submitTask,
  type CatalogCheck,
  type ModelChoiceCheck,
  type TaskRow,
  type TaskStore,
} from '../tasks/index.js';
import type { TemplateCatalog } from '../templates/index.js';
import { traceCarrierOf } from '../tracing/index.js';
import type { ApprovalService } from '../approvals/index.js';
import { approvalHandlers } from './approvals.js';
import { actingPrincipal, assertTaskOwner, callerOf } from './auth.js';
import { rpcError, rpcHandlers } from './errors.js';

export interface OrchestratorDeps {
  bus: Bus;
  store: TaskStore;
  log: Logger;
  defaultTier: Tier;
  /** The model router's check of model_override / provider_override (400 when it cannot serve them). */
  checkModel?: ModelChoiceCheck;
  /** Templates and skills a submission may name (400 for an unknown one). */
  catalogs?: CatalogCheck;
  /** The templates ListTemplates answers. */
  templates?: TemplateCatalog;
  /** ApproveTask and GetPendingApprovals (unimplemented without it). */
  approvals?: ApprovalService;
  /** PRIORITY_QUEUES (default off): a submission may ask for a priority other than normal (metadata.labels.priority). */
  priorityQueues?: boolean;
}

function rowToStatus(r: TaskRow) {
  return create(GetTaskStatusResponseSchema, {
    taskId: r.id,
    status: taskStatusFromName(r.status),
    progress: r.status === 'TASK_STATUS_COMPLETED' ? 1 : 0,
    result: r.result ?? '',
    errorMessage: r.error ?? '',
    query: r.query,
    sessionId: r.session_id,
    userId: r.user_id ?? '',
    tenantId: r.tenant_id ?? '',
    mode: executionModeFromName(r.mode),
    modelUsed: r.model_used,
    provider: r.provider,
    usage: create(TokenUsageSchema, {
      promptTokens: r.input_tokens,
      completionTokens: r.output_tokens,
      totalTokens: r.total_tokens,
      costUsd: r.cost_usd,
      model: r.model_used,
    }),
    metadata: (r.metadata ?? {}) as JsonObject,
    metrics: metricsOf(r),
    statusCode: statusCodeOf(r),
    createdAt: timestampFromDate(r.created_at),
    updatedAt: timestampFromDate(r.updated_at),
    completedAt: r.completed_at ? timestampFromDate(r.completed_at) : undefined,
  });
}

/** Why the task ended, as the gRPC status code: a budget stop is BUDGET_EXCEEDED. */
function statusCodeOf(r: TaskRow): StatusCode {
  switch (r.status) {
    case 'TASK_STATUS_COMPLETED':
      return StatusCode.OK;
    case 'TASK_STATUS_TIMEOUT':
      return StatusCode.TIMEOUT;
    case 'TASK_STATUS_FAILED':
      return (r.metadata as Record<string, unknown> | null)?.error_code === 'ResourceExhausted' ? StatusCode.BUDGET_EXCEEDED : StatusCode.ERROR;
    case 'TASK_STATUS_CANCELLED':
      return StatusCode.ERROR;
    default:
      return StatusCode.UNSPECIFIED;
  }
}

/** The task's execution metrics: latency, tokens, cache use, agents, mode (from the row and its metadata). */
function metricsOf(r: TaskRow) {
  const md = (r.metadata ?? {}) as Record<string, unknown>;
  const end = r.completed_at ?? undefined;
  const start = r.started_at ?? r.created_at;
  return create(ExecutionMetricsSchema, {
    latencyMs: BigInt(end ? Math.max(0, end.getTime() - start.getTime()) : 0),
    tokenUsage: create(TokenUsageSchema, {
      promptTokens: r.input_tokens,
      completionTokens: r.output_tokens,
      totalTokens: r.total_tokens,
      costUsd: r.cost_usd,
      model: r.model_used,
    }),
    cacheHit: typeof md.cache_hits === 'number' && md.cache_hits > 0,
    cacheScore: typeof md.cache_score === 'number' ? md.cache_score : 0,
    agentsUsed: typeof md.agents_used === 'number' ? md.agents_used : 0,
    mode: executionModeFromName(r.mode),
  });
}

function rowToSummary(r: TaskRow) {
  return create(TaskSummarySchema, {
    taskId: r.id,
    query: r.query,
    status: taskStatusFromName(r.status),
    mode: executionModeFromName(r.mode),
    createdAt: timestampFromDate(r.created_at),
    completedAt: r.completed_at ? timestampFromDate(r.completed_at) : undefined,
    totalTokenUsage:
      r.total_tokens || r.completed_at
        ? create(TokenUsageSchema, {
            promptTokens: r.input_tokens,
            completionTokens: r.output_tokens,
            totalTokens: r.total_tokens,
            costUsd: r.cost_usd,
            model: r.model_used,
          })
        : undefined,
    sessionId: r.session_id,
  });
}

export function createOrchestratorService(d: OrchestratorDeps): ServiceImpl<typeof OrchestratorService> {
  const wrap = rpcHandlers(d.log, 'rpc');
  const unimplemented = (what: string) => async (): Promise<never> => {
    throw toConnectError(new AppError(Code.Unimplemented, `${what} is not implemented yet`));
  };

  /** The task, if the caller may see it (NotFound / PermissionDenied otherwise). */
  const owned = (taskId: string, ctx: HandlerContext) => ownedTask(d.store, taskId, ctx);

  const taskDeps = { bus: d.bus, tasks: d.store, log: d.log };
  const approvals = d.approvals ? approvalHandlers(d.approvals) : undefined;
  return {
    submitTask: wrap(async (req, ctx) => {
      const md = req.metadata;
      const opts = req.options;
      const modeEnum = opts?.mode ?? ExecutionMode.UNSPECIFIED;
      if (!MODE_BY_ENUM.has(modeEnum)) throw badRequest(`invalid mode: ${modeEnum}`);
      const tierEnum = opts?.modelTier ?? ModelTier.UNSPECIFIED;
      if (!TIER_BY_ENUM.has(tierEnum)) throw badRequest(`invalid model_tier: ${tierEnum}`);
      const sub = checkSubmission(
        {
          query: req.query,
          context: (req.context ?? {}) as Record<string, unknown>,
          sessionId: md?.sessionId,
          mode: opts?.modeName || MODE_BY_ENUM.get(modeEnum) || undefined,
          modelTier: TIER_BY_ENUM.get(tierEnum) || undefined,
          modelOverride: opts?.modelOverride,
          providerOverride: opts?.providerOverride,
          skill: opts?.skill,
          researchStrategy: opts?.researchStrategy,
          maxIterations: opts?.maxIterations,
          enableVerification: opts?.enableVerification,
          maxConcurrentAgents: opts?.maxConcurrentAgents,
          traceId: md?.labels?.trace_id,
          // The caller's span (the gateway's submission span): every activation of the task joins its trace.
          traceContext: traceCarrierOf(opts?.traceparent || md?.labels?.traceparent),
          priority: md?.labels?.priority,
          requireApproval: req.requireApproval,
          // gRPC-only fields nothing implements yet (caller-made plans, budgets).
          extraFields: {
            manual_decomposition: req.manualDecomposition,
            session_context: req.sessionContext,
            'metadata.token_budget': md?.tokenBudget,
          },
        },
        d.defaultTier,
        d.checkModel,
        d.catalogs,
        d.priorityQueues ?? false,
      );
      // The task runs as the caller; only a system caller (the scheduler) names its owner.
      const r = await submitTask(taskDeps, sub, actingPrincipal(callerOf(ctx), md));
      return {
        workflowId: r.taskId,
        taskId: r.taskId,
        status: StatusCode.OK,
        message: 'Task submitted successfully',
        createdAt: timestampFromDate(r.createdAt),
        sessionId: r.sessionId,
      };
    }),

    getTaskStatus: wrap(async (req, ctx) => rowToStatus(await owned(req.taskId, ctx))),

    listTasks: wrap(async (req, ctx) => {
      const limit = req.limit || 20;
      if (limit < 1 || limit > 100) throw badRequest('limit must be between 1 and 100');
      if (req.offset < 0) throw badRequest('offset must be >= 0');
      // A user lists only their own tasks, whatever the body asks; anonymous and system
      // callers see every task, narrowed by the body's filters.
      const c = callerOf(ctx);
      const scope = c.kind === 'user' ? { userId: c.userId, tenantId: c.tenantId } : { userId: req.userId || undefined, tenantId: req.tenantId || undefined };
      if ((scope.userId && !isUuid(scope.userId)) || (scope.tenantId && !isUuid(scope.tenantId))) throw badRequest('user_id and tenant_id must be UUIDs');
      // An unknown status would otherwise filter nothing and list every task.
      if (req.filterStatus && !Object.hasOwn(TASK_STATUS_NAME, req.filterStatus)) throw badRequest(`invalid filter_status: ${req.filterStatus}`);
      const { rows, total } = await d.store.listTasks({
        limit,
        offset: req.offset,
        sessionId: req.sessionId || undefined,
        status: req.filterStatus ? TASK_STATUS_NAME[req.filterStatus] : undefined,
        ...scope,
      });
      return { tasks: rows.map(rowToSummary), totalCount: total };
    }),

    getTaskEvents: wrap(async (req, ctx) => {
      await owned(req.taskId, ctx);
      const events = await d.store.listEvents(req.taskId, Number(req.afterSeq), req.limit || 1000);
      return { events: events.map((e) => eventToUpdate(e, e.ts)) };
    }),

    cancelTask: wrap(async (req, ctx) => {
      await cancelTask(taskDeps, await owned(req.taskId, ctx), req.reason, requester(req, ctx));
      return { success: true, message: 'Cancellation requested' };
    }),
    pauseTask: wrap(async (req, ctx) => {
      await pauseTask(taskDeps, await owned(req.taskId, ctx), req.reason, requester(req, ctx));
      return { success: true, message: 'Pause requested; the workflow pauses at its next checkpoint' };
    }),
    resumeTask: wrap(async (req, ctx) => {
      await resumeTask(taskDeps, await owned(req.taskId, ctx));
      return { success: true, message: 'Task resumed' };
    }),
    getControlState: wrap(async (req, ctx) => {
      const row = await owned(req.taskId, ctx);
      const { state } = await readControl(d.bus.kv.control, row.id);
      return {
        isPaused: state.paused,
        isCancelled: state.cancel_requested || row.status === 'TASK_STATUS_CANCELLED',
        pausedAt: state.paused_at ? timestampFromDate(new Date(state.paused_at)) : undefined,
        pauseReason: state.pause_reason ?? '',
        pausedBy: state.paused_by ?? '',
        cancelReason: state.cancel_reason ?? '',
        cancelledBy: state.cancelled_by ?? '',
      };
    }),
    getSessionContext: unimplemented('GetSessionContext'),
    listTemplates: wrap(async () => ({
      templates: (d.templates?.list() ?? []).map((t) => ({ name: t.name, version: t.version, key: t.key, contentHash: t.contentHash })),
    })),
    approveTask: approvals ? wrap(approvals.approveTask) : unimplemented('ApproveTask'),
    getPendingApprovals: approvals ? wrap(approvals.getPendingApprovals) : unimplemented('GetPendingApprovals'),
  };
}

/** The task row if the context's caller may see it; an unknown or malformed id is NotFound. */
async function ownedTask(store: TaskStore, taskId: string, ctx: HandlerContext): Promise<TaskRow> {
  const caller = callerOf(ctx);
  if (!isUuid(taskId)) throw notFound('Task not found');
  const row = await store.getTask(taskId);
  if (!row) throw notFound('Task not found');
  assertTaskOwner(caller, row);
  return row;
}

/** Who asked for a control command: a user caller is recorded as itself, never as the body says. */
function requester(req: { requestedBy: string }, ctx: HandlerContext): string | undefined {
  const c = callerOf(ctx);
  return c.kind === 'user' ? c.userId : req.requestedBy || undefined;
}

/** A live or archived event as the TaskUpdate message (`at`: the event's time). */
export function eventToUpdate(
  e: Pick<WorkflowEvent, 'workflow_id' | 'seq' | 'stream_id' | 'agent_id' | 'message'> & { type: string; payload?: unknown },
  at: Date,
): TaskUpdate {
  return create(TaskUpdateSchema, {
    workflowId: e.workflow_id,
    type: e.type,
    agentId: e.agent_id,
    message: e.message,
    timestamp: timestampFromDate(at),
    seq: BigInt(e.seq),
    streamId: e.stream_id,
    payload: (e.payload ?? undefined) as JsonObject | undefined,
  });
}

/**
 * StreamTaskExecution: replays stored events after the resume point, then follows live until
 * STREAM_END. The workflow's task must exist and be the caller's (its row is committed before
 * its first event, so an unknown workflow is NotFound rather than a stream that never ends).
 */
export function createStreamingService(d: { bus: Bus; store: TaskStore; log: Logger }): ServiceImpl<typeof StreamingService> {
  return {
    async *streamTaskExecution(req, ctx) {
      if (!req.workflowId || !isUuid(req.workflowId)) throw toConnectError(badRequest('workflow_id is required'));
      const fromStreamId = parseResumePoint(req.lastStreamId);
      if (req.lastStreamId && fromStreamId === undefined)
        throw toConnectError(badRequest('last_stream_id must be a stream id (<ms>-<seq>) or a sequence number'));
      try {
        await ownedTask(d.store, req.workflowId, ctx);
      } catch (err) {
        throw rpcError(err, d.log, 'rpc');
      }
      const after = fromStreamId ?? Number(req.lastEventId ?? 0n);
      const types = new Set(req.types.filter(Boolean));
      const consumer = await d.bus.js.consumers.get(STREAMS.events, {
        filter_subjects: subjects.events(req.workflowId),
        deliver_policy: DeliverPolicy.All,
      });
      const msgs = await consumer.consume();
      const onAbort = () => void msgs.close();
      ctx.signal.addEventListener('abort', onAbort, { once: true });
      // Each seq once and in order, even if stored twice or out of order (a publish re-sent
      // after an outage); a resume point older than what is retained gets REPLAY_GAP first.
      const order = new SeqOrder<WorkflowEvent>(after);
      let first = true;
      try {
        for await (const m of msgs) {
          const e = decodeEvent(m.data);
          // The resume point is at or past STREAM_END: the stream is over either way.
          if (e.type === 'STREAM_END' && e.seq <= order.last) break;
          let ready: WorkflowEvent[];
          if (first && e.seq > after + 1) {
            const gap = replayGap(after, e.seq);
            yield create(TaskUpdateSchema, {
              workflowId: req.workflowId,
              type: gap.type,
              agentId: 'streaming',
              message: gap.message,
              timestamp: timestampFromDate(new Date(gap.timestamp)),
              payload: { requested_after: gap.requested_after, first_available_seq: gap.first_available_seq },
            });
            ready = order.skipTo(e.seq - 1).concat(order.push(e));
          } else ready = order.push(e);
          first = false;
          for (const x of ready) {
            if (!types.size || types.has(x.type)) yield eventToUpdate(x, new Date(x.timestamp));
          }
          if (ready.some((x) => x.type === 'STREAM_END')) break;
        }
      } finally {
        ctx.signal.removeEventListener('abort', onAbort);
        await msgs.close().catch(() => {});
      }
    },
  };
}
