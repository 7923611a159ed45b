/** /openapi.json, generated from the same TypeBox schemas that validate requests. */
import type { TSchema } from '@sinclair/typebox';
import * as S from './schemas.js';
import { skillPaths } from './skill-routes.js';
import { agentPaths, agentSchemas } from './agent-routes.js';
import { mcpPaths } from './mcp-route.js';
import { metricsPaths } from './metrics-route.js';
import { channelPaths } from './channel-routes.js';
import { blobPaths } from './blob-routes.js';
import { daemonPaths } from './daemon-routes.js';
import { memoryPaths, memorySchemas } from './memory-routes.js';
import { approvalPaths, approvalSchemas } from './approval-routes.js';
import { reviewPaths, reviewSchemas } from './review-routes.js';
import { swarmPaths, swarmSchemas } from './swarm-routes.js';
import { toolSourcePaths, toolSourceSchemas } from './tool-source-routes.js';
import { openAiPaths, openAiSchemas } from './openai/openapi.js';

const json = (schema: TSchema | { $ref: string }, description = 'OK') => ({ description, content: { 'application/json': { schema } } });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const err = (description: string) => json(ref('Error'), description);
const headerParam = (name: string, description: string) => ({ name, in: 'header', required: false, schema: { type: 'string' }, description });
const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' }, description: 'Task (workflow) id' };
const security = [{ ApiKeyAuth: [] }, { BearerAuth: [] }];
const schedParam = { name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' }, description: 'Schedule id' };
const toolParam = { name: 'name', in: 'path', required: true, schema: { type: 'string' }, description: 'Tool name' };
const sessionParam = { name: 'sessionId', in: 'path', required: true, schema: { type: 'string' }, description: 'Session UUID or external id' };
const SUBMIT_400 =
  'Invalid JSON, missing query, a bad field, disable_ai combined with a model control, or a field that is not available yet ' +
  '(provider_override, skill, research_strategy, max_iterations, enable_verification: true, and in context provider_override, skill, ' +
  'research_strategy, template, template_name, template_version, disable_ai: true): "<field> is not available yet"';

/** Strips TypeBox's symbol keys so the document is plain JSON Schema. */
const plain = (s: TSchema) => JSON.parse(JSON.stringify(s)) as Record<string, unknown>;

function controlOp(operationId: string, summary: string) {
  return {
    post: {
      summary,
      operationId,
      security,
      parameters: [idParam],
      requestBody: { required: false, content: { 'application/json': { schema: ref('ControlRequest') } } },
      responses: { 200: json(ref('ControlResponse')), 400: err('Invalid body'), 404: err('Task not found'), 409: err("The task's state does not allow it") },
    },
  };
}

export function buildOpenApi(version: string) {
  return {
    openapi: '3.0.3',
    info: {
      title: 'Task Orchestration Service',
      version,
      description:
        'Submit natural-language tasks, follow their progress over SSE or WebSocket and read results. ' +
        'Errors are {"error": <message>}. Authentication: X-API-Key or Authorization: Bearer (an API key or a JWT access token); ' +
        'off when GATEWAY_SKIP_AUTH=1 (development). Authenticated callers are limited per key (RATE_LIMIT_REQUESTS per RATE_LIMIT_WINDOW, ' +
        'default 60 per 60 s; 20 per second on the task list): X-RateLimit-Limit/-Remaining/-Reset on every reply, 429 ' +
        '{"error": "Rate limit exceeded", "retry_after": <seconds>} with Retry-After.',
    },
    servers: [{ url: '/' }],
    components: {
      securitySchemes: {
        ApiKeyAuth: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        BearerAuth: { type: 'http', scheme: 'bearer' },
        ApiKeyQuery: { type: 'apiKey', in: 'query', name: 'api_key' },
      },
      schemas: {
        TaskSubmitRequest: plain(S.TaskSubmitRequest),
        TaskSubmitResponse: plain(S.TaskSubmitResponse),
        TaskStreamSubmitResponse: plain(S.TaskStreamSubmitResponse),
        TaskStatus: plain(S.TaskStatusObject),
        TaskSummary: plain(S.TaskSummary),
        TaskList: plain(S.TaskList),
        Event: plain(S.Event),
        EventList: plain(S.EventList),
        Error: plain(S.ErrorBody),
        Health: plain(S.Health),
        User: plain(S.User),
        RegisterRequest: plain(S.RegisterRequest),
        LoginRequest: plain(S.LoginRequest),
        RefreshRequest: plain(S.RefreshRequest),
        Tokens: plain(S.Tokens),
        RegisterResponse: plain(S.RegisterResponse),
        LoginResponse: plain(S.LoginResponse),
        ApiKeyInfo: plain(S.ApiKeyInfo),
        ApiKeyList: plain(S.ApiKeyList),
        CreateApiKeyRequest: plain(S.CreateApiKeyRequest),
        CreatedApiKey: plain(S.CreatedApiKey),
        RegeneratedKey: plain(S.RegeneratedKey),
        RateLimited: plain(S.RateLimitBody),
        RevokedKey: plain(S.RevokedKey),
        Tool: plain(S.Tool),
        ToolExecuteRequest: plain(S.ToolExecuteRequest),
        ToolExecution: plain(S.ToolExecution),
        Session: plain(S.SessionObject),
        SessionList: plain(S.SessionList),
        SessionPatch: plain(S.SessionPatch),
        SessionHistory: plain(S.SessionHistory),
        SessionHistoryTask: plain(S.SessionHistoryTask),
        SessionEvents: plain(S.SessionEvents),
        WorkspaceEntry: plain(S.WorkspaceEntry),
        WorkspaceListing: plain(S.WorkspaceListing),
        ControlRequest: plain(S.ControlRequest),
        ControlResponse: plain(S.ControlResponse),
        ControlState: plain(S.ControlState),
        Timeline: plain(S.Timeline),
        TimelineStep: plain(S.TimelineStep),
        ScheduleCreate: plain(S.ScheduleCreate),
        ScheduleUpdate: plain(S.ScheduleUpdate),
        Schedule: plain(S.ScheduleObject),
        ScheduleSummary: plain(S.ScheduleSummary),
        ScheduleList: plain(S.ScheduleList),
        ScheduleCreated: plain(S.ScheduleCreated),
        ScheduleRun: plain(S.ScheduleRun),
        ScheduleRuns: plain(S.ScheduleRuns),
        ReasonBody: plain(S.ReasonBody),
        SchedulePaused: plain(S.SchedulePaused),
        ScheduleResumed: plain(S.ScheduleResumed),
        Message: plain(S.MessageBody),
        Readiness: plain(S.Readiness),
        ...openAiSchemas,
        ...approvalSchemas,
        ...reviewSchemas,
        ...swarmSchemas,
        ...toolSourceSchemas,
        ...agentSchemas,
        ...memorySchemas,
      },
    },
    paths: {
      '/api/v1/schedules': {
        post: {
          summary: 'Create a cron schedule (5 fields, IANA timezone; at least SCHEDULE_MIN_INTERVAL_MINS between runs; at most SCHEDULE_MAX_PER_USER per user)',
          operationId: 'createSchedule',
          security,
          requestBody: { required: true, content: { 'application/json': { schema: ref('ScheduleCreate') } } },
          responses: {
            200: json(ref('ScheduleCreated')),
            400: err('Invalid cron, timezone, interval too short, invalid fields, or a task_context key that is not available yet (see POST /api/v1/tasks)'),
            403: err('schedule limit reached'),
          },
        },
        get: {
          summary: "The caller's schedules",
          operationId: 'listSchedules',
          security,
          parameters: [
            { name: 'page', in: 'query', schema: { type: 'integer', minimum: 1, default: 1 } },
            { name: 'page_size', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 50 } },
            { name: 'status', in: 'query', schema: { type: 'string', enum: ['ACTIVE', 'PAUSED'] } },
          ],
          responses: { 200: json(ref('ScheduleList')), 400: err('Invalid page, page_size or status') },
        },
      },
      '/api/v1/schedules/{id}': {
        get: {
          summary: 'A schedule',
          operationId: 'getSchedule',
          security,
          parameters: [schedParam],
          responses: { 200: json(ref('Schedule')), 404: err('Schedule not found') },
        },
        put: {
          summary: 'Update any subset of the fields',
          operationId: 'updateSchedule',
          security,
          parameters: [schedParam],
          requestBody: { required: true, content: { 'application/json': { schema: ref('ScheduleUpdate') } } },
          responses: { 200: json(ref('Schedule')), 400: err('Invalid fields'), 404: err('Schedule not found') },
        },
        delete: {
          summary: 'Delete permanently',
          operationId: 'deleteSchedule',
          security,
          parameters: [schedParam],
          responses: { 200: json(ref('Message')), 404: err('Schedule not found') },
        },
      },
      '/api/v1/schedules/{id}/runs': {
        get: {
          summary: 'Run records, newest first',
          operationId: 'listScheduleRuns',
          security,
          parameters: [
            schedParam,
            { name: 'page', in: 'query', schema: { type: 'integer', minimum: 1, default: 1 } },
            { name: 'page_size', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
          ],
          responses: { 200: json(ref('ScheduleRuns')), 404: err('Schedule not found') },
        },
      },
      '/api/v1/schedules/{id}/pause': {
        post: {
          summary: 'Pause (409 when already paused)',
          operationId: 'pauseSchedule',
          security,
          parameters: [schedParam],
          requestBody: { required: false, content: { 'application/json': { schema: ref('ReasonBody') } } },
          responses: { 200: json(ref('SchedulePaused')), 404: err('Schedule not found'), 409: err('Schedule is already paused') },
        },
      },
      '/api/v1/schedules/{id}/resume': {
        post: {
          summary: 'Resume (409 when not paused)',
          operationId: 'resumeSchedule',
          security,
          parameters: [schedParam],
          requestBody: { required: false, content: { 'application/json': { schema: ref('ReasonBody') } } },
          responses: { 200: json(ref('ScheduleResumed')), 404: err('Schedule not found'), 409: err('Schedule is not paused') },
        },
      },
      '/api/v1/sessions': {
        get: {
          summary: "The caller's sessions, most recently active first",
          operationId: 'listSessions',
          security,
          parameters: [
            { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
            { name: 'offset', in: 'query', schema: { type: 'integer', minimum: 0, default: 0 } },
          ],
          responses: { 200: json(ref('SessionList')), 400: err('Invalid limit or offset') },
        },
      },
      '/api/v1/sessions/{sessionId}': {
        get: {
          summary: 'Session details',
          operationId: 'getSession',
          security,
          parameters: [sessionParam],
          responses: { 200: json(ref('Session')), 404: err('Session not found') },
        },
        patch: {
          summary: 'Update the title',
          operationId: 'updateSession',
          security,
          parameters: [sessionParam],
          requestBody: { required: true, content: { 'application/json': { schema: ref('SessionPatch') } } },
          responses: { 200: json(ref('Session')), 400: err('title is required'), 404: err('Session not found') },
        },
        delete: {
          summary: 'Soft delete (idempotent)',
          operationId: 'deleteSession',
          security,
          parameters: [sessionParam],
          responses: { 204: { description: 'Deleted (or already gone)' } },
        },
      },
      '/api/v1/sessions/{sessionId}/history': {
        get: {
          summary: 'Conversation history: each task as a user message and its result as the assistant reply (messages), and the same turns as tasks',
          operationId: 'getSessionHistory',
          security,
          parameters: [
            sessionParam,
            { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 }, description: 'Most recent turns' },
          ],
          responses: { 200: json(ref('SessionHistory')), 404: err('Session not found') },
        },
      },
      '/api/v1/sessions/{sessionId}/files': {
        get: {
          summary: "List the session's workspace (files agents produced); sorted by path",
          operationId: 'listWorkspace',
          security,
          parameters: [
            sessionParam,
            { name: 'path', in: 'query', schema: { type: 'string', default: '/' }, description: 'Subdirectory' },
            { name: 'recursive', in: 'query', schema: { type: 'boolean', default: false } },
          ],
          responses: {
            200: json(ref('WorkspaceListing')),
            400: err('invalid path: traversal not allowed'),
            404: err('Session not found, or path not found'),
          },
        },
      },
      '/api/v1/sessions/{sessionId}/files/{path}': {
        get: {
          summary: 'Download a workspace file; Content-Type is detected from its content',
          operationId: 'downloadWorkspaceFile',
          security,
          parameters: [
            sessionParam,
            { name: 'path', in: 'path', required: true, schema: { type: 'string' }, description: 'File path inside the workspace (may contain /)' },
          ],
          responses: {
            200: { description: 'The file', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } },
            400: err('invalid path: traversal not allowed'),
            404: err('Session not found, file not found, or path is a directory'),
            413: err('file exceeds maximum size limit (100MB)'),
          },
        },
      },
      '/api/v1/sessions/{sessionId}/events': {
        get: {
          summary: 'Archived events grouped by turn (one turn per task)',
          operationId: 'getSessionEvents',
          security,
          parameters: [
            sessionParam,
            { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 500, default: 50 }, description: 'Most recent turns' },
            { name: 'offset', in: 'query', schema: { type: 'integer', minimum: 0, default: 0 }, description: 'Newest turns to skip' },
          ],
          responses: { 200: json(ref('SessionEvents')), 400: err('Invalid limit or offset'), 404: err('Session not found') },
        },
      },
      '/api/v1/auth/register': {
        post: {
          summary: 'Create a user in a new tenant; returns tokens and the default API key (shown once)',
          operationId: 'register',
          requestBody: { required: true, content: { 'application/json': { schema: ref('RegisterRequest') } } },
          responses: { 201: json(ref('RegisterResponse'), 'Created'), 400: err('Invalid email or password'), 409: err('email already registered') },
        },
      },
      '/api/v1/auth/login': {
        post: {
          summary: 'Exchange email and password for JWT tokens',
          operationId: 'login',
          requestBody: { required: true, content: { 'application/json': { schema: ref('LoginRequest') } } },
          responses: { 200: json(ref('LoginResponse')), 400: err('email and password are required'), 401: err('Invalid email or password') },
        },
      },
      '/api/v1/auth/refresh': {
        post: {
          summary: 'Rotate a refresh token: returns new tokens; a reused refresh token revokes its whole family',
          operationId: 'refreshToken',
          requestBody: { required: true, content: { 'application/json': { schema: ref('RefreshRequest') } } },
          responses: { 200: json(ref('Tokens')), 400: err('refresh_token is required'), 401: err('Invalid or expired token') },
        },
      },
      '/api/v1/auth/me': {
        get: {
          summary: 'The authenticated user',
          operationId: 'me',
          security,
          responses: { 200: json(ref('User')), 401: err('Authentication required'), 429: json(ref('RateLimited'), 'Rate limit exceeded') },
        },
      },
      '/api/v1/auth/refresh-key': {
        post: {
          summary: 'Revoke the default API key and issue a new one (shown once)',
          operationId: 'refreshKey',
          security,
          responses: { 200: json(ref('RegeneratedKey')), 401: err('Authentication required') },
        },
      },
      '/api/v1/auth/api-keys': {
        get: {
          summary: "The caller's active API keys (never the keys themselves)",
          operationId: 'listApiKeys',
          security,
          responses: { 200: json(ref('ApiKeyList')), 401: err('Authentication required') },
        },
        post: {
          summary: 'Create an API key (shown once; stored hashed)',
          operationId: 'createApiKey',
          security,
          requestBody: { required: true, content: { 'application/json': { schema: ref('CreateApiKeyRequest') } } },
          responses: { 201: json(ref('CreatedApiKey'), 'Created'), 400: err('name is required'), 401: err('Authentication required') },
        },
      },
      '/api/v1/auth/api-keys/{id}': {
        delete: {
          summary: 'Revoke an API key',
          operationId: 'revokeApiKey',
          security,
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }],
          responses: { 200: json(ref('RevokedKey')), 404: err('API key not found') },
        },
      },
      '/health': {
        get: {
          summary: 'Health probe: 503 while the process has lost its NATS connection (it reconnects by itself)',
          operationId: 'health',
          responses: { 200: json(ref('Health')), 503: json(ref('Health'), 'Unhealthy: NATS unreachable') },
        },
      },
      '/readiness': {
        get: {
          summary: 'Readiness probe: checks the orchestrator, NATS and the database',
          operationId: 'readiness',
          responses: { 200: json(ref('Readiness')), 503: json(ref('Readiness'), 'Not ready') },
        },
      },
      ...metricsPaths,
      '/openapi.json': { get: { summary: 'This document', operationId: 'openapi', responses: { 200: { description: 'OpenAPI 3.0 document' } } } },
      '/api/v1/tasks': {
        post: {
          summary: 'Submit a task',
          operationId: 'submitTask',
          security,
          parameters: [
            headerParam('Idempotency-Key', 'Same key within 24 hours returns the cached response and ignores the new body'),
            headerParam('traceparent', 'W3C trace context; the trace id is carried into logs and events'),
          ],
          requestBody: { required: true, content: { 'application/json': { schema: ref('TaskSubmitRequest') } } },
          responses: {
            200: {
              ...json(ref('TaskSubmitResponse'), 'Accepted; the task is QUEUED'),
              headers: { 'X-Workflow-ID': { schema: { type: 'string' } }, 'X-Session-ID': { schema: { type: 'string' } } },
            },
            400: err(SUBMIT_400),
            401: err('Authentication required'),
            503: {
              ...err('The task queue (NATS) is unreachable: the task was not accepted and will not run; retry after Retry-After seconds'),
              headers: { 'Retry-After': { schema: { type: 'integer' } } },
            },
          },
        },
        get: {
          summary: 'List tasks, newest first',
          operationId: 'listTasks',
          security,
          parameters: [
            { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
            { name: 'offset', in: 'query', schema: { type: 'integer', minimum: 0, default: 0 } },
            { name: 'session_id', in: 'query', schema: { type: 'string' }, description: 'UUID or external id' },
            { name: 'status', in: 'query', schema: { type: 'string', enum: [...S.LIST_STATUS_FILTERS] }, description: 'CANCELED is accepted for CANCELLED' },
          ],
          responses: { 200: json(ref('TaskList')), 400: err('Invalid limit, offset or status') },
        },
      },
      '/api/v1/tasks/stream': {
        post: {
          summary: 'Submit a task and get its stream URL',
          operationId: 'submitTaskAndStream',
          security,
          requestBody: { required: true, content: { 'application/json': { schema: ref('TaskSubmitRequest') } } },
          responses: { 201: json(ref('TaskStreamSubmitResponse'), 'Created'), 400: err(SUBMIT_400) },
        },
      },
      '/api/v1/tasks/{id}': {
        get: {
          summary: 'Task status and result',
          operationId: 'getTask',
          security,
          parameters: [idParam],
          responses: { 200: json(ref('TaskStatus')), 404: err('Task not found') },
        },
      },
      '/api/v1/tasks/{id}/events': {
        get: {
          summary: 'Persisted event history of a task',
          operationId: 'getTaskEvents',
          security,
          parameters: [
            idParam,
            { name: 'after_seq', in: 'query', schema: { type: 'integer', minimum: 0, default: 0 } },
            { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 5000, default: 1000 } },
          ],
          responses: { 200: json(ref('EventList')), 404: err('Task not found') },
        },
      },
      '/api/v1/tasks/{id}/cancel': controlOp(
        'cancelTask',
        'Cancel a queued or running (or paused) task: WORKFLOW_CANCELLING, then WORKFLOW_CANCELLED and STREAM_END; status TASK_STATUS_CANCELLED',
      ),
      '/api/v1/tasks/{id}/pause': controlOp(
        'pauseTask',
        'Pause at the next workflow checkpoint: WORKFLOW_PAUSING now, WORKFLOW_PAUSED at the checkpoint; status TASK_STATUS_PAUSED',
      ),
      '/api/v1/tasks/{id}/resume': controlOp('resumeTask', 'Resume a paused task: WORKFLOW_RESUMED; status TASK_STATUS_RUNNING'),
      '/api/v1/tasks/{id}/timeline': {
        get: {
          summary:
            'Deterministic timeline of the workflow: its steps in order (name, agent, start, end, duration, status, retries) and its own start, end and duration',
          description:
            'Built from the archived events and the step journal (kept 7 days; after that, derived from the events only: source=events). ' +
            "A step's events are those between the previous step's journal seq and its own; an agent's events stay with the step that finished with it. " +
            'Owner-only like GET /api/v1/tasks/{id}.',
          operationId: 'getTaskTimeline',
          security,
          parameters: [idParam],
          responses: { 200: json(ref('Timeline')), 403: err('Forbidden: not the task owner'), 404: err('Task not found') },
        },
      },
      ...skillPaths,
      ...channelPaths,
      ...approvalPaths,
      ...reviewPaths,
      ...swarmPaths,
      ...toolSourcePaths,
      ...agentPaths,
      ...mcpPaths,
      ...blobPaths,
      ...daemonPaths,
      ...memoryPaths,
      ...openAiPaths,
      '/api/v1/tools': {
        get: {
          summary: 'Tools a client may execute directly (dangerous tools are never listed)',
          operationId: 'listTools',
          security,
          parameters: [{ name: 'category', in: 'query', required: false, schema: { type: 'string' }, description: 'Only this category' }],
          responses: { 200: json({ type: 'array', items: ref('Tool') } as never) },
        },
      },
      '/api/v1/tools/{name}': {
        get: {
          summary: 'One tool',
          operationId: 'getTool',
          security,
          parameters: [toolParam],
          responses: { 200: json(ref('Tool')), 403: err('Tool not available via direct execution'), 404: err('Tool not found: <name>') },
        },
      },
      '/api/v1/tools/{name}/execute': {
        post: {
          summary: 'Execute a tool (120 s limit); only session_id and the caller user_id reach the tool; usage is recorded asynchronously',
          operationId: 'executeTool',
          security,
          parameters: [toolParam],
          requestBody: { required: true, content: { 'application/json': { schema: ref('ToolExecuteRequest') } } },
          responses: {
            200: json(ref('ToolExecution'), 'The execution result; a failure the tool reports (bad input it detected, its time limit) has success false'),
            400: err('arguments missing, not an object, or not valid for the tool (the message names the field)'),
            403: err('Tool not available via direct execution'),
            404: err('Tool not found, or Session not found'),
            429: err("Over the tool's per-minute limit (WEB_SEARCH_RATE_LIMIT, CALCULATOR_RATE_LIMIT, PYTHON_EXECUTOR_RATE_LIMIT)"),
            502: err('tool backend unavailable: <why> (a search API or web page that could not be reached)'),
          },
        },
      },
      '/api/v1/tasks/{id}/control-state': {
        get: {
          summary: 'Pause and cancel control state',
          operationId: 'getControlState',
          security,
          parameters: [idParam],
          responses: { 200: json(ref('ControlState')), 404: err('Task not found') },
        },
      },
      '/api/v1/tasks/{id}/stream': {
        get: {
          summary: 'Server-Sent Events of one task (same as /api/v1/stream/sse?workflow_id={id})',
          operationId: 'streamTask',
          security,
          parameters: [
            idParam,
            { name: 'types', in: 'query', schema: { type: 'string' }, description: 'Comma-separated event types' },
            { name: 'last_event_id', in: 'query', schema: { type: 'string' }, description: 'Stream id <ms>-<seq> or a numeric seq' },
            headerParam('Last-Event-ID', 'Resume after this stream id or seq'),
          ],
          responses: {
            200: { description: 'text/event-stream', content: { 'text/event-stream': { schema: { type: 'string' } } } },
            400: err('Invalid last_event_id'),
          },
        },
      },
      '/api/v1/stream/sse': {
        get: {
          summary: 'Server-Sent Events of a workflow',
          description:
            'Each event has `id: <ms>-<seq>`, `event: <type>` (LLM_PARTIAL as thread.message.delta, LLM_OUTPUT as thread.message.completed) and `data:` JSON (Event). ' +
            'The stream ends with `event: done` / `data: [DONE]`. A resume point older than the retained events yields `event: REPLAY_GAP` first. ' +
            'Heartbeat comments every 15 s; closed after 5 minutes without events; a client more than 1 MB behind is dropped with `event: error`.',
          operationId: 'streamSse',
          security: [...security, { ApiKeyQuery: [] }],
          parameters: [
            { name: 'workflow_id', in: 'query', required: true, schema: { type: 'string', format: 'uuid' } },
            { name: 'types', in: 'query', schema: { type: 'string' }, description: 'Comma-separated event types' },
            { name: 'last_event_id', in: 'query', schema: { type: 'string' }, description: 'Stream id <ms>-<seq> or a numeric seq' },
            { name: 'api_key', in: 'query', schema: { type: 'string' }, description: 'Fallback for clients that cannot set headers' },
            headerParam('Last-Event-ID', 'Stream id <ms>-<seq> or a numeric seq'),
          ],
          responses: {
            200: { description: 'text/event-stream', content: { 'text/event-stream': { schema: { type: 'string' } } } },
            400: err('workflow_id missing or invalid'),
          },
        },
      },
      '/api/v1/stream/ws': {
        get: {
          summary: 'WebSocket stream of a workflow: one JSON Event per message, STREAM_END last',
          operationId: 'streamWs',
          security,
          parameters: [
            { name: 'workflow_id', in: 'query', required: true, schema: { type: 'string', format: 'uuid' } },
            { name: 'last_event_id', in: 'query', schema: { type: 'string' }, description: 'Resume after this stream id <ms>-<seq> or numeric seq' },
          ],
          responses: { 101: { description: 'Switching protocols' }, 400: err('workflow_id missing or invalid, or invalid last_event_id') },
        },
      },
    },
  };
}
