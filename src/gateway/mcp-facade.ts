/**
 * The MCP server's facade (mcpserver/facade.ts) for one caller, over the code the REST routes
 * run: submission checked and sent as POST /api/v1/tasks does (task-routes.ts), agents run as
 * POST /api/v1/agents/{id} does (agent-routes.ts), tools executed as POST
 * /api/v1/tools/{name}/execute does (tool-routes.ts), every task call through the orchestrator
 * as the caller (so its ownership rule applies). A waited task is followed on this gateway's
 * event feed (StreamHub, the one the SSE streams read), its events reported to the waiting call;
 * when the feed is unavailable its status is polled instead.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { EVENT_TYPES, type Bus, type WorkflowEvent } from '../bus/index.js';
import type { AgentCatalogue } from '../agents/index.js';
import { TERMINAL_STATUSES, type Logger, type Principal } from '../kernel/index.js';
import type { McpFacade, McpToolInfo, SubmittedTask, TaskJson, WaitOptions } from '../mcpserver/index.js';
import { queueUnavailable } from '../tasks/index.js';
import type { ToolRegistry } from '../tools/index.js';
import { agentJson, submitAgentRun } from './agent-routes.js';
import type { RouteDeps } from './route-deps.js';
import type { Encoded, Feed, StreamHub, Subscriber } from './streams.js';
import { checkSubmitBody, controlTask, listTasksOf, ownedTask, statusJson, submitChecked } from './task-routes.js';
import { TOOL_EXECUTE_TIMEOUT_MS, executionJson } from './tool-routes.js';

export interface McpFacadeDeps {
  orchestrator: RouteDeps['orchestrator'];
  bus: Bus;
  hub: StreamHub;
  log: Logger;
  agents?: AgentCatalogue;
  /** The registry POST /api/v1/agents/{id} checks an agent's input against its tool with. */
  tools?: ToolRegistry;
  /** The tools one caller may see and run (RouteDeps.toolsFor). */
  toolsFor?: RouteDeps['toolsFor'];
}

/** Every event but the token deltas (LLM_PARTIAL): those would flood a client with progress. */
const PROGRESS_EVENTS: ReadonlySet<string> = new Set(EVENT_TYPES.filter((t) => t !== 'LLM_PARTIAL'));
const POLL_MS = 1000;
const terminal = (status: unknown) => (TERMINAL_STATUSES as readonly unknown[]).includes(status);

/** Follows one task's feed: reports each event, settles at STREAM_END ('ended') or when the feed gives it up ('lost'). */
class TaskWatch implements Subscriber {
  cursor = 0;
  readonly filter = PROGRESS_EVENTS;
  backpressured = false;
  closed = false;
  feed?: Feed;
  readonly done: Promise<'ended' | 'lost'>;
  private settle!: (how: 'ended' | 'lost') => void;

  constructor(private readonly onEvent?: (message: string) => void) {
    this.done = new Promise((r) => (this.settle = r));
  }

  write(events: Encoded[]): boolean {
    if (!this.onEvent) return true;
    for (const e of events) {
      const ev = JSON.parse(e.json) as WorkflowEvent;
      this.onEvent((ev.message ? `${ev.type}: ${ev.message}` : ev.type).slice(0, 500));
    }
    return true;
  }

  end(): void {
    this.stop('ended');
  }

  drop(): void {
    this.stop('lost');
  }

  stop(how: 'ended' | 'lost'): void {
    if (this.closed) return;
    this.closed = true;
    this.feed?.remove(this);
    this.settle(how);
  }
}

/** The facade bound to principal `p`; `traceparent` (the HTTP request's) is passed on to submissions. */
export function mcpFacadeFor(d: McpFacadeDeps, p: Principal, o: { traceparent?: string } = {}): McpFacade {
  const client = d.orchestrator;
  let registry: Promise<ToolRegistry | undefined> | undefined;
  const callerTools = () => (registry ??= d.toolsFor ? d.toolsFor(p) : Promise.resolve(undefined));
  const getTask = async (id: string): Promise<TaskJson> => statusJson(await ownedTask(client, id, p)) as TaskJson;
  const submitted = (r: { taskId: string; workflowId: string; sessionId: string }): SubmittedTask => ({
    taskId: r.taskId,
    workflowId: r.workflowId,
    sessionId: r.sessionId,
  });

  /** Until the task is terminal (polled), or `stop` aborts. */
  async function poll(id: string, stop: AbortSignal): Promise<void> {
    while (!stop.aborted) {
      const s = await getTask(id).catch(() => undefined);
      if (terminal(s?.status)) return;
      await sleep(POLL_MS, undefined, { signal: stop }).catch(() => undefined);
    }
  }

  async function waitForTask(id: string, w: WaitOptions): Promise<void> {
    const watch = new TaskWatch(w.onEvent);
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    w.signal.addEventListener('abort', onAbort, { once: true });
    if (w.signal.aborted) stop.abort();
    try {
      const stopped = new Promise<void>((resolve) => stop.signal.addEventListener('abort', () => resolve(), { once: true }));
      const timedOut = sleep(w.timeoutMs, undefined, { signal: stop.signal }).catch(() => undefined);
      const followed = (async () => {
        const attached = d.hub
          .attach(id, watch, 0, () => {})
          .then(
            () => watch.done,
            (err: unknown) => {
              d.log.warn({ err, workflow_id: id }, 'mcp: event feed unavailable; polling the task status');
              return 'lost' as const;
            },
          );
        if ((await attached) === 'lost') await poll(id, stop.signal);
      })();
      await Promise.race([followed, timedOut, stopped]);
    } finally {
      stop.abort();
      watch.stop('ended');
      w.signal.removeEventListener('abort', onAbort);
    }
  }

  return {
    async submitTask(s) {
      const body = checkSubmitBody(Object.fromEntries(Object.entries(s).filter(([, v]) => v !== undefined)));
      if (!d.bus.connected) throw queueUnavailable();
      return submitted(await submitChecked(client, p, body, { traceparent: o.traceparent, stream: false }));
    },
    waitForTask,
    getTask,
    listTasks: (q) => listTasksOf(client, p, q),
    async cancelTask(id, reason) {
      const s = await ownedTask(client, id, p);
      return controlTask(client, p, s.taskId, 'cancel', reason);
    },
    agents: () => (d.agents ? d.agents.list().map(agentJson) : []),
    async runAgent(id, input, run = {}) {
      if (!d.agents) throw new Error('runAgent without an agent catalogue');
      const r = await submitAgentRun({ orchestrator: client, bus: d.bus, tools: d.tools }, p, d.agents.get(id), input, {
        sessionId: run.sessionId,
        traceparent: o.traceparent,
      });
      return submitted(r);
    },
    async tools(): Promise<McpToolInfo[]> {
      const r = await callerTools();
      return r ? r.list().map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })) : [];
    },
    async executeTool(name, args, signal) {
      const r = await callerTools();
      if (!r) throw new Error('executeTool without a tool registry');
      const e = await r.execute(name, args, {
        userId: p.userId ?? undefined,
        tenantId: p.tenantId ?? undefined,
        maxTimeoutMs: TOOL_EXECUTE_TIMEOUT_MS,
        signal,
      });
      const backend = e.errorKind === 'backend' || e.errorKind === 'not_configured';
      return { success: e.success, error: backend ? `tool backend unavailable: ${e.error}` : e.error, text: e.text, result: executionJson(e) };
    },
  };
}
