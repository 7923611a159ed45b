/**
 * The types of the public HTTP API (paths, operations, component schemas), generated from the
 * gateway's OpenAPI document (src/gateway/openapi.ts, served at /openapi.json) by
 * scripts/gen-client.ts with openapi-typescript. Do not edit: run `npm run gen:client`.
 */

export interface paths {
  '/api/v1/schedules': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The caller's schedules */
    get: operations['listSchedules'];
    put?: never;
    /** Create a cron schedule (5 fields, IANA timezone; at least SCHEDULE_MIN_INTERVAL_MINS between runs; at most SCHEDULE_MAX_PER_USER per user) */
    post: operations['createSchedule'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/schedules/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** A schedule */
    get: operations['getSchedule'];
    /** Update any subset of the fields */
    put: operations['updateSchedule'];
    post?: never;
    /** Delete permanently */
    delete: operations['deleteSchedule'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/schedules/{id}/runs': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Run records, newest first */
    get: operations['listScheduleRuns'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/schedules/{id}/pause': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Pause (409 when already paused) */
    post: operations['pauseSchedule'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/schedules/{id}/resume': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Resume (409 when not paused) */
    post: operations['resumeSchedule'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/sessions': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The caller's sessions, most recently active first */
    get: operations['listSessions'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/sessions/{sessionId}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Session details */
    get: operations['getSession'];
    put?: never;
    post?: never;
    /** Soft delete (idempotent) */
    delete: operations['deleteSession'];
    options?: never;
    head?: never;
    /** Update the title */
    patch: operations['updateSession'];
    trace?: never;
  };
  '/api/v1/sessions/{sessionId}/history': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Conversation history: each task as a user message and its result as the assistant reply (messages), and the same turns as tasks */
    get: operations['getSessionHistory'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/sessions/{sessionId}/files': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List the session's workspace (files agents produced); sorted by path */
    get: operations['listWorkspace'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/sessions/{sessionId}/files/{path}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Download a workspace file; Content-Type is detected from its content */
    get: operations['downloadWorkspaceFile'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/sessions/{sessionId}/events': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Archived events grouped by turn (one turn per task) */
    get: operations['getSessionEvents'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/register': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Create a user in a new tenant; returns tokens and the default API key (shown once) */
    post: operations['register'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/login': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Exchange email and password for JWT tokens */
    post: operations['login'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/refresh': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Rotate a refresh token: returns new tokens; a reused refresh token revokes its whole family */
    post: operations['refreshToken'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/me': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The authenticated user */
    get: operations['me'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/refresh-key': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Revoke the default API key and issue a new one (shown once) */
    post: operations['refreshKey'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/api-keys': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The caller's active API keys (never the keys themselves) */
    get: operations['listApiKeys'];
    put?: never;
    /** Create an API key (shown once; stored hashed) */
    post: operations['createApiKey'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/api-keys/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    post?: never;
    /** Revoke an API key */
    delete: operations['revokeApiKey'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/health': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Health probe: 503 while the process has lost its NATS connection (it reconnects by itself) */
    get: operations['health'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/readiness': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Readiness probe: checks the orchestrator, NATS and the database */
    get: operations['readiness'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/metrics': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Prometheus metrics of this process (text format 0.0.4); no authentication, like /health. Names and labels: README, "Metrics" */
    get: operations['metrics'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/openapi.json': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** This document */
    get: operations['openapi'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/tasks': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List tasks, newest first */
    get: operations['listTasks'];
    put?: never;
    /** Submit a task */
    post: operations['submitTask'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/tasks/stream': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Submit a task and get its stream URL */
    post: operations['submitTaskAndStream'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/tasks/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Task status and result */
    get: operations['getTask'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/tasks/{id}/events': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Persisted event history of a task */
    get: operations['getTaskEvents'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/tasks/{id}/cancel': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Cancel a queued or running (or paused) task: WORKFLOW_CANCELLING, then WORKFLOW_CANCELLED and STREAM_END; status TASK_STATUS_CANCELLED */
    post: operations['cancelTask'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/tasks/{id}/pause': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Pause at the next workflow checkpoint: WORKFLOW_PAUSING now, WORKFLOW_PAUSED at the checkpoint; status TASK_STATUS_PAUSED */
    post: operations['pauseTask'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/tasks/{id}/resume': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Resume a paused task: WORKFLOW_RESUMED; status TASK_STATUS_RUNNING */
    post: operations['resumeTask'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/tasks/{id}/timeline': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Deterministic timeline of the workflow: its steps in order (name, agent, start, end, duration, status, retries) and its own start, end and duration
     * @description Built from the archived events and the step journal (kept 7 days; after that, derived from the events only: source=events). A step's events are those between the previous step's journal seq and its own; an agent's events stay with the step that finished with it. Owner-only like GET /api/v1/tasks/{id}.
     */
    get: operations['getTaskTimeline'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/skills': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Skills (markdown instructions with front matter from SKILLS_DIR), each with its latest version */
    get: operations['listSkills'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/skills/{name}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** One skill with its instructions (the latest version unless `version` is given) */
    get: operations['getSkill'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/skills/{name}/versions': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The versions of a skill, oldest first */
    get: operations['listSkillVersions'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/channels': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The caller's channels, newest first */
    get: operations['listChannels'];
    put?: never;
    /** Create a messaging channel (credentials validated per type, encrypted at rest, never returned) */
    post: operations['createChannel'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/channels/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** One channel */
    get: operations['getChannel'];
    /** Update any of name, credentials, config, enabled */
    put: operations['updateChannel'];
    post?: never;
    /** Delete a channel permanently */
    delete: operations['deleteChannel'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/channels/{channel_id}/webhook': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Inbound platform webhook (no authentication: X-PlatformA-Signature with X-PlatformA-Request-Timestamp, or X-PlatformB-Signature). The message is stored durably (de-duplicated by the platform event id) and processed asynchronously: offered to the owner's daemon connections (GET /v1/ws/messages); if none claims it within DAEMON_PENDING_TTL_SECONDS (90) it runs as the owner's task (config.agent_name: the skill it runs) and the result is posted to the thread through the platform API (PLATFORM_A_API_URL, PLATFORM_B_API_URL). */
    post: operations['channelWebhook'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/approvals/decision': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Decide a pending approval (the task waits, TASK_STATUS_PAUSED, until someone does)
     * @description An approval is asked by APPROVAL_REQUESTED {approval_id, proposed_action, reason, timeout_seconds}: before a task with require_approval (gRPC SubmitTask field; context.require_approval over REST) runs, and before a tool named by a tool policy of config/features.yaml runs. Approved: the task or tool runs (a tool with modified_action as its arguments when given). Refused: the tool is not run and the model is told why (feedback); a refused task ends FAILED with "approval rejected: <feedback>". Not decided within APPROVAL_TIMEOUT_SECONDS (default 3600): refused with reason "timeout". APPROVAL_DECISION {approval_id, approved, feedback, modified_action, approved_by, reason} follows when the workflow resumes.
     */
    post: operations['decideApproval'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/approvals': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The caller's pending approvals, oldest first */
    get: operations['listApprovals'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/tasks/{workflow_id}/review': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * The plan review of a research task waiting for approval (owner only)
     * @description A research task submitted with context.require_review: true (or context.review_plan: "manual"; review implies the research workflow) emits RESEARCH_PLAN_READY {plan, round, version} and waits (TASK_STATUS_PAUSED) for approval within context.review_timeout seconds (1-86400, default 900; not approved in time: the task ends FAILED). The review lives for that timeout plus 5 minutes; then 404.
     */
    get: operations['getReview'];
    put?: never;
    /**
     * Give feedback on the research plan, or approve it (owner only)
     * @description feedback: the model answers with an updated plan (intent ready) or questions (intent feedback); round and version +1; events REVIEW_USER_FEEDBACK and RESEARCH_PLAN_UPDATED. Round 10 is the last: the model is told to give a definitive plan, and further feedback is 409. One feedback model call at a time per review (a distributed lock). The rounds' token usage counts in the task's. approve: the waiting task resumes with the confirmed plan (RESEARCH_PLAN_APPROVED) and researches its sub-questions.
     */
    post: operations['postReview'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/swarm/{workflow_id}/message': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Send a message to the lead of a running swarm (owner only)
     * @description The message lands in the lead’s mailbox (stream MAILBOXES, durable). At its next decision the lead asks its model which tasks the message calls for (with a model that gives no task list, the message itself becomes a task), emits LEAD_DECISION naming the message and TASKLIST_UPDATED, and recruits agents for new tasks (within max_agents). A swarm is a task submitted with context.force_swarm: true.
     */
    post: operations['sendSwarmMessage'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/tools/mcp-servers': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The caller's MCP servers and the operator's */
    get: operations['listMcpServers'];
    put?: never;
    /** Register an MCP server (streamable HTTP) whose tools the caller's tasks and tool calls may use */
    post: operations['addMcpServer'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/tools/mcp-servers/{name}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    post?: never;
    /** Remove one of the caller's MCP servers */
    delete: operations['removeMcpServer'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/tools/openapi': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The caller's OpenAPI tool sources */
    get: operations['listOpenApiSources'];
    put?: never;
    /** Register an OpenAPI 3 document: each operation with an operationId becomes a tool */
    post: operations['addOpenApiSource'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/tools/openapi/{name}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    post?: never;
    /** Remove one of the caller's OpenAPI tool sources */
    delete: operations['removeOpenApiSource'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/agents': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The agent catalogue: single-purpose agents, each a tool run with a checked input (AGENT_CATALOG_DIR) */
    get: operations['listAgents'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/agents/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** One agent of the catalogue */
    get: operations['getAgent'];
    put?: never;
    /**
     * Run an agent (asynchronous): a task whose result is the tool output as JSON text
     * @description The input is checked against input_schema: required fields present and non-null, no unknown field, types, enum values, minimum/maximum, maxItems; defaults are filled in, and the filled input must also fit the tool's own parameters schema (lengths, patterns, item counts). The task runs the agent (events WORKFLOW_STARTED, AGENT_STARTED, TOOL_INVOKED, TOOL_OBSERVATION, AGENT_COMPLETED, WORKFLOW_COMPLETED); GET /api/v1/tasks/{task_id} gives result (the output as JSON text), response (parsed), metadata.agent_id, metadata.execution_mode "agent" and the tool cost as the task cost. A tool failure fails the task naming it; an agent running past AGENT_TIMEOUT_SECONDS fails with a timeout error. Same as POST /api/v1/tasks with context.agent and context.agent_input.
     */
    post: operations['executeAgent'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/mcp': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Not offered: the MCP server is stateless and opens no standalone server-to-client stream (405) */
    get: operations['mcpGet'];
    put?: never;
    /**
     * The MCP server (Model Context Protocol, streamable HTTP transport): this service as a tool belt for MCP clients
     * @description Stateless (no Mcp-Session-Id). Send Accept: application/json, text/event-stream. A request is answered as an SSE stream of JSON-RPC messages: progress notifications of a waited task (when the call carries _meta.progressToken), then the response; notifications and responses alone get 202. Tools: submit_task {query, mode?, session_id?, context?, wait?, timeout_seconds?}, get_task {task_id}, list_tasks {limit?, offset?, status?}, cancel_task {task_id, reason?}; agent_<id> for every catalogue agent (GET /api/v1/agents; input schema as listed there plus wait?, timeout_seconds?, session_id?; runs the agent and by default waits up to 45 s for its result); tool_<name> for every tool the caller may run (GET /api/v1/tools; executes it at once). Names are published as ^[a-zA-Z0-9_-]{1,64}$ allows (tool_mcp_github_create_issue). A tool's failure is a result with isError: true and the message (bad arguments name the field; another user's task is Task not found).
     */
    post: operations['mcpPost'];
    /** Ends an MCP session: there is none (stateless), so this only answers 200 */
    delete: operations['mcpDelete'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/blob/{key}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** A blob's bytes (a large screenshot referenced by a tool's output), to the user who stored it */
    get: operations['getBlob'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/ws/messages': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Daemon WebSocket: inbound chat messages offered to daemon clients, claimed once
     * @description Authentication before the upgrade (401, no upgrade). Frames are JSON {type, message_id, payload}. Server to client: connected, message {channel, thread_id, sender, text, agent_name, timestamp}, claim_ack {granted}, system {text}. Client to server: claim, progress (extends the claim), reply {channel, thread_id, text, format: text|markdown}, disconnect. The first claim of a message wins on any gateway; a reply is posted to the message's thread through the platform API (a reply from a connection not holding the claim gets a system frame); a claim not replied within DAEMON_CLAIM_TTL_SECONDS (60) expires and the message is offered again. Ping every 20 s, closed without a pong in 60 s or on a frame over 64 KB; invalid JSON is ignored.
     */
    get: operations['daemonWs'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/daemon/status': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * The caller's connected daemons (GET /v1/ws/messages), on every gateway of the fleet
     * @description Every gateway holding a connection of the caller answers one NATS request; answers are collected until 250 ms pass without another (at most 2000 ms). claims_held: claims the connection won that are not replied and whose lease (DAEMON_CLAIM_TTL_SECONDS) has not expired.
     */
    get: operations['daemonStatus'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/memory/files': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List the caller's memory (files agents keep for the user across sessions, file tools' scope memory); sorted by path */
    get: operations['listMemoryFiles'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/memory/files/{path}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Download a file of the caller's memory as JSON (text as is, anything else base64) */
    get: operations['downloadMemoryFile'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/chat/completions': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Chat completion (OpenAI-compatible), streaming and not: the messages become a task of the model's workflow mode
     * @description Translation: the last user message is the query, the first system message the system prompt, the other non-system messages the conversation history. max_tokens (max_completion_tokens) is capped at 16384 (default: the model's); temperature 0-2 (default TEMPERATURE, 0.7), top_p 0-1, presence_penalty and frequency_penalty -2..2, stop (a string or up to 4): every model call of the task uses them. n must be 1. user: recorded with the task and, without X-Session-ID, names the session. Fields OpenAI defines that this service cannot honour (tools, response_format, logprobs, seed, ...) are refused with 400, as are unknown fields. With stream: true, Server-Sent Events: the first chunk carries delta.role "assistant"; content chunks carry delta.content as the answer's model streams it (the text a workflow marks as its final answer, in every mode; a remainder the stream did not carry comes before the end); chunks with an empty delta carry service_events (forwarded types: WORKFLOW_STARTED/PAUSING/PAUSED/RESUMED/CANCELLING/CANCELLED, AGENT_STARTED/COMPLETED/THINKING, TOOL_INVOKED/OBSERVATION, PROGRESS, DATA_PROCESSING, WAITING, ERROR_RECOVERY, TEAM_*, ROLE_ASSIGNED, DELEGATION, DEPENDENCY_SATISFIED, BUDGET_THRESHOLD, APPROVAL_*); the final chunk has an empty delta, finish_reason "stop" and, with stream_options.include_usage, usage; then data: [DONE]. A failure after the head is a chunk {"error": {...}}. No event ids: the stream cannot be resumed. A client that disconnects (streaming or not) cancels its task. Non-streaming: the answer when the task ends, at most OPENAI_COMPLETION_TIMEOUT_SECONDS (35 minutes; then 504 and the task is cancelled). Sessions: X-Session-ID names the session (UUID or external id); without it the session id is derived from a hash of `user`, else of the first system and first user message. X-Session-ID and X-Service-Session-ID come back when a session is created, or when the given one is not usable (another owner's, or deleted: a new one is made). Rate limits per API key and model: OPENAI_RATE_LIMIT_REQUESTS (60) requests and OPENAI_RATE_LIMIT_TOKENS (200,000) tokens per minute.
     */
    post: operations['openaiChatCompletions'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/completions': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Legacy completion (OpenAI-compatible): `prompt` is the query, mapped like a chat completion without history
     * @description max_tokens (max_completion_tokens) is capped at 16384 (default: the model's); temperature 0-2 (default TEMPERATURE, 0.7), top_p 0-1, presence_penalty and frequency_penalty -2..2, stop (a string or up to 4): every model call of the task uses them. n must be 1. user: recorded with the task and, without X-Session-ID, names the session. Fields OpenAI defines that this service cannot honour (tools, response_format, logprobs, seed, ...) are refused with 400, as are unknown fields. suffix, echo, logprobs and best_of other than 1 are refused. Streaming as for chat completions, with text_completion chunks (choices[].text). Sessions: X-Session-ID names the session (UUID or external id); without it the session id is derived from a hash of `user`, else of the first system and first user message. X-Session-ID and X-Service-Session-ID come back when a session is created, or when the given one is not usable (another owner's, or deleted: a new one is made). Rate limits per API key and model: OPENAI_RATE_LIMIT_REQUESTS (60) requests and OPENAI_RATE_LIMIT_TOKENS (200,000) tokens per minute.
     */
    post: operations['openaiCompletions'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/models': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The models (OpenAI-compatible): the model table (OPENAI_MODELS_CONFIG_PATH); hosted-only models are absent */
    get: operations['openaiListModels'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/models/{model}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** One model; its description in the X-Model-Description header */
    get: operations['openaiGetModel'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/tools': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Tools a client may execute directly (dangerous tools are never listed) */
    get: operations['listTools'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/tools/{name}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** One tool */
    get: operations['getTool'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/tools/{name}/execute': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Execute a tool (120 s limit); only session_id and the caller user_id reach the tool; usage is recorded asynchronously */
    post: operations['executeTool'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/tasks/{id}/control-state': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Pause and cancel control state */
    get: operations['getControlState'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/tasks/{id}/stream': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Server-Sent Events of one task (same as /api/v1/stream/sse?workflow_id={id}) */
    get: operations['streamTask'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/stream/sse': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Server-Sent Events of a workflow
     * @description Each event has `id: <ms>-<seq>`, `event: <type>` (LLM_PARTIAL as thread.message.delta, LLM_OUTPUT as thread.message.completed) and `data:` JSON (Event). The stream ends with `event: done` / `data: [DONE]`. A resume point older than the retained events yields `event: REPLAY_GAP` first. Heartbeat comments every 15 s; closed after 5 minutes without events; a client more than 1 MB behind is dropped with `event: error`.
     */
    get: operations['streamSse'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/stream/ws': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** WebSocket stream of a workflow: one JSON Event per message, STREAM_END last */
    get: operations['streamWs'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
}
export type webhooks = Record<string, never>;
export interface components {
  schemas: {
    TaskSubmitRequest: {
      /** @description Natural-language task description */
      query: string;
      /** @description Session for multi-turn use; generated when omitted */
      session_id?: string;
      /** @description Key-value context. Read: system_prompt, prompt_params, model_tier and model_override (fallbacks for the top-level fields), role (tool allowlist: generalist (default), analysis, research, writer, critic, developer), template (alias template_name), template_version (default latest), disable_ai (runs the template with no model call), skill_version, force_research, iterative_research_enabled, iterative_max_iterations, enable_fact_extraction (the research workflow), require_approval (a person approves the task before its first action: APPROVAL_REQUESTED, POST /api/v1/approvals/decision), require_review or review_plan ("manual"; "auto" and "none": no review) and review_timeout (seconds, 1-86400, default 900): a person reviews the research plan (implies the research workflow; /api/v1/tasks/{workflow_id}/review), agent (a catalogue agent id, GET /api/v1/agents) with agent_input (its input object; checked against the agent input_schema, 400 "input validation failed: ...", unknown agent 404 "Agent not found: <id>"): the same run as POST /api/v1/agents/{id}, history_window_size, use_case_preset, primers_count, recents_count, compression_trigger_ratio, compression_target_ratio. Flags (disable_ai, force_research, iterative_research_enabled, enable_fact_extraction, require_approval, force_swarm, require_review) take true/false or the strings "true", "false", "1", "0" (case-insensitive, trimmed); review_timeout (an integer 1-86400), iterative_max_iterations (an integer 1-5), history_window_size (an integer 1-1000), primers_count (an integer 0-1000), recents_count (an integer 0-1000), compression_trigger_ratio (a number above 0, at most 1), compression_target_ratio (a number above 0, at most 1) take numbers or numeric strings. They are stored as booleans and numbers; any other value is refused with 400 "context.<key> must be ...". force_swarm (runs the task as a swarm of agents: POST /api/v1/swarm/{workflow_id}/message reaches its lead; a 400 "swarm is disabled on this server ..." when the swarm is off, at the top level of the body, and with a plan review, a template, a skill or an agent; with research options the swarm runs and a failed swarm falls back to research), Other keys are stored with the task. */
      context?: {
        [key: string]: unknown;
      };
      /**
       * @description Default: auto-detect
       * @enum {string}
       */
      mode?: 'simple' | 'standard' | 'complex' | 'supervisor';
      /**
       * @description Default: small
       * @enum {string}
       */
      model_tier?: 'small' | 'medium' | 'large';
      model_override?: string;
      /** @description A provider of the model catalogue (GET /providers/models on the model service); unknown or without its key: 400 */
      provider_override?: string;
      /** @description A skill (GET /api/v1/skills): its instructions drive one agent with its tools */
      skill?: string;
      /**
       * @description Runs the deep-research workflow: sub-questions researched by agents with the research tools, a coverage loop (rounds: quick 1, standard 2, deep 3, academic 3; context.iterative_max_iterations 1-5), a cited report
       * @enum {string}
       */
      research_strategy?: 'quick' | 'standard' | 'deep' | 'academic';
      /** @description Tool rounds an agent may take before it must answer (default 10) */
      max_iterations?: number;
      /** @description Most agents a complex, supervisor or research workflow runs at once (default: all of a plan, at most 8) */
      max_concurrent_agents?: number;
      /** @description Adds a verification step; its findings go into metadata.verification (research tasks: each cited claim checked against the pages it cites) */
      enable_verification?: boolean;
      /**
       * @description Which waiting task a free worker takes first, across the fleet (default normal). Needs PRIORITY_QUEUES=on on the server: with it off, any value but normal is a 400. Of every 8 fetches a free worker makes, 4 look at critical first, 2 at high, 1 at normal, 1 at low, then at the other levels highest first, so low priority is slowed, never starved. gRPC: metadata.labels.priority
       * @enum {string}
       */
      priority?: 'critical' | 'high' | 'normal' | 'low';
    } & {
      [key: string]: unknown;
    };
    TaskSubmitResponse: {
      task_id: string;
      /** @description Submission status, e.g. STATUS_CODE_OK */
      status: string;
      message?: string;
      /** Format: date-time */
      created_at: string;
    };
    TaskStreamSubmitResponse: {
      workflow_id: string;
      task_id: string;
      /** @description /api/v1/stream/sse?workflow_id=<workflow_id> */
      stream_url: string;
    };
    TaskStatus: {
      task_id: string;
      /** @description Same as task_id */
      workflow_id: string;
      /** @enum {string} */
      status:
        | 'TASK_STATUS_UNSPECIFIED'
        | 'TASK_STATUS_QUEUED'
        | 'TASK_STATUS_RUNNING'
        | 'TASK_STATUS_COMPLETED'
        | 'TASK_STATUS_FAILED'
        | 'TASK_STATUS_CANCELLED'
        | 'TASK_STATUS_TIMEOUT'
        | 'TASK_STATUS_PAUSED';
      /** @description 0 until the task completes, then 1 */
      progress: number;
      /** @description Raw LLM output; absent until completed */
      result?: string;
      /** @description Parsed JSON, present only when result is valid JSON */
      response?: {
        [key: string]: unknown;
      };
      /** @description model_breakdown, agents_used, tool_calls, role, history, .... Research tasks also: citations (array of {url, title, source, credibility_score, quality_score}; citations[n-1] is the source of every inline [n] of result, and only pages this task searched or read are cited), verification (with enable_verification: overall_confidence, total_claims, supported_claims, unsupported_claims, conflicts, claim_details[{claim, supporting_citations, conflicting_citations, confidence}]), extracted_facts and fact_summary (with context.enable_fact_extraction), unified_response, research (strategy, rounds, questions, coverage) */
      metadata?: {
        [key: string]: unknown;
      };
      error: string;
      /** Format: date-time */
      created_at: string;
      /** Format: date-time */
      updated_at: string;
      /** Format: date-time */
      completed_at?: string | null;
      query: string;
      session_id: string;
      /** @enum {string} */
      mode: 'EXECUTION_MODE_UNSPECIFIED' | 'EXECUTION_MODE_SIMPLE' | 'EXECUTION_MODE_STANDARD' | 'EXECUTION_MODE_COMPLEX';
      model_used: string;
      provider: string;
      usage: {
        total_tokens: number;
        input_tokens?: number;
        output_tokens?: number;
        estimated_cost?: number;
      };
    };
    TaskSummary: {
      task_id: string;
      query: string;
      /** @enum {string} */
      status:
        | 'TASK_STATUS_UNSPECIFIED'
        | 'TASK_STATUS_QUEUED'
        | 'TASK_STATUS_RUNNING'
        | 'TASK_STATUS_COMPLETED'
        | 'TASK_STATUS_FAILED'
        | 'TASK_STATUS_CANCELLED'
        | 'TASK_STATUS_TIMEOUT'
        | 'TASK_STATUS_PAUSED';
      /** @enum {string} */
      mode: 'EXECUTION_MODE_UNSPECIFIED' | 'EXECUTION_MODE_SIMPLE' | 'EXECUTION_MODE_STANDARD' | 'EXECUTION_MODE_COMPLEX';
      /** Format: date-time */
      created_at: string;
      /** Format: date-time */
      completed_at: string | null;
      total_token_usage: {
        total_tokens: number;
        cost_usd: number;
        prompt_tokens: number;
        completion_tokens: number;
      } | null;
    };
    TaskList: {
      tasks: {
        task_id: string;
        query: string;
        /** @enum {string} */
        status:
          | 'TASK_STATUS_UNSPECIFIED'
          | 'TASK_STATUS_QUEUED'
          | 'TASK_STATUS_RUNNING'
          | 'TASK_STATUS_COMPLETED'
          | 'TASK_STATUS_FAILED'
          | 'TASK_STATUS_CANCELLED'
          | 'TASK_STATUS_TIMEOUT'
          | 'TASK_STATUS_PAUSED';
        /** @enum {string} */
        mode: 'EXECUTION_MODE_UNSPECIFIED' | 'EXECUTION_MODE_SIMPLE' | 'EXECUTION_MODE_STANDARD' | 'EXECUTION_MODE_COMPLEX';
        /** Format: date-time */
        created_at: string;
        /** Format: date-time */
        completed_at: string | null;
        total_token_usage: {
          total_tokens: number;
          cost_usd: number;
          prompt_tokens: number;
          completion_tokens: number;
        } | null;
      }[];
      total_count: number;
    };
    Event: {
      workflow_id: string;
      /** @description Per-workflow sequence: 1, 2, 3, ... */
      seq: number;
      /** @description <ms>-<seq>; usable as Last-Event-ID */
      stream_id: string;
      type: string;
      agent_id: string;
      message: string;
      /** Format: date-time */
      timestamp: string;
      /** @description Event-specific data */
      payload?: {
        [key: string]: unknown;
      };
    };
    EventList: {
      workflow_id: string;
      events: {
        workflow_id: string;
        /** @description Per-workflow sequence: 1, 2, 3, ... */
        seq: number;
        /** @description <ms>-<seq>; usable as Last-Event-ID */
        stream_id: string;
        type: string;
        agent_id: string;
        message: string;
        /** Format: date-time */
        timestamp: string;
        /** @description Event-specific data */
        payload?: {
          [key: string]: unknown;
        };
      }[];
      count: number;
    };
    Error: {
      error: string;
    };
    Health: {
      /** @enum {string} */
      status: 'healthy' | 'unhealthy';
      version: string;
      time: string;
      checks: {
        nats: {
          ok: boolean;
          error?: string;
        };
      };
    };
    User: {
      /** Format: uuid */
      id: string;
      email: string;
      name: string;
      role: string;
      /** Format: uuid */
      tenant_id: string;
      tenant_name?: string;
      is_active: boolean;
      /** Format: date-time */
      created_at: string;
    };
    RegisterRequest: {
      /** Format: email */
      email: string;
      password: string;
      name?: string;
      /** @description Name of the tenant created for the user */
      tenant_name?: string;
    };
    LoginRequest: {
      email: string;
      password: string;
    };
    RefreshRequest: {
      refresh_token: string;
    };
    Tokens: {
      /** @description JWT (HS256); send as Authorization: Bearer */
      access_token: string;
      /** @description Single use: each refresh returns a new one */
      refresh_token: string;
      /** @enum {string} */
      token_type: 'Bearer';
      /** @description Access token lifetime, seconds */
      expires_in: number;
      refresh_expires_in: number;
    };
    RegisterResponse: {
      user: {
        /** Format: uuid */
        id: string;
        email: string;
        name: string;
        role: string;
        /** Format: uuid */
        tenant_id: string;
        tenant_name?: string;
        is_active: boolean;
        /** Format: date-time */
        created_at: string;
      };
      /** @description sk_... shown once */
      api_key: string;
    } & {
      /** @description JWT (HS256); send as Authorization: Bearer */
      access_token: string;
      /** @description Single use: each refresh returns a new one */
      refresh_token: string;
      /** @enum {string} */
      token_type: 'Bearer';
      /** @description Access token lifetime, seconds */
      expires_in: number;
      refresh_expires_in: number;
    };
    LoginResponse: {
      user: {
        /** Format: uuid */
        id: string;
        email: string;
        name: string;
        role: string;
        /** Format: uuid */
        tenant_id: string;
        tenant_name?: string;
        is_active: boolean;
        /** Format: date-time */
        created_at: string;
      };
    } & {
      /** @description JWT (HS256); send as Authorization: Bearer */
      access_token: string;
      /** @description Single use: each refresh returns a new one */
      refresh_token: string;
      /** @enum {string} */
      token_type: 'Bearer';
      /** @description Access token lifetime, seconds */
      expires_in: number;
      refresh_expires_in: number;
    };
    ApiKeyInfo: {
      /** Format: uuid */
      id: string;
      name: string;
      /** @description First 11 characters, to recognise a key */
      prefix: string;
      is_default: boolean;
      /** Format: date-time */
      created_at: string;
      /** Format: date-time */
      last_used_at: string | null;
      /** Format: date-time */
      expires_at: string | null;
    };
    ApiKeyList: {
      api_keys: {
        /** Format: uuid */
        id: string;
        name: string;
        /** @description First 11 characters, to recognise a key */
        prefix: string;
        is_default: boolean;
        /** Format: date-time */
        created_at: string;
        /** Format: date-time */
        last_used_at: string | null;
        /** Format: date-time */
        expires_at: string | null;
      }[];
      count: number;
    };
    CreateApiKeyRequest: {
      name: string;
      expires_in_days?: number;
    };
    CreatedApiKey: {
      /** Format: uuid */
      id: string;
      name: string;
      /** @description sk_... shown once; only its hash is stored */
      api_key: string;
      prefix: string;
      /** Format: date-time */
      created_at: string;
      /** Format: date-time */
      expires_at: string | null;
    };
    RegeneratedKey: {
      id: string;
      api_key: string;
      prefix: string;
      message: string;
    };
    RateLimited: {
      error: string;
      retry_after: number;
    };
    RevokedKey: {
      message: string;
      /** Format: uuid */
      id: string;
    };
    Tool: {
      name: string;
      description: string;
      /** @description e.g. search, web, code, math, file */
      category: string;
      version: string;
      /** @description JSON Schema of the arguments */
      parameters: {
        [key: string]: unknown;
      };
      timeout_seconds: number;
      /** @description Estimated USD per call */
      cost_per_use: number;
    };
    ToolExecuteRequest: {
      /** @description Arguments, validated against the tool parameters */
      arguments: {
        [key: string]: unknown;
      };
      /** @description The caller's session (UUID or external id): its workspace for file tools */
      session_id?: string;
    };
    ToolExecution: {
      success: boolean;
      /** @description Structured result */
      output: {
        [key: string]: unknown;
      };
      /** @description The result as text (what a model reads) */
      text: string;
      error: string | null;
      /** @description tool, version and what the tool reports */
      metadata: {
        [key: string]: unknown;
      };
      execution_time_ms: number;
      usage: {
        /** @description Synthetic: the larger of 100 and cost_usd / 0.000002 */
        tokens: number;
        cost_usd: number;
      };
    };
    Session: {
      /** @description The name the client gave the session (its external_id) when it named one, else the same UUID as id; both work as {sessionId} */
      session_id: string;
      /**
       * Format: uuid
       * @description The session's UUID
       */
      id: string;
      /** @description The client-chosen id the session was created with, if not a UUID */
      external_id: string | null;
      /**
       * Format: uuid
       * @description Owner; null for sessions of the development principal
       */
      user_id: string | null;
      title: string;
      /** @description Session context, e.g. history_summary after compression */
      context: {
        [key: string]: unknown;
      };
      /** Format: date-time */
      created_at: string;
      /** Format: date-time */
      updated_at: string;
      /**
       * Format: date-time
       * @description The later of the session's own activity and its newest task's submission
       */
      last_activity_at: string;
      /**
       * Format: date-time
       * @description Always null: sessions do not expire
       */
      expires_at: string | null;
      /** @description Always null: sessions have no token budget */
      token_budget: number | null;
      /** @description Always null (no budget) */
      budget_remaining: number | null;
      /** @description Always 0 (no budget) */
      budget_utilization: number;
      /** @description Always false (no budget) */
      is_near_budget_limit: boolean;
      task_count: number;
      /** @description Sum of the tasks' total tokens */
      tokens_used: number;
      /** @description Same as tokens_used */
      total_tokens: number;
      /** @description Sum of the tasks' cost */
      cost_usd: number;
      /** @description Same as cost_usd */
      total_cost_usd: number;
      /** @description Tasks COMPLETED */
      successful_tasks: number;
      /** @description Tasks FAILED or TIMEOUT */
      failed_tasks: number;
      /** @description successful_tasks / task_count (0 without tasks) */
      success_rate: number;
      average_cost_per_task: number;
      latest_task_query: string | null;
      /** @description TASK_STATUS_* of the newest task */
      latest_task_status: string | null;
      /** @description EXECUTION_MODE_* of the first task */
      first_task_mode: string | null;
      /** @description The first task asked for research (research_strategy or context.force_research) */
      is_research_session: boolean;
      research_strategy: string | null;
      /** @description A task of the session is queued, running or paused, or there was activity in the last 24 hours */
      is_active: boolean;
    };
    SessionList: {
      sessions: {
        /** @description The name the client gave the session (its external_id) when it named one, else the same UUID as id; both work as {sessionId} */
        session_id: string;
        /**
         * Format: uuid
         * @description The session's UUID
         */
        id: string;
        /** @description The client-chosen id the session was created with, if not a UUID */
        external_id: string | null;
        /**
         * Format: uuid
         * @description Owner; null for sessions of the development principal
         */
        user_id: string | null;
        title: string;
        /** @description Session context, e.g. history_summary after compression */
        context: {
          [key: string]: unknown;
        };
        /** Format: date-time */
        created_at: string;
        /** Format: date-time */
        updated_at: string;
        /**
         * Format: date-time
         * @description The later of the session's own activity and its newest task's submission
         */
        last_activity_at: string;
        /**
         * Format: date-time
         * @description Always null: sessions do not expire
         */
        expires_at: string | null;
        /** @description Always null: sessions have no token budget */
        token_budget: number | null;
        /** @description Always null (no budget) */
        budget_remaining: number | null;
        /** @description Always 0 (no budget) */
        budget_utilization: number;
        /** @description Always false (no budget) */
        is_near_budget_limit: boolean;
        task_count: number;
        /** @description Sum of the tasks' total tokens */
        tokens_used: number;
        /** @description Same as tokens_used */
        total_tokens: number;
        /** @description Sum of the tasks' cost */
        cost_usd: number;
        /** @description Same as cost_usd */
        total_cost_usd: number;
        /** @description Tasks COMPLETED */
        successful_tasks: number;
        /** @description Tasks FAILED or TIMEOUT */
        failed_tasks: number;
        /** @description successful_tasks / task_count (0 without tasks) */
        success_rate: number;
        average_cost_per_task: number;
        latest_task_query: string | null;
        /** @description TASK_STATUS_* of the newest task */
        latest_task_status: string | null;
        /** @description EXECUTION_MODE_* of the first task */
        first_task_mode: string | null;
        /** @description The first task asked for research (research_strategy or context.force_research) */
        is_research_session: boolean;
        research_strategy: string | null;
        /** @description A task of the session is queued, running or paused, or there was activity in the last 24 hours */
        is_active: boolean;
      }[];
      total_count: number;
      limit: number;
      offset: number;
    };
    SessionPatch: {
      title: string;
    };
    SessionHistory: {
      /** @description As in the session object: the name the client gave it, else its UUID */
      session_id: string;
      messages: {
        /** @enum {string} */
        role: 'user' | 'assistant';
        content: string;
        task_id: string;
        /** Format: date-time */
        timestamp: string;
        status?: string;
        tokens?: number;
      }[];
      /** @description Number of messages */
      count: number;
      /** @description The same turns as tasks, oldest first */
      tasks: {
        task_id: string;
        /** @description Same as task_id */
        workflow_id: string;
        query: string;
        /** @enum {string} */
        status:
          | 'TASK_STATUS_UNSPECIFIED'
          | 'TASK_STATUS_QUEUED'
          | 'TASK_STATUS_RUNNING'
          | 'TASK_STATUS_COMPLETED'
          | 'TASK_STATUS_FAILED'
          | 'TASK_STATUS_CANCELLED'
          | 'TASK_STATUS_TIMEOUT'
          | 'TASK_STATUS_PAUSED';
        /** @enum {string} */
        mode: 'EXECUTION_MODE_UNSPECIFIED' | 'EXECUTION_MODE_SIMPLE' | 'EXECUTION_MODE_STANDARD' | 'EXECUTION_MODE_COMPLEX';
        result: string | null;
        error_message: string;
        total_tokens: number;
        total_cost_usd: number;
        /** @description From start (or submission) to completion; null until completed */
        duration_ms: number | null;
        /** Format: date-time */
        created_at: string;
        /** Format: date-time */
        started_at: string | null;
        /** Format: date-time */
        completed_at: string | null;
      }[];
      /** @description Number of tasks of the session */
      total: number;
    };
    SessionHistoryTask: {
      task_id: string;
      /** @description Same as task_id */
      workflow_id: string;
      query: string;
      /** @enum {string} */
      status:
        | 'TASK_STATUS_UNSPECIFIED'
        | 'TASK_STATUS_QUEUED'
        | 'TASK_STATUS_RUNNING'
        | 'TASK_STATUS_COMPLETED'
        | 'TASK_STATUS_FAILED'
        | 'TASK_STATUS_CANCELLED'
        | 'TASK_STATUS_TIMEOUT'
        | 'TASK_STATUS_PAUSED';
      /** @enum {string} */
      mode: 'EXECUTION_MODE_UNSPECIFIED' | 'EXECUTION_MODE_SIMPLE' | 'EXECUTION_MODE_STANDARD' | 'EXECUTION_MODE_COMPLEX';
      result: string | null;
      error_message: string;
      total_tokens: number;
      total_cost_usd: number;
      /** @description From start (or submission) to completion; null until completed */
      duration_ms: number | null;
      /** Format: date-time */
      created_at: string;
      /** Format: date-time */
      started_at: string | null;
      /** Format: date-time */
      completed_at: string | null;
    };
    SessionEvents: {
      /** @description As in the session object: the name the client gave it, else its UUID */
      session_id: string;
      turns: {
        /** @description Position in the session: 1 is its first task */
        turn: number;
        task_id: string;
        query: string;
        /** @description Same as query */
        user_query: string;
        status: string;
        /** @description The task's result */
        final_output: string | null;
        /** Format: date-time */
        timestamp: string;
        events: {
          workflow_id: string;
          /** @description Per-workflow sequence: 1, 2, 3, ... */
          seq: number;
          /** @description <ms>-<seq>; usable as Last-Event-ID */
          stream_id: string;
          type: string;
          agent_id: string;
          message: string;
          /** Format: date-time */
          timestamp: string;
          /** @description Event-specific data */
          payload?: {
            [key: string]: unknown;
          };
        }[];
        metadata: {
          tokens_used: number;
          execution_time_ms: number | null;
          agents_involved: string[];
        };
      }[];
      /** @description Number of turns of the session (the same as total_count) */
      count: number;
      total_count: number;
      limit: number;
      offset: number;
    };
    WorkspaceEntry: {
      name: string;
      /** @description Relative to the workspace root, starting with / */
      path: string;
      /** @description Bytes; 0 for directories */
      size: number;
      is_dir: boolean;
      /** Format: date-time */
      modified_at: string;
    };
    WorkspaceListing: {
      session_id: string;
      path: string;
      files: {
        name: string;
        /** @description Relative to the workspace root, starting with / */
        path: string;
        /** @description Bytes; 0 for directories */
        size: number;
        is_dir: boolean;
        /** Format: date-time */
        modified_at: string;
      }[];
      /** @description More than 10,000 entries: the list was cut */
      truncated?: boolean;
    };
    ControlRequest: {
      reason?: string;
    };
    ControlResponse: {
      success: boolean;
      message: string;
      task_id: string;
    };
    ControlState: {
      task_id: string;
      /** @enum {string} */
      status:
        | 'TASK_STATUS_UNSPECIFIED'
        | 'TASK_STATUS_QUEUED'
        | 'TASK_STATUS_RUNNING'
        | 'TASK_STATUS_COMPLETED'
        | 'TASK_STATUS_FAILED'
        | 'TASK_STATUS_CANCELLED'
        | 'TASK_STATUS_TIMEOUT'
        | 'TASK_STATUS_PAUSED';
      is_paused: boolean;
      is_cancelled: boolean;
      /** Format: date-time */
      paused_at: string | null;
      pause_reason: string;
      paused_by: string;
      cancel_reason: string;
      cancelled_by: string;
    };
    Timeline: {
      workflow_id: string;
      task_id: string;
      /** @enum {string} */
      status:
        | 'TASK_STATUS_UNSPECIFIED'
        | 'TASK_STATUS_QUEUED'
        | 'TASK_STATUS_RUNNING'
        | 'TASK_STATUS_COMPLETED'
        | 'TASK_STATUS_FAILED'
        | 'TASK_STATUS_CANCELLED'
        | 'TASK_STATUS_TIMEOUT'
        | 'TASK_STATUS_PAUSED';
      /**
       * @description journal: from the step journal and the events; events: the journal expired (7 days), derived from the events
       * @enum {string}
       */
      source: 'journal' | 'events';
      /** Format: date-time */
      created_at: string | null;
      /**
       * Format: date-time
       * @description WORKFLOW_STARTED
       */
      started_at: string | null;
      /**
       * Format: date-time
       * @description STREAM_END; null until the task ends
       */
      ended_at: string | null;
      duration_ms: number | null;
      /** @description Ordered by first seq */
      steps: {
        /** @description Journaled step name: start, history, agent, plan, subtask-N, synthesize, finish */
        name: string;
        /** @description The step's agent; orchestrator for the workflow's own steps; null when the step emitted no event */
        agent: string | null;
        /**
         * @description completed; retried (completed after being interrupted and run again); running (not journaled yet); interrupted (never finished: the task failed, was cancelled or timed out)
         * @enum {string}
         */
        status: 'completed' | 'retried' | 'running' | 'interrupted';
        /**
         * Format: date-time
         * @description The step's first event, or the end of the step before it when it emitted none
         */
        started_at: string | null;
        /**
         * Format: date-time
         * @description When its journal entry was written; null while running
         */
        ended_at: string | null;
        duration_ms: number | null;
        /** @description ERROR_RECOVERY events of the step */
        retries: number;
        first_seq: number | null;
        last_seq: number | null;
        /** @description Last seq when the step was journaled */
        seq_after: number | null;
        event_count: number;
        journaled: boolean;
      }[];
      stats: {
        steps: number;
        events: number;
        retries: number;
      };
    };
    TimelineStep: {
      /** @description Journaled step name: start, history, agent, plan, subtask-N, synthesize, finish */
      name: string;
      /** @description The step's agent; orchestrator for the workflow's own steps; null when the step emitted no event */
      agent: string | null;
      /**
       * @description completed; retried (completed after being interrupted and run again); running (not journaled yet); interrupted (never finished: the task failed, was cancelled or timed out)
       * @enum {string}
       */
      status: 'completed' | 'retried' | 'running' | 'interrupted';
      /**
       * Format: date-time
       * @description The step's first event, or the end of the step before it when it emitted none
       */
      started_at: string | null;
      /**
       * Format: date-time
       * @description When its journal entry was written; null while running
       */
      ended_at: string | null;
      duration_ms: number | null;
      /** @description ERROR_RECOVERY events of the step */
      retries: number;
      first_seq: number | null;
      last_seq: number | null;
      /** @description Last seq when the step was journaled */
      seq_after: number | null;
      event_count: number;
      journaled: boolean;
    };
    ScheduleCreate: {
      name: string;
      description?: string;
      /** @description 5 fields: minute hour day-of-month month day-of-week (0-6, Sunday first) */
      cron_expression: string;
      /** @description IANA name; default UTC */
      timezone?: string;
      task_query: string;
      /** @description Context of every run */
      task_context?: {
        [key: string]: unknown;
      };
      /** @description Default 10.0; a run over it pauses the schedule */
      max_budget_per_run_usd?: number;
      /** @description Default 600 */
      timeout_seconds?: number;
    };
    ScheduleUpdate: {
      name?: string;
      description?: string;
      /** @description 5 fields: minute hour day-of-month month day-of-week (0-6, Sunday first) */
      cron_expression?: string;
      /** @description IANA name; default UTC */
      timezone?: string;
      task_query?: string;
      /** @description Context of every run */
      task_context?: {
        [key: string]: unknown;
      };
      /** @description Default 10.0; a run over it pauses the schedule */
      max_budget_per_run_usd?: number;
      /** @description Default 600 */
      timeout_seconds?: number;
    };
    Schedule: {
      /** Format: uuid */
      id: string;
      name: string;
      description: string;
      cron_expression: string;
      timezone: string;
      task_query: string;
      /** @description Context of every run */
      task_context: {
        [key: string]: unknown;
      };
      max_budget_per_run_usd: number;
      timeout_seconds: number;
      /** @enum {string} */
      status: 'ACTIVE' | 'PAUSED';
      /** Format: date-time */
      created_at: string;
      /** Format: date-time */
      updated_at: string;
      /** Format: date-time */
      next_run_at: string | null;
      /** Format: date-time */
      last_run_at: string | null;
      total_runs: number;
      successful_runs: number;
      failed_runs: number;
    };
    ScheduleSummary: {
      id: string;
      name: string;
      cron_expression: string;
      timezone: string;
      /** @enum {string} */
      status: 'ACTIVE' | 'PAUSED';
      /** Format: date-time */
      next_run_at: string | null;
      total_runs: number;
      successful_runs: number;
      failed_runs: number;
    };
    ScheduleList: {
      schedules: {
        id: string;
        name: string;
        cron_expression: string;
        timezone: string;
        /** @enum {string} */
        status: 'ACTIVE' | 'PAUSED';
        /** Format: date-time */
        next_run_at: string | null;
        total_runs: number;
        successful_runs: number;
        failed_runs: number;
      }[];
      total: number;
      page: number;
      page_size: number;
    };
    ScheduleCreated: {
      schedule_id: string;
      message: string;
      /** Format: date-time */
      next_run_at: string | null;
    };
    ScheduleRun: {
      workflow_id: string;
      query: string;
      /** @description e.g. RUNNING, COMPLETED, FAILED, TIMEOUT, CANCELLED */
      status: string;
      result?: string;
      error_message?: string;
      model_used?: string;
      provider?: string;
      total_tokens: number;
      total_cost_usd: number;
      duration_ms?: number;
      /** Format: date-time */
      triggered_at: string;
      /** Format: date-time */
      started_at?: string;
      /** Format: date-time */
      completed_at?: string;
    };
    ScheduleRuns: {
      runs: {
        workflow_id: string;
        query: string;
        /** @description e.g. RUNNING, COMPLETED, FAILED, TIMEOUT, CANCELLED */
        status: string;
        result?: string;
        error_message?: string;
        model_used?: string;
        provider?: string;
        total_tokens: number;
        total_cost_usd: number;
        duration_ms?: number;
        /** Format: date-time */
        triggered_at: string;
        /** Format: date-time */
        started_at?: string;
        /** Format: date-time */
        completed_at?: string;
      }[];
      total_count: number;
      page: number;
      page_size: number;
    };
    ReasonBody: {
      reason?: string;
    };
    SchedulePaused: {
      message: string;
      /** Format: date-time */
      paused_at: string;
    };
    ScheduleResumed: {
      message: string;
      /** Format: date-time */
      next_run_at: string | null;
    };
    Message: {
      message: string;
    };
    Readiness: {
      /** @enum {string} */
      status: 'ready' | 'not_ready';
      version: string;
      time: string;
      checks: {
        [key: string]: {
          ok: boolean;
          latency_ms: number;
          error?: string;
        };
      };
    };
    OpenAiError: {
      error: {
        message: string;
        /** @enum {string} */
        type: 'invalid_request_error' | 'authentication_error' | 'permission_error' | 'rate_limit_error' | 'server_error';
        /** @description The request field at fault, if any */
        param?: string | null;
        code: string | null;
      };
    };
    OpenAiModel: {
      id: string;
      /** @enum {string} */
      object: 'model';
      created: number;
      owned_by: string;
    };
    OpenAiModelList: {
      /** @enum {string} */
      object: 'list';
      data: components['schemas']['OpenAiModel'][];
    };
    OpenAiUsage: {
      prompt_tokens: number;
      completion_tokens: number;
      total_tokens: number;
    };
    ChatCompletionRequest: {
      /** @description A model of GET /v1/models; default svc-chat */
      model?: string | null;
      /** @description At least one user message; the last one is the query */
      messages: ({
        /** @enum {string} */
        role: 'system' | 'user' | 'assistant';
        /** @description Text, or an array of {type: "text", text} parts; null only for an assistant message */
        content:
          | (string | null)
          | ({
              /** @enum {string} */
              type: 'text';
              text: string;
            } & {
              [key: string]: unknown;
            })[];
        /** @description Author name, shown to the model before the content */
        name?: string | null;
      } & {
        [key: string]: unknown;
      })[];
      /** @default false */
      stream: boolean | null;
      /** @description Only with stream: true */
      stream_options?: {
        /** @description The final chunk carries usage */
        include_usage?: boolean | null;
      } | null;
      /** @description Only 1 */
      n?: number | null;
      /** @description Capped at 16384 */
      max_tokens?: number | null;
      /** @description Alias of max_tokens */
      max_completion_tokens?: number | null;
      /** @description Stop sequences: a string or up to 4 */
      stop?: (string | null) | string[];
      /** @description End-user id: recorded with the task; names the session when X-Session-ID is absent */
      user?: string | null;
      /** @default 0.7 */
      temperature: number | null;
      top_p?: number | null;
      presence_penalty?: number | null;
      frequency_penalty?: number | null;
    };
    ChatCompletion: {
      /** @description chatcmpl-<task id> */
      id: string;
      /** @enum {string} */
      object: 'chat.completion';
      created: number;
      model: string;
      choices: {
        index: number;
        message: {
          /** @enum {string} */
          role: 'assistant';
          content: string;
        };
        /** @enum {string} */
        finish_reason: 'stop';
      }[];
      usage: components['schemas']['OpenAiUsage'];
    };
    CompletionRequest: {
      /** @description A model of GET /v1/models; default svc-chat */
      model?: string | null;
      /** @description The query (an array of exactly one string is accepted too) */
      prompt: string | string[];
      /** @default false */
      stream: boolean | null;
      /** @description Only with stream: true */
      stream_options?: {
        /** @description The final chunk carries usage */
        include_usage?: boolean | null;
      } | null;
      /** @description Only 1 */
      n?: number | null;
      /** @description Capped at 16384 */
      max_tokens?: number | null;
      /** @description Stop sequences: a string or up to 4 */
      stop?: (string | null) | string[];
      /** @description End-user id: recorded with the task; names the session when X-Session-ID is absent */
      user?: string | null;
      /** @default 0.7 */
      temperature: number | null;
      top_p?: number | null;
      presence_penalty?: number | null;
      frequency_penalty?: number | null;
    };
    TextCompletion: {
      /** @description cmpl-<task id> */
      id: string;
      /** @enum {string} */
      object: 'text_completion';
      created: number;
      model: string;
      choices: {
        text: string;
        index: number;
        logprobs?: Record<string, never> | null;
        /** @enum {string} */
        finish_reason: 'stop';
      }[];
      usage: components['schemas']['OpenAiUsage'];
    };
    ApprovalDecisionRequest: {
      /** @description The approval_id of the APPROVAL_REQUESTED event */
      approval_id: string;
      /** @description The waiting task (workflow) id */
      workflow_id: string;
      approved: boolean;
      /** @description Why; a refused tool call tells the model this, a refused task fails with it */
      feedback?: string;
      /** @description Replaces the tool call's arguments: {"arguments": {...}}, the arguments themselves, or a JSON string of either; null or absent: none */
      modified_action?: unknown;
      /** @description Who decided; default the caller's user id */
      approved_by?: string;
    };
    ApprovalDecisionResponse: {
      success: boolean;
      approval_id: string;
      workflow_id: string;
      /** @enum {string} */
      status: 'approved' | 'rejected';
    };
    PendingApproval: {
      approval_id: string;
      workflow_id: string;
      query: string;
      /** @description A tool call: {tool, arguments}; a whole task: {action: "run_task", query, mode} */
      proposed_action: {
        [key: string]: unknown;
      };
      reason: string;
      /** Format: date-time */
      requested_at: string;
      /** @description scope (task|tool), agent_id, timeout_seconds, expires_at, session_id */
      metadata: {
        [key: string]: unknown;
      };
    };
    PendingApprovalList: {
      approvals: {
        approval_id: string;
        workflow_id: string;
        query: string;
        /** @description A tool call: {tool, arguments}; a whole task: {action: "run_task", query, mode} */
        proposed_action: {
          [key: string]: unknown;
        };
        reason: string;
        /** Format: date-time */
        requested_at: string;
        /** @description scope (task|tool), agent_id, timeout_seconds, expires_at, session_id */
        metadata: {
          [key: string]: unknown;
        };
      }[];
      count: number;
    };
    ReviewState: {
      /** @enum {string} */
      status: 'reviewing' | 'approved';
      /** @description Current round, starts at 1 (the first plan); at most 10 */
      round: number;
      /** @description Monotonic version for optimistic concurrency (ETag, If-Match) */
      version: number;
      /** @description Latest actionable plan; may be empty while the model is asking questions */
      current_plan: string;
      rounds: {
        /** @enum {string} */
        role: 'assistant' | 'user';
        message: string;
        /** Format: date-time */
        timestamp: string;
      }[];
      /** @description The task query */
      query: string;
    };
    ReviewRequest: {
      /** @enum {string} */
      action: 'feedback' | 'approve';
      /** @description Required for feedback; at most 10 KB (UTF-8 bytes) */
      message?: string;
    };
    ReviewFeedbackResponse: {
      /** @enum {string} */
      status: 'reviewing';
      plan: {
        /** @description The updated plan (intent ready) or the questions the model asks (intent feedback) */
        message: string;
        round: number;
        version: number;
        /** @enum {string} */
        intent: 'ready' | 'feedback';
      };
    };
    ReviewApproveResponse: {
      /** @enum {string} */
      status: 'approved';
      message: string;
    };
    SwarmMessageRequest: {
      /** @description What the person tells the lead (non-empty) */
      message: string;
    };
    SwarmMessageResponse: {
      success: boolean;
      /**
       * @description Stored in the lead’s mailbox; the lead acts on it at its next decision
       * @enum {string}
       */
      status: 'delivered';
    };
    /** @description A tool source: an MCP server or an OpenAPI document. Never its header values. */
    ToolSource: {
      name: string;
      /**
       * @description operator: listed in config/mcp.yaml (its URL is not shown)
       * @enum {string}
       */
      owner: 'user' | 'operator';
      /** @description MCP: the server URL */
      url?: string;
      /** @description OpenAPI: where the document was read */
      spec_url?: string;
      /** @description OpenAPI: where calls go */
      base_url?: string;
      title?: string;
      version?: string;
      header_names: string[];
      /** @description The tool names it gives: mcp.<name>.<tool> or openapi.<name>.<operationId> */
      tools: string[];
      /** Format: date-time */
      created_at?: string;
    };
    AgentDefinition: {
      /** @description e.g. serp-ads */
      id: string;
      name: string;
      description: string;
      /** @description e.g. ads_research, financial, web */
      category: string;
      /** @description The underlying tool (GET /api/v1/tools/{name}), run with the input as its arguments */
      tool: string;
      input_schema: {
        required: string[];
        properties: {
          [key: string]: {
            /** @enum {string} */
            type: 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'object';
            description?: string;
            /** @description Filled in when the field is absent or null */
            default?: unknown;
            /** @description The allowed values */
            enum?: unknown[];
            minimum?: number;
            maximum?: number;
            /** @description What every element must be: {type, description, enum} */
            items?: {
              [key: string]: unknown;
            };
            maxItems?: number;
          };
        };
      };
      /** @description Estimated USD per call */
      cost_per_call: number;
    };
    AgentList: {
      agents: components['schemas']['AgentDefinition'][];
      count: number;
    };
    AgentExecuteRequest: {
      /** @description The agent's input, checked against its input_schema (defaults filled in) */
      input: {
        [key: string]: unknown;
      };
      /** @description Session (UUID or external id); generated when omitted */
      session_id?: string;
      /** @description Reserved by the spec; true adds stream_url (the task SSE stream) to the reply. The run is the same. */
      stream?: boolean;
    };
    AgentExecuteResponse: {
      /** Format: uuid */
      task_id: string;
      agent_id: string;
      /** @description Submission status: STATUS_CODE_OK */
      status: string;
      /** Format: date-time */
      created_at: string;
      /** @description With stream: true: /api/v1/stream/sse?workflow_id=<task_id> */
      stream_url?: string;
    };
    MemoryListing: {
      success: boolean;
      path: string;
      files: {
        name: string;
        /** @description Relative to the memory root, starting with / */
        path: string;
        /** @description Bytes; 0 for directories */
        size: number;
        /** @description The same as size */
        size_bytes: number;
        is_dir: boolean;
        /** Format: date-time */
        modified_at: string;
      }[];
      /** @description More than 10,000 entries: the list was cut */
      truncated?: boolean;
    };
    MemoryFile: {
      success: boolean;
      path: string;
      /** @description The text, or the bytes base64-encoded (encoding) */
      content: string;
      /** @description Detected from the bytes */
      content_type: string;
      size_bytes: number;
      /** @enum {string} */
      encoding: 'utf-8' | 'base64';
    };
  };
  responses: never;
  parameters: never;
  requestBodies: never;
  headers: never;
  pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
  listSchedules: {
    parameters: {
      query?: {
        page?: number;
        page_size?: number;
        status?: 'ACTIVE' | 'PAUSED';
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ScheduleList'];
        };
      };
      /** @description Invalid page, page_size or status */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  createSchedule: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['ScheduleCreate'];
      };
    };
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ScheduleCreated'];
        };
      };
      /** @description Invalid cron, timezone, interval too short, invalid fields, or a task_context key that is not available yet (see POST /api/v1/tasks) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description schedule limit reached */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  getSchedule: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description Schedule id */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Schedule'];
        };
      };
      /** @description Schedule not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  updateSchedule: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description Schedule id */
        id: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['ScheduleUpdate'];
      };
    };
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Schedule'];
        };
      };
      /** @description Invalid fields */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Schedule not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  deleteSchedule: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description Schedule id */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Message'];
        };
      };
      /** @description Schedule not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  listScheduleRuns: {
    parameters: {
      query?: {
        page?: number;
        page_size?: number;
      };
      header?: never;
      path: {
        /** @description Schedule id */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ScheduleRuns'];
        };
      };
      /** @description Schedule not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  pauseSchedule: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description Schedule id */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: {
      content: {
        'application/json': components['schemas']['ReasonBody'];
      };
    };
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SchedulePaused'];
        };
      };
      /** @description Schedule not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Schedule is already paused */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  resumeSchedule: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description Schedule id */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: {
      content: {
        'application/json': components['schemas']['ReasonBody'];
      };
    };
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ScheduleResumed'];
        };
      };
      /** @description Schedule not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Schedule is not paused */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  listSessions: {
    parameters: {
      query?: {
        limit?: number;
        offset?: number;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SessionList'];
        };
      };
      /** @description Invalid limit or offset */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  getSession: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description Session UUID or external id */
        sessionId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Session'];
        };
      };
      /** @description Session not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  deleteSession: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description Session UUID or external id */
        sessionId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Deleted (or already gone) */
      204: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
    };
  };
  updateSession: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description Session UUID or external id */
        sessionId: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['SessionPatch'];
      };
    };
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Session'];
        };
      };
      /** @description title is required */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Session not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  getSessionHistory: {
    parameters: {
      query?: {
        /** @description Most recent turns */
        limit?: number;
      };
      header?: never;
      path: {
        /** @description Session UUID or external id */
        sessionId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SessionHistory'];
        };
      };
      /** @description Session not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  listWorkspace: {
    parameters: {
      query?: {
        /** @description Subdirectory */
        path?: string;
        recursive?: boolean;
      };
      header?: never;
      path: {
        /** @description Session UUID or external id */
        sessionId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['WorkspaceListing'];
        };
      };
      /** @description invalid path: traversal not allowed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Session not found, or path not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  downloadWorkspaceFile: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description Session UUID or external id */
        sessionId: string;
        /** @description File path inside the workspace (may contain /) */
        path: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The file */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/octet-stream': string;
        };
      };
      /** @description invalid path: traversal not allowed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Session not found, file not found, or path is a directory */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description file exceeds maximum size limit (100MB) */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  getSessionEvents: {
    parameters: {
      query?: {
        /** @description Most recent turns */
        limit?: number;
        /** @description Newest turns to skip */
        offset?: number;
      };
      header?: never;
      path: {
        /** @description Session UUID or external id */
        sessionId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SessionEvents'];
        };
      };
      /** @description Invalid limit or offset */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Session not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  register: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['RegisterRequest'];
      };
    };
    responses: {
      /** @description Created */
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['RegisterResponse'];
        };
      };
      /** @description Invalid email or password */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description email already registered */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  login: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['LoginRequest'];
      };
    };
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['LoginResponse'];
        };
      };
      /** @description email and password are required */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Invalid email or password */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  refreshToken: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['RefreshRequest'];
      };
    };
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Tokens'];
        };
      };
      /** @description refresh_token is required */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Invalid or expired token */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  me: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['User'];
        };
      };
      /** @description Authentication required */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Rate limit exceeded */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['RateLimited'];
        };
      };
    };
  };
  refreshKey: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['RegeneratedKey'];
        };
      };
      /** @description Authentication required */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  listApiKeys: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiKeyList'];
        };
      };
      /** @description Authentication required */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  createApiKey: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['CreateApiKeyRequest'];
      };
    };
    responses: {
      /** @description Created */
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['CreatedApiKey'];
        };
      };
      /** @description name is required */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Authentication required */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  revokeApiKey: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['RevokedKey'];
        };
      };
      /** @description API key not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  health: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Health'];
        };
      };
      /** @description Unhealthy: NATS unreachable */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Health'];
        };
      };
    };
  };
  readiness: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Readiness'];
        };
      };
      /** @description Not ready */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Readiness'];
        };
      };
    };
  };
  metrics: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Prometheus text exposition format */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/plain': string;
        };
      };
    };
  };
  openapi: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OpenAPI 3.0 document */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
    };
  };
  listTasks: {
    parameters: {
      query?: {
        limit?: number;
        offset?: number;
        /** @description UUID or external id */
        session_id?: string;
        /** @description CANCELED is accepted for CANCELLED */
        status?: 'QUEUED' | 'RUNNING' | 'COMPLETED' | 'FAILED' | 'CANCELLED' | 'CANCELED' | 'TIMEOUT' | 'PAUSED';
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['TaskList'];
        };
      };
      /** @description Invalid limit, offset or status */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  submitTask: {
    parameters: {
      query?: never;
      header?: {
        /** @description Same key within 24 hours returns the cached response and ignores the new body */
        'Idempotency-Key'?: string;
        /** @description W3C trace context; the trace id is carried into logs and events */
        traceparent?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['TaskSubmitRequest'];
      };
    };
    responses: {
      /** @description Accepted; the task is QUEUED */
      200: {
        headers: {
          'X-Workflow-ID'?: string;
          'X-Session-ID'?: string;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['TaskSubmitResponse'];
        };
      };
      /** @description Invalid JSON, missing query, a bad field, disable_ai combined with a model control, or a field that is not available yet (provider_override, skill, research_strategy, max_iterations, enable_verification: true, and in context provider_override, skill, research_strategy, template, template_name, template_version, disable_ai: true): "<field> is not available yet" */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Authentication required */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The task queue (NATS) is unreachable: the task was not accepted and will not run; retry after Retry-After seconds */
      503: {
        headers: {
          'Retry-After'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  submitTaskAndStream: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['TaskSubmitRequest'];
      };
    };
    responses: {
      /** @description Created */
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['TaskStreamSubmitResponse'];
        };
      };
      /** @description Invalid JSON, missing query, a bad field, disable_ai combined with a model control, or a field that is not available yet (provider_override, skill, research_strategy, max_iterations, enable_verification: true, and in context provider_override, skill, research_strategy, template, template_name, template_version, disable_ai: true): "<field> is not available yet" */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  getTask: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description Task (workflow) id */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['TaskStatus'];
        };
      };
      /** @description Task not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  getTaskEvents: {
    parameters: {
      query?: {
        after_seq?: number;
        limit?: number;
      };
      header?: never;
      path: {
        /** @description Task (workflow) id */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['EventList'];
        };
      };
      /** @description Task not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  cancelTask: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description Task (workflow) id */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: {
      content: {
        'application/json': components['schemas']['ControlRequest'];
      };
    };
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ControlResponse'];
        };
      };
      /** @description Invalid body */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Task not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The task's state does not allow it */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  pauseTask: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description Task (workflow) id */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: {
      content: {
        'application/json': components['schemas']['ControlRequest'];
      };
    };
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ControlResponse'];
        };
      };
      /** @description Invalid body */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Task not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The task's state does not allow it */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  resumeTask: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description Task (workflow) id */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: {
      content: {
        'application/json': components['schemas']['ControlRequest'];
      };
    };
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ControlResponse'];
        };
      };
      /** @description Invalid body */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Task not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The task's state does not allow it */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  getTaskTimeline: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description Task (workflow) id */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Timeline'];
        };
      };
      /** @description Forbidden: not the task owner */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Task not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  listSkills: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            skills: {
              name: string;
              /** @description The latest version */
              version: string;
              /** @description The latest version's description */
              description: string;
              /** @description Every version, oldest first */
              versions: string[];
            }[];
            total_count: number;
          };
        };
      };
    };
  };
  getSkill: {
    parameters: {
      query?: {
        /** @description A version; default latest */
        version?: string;
      };
      header?: never;
      path: {
        /** @description Skill name */
        name: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            name: string;
            version: string;
            description: string;
            /** @description The markdown body: the system prompt */
            instructions: string;
            /** @description Role preset the skill runs as */
            role: string | null;
            tools: string[];
            /** @description small, medium or large */
            model_tier: string | null;
            /** @description sha256 (hex) of the skill file's bytes */
            content_hash: string;
            /** @description Every version, oldest first */
            versions: string[];
          };
        };
      };
      /** @description Malformed version */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Skill not found: <name>, or Skill <name> has no version <version> */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  listSkillVersions: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description Skill name */
        name: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            name: string;
            /** @description Oldest first */
            versions: {
              version: string;
              description: string;
              content_hash: string;
            }[];
          };
        };
      };
      /** @description Skill not found: <name> */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  listChannels: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** Format: uuid */
            id: string;
            /** Format: uuid */
            user_id: string | null;
            /** @enum {string} */
            type: 'platform_a' | 'platform_b';
            name: string;
            /** @description Optional; agent_name routes messages to a named agent */
            config: {
              [key: string]: unknown;
            };
            enabled: boolean;
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            updated_at: string;
          }[];
        };
      };
    };
  };
  createChannel: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': {
          /** @enum {string} */
          type: 'platform_a' | 'platform_b';
          name: string;
          /** @description platform_a: signing_secret, bot_token, app_id; platform_b: channel_secret, channel_access_token (all required strings). Write-only. */
          credentials: {
            [key: string]: string;
          };
          config?: {
            [key: string]: unknown;
          };
        };
      };
    };
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** Format: uuid */
            id: string;
            /** Format: uuid */
            user_id: string | null;
            /** @enum {string} */
            type: 'platform_a' | 'platform_b';
            name: string;
            /** @description Optional; agent_name routes messages to a named agent */
            config: {
              [key: string]: unknown;
            };
            enabled: boolean;
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            updated_at: string;
          };
        };
      };
      /** @description Missing or invalid field or credential */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Duplicate channel (same user, type, name) */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  getChannel: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description Channel id */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** Format: uuid */
            id: string;
            /** Format: uuid */
            user_id: string | null;
            /** @enum {string} */
            type: 'platform_a' | 'platform_b';
            name: string;
            /** @description Optional; agent_name routes messages to a named agent */
            config: {
              [key: string]: unknown;
            };
            enabled: boolean;
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            updated_at: string;
          };
        };
      };
      /** @description Another user's channel */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Channel not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  updateChannel: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description Channel id */
        id: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': {
          name?: string;
          /** @description platform_a: signing_secret, bot_token, app_id; platform_b: channel_secret, channel_access_token (all required strings). Write-only. */
          credentials?: {
            [key: string]: string;
          };
          config?: {
            [key: string]: unknown;
          };
          enabled?: boolean;
        };
      };
    };
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** Format: uuid */
            id: string;
            /** Format: uuid */
            user_id: string | null;
            /** @enum {string} */
            type: 'platform_a' | 'platform_b';
            name: string;
            /** @description Optional; agent_name routes messages to a named agent */
            config: {
              [key: string]: unknown;
            };
            enabled: boolean;
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            updated_at: string;
          };
        };
      };
      /** @description Invalid field or credential */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Another user's channel */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Channel not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Duplicate channel (same user, type, name) */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  deleteChannel: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description Channel id */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            message: string;
          };
        };
      };
      /** @description Another user's channel */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Channel not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  channelWebhook: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description Channel id */
        channel_id: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': {
          [key: string]: unknown;
        };
      };
    };
    responses: {
      /** @description {status: "dispatched"}; {challenge} for a URL verification; {status: "ignored", reason} for bot messages and other events */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @enum {string} */
            status?: 'dispatched' | 'ignored';
            /** @description platform_a URL verification */
            challenge?: string;
            reason?: string;
          };
        };
      };
      /** @description Body is not a JSON object */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Missing or invalid signature, or a platform_a timestamp more than 5 minutes from now */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Channel not found (or disabled) */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The message could not be stored (the message bus is unreachable); deliver it again after Retry-After */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  decideApproval: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['ApprovalDecisionRequest'];
      };
    };
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApprovalDecisionResponse'];
        };
      };
      /** @description Invalid JSON, a missing or invalid field (named), or modified_action not a JSON object */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Forbidden: not the task owner */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Approval not found (unknown, another workflow_id, or another tenant) */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Approval already decided */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  listApprovals: {
    parameters: {
      query?: {
        status?: 'pending';
        /** @description Only this session's approvals */
        session_id?: string;
        limit?: number;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['PendingApprovalList'];
        };
      };
      /** @description status must be 'pending', or limit out of range */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  getReview: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        workflow_id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          /** @description The review version (bare number) */
          ETag?: string;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ReviewState'];
        };
      };
      /** @description Forbidden: not the task owner */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Review session not found or expired (also another tenant's task) */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  postReview: {
    parameters: {
      query?: never;
      header?: {
        /** @description The version last seen (3, "3" or W/"3"); a different current version is 409 */
        'If-Match'?: string;
      };
      path: {
        workflow_id: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['ReviewRequest'];
      };
    };
    responses: {
      /** @description feedback: ReviewFeedbackResponse (ETag = the new version); approve: ReviewApproveResponse */
      200: {
        headers: {
          /** @description The new review version (feedback) */
          ETag?: string;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ReviewFeedbackResponse'] | components['schemas']['ReviewApproveResponse'];
        };
      };
      /** @description message is required for feedback | message exceeds maximum length (10KB) | action must be 'feedback' or 'approve' | No research plan to approve. Please provide feedback to generate a plan first. */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Forbidden: not the task owner */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Review session not found or expired */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Conflict: state has been modified (feedback, If-Match) | Conflict: plan has been updated. Please review the latest version. (approve, If-Match) | Another feedback request is in progress. Please wait. | A feedback request is in progress. Please wait and try again. | Maximum review rounds reached. Please approve the plan. */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Failed to generate updated plan | Failed to approve review */
      502: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  sendSwarmMessage: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        workflow_id: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['SwarmMessageRequest'];
      };
    };
    responses: {
      /** @description Delivered */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SwarmMessageResponse'];
        };
      };
      /** @description message is required (a non-empty string) / message must be at most 10000 characters / invalid JSON */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Not authenticated */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Swarm not found: no running swarm of that id that the caller owns (also once its lead synthesises or it ended) */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  listMcpServers: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            servers?: components['schemas']['ToolSource'][];
            count?: number;
          };
        };
      };
      /** @description Authentication required */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  addMcpServer: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': {
          name: string;
          /** Format: uri */
          url: string;
          /** @description Request headers sent to the source (e.g. Authorization). Write-only: encrypted at rest, never returned (replies list header_names). */
          headers?: {
            [key: string]: string;
          };
        };
      };
    };
    responses: {
      /** @description Registered */
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ToolSource'];
        };
      };
      /** @description Invalid request, URL refused by the SSRF guard, server unreachable or document unusable */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Authentication required */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Tool source limit reached (TOOL_SOURCES_MAX_PER_USER) */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The caller already has a source of this kind and name */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  removeMcpServer: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description The server name */
        name: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            success?: boolean;
            message?: string;
          };
        };
      };
      /** @description Authentication required */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The caller has no MCP server by that name */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  listOpenApiSources: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            sources?: components['schemas']['ToolSource'][];
            count?: number;
          };
        };
      };
      /** @description Authentication required */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  addOpenApiSource: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': {
          name: string;
          /** Format: uri */
          spec_url?: string;
          /** @description The document: a JSON object, or its JSON or YAML text */
          spec?: unknown;
          /**
           * Format: uri
           * @description Where calls go; default: the document's first server URL
           */
          base_url?: string;
          /** @description Request headers sent to the source (e.g. Authorization). Write-only: encrypted at rest, never returned (replies list header_names). */
          headers?: {
            [key: string]: string;
          };
        };
      };
    };
    responses: {
      /** @description Registered */
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ToolSource'];
        };
      };
      /** @description Invalid request, URL refused by the SSRF guard, server unreachable or document unusable */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Authentication required */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Tool source limit reached (TOOL_SOURCES_MAX_PER_USER) */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The caller already has a source of this kind and name */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  removeOpenApiSource: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description The source name */
        name: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            success?: boolean;
            message?: string;
          };
        };
      };
      /** @description Authentication required */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The caller has no OpenAPI tool source by that name */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  listAgents: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['AgentList'];
        };
      };
    };
  };
  getAgent: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description Agent id */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['AgentDefinition'];
        };
      };
      /** @description Agent not found: <id> */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  executeAgent: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description Agent id */
        id: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['AgentExecuteRequest'];
      };
    };
    responses: {
      /** @description Accepted */
      202: {
        headers: {
          /** @description The task (workflow) id */
          'X-Workflow-ID'?: string;
          /** @description The session the task runs in */
          'X-Session-ID'?: string;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['AgentExecuteResponse'];
        };
      };
      /** @description Invalid JSON, input missing, an unknown body field (unknown field: <name>), or invalid input: "input validation failed: missing required field: <field>", "input validation failed: unknown field: <field> (not defined in agent schema)", "input validation failed: field <field>: expected type <type>, got <type>", ..., then the tool's own schema: "input validation failed: field <field>: <reason>" (e.g. field keywords: must NOT have fewer than 1 characters) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Agent not found: <id>, or Session not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  mcpGet: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Authentication required */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Method not allowed (Allow: POST, DELETE) */
      405: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
    };
  };
  mcpPost: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': Record<string, never>;
      };
    };
    responses: {
      /** @description SSE stream (text/event-stream) of JSON-RPC messages */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/event-stream': string;
        };
      };
      /** @description Accepted (notifications or responses only) */
      202: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Not JSON-RPC, or a batch (JSON-RPC error body: -32700 parse error, -32600 invalid request) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Authentication required */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Accept must list application/json and text/event-stream */
      406: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Content-Type must be application/json */
      415: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Rate limit exceeded (a list_tasks call also counts against the task-list burst limit) */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
    };
  };
  mcpDelete: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Authentication required */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
    };
  };
  getBlob: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description The reference's blob_key (also in its url: /api/v1/blob/<key>) */
        key: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The bytes, with the Content-Type they were stored with (image/png for screenshots) */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'image/png': string;
          'application/octet-stream': string;
        };
      };
      /** @description Not authenticated */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Blob not found: no such key, expired, or stored by someone else */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  daemonWs: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Switching protocols */
      101: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Authentication required */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            error: string;
          };
        };
      };
    };
  };
  daemonStatus: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            daemons: {
              /** Format: uuid */
              connection_id: string;
              /** Format: date-time */
              connected_since: string;
              claims_held: number;
            }[];
            count: number;
          };
        };
      };
      /** @description Authentication required */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            error: string;
          };
        };
      };
      /** @description Rate limit exceeded */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            error: string;
          };
        };
      };
    };
  };
  listMemoryFiles: {
    parameters: {
      query?: {
        /** @description Subdirectory */
        path?: string;
        recursive?: boolean;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MemoryListing'];
        };
      };
      /** @description invalid path: traversal not allowed; path is not a directory; recursive must be a boolean */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Not authenticated */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description path not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  downloadMemoryFile: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description File path inside the memory (may contain /) */
        path: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MemoryFile'];
        };
      };
      /** @description invalid path: traversal not allowed */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Not authenticated */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description file not found, or path is a directory */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description file exceeds maximum size limit (100MB) */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  openaiChatCompletions: {
    parameters: {
      query?: never;
      header?: {
        /** @description Session id */
        'X-Session-ID'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['ChatCompletionRequest'];
      };
    };
    responses: {
      /** @description The completion (application/json), or with stream: true text/event-stream chunks (chat.completion.chunk) */
      200: {
        headers: {
          /** @description Requests per minute for this key and model */
          'X-RateLimit-Limit-Requests'?: number;
          /** @description Requests left in the current minute */
          'X-RateLimit-Remaining-Requests'?: number;
          /** @description Tokens per minute for this key and model */
          'X-RateLimit-Limit-Tokens'?: number;
          /** @description Tokens left in the current minute (usage is counted when a completion ends) */
          'X-RateLimit-Remaining-Tokens'?: number;
          /** @description Time until the window resets, as OpenAI writes it (e.g. "12s") */
          'X-RateLimit-Reset-Requests'?: string;
          /** @description Time until the token window resets (e.g. "12s") */
          'X-RateLimit-Reset-Tokens'?: string;
          /** @description The session id to send next time; only when a session was created or the given one collided */
          'X-Session-ID'?: string;
          /** @description The service's session UUID (GET /api/v1/sessions/{sessionId}); with X-Session-ID */
          'X-Service-Session-ID'?: string;
          /** @description The task that produced the completion (GET /api/v1/tasks/{id}) */
          'X-Workflow-ID'?: string;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ChatCompletion'];
          'text/event-stream': string;
        };
      };
      /** @description invalid_request_error / invalid_request: bad JSON, a field out of range (temperature 0-2, penalties -2..2, n other than 1), an unsupported or unknown field */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['OpenAiError'];
        };
      };
      /** @description authentication_error / invalid_api_key */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['OpenAiError'];
        };
      };
      /** @description invalid_request_error / model_not_found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['OpenAiError'];
        };
      };
      /** @description rate_limit_error / rate_limit_exceeded (per key and model) */
      429: {
        headers: {
          /** @description Seconds */
          'Retry-After'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['OpenAiError'];
        };
      };
      /** @description server_error / internal_error: the task failed or was cancelled */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['OpenAiError'];
        };
      };
      /** @description server_error / service_unavailable: the task queue (NATS) is unreachable */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['OpenAiError'];
        };
      };
      /** @description server_error / timeout: not finished within 35 minutes (non-streaming); the task is cancelled */
      504: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['OpenAiError'];
        };
      };
    };
  };
  openaiCompletions: {
    parameters: {
      query?: never;
      header?: {
        /** @description Session id */
        'X-Session-ID'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['CompletionRequest'];
      };
    };
    responses: {
      /** @description The completion, or with stream: true text/event-stream chunks */
      200: {
        headers: {
          /** @description Requests per minute for this key and model */
          'X-RateLimit-Limit-Requests'?: number;
          /** @description Requests left in the current minute */
          'X-RateLimit-Remaining-Requests'?: number;
          /** @description Tokens per minute for this key and model */
          'X-RateLimit-Limit-Tokens'?: number;
          /** @description Tokens left in the current minute (usage is counted when a completion ends) */
          'X-RateLimit-Remaining-Tokens'?: number;
          /** @description Time until the window resets, as OpenAI writes it (e.g. "12s") */
          'X-RateLimit-Reset-Requests'?: string;
          /** @description Time until the token window resets (e.g. "12s") */
          'X-RateLimit-Reset-Tokens'?: string;
          /** @description The session id to send next time; only when a session was created or the given one collided */
          'X-Session-ID'?: string;
          /** @description The service's session UUID (GET /api/v1/sessions/{sessionId}); with X-Session-ID */
          'X-Service-Session-ID'?: string;
          /** @description The task that produced the completion (GET /api/v1/tasks/{id}) */
          'X-Workflow-ID'?: string;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['TextCompletion'];
          'text/event-stream': string;
        };
      };
      /** @description invalid_request_error / invalid_request: bad JSON, a field out of range (temperature 0-2, penalties -2..2, n other than 1), an unsupported or unknown field */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['OpenAiError'];
        };
      };
      /** @description authentication_error / invalid_api_key */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['OpenAiError'];
        };
      };
      /** @description invalid_request_error / model_not_found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['OpenAiError'];
        };
      };
      /** @description rate_limit_error / rate_limit_exceeded (per key and model) */
      429: {
        headers: {
          /** @description Seconds */
          'Retry-After'?: number;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['OpenAiError'];
        };
      };
      /** @description server_error / internal_error: the task failed or was cancelled */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['OpenAiError'];
        };
      };
      /** @description server_error / service_unavailable: the task queue (NATS) is unreachable */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['OpenAiError'];
        };
      };
      /** @description server_error / timeout */
      504: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['OpenAiError'];
        };
      };
    };
  };
  openaiListModels: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['OpenAiModelList'];
        };
      };
      /** @description authentication_error / invalid_api_key */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['OpenAiError'];
        };
      };
    };
  };
  openaiGetModel: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description Model id */
        model: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          /** @description What the model runs (mode, strategy) */
          'X-Model-Description'?: string;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['OpenAiModel'];
        };
      };
      /** @description authentication_error / invalid_api_key */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['OpenAiError'];
        };
      };
      /** @description invalid_request_error / model_not_found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['OpenAiError'];
        };
      };
    };
  };
  listTools: {
    parameters: {
      query?: {
        /** @description Only this category */
        category?: string;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Tool'][];
        };
      };
    };
  };
  getTool: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description Tool name */
        name: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Tool'];
        };
      };
      /** @description Tool not available via direct execution */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Tool not found: <name> */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  executeTool: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description Tool name */
        name: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['ToolExecuteRequest'];
      };
    };
    responses: {
      /** @description The execution result; a failure the tool reports (bad input it detected, its time limit) has success false */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ToolExecution'];
        };
      };
      /** @description arguments missing, not an object, or not valid for the tool (the message names the field) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Tool not available via direct execution */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Tool not found, or Session not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Over the tool's per-minute limit (WEB_SEARCH_RATE_LIMIT, CALCULATOR_RATE_LIMIT, PYTHON_EXECUTOR_RATE_LIMIT) */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description tool backend unavailable: <why> (a search API or web page that could not be reached) */
      502: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  getControlState: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description Task (workflow) id */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ControlState'];
        };
      };
      /** @description Task not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  streamTask: {
    parameters: {
      query?: {
        /** @description Comma-separated event types */
        types?: string;
        /** @description Stream id <ms>-<seq> or a numeric seq */
        last_event_id?: string;
      };
      header?: {
        /** @description Resume after this stream id or seq */
        'Last-Event-ID'?: string;
      };
      path: {
        /** @description Task (workflow) id */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description text/event-stream */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/event-stream': string;
        };
      };
      /** @description Invalid last_event_id */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  streamSse: {
    parameters: {
      query: {
        workflow_id: string;
        /** @description Comma-separated event types */
        types?: string;
        /** @description Stream id <ms>-<seq> or a numeric seq */
        last_event_id?: string;
        /** @description Fallback for clients that cannot set headers */
        api_key?: string;
      };
      header?: {
        /** @description Stream id <ms>-<seq> or a numeric seq */
        'Last-Event-ID'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description text/event-stream */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/event-stream': string;
        };
      };
      /** @description workflow_id missing or invalid */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  streamWs: {
    parameters: {
      query: {
        workflow_id: string;
        /** @description Resume after this stream id <ms>-<seq> or numeric seq */
        last_event_id?: string;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Switching protocols */
      101: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description workflow_id missing or invalid, or invalid last_event_id */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
}
