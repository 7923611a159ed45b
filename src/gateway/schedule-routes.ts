/**
 * /api/v1/schedules: create, list, details, update (any subset), runs, pause, resume, delete.
 * Every schedule belongs to the caller's user and tenant; another owner's schedule answers
 * 404 like a missing one. Limits (per-user count, minimum interval, budget) come from
 * SCHEDULE_MAX_PER_USER, SCHEDULE_MIN_INTERVAL_MINS and SCHEDULE_MAX_BUDGET_USD.
 */
import type { TemplatedApp } from 'uWebSockets.js';
import { badRequest, conflict, forbidden, notFound, type Principal } from '../kernel/index.js';
import { notAvailableField, notAvailableMessage } from '../tasks/index.js';
import {
  checkInterval,
  nextRun,
  validateCron,
  validateTimezone,
  ScheduleLimitError,
  type Owner,
  type SchedulePatch,
  type ScheduleStatus,
  type ScheduleRow,
  type RunRow,
} from '../scheduler/index.js';
import { intParam, parseJsonBody, route, type Req } from './http.js';
import { admitted, type RouteDeps } from './route-deps.js';

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

/** The full schedule object of the spec. */
function scheduleJson(r: ScheduleRow) {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    cron_expression: r.cron_expression,
    timezone: r.timezone,
    task_query: r.task_query,
    task_context: r.task_context ?? {},
    max_budget_per_run_usd: r.max_budget_per_run_usd,
    timeout_seconds: r.timeout_seconds,
    status: r.status,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
    next_run_at: iso(r.next_run_at),
    last_run_at: iso(r.last_run_at),
    total_runs: r.total_runs,
    successful_runs: r.successful_runs,
    failed_runs: r.failed_runs,
  };
}

/** An item of the list endpoint. */
function scheduleSummaryJson(r: ScheduleRow) {
  return {
    id: r.id,
    name: r.name,
    cron_expression: r.cron_expression,
    timezone: r.timezone,
    status: r.status,
    next_run_at: iso(r.next_run_at),
    total_runs: r.total_runs,
    successful_runs: r.successful_runs,
    failed_runs: r.failed_runs,
  };
}

/** A run record of the spec; result, error_message, model_used, provider, duration_ms, started_at, completed_at omitted when empty. */
function runJson(r: RunRow) {
  const out: Record<string, unknown> = {
    workflow_id: r.workflow_id ?? '',
    query: r.query,
    status: r.status,
  };
  if (r.result) out.result = r.result;
  if (r.error_message) out.error_message = r.error_message;
  if (r.model_used) out.model_used = r.model_used;
  if (r.provider) out.provider = r.provider;
  out.total_tokens = r.total_tokens;
  out.total_cost_usd = r.total_cost_usd;
  if (r.duration_ms !== null && r.duration_ms !== undefined) out.duration_ms = Number(r.duration_ms);
  out.triggered_at = iso(r.triggered_at);
  if (r.started_at) out.started_at = iso(r.started_at);
  if (r.completed_at) out.completed_at = iso(r.completed_at);
  return out;
}

const NAME_MAX = 255;
const DEFAULT_BUDGET_USD = 10.0;
const DEFAULT_TIMEOUT_SECONDS = 600;
const MAX_TIMEOUT_SECONDS = 7 * 24 * 3600;
const NOT_FOUND = 'Schedule not found';

const ownerOf = (p: Principal): Owner => ({ userId: p.userId ?? null, tenantId: p.tenantId ?? null });

function objectBody(req: Req, optional = false): Record<string, unknown> {
  if (optional && (!req.body || req.body.length === 0)) return {};
  const b = parseJsonBody(req);
  if (b === null || typeof b !== 'object' || Array.isArray(b)) throw badRequest('request body must be a JSON object');
  return b as Record<string, unknown>;
}

function name(v: unknown): string {
  if (typeof v !== 'string' || !v.trim()) throw badRequest('name is required');
  if (v.length > NAME_MAX) throw badRequest(`name must be at most ${NAME_MAX} characters`);
  return v;
}

function description(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw badRequest('description must be a string');
  return v;
}

function taskQuery(v: unknown): string {
  if (typeof v !== 'string' || !v.trim()) throw badRequest('task_query is required');
  return v;
}

function taskContext(v: unknown): Record<string, unknown> {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) throw badRequest('task_context must be an object');
  // Refused now rather than at every run: SubmitTask refuses these keys too.
  const notYet = notAvailableField({}, v as Record<string, unknown>);
  if (notYet) throw badRequest(notAvailableMessage(`task_${notYet}`));
  return v as Record<string, unknown>;
}

function budget(v: unknown, max: number): number {
  if (v === undefined || v === null) return Math.min(DEFAULT_BUDGET_USD, max);
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) throw badRequest('max_budget_per_run_usd must be a positive number');
  if (v > max) throw badRequest(`max_budget_per_run_usd must be at most ${max}`);
  return v;
}

function timeout(v: unknown): number {
  if (v === undefined || v === null) return DEFAULT_TIMEOUT_SECONDS;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > MAX_TIMEOUT_SECONDS) {
    throw badRequest(`timeout_seconds must be an integer between 1 and ${MAX_TIMEOUT_SECONDS}`);
  }
  return v;
}

function reasonOf(body: Record<string, unknown>): string {
  const r = body.reason;
  if (r === undefined || r === null) return '';
  if (typeof r !== 'string') throw badRequest('reason must be a string');
  return r.slice(0, 1000);
}

