/**
 * The OpenAI-compatible layer: POST /v1/chat/completions and POST /v1/completions (streaming
 * and not), GET /v1/models and GET /v1/models/{model}, on the gateway's one route() pipeline
 * with errors in OpenAI's shape. A completion request becomes one task, submitted through the
 * orchestrator's Connect client as the caller (like POST /api/v1/tasks); its answer is read
 * from the workflow's event feed (StreamHub, shared with SSE and WebSocket).
 *
 * Decisions where the spec is silent (also in docs/architecture.md):
 * - Content chunks are the text a workflow marks as its final answer (stream.ts); when the
 *   task's result goes beyond what was streamed, the rest comes in one content chunk before
 *   the final chunk.
 * - A client that disconnects (streaming or not) cancels its task: the OpenAI stream cannot be
 *   resumed, so nobody would read the rest, and OpenAI's API stops generating too. The task
 *   ends CANCELLED (visible with its X-Workflow-ID under /api/v1/tasks).
 * - A non-streaming request waits at most OPENAI_COMPLETION_TIMEOUT_SECONDS (35 minutes): then
 *   504 server_error / timeout, and the task is cancelled.
 * - A task that fails or is cancelled: 500 server_error / internal_error with its error (after
 *   the head of a stream: a chunk `{"error": {...}}`, as OpenAI sends one).
 * - Rate limits: rate-limit.ts. Sessions: session.ts. The model sees the messages' history
 *   (even none) rather than the session's turns, except when X-Session-ID is given with no
 *   earlier messages: then the session's earlier turns are the history.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { create, type JsonObject } from '@bufbuild/protobuf';
import type { Client } from '@connectrpc/connect';
import type { TemplatedApp } from 'uWebSockets.js';
import type { Bus } from '../../bus/index.js';
import { callAs, callerOfPrincipal, type Logger, type Principal } from '../../kernel/index.js';
import type { Authenticator } from '../../auth/index.js';
import { queueUnavailable } from '../../tasks/index.js';
import { SubmitTaskRequestSchema, type OrchestratorService } from '../../gen/svc/v1/orchestrator_pb.js';
import { corsHeaders, parseJsonBody, route, type CorsPolicy, type Reply, type Req, type RouteIo } from '../http.js';
import type { SessionLookup } from '../route-deps.js';
import type { StreamHub } from '../streams.js';
import { OpenAiError, errorBody, openAiErrorReply } from './errors.js';
import { DEFAULT_MODEL_TABLE, loadModelTable, modelJson, modelOf, type OpenAiModelTable } from './models.js';
import { OutcomeWatch, statusOutcome, type Outcome } from './outcome.js';
import { ChatRateLimiter } from './rate-limit.js';
import { parseChatRequest, parseLegacyRequest, taskContext, type CompletionRequest } from './request.js';
import { chatCompletionJson, chunkJson, frame, textCompletionJson, type CompletionHead } from './responses.js';
import { sessionOf } from './session.js';
import { CompletionStream } from './stream.js';

export interface OpenAiConfig {
  /** OPENAI_MODELS_CONFIG_PATH: a YAML model table replacing the built-in one. */
  modelsPath?: string;
  requestsPerMinute: number;
  tokensPerMinute: number;
  completionTimeoutSeconds: number;
}

export const DEFAULT_OPENAI_CONFIG: OpenAiConfig = { requestsPerMinute: 60, tokensPerMinute: 200_000, completionTimeoutSeconds: 35 * 60 };

export interface OpenAiRouteDeps {
  ctx: { cors: CorsPolicy; log: Logger };
  auth: Authenticator;
  bus: Bus;
  hub: StreamHub;
  orchestrator: Client<typeof OrchestratorService>;
  /** Sessions (creation and collision headers); absent in a gateway without a database. */
  sessions?: SessionLookup;
  config: OpenAiConfig;
  /** Seconds between keep-alive comments on a stream. */
  heartbeatSeconds: number;
}

const EXPOSE =
  'X-Service-Session-ID, X-RateLimit-Limit-Requests, X-RateLimit-Remaining-Requests, X-RateLimit-Limit-Tokens, X-RateLimit-Remaining-Tokens, X-RateLimit-Reset-Requests, X-RateLimit-Reset-Tokens, X-Model-Description';

const DISCONNECTED = 'the client disconnected from the OpenAI-compatible request';

/** One completion's task, once submitted. */
interface Submitted {
  kind: 'chat' | 'text';
  p: Principal;
  r: CompletionRequest;
  taskId: string;
  head: CompletionHead;
  /** Rate-limit, session and X-Workflow-ID headers of the answer. */
  headers: Record<string, string>;
}

