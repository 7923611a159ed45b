/**
 * GET /api/v1/tasks/{id}/timeline: the deterministic timeline of a workflow (its steps with
 * agent, start, end, duration, status and retries; the workflow's start, end and duration),
 * built by src/runtime/timeline.ts from the archived events and the step journal.
 *
 * Owner-only like GET /api/v1/tasks/{id}: the task is first read through the orchestrator as
 * the caller, which applies the ownership rule (another tenant's task 404, another user's in
 * the same tenant 403); only then are its events and journal read.
 */
import { timestampDate } from '@bufbuild/protobuf/wkt';
import type { TemplatedApp } from 'uWebSockets.js';
import { loadTimeline, type Timeline, type TimelineStep } from '../runtime/index.js';
import { TASK_STATUS_NAME, callAs, callerOfPrincipal, isUuid, notFound } from '../kernel/index.js';
import { route } from './http.js';
import type { RouteDeps } from './route-deps.js';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

function stepBody(s: TimelineStep) {
  return {
    name: s.name,
    agent: s.agent,
    status: s.status,
    started_at: iso(s.startedAt),
    ended_at: iso(s.endedAt),
    duration_ms: s.durationMs,
    retries: s.retries,
    first_seq: s.firstSeq,
    last_seq: s.lastSeq,
    seq_after: s.seqAfter,
    event_count: s.eventCount,
    journaled: s.journaled,
  };
}

export function timelineBody(t: Timeline) {
  return {
    workflow_id: t.workflowId,
    task_id: t.workflowId,
    status: t.status,
    source: t.source,
    created_at: iso(t.createdAt),
    started_at: iso(t.startedAt),
    ended_at: iso(t.endedAt),
    duration_ms: t.durationMs,
    steps: t.steps.map(stepBody),
    stats: { steps: t.steps.length, events: t.eventCount, retries: t.retries },
  };
}

export function registerTimelineRoute(app: TemplatedApp, d: RouteDeps): void {
  route(
    app,
    'get',
    '/api/v1/tasks/:id/timeline',
    async (req) => {
      const { p, headers } = await d.admit(req);
      const id = req.params[0];
      if (!isUuid(id)) throw notFound('Task not found');
      const s = await d.orchestrator.getTaskStatus({ taskId: id }, callAs(callerOfPrincipal(p)));
      const timeline = await loadTimeline(
        { journal: d.bus.journal, events: (wf) => d.domains.tasks.timelineEvents(wf) },
        {
          workflowId: s.taskId,
          status: TASK_STATUS_NAME[s.status],
          createdAt: s.createdAt ? timestampDate(s.createdAt) : null,
          completedAt: s.completedAt ? timestampDate(s.completedAt) : null,
        },
      );
      return { status: 200, headers: { ...headers, 'X-Workflow-ID': s.taskId }, body: timelineBody(timeline) };
    },
    d.ctx,
  );
}