export function registerScheduleRoutes(app: TemplatedApp, d: RouteDeps): void {
  const store = d.domains.schedules;
  const limits = d.scheduleLimits;
  const h = (fn: (req: Req, o: Owner) => Promise<unknown>) => admitted(d.admit, (req, p) => fn(req, ownerOf(p)));
  /** Cron + timezone validated together, interval checked; returns the normalised values. */
  const cronRules = (cron: unknown, tz: unknown) => {
    const expr = validateCron(cron);
    const zone = validateTimezone(tz);
    checkInterval(expr, limits.minIntervalMinutes);
    return { expr, zone };
  };

  route(
    app,
    'post',
    '/api/v1/schedules',
    h(async (req, o) => {
      const b = objectBody(req);
      const n = name(b.name);
      const { expr, zone } = cronRules(b.cron_expression, b.timezone);
      const s = {
        name: n,
        description: description(b.description),
        cronExpression: expr,
        timezone: zone,
        taskQuery: taskQuery(b.task_query),
        taskContext: taskContext(b.task_context),
        maxBudgetPerRunUsd: budget(b.max_budget_per_run_usd, limits.maxBudgetUsd),
        timeoutSeconds: timeout(b.timeout_seconds),
        nextRunAt: nextRun(expr, zone),
      };
      try {
        const row = await store.create(o, s, limits.maxPerUser);
        return { schedule_id: row.id, message: 'Schedule created successfully', next_run_at: row.next_run_at?.toISOString() ?? null };
      } catch (err) {
        if (err instanceof ScheduleLimitError) throw forbidden(err.message);
        throw err;
      }
    }),
    d.ctx,
    { body: true },
  );

  route(
    app,
    'get',
    '/api/v1/schedules',
    h(async (req, o) => {
      const page = intParam(req.query, 'page', 1, 1, 1_000_000);
      const pageSize = intParam(req.query, 'page_size', 50, 1, 100);
      const st = req.query.get('status');
      if (st && st !== 'ACTIVE' && st !== 'PAUSED') throw badRequest('status must be ACTIVE or PAUSED');
      const { rows, total } = await store.list(o, page, pageSize, (st || undefined) as ScheduleStatus | undefined);
      return { schedules: rows.map(scheduleSummaryJson), total, page, page_size: pageSize };
    }),
    d.ctx,
  );

  route(
    app,
    'get',
    '/api/v1/schedules/:id',
    h(async (req, o) => {
      const row = await store.get(o, req.params[0]);
      if (!row) throw notFound(NOT_FOUND);
      return scheduleJson(row);
    }),
    d.ctx,
  );

  route(
    app,
    'put',
    '/api/v1/schedules/:id',
    h(async (req, o) => {
      const b = objectBody(req);
      const id = req.params[0];
      const cur = await store.get(o, id);
      if (!cur) throw notFound(NOT_FOUND);
      const patch: SchedulePatch = {};
      if (b.name !== undefined) patch.name = name(b.name);
      if (b.description !== undefined) patch.description = description(b.description);
      if (b.task_query !== undefined) patch.task_query = taskQuery(b.task_query);
      if (b.task_context !== undefined) patch.task_context = taskContext(b.task_context);
      if (b.max_budget_per_run_usd !== undefined) patch.max_budget_per_run_usd = budget(b.max_budget_per_run_usd, limits.maxBudgetUsd);
      if (b.timeout_seconds !== undefined) patch.timeout_seconds = timeout(b.timeout_seconds);
      if (b.cron_expression !== undefined || b.timezone !== undefined) {
        const { expr, zone } = cronRules(b.cron_expression ?? cur.cron_expression, b.timezone !== undefined ? b.timezone : cur.timezone);
        patch.cron_expression = expr;
        patch.timezone = zone;
        patch.next_run_at = nextRun(expr, zone);
      }
      const row = await store.update(o, id, patch);
      if (!row) throw notFound(NOT_FOUND);
      return scheduleJson(row);
    }),
    d.ctx,
    { body: true },
  );

  route(
    app,
    'get',
    '/api/v1/schedules/:id/runs',
    h(async (req, o) => {
      const page = intParam(req.query, 'page', 1, 1, 1_000_000);
      const pageSize = intParam(req.query, 'page_size', 20, 1, 100);
      const s = await store.get(o, req.params[0]);
      if (!s) throw notFound(NOT_FOUND);
      const { rows, total } = await store.runs(s.id, page, pageSize);
      return { runs: rows.map(runJson), total_count: total, page, page_size: pageSize };
    }),
    d.ctx,
  );

  route(
    app,
    'post',
    '/api/v1/schedules/:id/pause',
    h(async (req, o) => {
      const r = await store.pause(o, req.params[0], reasonOf(objectBody(req, true)));
      if (!r) throw notFound(NOT_FOUND);
      if (r.state === 'already') throw conflict('Schedule is already paused');
      return { message: 'Schedule paused successfully', paused_at: r.pausedAt.toISOString() };
    }),
    d.ctx,
    { body: true },
  );

  route(
    app,
    'post',
    '/api/v1/schedules/:id/resume',
    h(async (req, o) => {
      reasonOf(objectBody(req, true));
      const r = await store.resume(o, req.params[0], (s) => nextRun(s.cron_expression, s.timezone));
      if (!r) throw notFound(NOT_FOUND);
      if (r.state === 'active') throw conflict('Schedule is not paused');
      return { message: 'Schedule resumed successfully', next_run_at: r.nextRunAt.toISOString() };
    }),
    d.ctx,
    { body: true },
  );

  route(
    app,
    'del',
    '/api/v1/schedules/:id',
    h(async (req, o) => {
      if (!(await store.delete(o, req.params[0]))) throw notFound(NOT_FOUND);
      return { message: 'Schedule deleted successfully' };
    }),
    d.ctx,
  );
}