export function registerOpenAiRoutes(app: TemplatedApp, d: OpenAiRouteDeps): void {
  const log = d.ctx.log;
  const table: OpenAiModelTable = d.config.modelsPath ? loadModelTable(d.config.modelsPath) : DEFAULT_MODEL_TABLE;
  const limiter = new ChatRateLimiter(d.bus.kv.ratelimit, log, () => d.bus.connected, {
    requests: d.config.requestsPerMinute,
    tokens: d.config.tokensPerMinute,
  });
  const client = d.orchestrator;
  const opts = {
    errors: openAiErrorReply,
    cors: (req: Req) => {
      const c = corsHeaders(d.ctx.cors, req.headers.origin);
      if (c['Access-Control-Expose-Headers']) c['Access-Control-Expose-Headers'] += `, ${EXPOSE}`;
      return c;
    },
  };
  const authenticate = (req: Req) => d.auth.authenticate({ headers: req.headers, query: req.query });
  const account = (s: Submitted, o: Outcome | undefined) => void limiter.record(s.p, s.r.model.id, o?.usage.total_tokens ?? 0);

  route(
    app,
    'get',
    '/v1/models',
    async (req) => {
      await authenticate(req);
      return { status: 200, body: { object: 'list', data: table.models.filter((m) => !m.hostedOnly).map(modelJson) } };
    },
    d.ctx,
    opts,
  );

  route(
    app,
    'get',
    '/v1/models/:model',
    async (req): Promise<Reply> => {
      await authenticate(req);
      const m = modelOf(table, req.params[0]);
      // A header value must be one line of visible ASCII.
      const description = m.description.replace(/[^\x20-\x7e]+/g, ' ').trim();
      const headers: Record<string, string> = description ? { 'X-Model-Description': description } : {};
      return { status: 200, headers, body: modelJson(m) };
    },
    d.ctx,
    opts,
  );

  async function cancel(p: Principal, taskId: string, reason: string): Promise<void> {
    await client.cancelTask({ taskId, reason, requestedBy: p.userId ?? '' }, callAs(callerOfPrincipal(p))).catch((err) => {
      log.debug({ err, workflow_id: taskId }, 'openai: cancel after disconnect not applied');
    });
  }

  async function submit(kind: 'chat' | 'text', req: Req): Promise<Submitted> {
    const p = await authenticate(req);
    const body = parseJsonBody(req);
    const r = kind === 'chat' ? parseChatRequest(body, table) : parseLegacyRequest(body, table);
    const rate = await limiter.admit(p, r.model.id, Math.ceil(r.chars / 4));
    const session = await sessionOf(d.sessions, p, req, r);
    if (!d.bus.connected) throw queueUnavailable();
    const m = r.model;
    const sub = await client.submitTask(
      create(SubmitTaskRequestSchema, {
        metadata: { userId: p.userId ?? '', tenantId: p.tenantId ?? '', sessionId: session.id },
        query: r.query,
        context: taskContext(r, { sessionNamed: req.headers['x-session-id'] !== undefined }) as JsonObject,
        // The client's trace context: the submission's span (app/traced-submissions.ts) joins its trace.
        options: { modeName: m.mode === 'research' ? '' : m.mode, researchStrategy: m.researchStrategy ?? '', traceparent: req.headers.traceparent ?? '' },
      }),
      callAs(callerOfPrincipal(p)),
    );
    const taskId = sub.taskId;
    const head: CompletionHead = { id: `${kind === 'chat' ? 'chatcmpl' : 'cmpl'}-${taskId}`, created: Math.floor(Date.now() / 1000), model: m.id };
    return { kind, p, r, taskId, head, headers: { ...rate, ...session.headers, 'X-Workflow-ID': taskId } };
  }

  /** Non-streaming: the answer once the task ends (or 504 and a cancelled task). */
  async function answer(s: Submitted, io: RouteIo): Promise<Reply | undefined> {
    const { p, taskId, headers } = s;
    const watch = new OutcomeWatch();
    const stopWaiting = new AbortController();
    const wait = { signal: stopWaiting.signal };
    const timedOut = sleep(d.config.completionTimeoutSeconds * 1000, 'timeout' as const, wait).catch(() => 'done' as const);
    const gone = new Promise<'gone'>((resolve) => {
      io.state.onAbort = () => resolve('gone');
      if (io.state.aborted) resolve('gone');
    });
    void d.hub
      .attach(taskId, watch, 0, () => {})
      .catch(async (err) => {
        // No feed: fall back to the task's status, polled.
        log.warn({ err, workflow_id: taskId }, 'openai: event feed unavailable; polling the task status');
        while (!watch.closed) {
          await sleep(1000);
          const o = await statusOutcome(client, p, taskId).catch(() => undefined);
          if (o) {
            watch.outcome = o;
            watch.stop();
          }
        }
      });
    const how = await Promise.race([watch.done.then(() => 'done' as const), timedOut, gone]);
    stopWaiting.abort();
    watch.stop();
    io.state.onAbort = undefined;
    if (how === 'gone') {
      await cancel(p, taskId, DISCONNECTED);
      return undefined;
    }
    if (how === 'timeout') {
      await cancel(p, taskId, `no answer within ${d.config.completionTimeoutSeconds} seconds (OpenAI-compatible request)`);
      const e = new OpenAiError(504, `Request timed out: the task did not finish within ${d.config.completionTimeoutSeconds} seconds and was cancelled`);
      return { ...openAiErrorReply(e, log), headers };
    }
    const o = watch.outcome ?? (await statusOutcome(client, p, taskId));
    account(s, o);
    if (!o || o.status !== 'completed') {
      const e = new OpenAiError(500, o?.error || 'the task ended without a result');
      return { ...openAiErrorReply(e, log), headers };
    }
    const json = s.kind === 'chat' ? chatCompletionJson(s.head, o.result, o.usage) : textCompletionJson(s.head, o.result, o.usage);
    return { status: 200, headers, body: json };
  }

  /** Streaming: the head and the first chunk now, then chunks as events arrive; the response is written here. */
  async function stream(s: Submitted, io: RouteIo): Promise<undefined> {
    const { kind, p, taskId, head, headers } = s;
    const { res, state } = io;
    if (state.aborted) {
      await cancel(p, taskId, DISCONNECTED);
      return undefined;
    }
    // `hb` (the keep-alive timer) is set below, before any callback here can run.
    const finish = (cs: CompletionStream, tail: string) => {
      clearInterval(hb);
      state.onAbort = undefined;
      cs.close(tail);
    };
    const errorTail = (message: string) => frame(errorBody(500, message));
    const cs = new CompletionStream(
      res,
      kind,
      head,
      (cs) => {
        void (async () => {
          const o = cs.outcome ?? (await statusOutcome(client, p, taskId).catch(() => undefined));
          account(s, o);
          if (cs.finished) return;
          if (!o || o.status !== 'completed') return finish(cs, errorTail(o?.error || 'the task ended without a result'));
          let tail = '';
          const rest = cs.remainder(o.result);
          if (rest) tail += frame(chunkJson(kind, head, { delta: { content: rest } }));
          tail += frame(chunkJson(kind, head, { delta: {}, finish: 'stop', ...(s.r.includeUsage ? { usage: o.usage } : {}) }));
          finish(cs, `${tail}data: [DONE]\n\n`);
        })();
      },
      (cs, reason) => {
        finish(cs, errorTail(reason));
        void cancel(p, taskId, `the OpenAI-compatible stream was dropped: ${reason}`);
      },
    );
    state.onAbort = () => {
      clearInterval(hb);
      cs.finished = true;
      cs.closed = true;
      cs.feed?.remove(cs);
      void cancel(p, taskId, 'the client disconnected from the OpenAI-compatible stream');
    };
    res.cork(() => {
      res.writeStatus('200 OK');
      const all = {
        'Content-Type': 'text/event-stream',
        'Cache-Control': 'no-cache',
        Connection: 'keep-alive',
        'X-Accel-Buffering': 'no',
        ...io.cors,
        ...headers,
      };
      for (const [k, v] of Object.entries(all)) res.writeHeader(k, v);
      res.write(kind === 'chat' ? frame(chunkJson(kind, head, { delta: { role: 'assistant', content: '' } })) : ': stream open\n\n');
    });
    const hb = setInterval(() => {
      if (!cs.finished && !cs.backpressured) cs.writeRaw(': keep-alive\n\n');
    }, d.heartbeatSeconds * 1000);
    hb.unref();
    void d.hub
      .attach(taskId, cs, 0, () => {})
      .catch((err) => {
        log.warn({ err, workflow_id: taskId }, 'openai: stream attach failed');
        cs.drop('stream unavailable');
      });
    return undefined;
  }

  for (const [path, kind] of [
    ['/v1/chat/completions', 'chat'],
    ['/v1/completions', 'text'],
  ] as const) {
    route(
      app,
      'post',
      path,
      async (req, io) => {
        const s = await submit(kind, req);
        return s.r.stream ? stream(s, io) : answer(s, io);
      },
      d.ctx,
      { ...opts, body: true },
    );
  }
}
