/**
 * /api/v1/sessions: list (limit/offset), details, history, events grouped by turn, PATCH
 * title, soft DELETE (204, idempotent). {sessionId} is the UUID or the external id; a session
 * a client named reports that name as `session_id` (its UUID as `id`).
 *
 * The bodies carry what existing clients of the reference platform read (the public Python
 * SDK): sessions with `user_id`, `context`, `tokens_used`, `cost_usd`, the task aggregates and
 * the latest task; history as `tasks`; events turns with `user_query`, `final_output` and
 * `metadata`. The earlier field names (`total_tokens`, `total_cost_usd`, `messages`, `query`)
 * are kept.
 */
import type { TemplatedApp } from 'uWebSockets.js';
import { conversation, type Session, type SessionTask, type SessionTurn } from '../sessions/index.js';
import type { EventRow } from '../tasks/index.js';
import { intParam, parseJsonBody, route, type Req } from './http.js';
import type { Principal } from '../kernel/index.js';
import { admitted, type RouteDeps } from './route-deps.js';

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

export function sessionBody(s: Session) {
  return {
    // A client that named its session finds it by that name (the reference SDK compares it).
    session_id: s.sessionId,
    id: s.id,
    external_id: s.externalId,
    user_id: s.userId,
    title: s.title,
    context: s.context,
    created_at: s.createdAt.toISOString(),
    updated_at: s.updatedAt.toISOString(),
    last_activity_at: s.lastActivityAt.toISOString(),
    // Sessions have no expiry and no token budget here; the fields say so explicitly.
    expires_at: null,
    token_budget: null,
    budget_remaining: null,
    budget_utilization: 0,
    is_near_budget_limit: false,
    task_count: s.taskCount,
    tokens_used: s.tokensUsed,
    total_tokens: s.tokensUsed,
    cost_usd: s.costUsd,
    total_cost_usd: s.costUsd,
    successful_tasks: s.successfulTasks,
    failed_tasks: s.failedTasks,
    success_rate: s.taskCount ? s.successfulTasks / s.taskCount : 0,
    average_cost_per_task: s.taskCount ? s.costUsd / s.taskCount : 0,
    latest_task_query: s.latestTaskQuery,
    latest_task_status: s.latestTaskStatus,
    first_task_mode: s.firstTaskMode,
    is_research_session: s.isResearch,
    research_strategy: s.researchStrategy,
    is_active: s.isActive,
  };
}

const durationMs = (t: SessionTask) => (t.completedAt ? Math.max(0, t.completedAt.getTime() - (t.startedAt ?? t.createdAt).getTime()) : null);

function historyTaskBody(t: SessionTask) {
  return {
    task_id: t.id,
    workflow_id: t.id,
    query: t.query,
    status: t.status,
    mode: t.mode,
    result: t.result,
    error_message: t.error,
    total_tokens: t.totalTokens,
    total_cost_usd: t.costUsd,
    duration_ms: durationMs(t),
    created_at: t.createdAt.toISOString(),
    started_at: iso(t.startedAt),
    completed_at: iso(t.completedAt),
  };
}

const eventBody = (e: EventRow) => ({
  workflow_id: e.workflow_id,
  seq: e.seq,
  stream_id: e.stream_id,
  type: e.type,
  agent_id: e.agent_id,
  message: e.message,
  timestamp: e.ts.toISOString(),
  ...(e.payload ? { payload: e.payload } : {}),
});

function turnBody(t: SessionTurn) {
  const agents = [...new Set(t.events.map((e) => e.agent_id).filter((a) => a && a !== 'orchestrator'))];
  return {
    turn: t.turn,
    task_id: t.task.id,
    query: t.task.query,
    user_query: t.task.query,
    status: t.task.status,
    final_output: t.task.result,
    timestamp: t.task.createdAt.toISOString(),
    events: t.events.map(eventBody),
    metadata: { tokens_used: t.task.totalTokens, execution_time_ms: durationMs(t.task), agents_involved: agents },
  };
}

export function registerSessionRoutes(app: TemplatedApp, d: RouteDeps): void {
  const sessions = d.domains.sessions;
  const h = (fn: (req: Req, p: Principal) => Promise<unknown>, status = 200) => admitted(d.admit, fn, status);
  route(
    app,
    'get',
    '/api/v1/sessions',
    h(async (req, p) => {
      const limit = intParam(req.query, 'limit', 20, 1, 100);
      const offset = intParam(req.query, 'offset', 0, 0, 1_000_000_000);
      const r = await sessions.list(p, limit, offset);
      return { sessions: r.sessions.map(sessionBody), total_count: r.total, limit, offset };
    }),
    d.ctx,
  );
  route(
    app,
    'get',
    '/api/v1/sessions/:id',
    h(async (req, p) => sessionBody(await sessions.get(p, req.params[0]))),
    d.ctx,
  );
  route(
    app,
    'get',
    '/api/v1/sessions/:id/history',
    h(async (req, p) => {
      const r = await sessions.history(p, req.params[0], intParam(req.query, 'limit', 100, 1, 1000));
      const messages = conversation(r.tasks).map((m) => ({
        role: m.role,
        content: m.content,
        task_id: m.taskId,
        timestamp: m.at.toISOString(),
        ...(m.status !== undefined ? { status: m.status } : {}),
        ...(m.tokens !== undefined ? { tokens: m.tokens } : {}),
      }));
      return { session_id: r.sessionId, messages, count: messages.length, tasks: r.tasks.map(historyTaskBody), total: r.total };
    }),
    d.ctx,
  );
  route(
    app,
    'get',
    '/api/v1/sessions/:id/events',
    h(async (req, p) => {
      const limit = intParam(req.query, 'limit', 50, 1, 500);
      const offset = intParam(req.query, 'offset', 0, 0, 1_000_000_000);
      const r = await sessions.events(p, req.params[0], limit, offset);
      return { session_id: r.sessionId, turns: r.turns.map(turnBody), count: r.total, total_count: r.total, limit, offset };
    }),
    d.ctx,
  );
  route(
    app,
    'patch',
    '/api/v1/sessions/:id',
    h(async (req, p) => sessionBody(await sessions.updateTitle(p, req.params[0], parseJsonBody(req)))),
    d.ctx,
    { body: true },
  );
  route(
    app,
    'del',
    '/api/v1/sessions/:id',
    h((req, p) => sessions.softDelete(p, req.params[0]), 204),
    d.ctx,
  );
}
