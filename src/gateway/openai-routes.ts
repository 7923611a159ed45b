/**
 * The OpenAI-compatible layer: POST /v1/chat/completions and POST /v1/completions (streaming
 * and not), GET /v1/models and GET /v1/models/{model}. A completion request becomes one task,
 * submitted through the orchestrator's Connect client as the caller (like POST /api/v1/tasks);
 * its answer is read from the workflow's event feed (StreamHub, shared with SSE and WebSocket):
 * LLM_PARTIAL deltas of the answering agent become content chunks, the forwarded event types
 * ride along as `service_events`, and WORKFLOW_COMPLETED (written after the task's row) carries
 * the result and usage. The shapes, the model table and the translation are in openai-shapes.ts.
 *
 * Decisions where the spec is silent (also in docs/architecture.md):
 * - Content chunks come from the agent whose output is the answer: `simple-agent` (simple
 *   mode) and `synthesizer` (supervisor, complex and research workflows). Other agents' text
 *   (plans, tool-loop turns) is not the answer and is not streamed; when the task's result goes
 *   beyond what was streamed (e.g. one subtask's answer used as is), the rest comes in one
 *   content chunk before the final chunk.
 * - A client that disconnects (streaming or not) cancels its task: the OpenAI stream cannot be
 *   resumed, so nobody would read the rest, and OpenAI's API stops generating too. The task
 *   ends CANCELLED (visible with its X-Workflow-ID under /api/v1/tasks).
 * - A non-streaming request waits at most OPENAI_COMPLETION_TIMEOUT_SECONDS (35 minutes): then
 *   504 server_error / timeout, and the task is cancelled.
 * - A task that fails or is cancelled: 500 server_error / internal_error with its error (after
 *   the head of a stream: a chunk `{"error": {...}}`, as OpenAI sends one).
 * - Rate limits per API key and model (NATS KV counters shared by every gateway, fixed
 *   one-minute windows): a request counts when admitted; tokens count when its task ends (its
 *   usage). A request is refused with 429 when over the request limit, or when the tokens of the
 *   window plus its prompt estimate (4 characters a token) are over the token limit. Like the
 *   REST limits, the anonymous development principal (GATEWAY_SKIP_AUTH=1) is not limited.
 *   X-RateLimit-Reset-* are durations as OpenAI writes them ("12s").
 * - Sessions: X-Session-ID as given when the caller owns it or nobody does (then it is created);
 *   another owner's id, or a deleted session, is a collision: a new session `oai-<uuid>` is
 *   made. Without X-Session-ID: `oai-<hash>` of `user`, else of the first system and first user
 *   message. X-Session-ID and X-Service-Session-ID (the session's UUID) come back on creation
 *   and collision only. The model sees the messages' history (even none) rather than the
 *   session's turns, except when X-Session-ID is given with no earlier messages: then the
 *   session's earlier turns are the history (the session keeps the context).
 */
import { createHash, randomUUID } from 'node:crypto';
import { create, type JsonObject } from '@bufbuild/protobuf';
import type { Client } from '@connectrpc/connect';
import type { KV } from '@nats-io/kv';
import type { HttpResponse, TemplatedApp } from 'uWebSockets.js';
import { countInWindow, type Bus, type WorkflowEvent } from '../bus/index.js';
import { Code, TASK_STATUS_NAME, callAs, callerOfPrincipal, httpStatusOf, toAppError, type Logger, type Principal } from '../kernel/index.js';
import type { Authenticator } from '../auth/index.js';
import { resolveSession, sessionRegistry } from '../sessions/index.js';
import { queueUnavailable, type TaskStore } from '../tasks/index.js';
import { SubmitTaskRequestSchema, type OrchestratorService } from '../gen/svc/v1/orchestrator_pb.js';
import { MAX_JSON_BODY, copyRequest, corsHeaders, parseJsonBody, readBody, writeReply, type CorsPolicy, type Reply, type Req } from './http.js';
import {
  DEFAULT_MODEL_TABLE,
  FORWARDED_EVENTS,
  OpenAiError,
  chatCompletionJson,
  chunkJson,
  errorBody,
  loadModelTable,
  modelJson,
  modelOf,
  parseChatRequest,
  parseLegacyRequest,
  taskContext,
  textCompletionJson,
  type CompletionHead,
  type CompletionRequest,
  type OpenAiModelTable,
  type ServiceEvent,
  type Usage,
} from './openai-shapes.js';
import { writeStreaming, type Encoded, type Feed, type StreamHub, type Subscriber } from './streams.js';

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
  store?: TaskStore;
  config: OpenAiConfig;
  /** Seconds between keep-alive comments on a stream. */
  heartbeatSeconds: number;
}

/** Agents whose streamed text is the answer. */
const ANSWER_AGENTS: ReadonlySet<string> = new Set(['simple-agent', 'synthesizer']);
/** The events that tell how a task ended (their payloads carry the result, the error, the usage). */
const OUTCOME_EVENTS = ['WORKFLOW_COMPLETED', 'ERROR_OCCURRED', 'WORKFLOW_CANCELLED'];
const STREAM_TYPES = new Set([...FORWARDED_EVENTS, ...OUTCOME_EVENTS, 'LLM_PARTIAL']);
const WAIT_TYPES = new Set(OUTCOME_EVENTS);

const EXPOSE =
  'X-Service-Session-ID, X-RateLimit-Limit-Requests, X-RateLimit-Remaining-Requests, X-RateLimit-Limit-Tokens, X-RateLimit-Remaining-Tokens, X-RateLimit-Reset-Requests, X-RateLimit-Reset-Tokens, X-Model-Description';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const frame = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;

// ---- Errors.

class ChatRateLimited extends OpenAiError {
  constructor(
    message: string,
    readonly headers: Record<string, string>,
  ) {
    super(429, message);
  }
}

/** Anything thrown, as an OpenAI error reply (`{error: {message, type, param, code}}`). */
export function openAiErrorReply(err: unknown, log: Logger): Reply {
  if (err instanceof OpenAiError) {
    const headers = err instanceof ChatRateLimited ? err.headers : undefined;
    return { status: err.status, ...(headers ? { headers } : {}), body: errorBody(err.status, err.message, err.param, err.code) };
  }
  const app = toAppError(err);
  const status = app.code === Code.ResourceExhausted && app.message === 'request body too large' ? 413 : httpStatusOf(app.code);
  if (status >= 500 && status !== 503) log.error({ err }, 'openai request failed');
  const message = app.isPublic ? app.message : 'Internal server error';
  return {
    status,
    ...(app.retryAfter ? { headers: { 'Retry-After': String(app.retryAfter) } } : {}),
    // A 404 that is not about a model (none is expected here) keeps the spec's code for 404.
    body: errorBody(status, message),
  };
}

// ---- Rate limits per key and model.

export class ChatRateLimiter {
  constructor(
    private readonly kv: KV,
    private readonly log: Logger,
    private readonly connected: () => boolean,
    private readonly limits: { requests: number; tokens: number },
  ) {}

  private keys(p: Principal, model: string) {
    const who = sha(p.key).slice(0, 32);
    const m = /^[A-Za-z0-9_-]{1,64}$/.test(model) ? model : sha(model).slice(0, 16);
    return { req: `oai-req.${who}.${m}`, tok: `oai-tok.${who}.${m}` };
  }

  /**
   * Counts the request and checks both limits; returns the X-RateLimit-* headers, or throws
   * 429 with them. Not limited: the anonymous principal, and any request while NATS is
   * unreachable (fail open, like the REST limits).
   */
  async admit(p: Principal, model: string, estimate: number, nowMs = Date.now()): Promise<Record<string, string>> {
    if (p.anonymous || !this.connected()) return {};
    const k = this.keys(p, model);
    let req, tok;
    try {
      [req, tok] = await Promise.all([countInWindow(this.kv, k.req, 60_000, nowMs), countInWindow(this.kv, k.tok, 60_000, nowMs, 0)]);
    } catch (err) {
      this.log.warn({ err }, 'openai rate limit bucket unavailable; request allowed');
      return {};
    }
    const resetAt = req?.resetAtMs ?? tok?.resetAtMs ?? nowMs + 60_000;
    const seconds = Math.max(1, Math.ceil((resetAt - nowMs) / 1000));
    const count = req?.count ?? 0;
    const used = tok?.count ?? 0;
    const headers: Record<string, string> = {
      'X-RateLimit-Limit-Requests': String(this.limits.requests),
      'X-RateLimit-Remaining-Requests': String(Math.max(0, this.limits.requests - count)),
      'X-RateLimit-Limit-Tokens': String(this.limits.tokens),
      'X-RateLimit-Remaining-Tokens': String(Math.max(0, this.limits.tokens - used)),
      'X-RateLimit-Reset-Requests': `${seconds}s`,
      'X-RateLimit-Reset-Tokens': `${seconds}s`,
    };
    const refuse = (why: string) => {
      throw new ChatRateLimited(`Rate limit reached for ${model}: ${why}. Please retry after ${seconds} seconds.`, {
        ...headers,
        'Retry-After': String(seconds),
      });
    };
    if (count > this.limits.requests) refuse(`${this.limits.requests} requests per minute`);
    if (used + estimate > this.limits.tokens) refuse(`${this.limits.tokens} tokens per minute (used ${used}, this request about ${estimate})`);
    return headers;
  }

  /** Adds a finished request's tokens to its window. */
  async record(p: Principal, model: string, tokens: number): Promise<void> {
    if (p.anonymous || tokens <= 0 || !this.connected()) return;
    await countInWindow(this.kv, this.keys(p, model).tok, 60_000, Date.now(), tokens).catch((err) => this.log.warn({ err }, 'openai token count not recorded'));
  }
}

// ---- Outcomes.

interface Outcome {
  status: 'completed' | 'failed' | 'cancelled';
  result: string;
  error: string;
  usage: Usage;
}

const ZERO_USAGE: Usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };

/** What an outcome event says (undefined for other events). */
function outcomeOf(e: WorkflowEvent): Outcome | undefined {
  const p = (e.payload ?? {}) as Record<string, unknown>;
  if (e.type === 'WORKFLOW_COMPLETED') {
    const u = (p.usage ?? {}) as Record<string, unknown>;
    const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
    return {
      status: 'completed',
      result: typeof p.result === 'string' ? p.result : '',
      error: '',
      usage: { prompt_tokens: n(u.input_tokens), completion_tokens: n(u.output_tokens), total_tokens: n(u.total_tokens) },
    };
  }
  if (e.type === 'ERROR_OCCURRED') return { status: 'failed', result: '', error: e.message || 'the task failed', usage: ZERO_USAGE };
  if (e.type === 'WORKFLOW_CANCELLED') {
    const reason = typeof p.reason === 'string' && p.reason ? `: ${p.reason}` : '';
    return { status: 'cancelled', result: '', error: `the task was cancelled${reason}`, usage: ZERO_USAGE };
  }
  return undefined;
}

const serviceEvent = (e: WorkflowEvent): ServiceEvent => ({
  type: e.type,
  agent_id: e.agent_id,
  message: e.message,
  timestamp: Math.floor(Date.parse(e.timestamp) / 1000),
  payload: (e.payload ?? {}) as Record<string, unknown>,
});

/** Waits for a task's outcome on its event feed (non-streaming requests). */
class OutcomeWatch implements Subscriber {
  cursor = 0;
  readonly filter = WAIT_TYPES;
  backpressured = false;
  closed = false;
  feed?: Feed;
  outcome?: Outcome;
  readonly done: Promise<void>;
  private resolve!: () => void;
  constructor() {
    this.done = new Promise((r) => (this.resolve = r));
  }
  write(events: Encoded[]): boolean {
    for (const e of events) this.outcome = outcomeOf(JSON.parse(e.json) as WorkflowEvent) ?? this.outcome;
    return true;
  }
  end(): void {
    this.stop();
  }
  drop(): void {
    this.stop();
  }
  stop(): void {
    if (this.closed) return;
    this.closed = true;
    this.feed?.remove(this);
    this.resolve();
  }
}

/** One streaming completion: workflow events in, OpenAI chunks out. */
class CompletionStream implements Subscriber {
  cursor = 0;
  readonly filter = STREAM_TYPES;
  backpressured = false;
  closed = false;
  stalledAt?: number;
  feed?: Feed;
  /** The answer text sent so far. */
  sent = '';
  outcome?: Outcome;
  /** The response is over (ended, or the client went away). */
  finished = false;

  constructor(
    private readonly res: HttpResponse,
    private readonly kind: 'chat' | 'text',
    private readonly head: CompletionHead,
    private readonly onEnd: (s: CompletionStream) => void,
    private readonly onDrop: (s: CompletionStream, reason: string) => void,
  ) {}

  write(events: Encoded[]): boolean {
    if (this.finished) return false;
    let out = '';
    let text = '';
    let evs: ServiceEvent[] = [];
    const flushText = () => {
      if (!text) return;
      out += frame(chunkJson(this.kind, this.head, { delta: { content: text } }));
      this.sent += text;
      text = '';
    };
    const flushEvents = () => {
      if (!evs.length) return;
      out += frame(chunkJson(this.kind, this.head, { events: evs }));
      evs = [];
    };
    for (const enc of events) {
      const e = JSON.parse(enc.json) as WorkflowEvent;
      if (e.type === 'LLM_PARTIAL') {
        if (ANSWER_AGENTS.has(e.agent_id) && e.message) {
          flushEvents();
          text += e.message;
        }
        continue;
      }
      this.outcome = outcomeOf(e) ?? this.outcome;
      if (FORWARDED_EVENTS.has(e.type)) {
        flushText();
        evs.push(serviceEvent(e));
      }
    }
    flushText();
    flushEvents();
    return out ? this.writeRaw(out) : true;
  }

  writeRaw(buf: string): boolean {
    return writeStreaming(this.res, this, buf, () => this.finished);
  }

  /** The last bytes of the response. */
  close(tail: string): void {
    if (this.finished) return;
    this.finished = true;
    this.res.cork(() => this.res.end(tail));
  }

  end(): void {
    if (this.closed) return;
    this.closed = true;
    this.feed?.remove(this);
    this.onEnd(this);
  }

  drop(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.feed?.remove(this);
    this.onDrop(this, reason);
  }
}

// ---- Routes.

interface RequestState {
  aborted: boolean;
  onAbort?: () => void;
}

export function registerOpenAiRoutes(app: TemplatedApp, d: OpenAiRouteDeps): void {
  const log = d.ctx.log;
  const table: OpenAiModelTable = d.config.modelsPath ? loadModelTable(d.config.modelsPath) : DEFAULT_MODEL_TABLE;
  const limiter = new ChatRateLimiter(d.bus.kv.ratelimit, log, () => d.bus.connected, {
    requests: d.config.requestsPerMinute,
    tokens: d.config.tokensPerMinute,
  });
  const client = d.orchestrator;

  const cors = (req: Req) => {
    const c = corsHeaders(d.ctx.cors, req.headers.origin);
    if (c['Access-Control-Expose-Headers']) c['Access-Control-Expose-Headers'] += `, ${EXPOSE}`;
    return c;
  };

  /** Registers a route whose handler answers with a Reply, or `undefined` when it wrote the response itself (a stream). */
  function oaiRoute(
    method: 'get' | 'post',
    pattern: string,
    handler: (req: Req, res: HttpResponse, state: RequestState, cors: Record<string, string>) => Promise<Reply | undefined>,
  ): void {
    const params = (pattern.match(/:/g) ?? []).length;
    app[method](pattern, (res, raw) => {
      const state: RequestState = { aborted: false };
      res.onAborted(() => {
        state.aborted = true;
        state.onAbort?.();
      });
      const req = copyRequest(raw, params);
      const c = cors(req);
      const bodyP = method === 'post' ? readBody(res, MAX_JSON_BODY, state) : undefined;
      void (async () => {
        let reply: Reply | undefined;
        try {
          if (bodyP) req.body = await bodyP;
          if (req.invalid) throw new OpenAiError(400, req.invalid);
          reply = await handler(req, res, state, c);
        } catch (err) {
          reply = openAiErrorReply(err, log);
        }
        if (reply && !state.aborted) writeReply(res, reply, c);
      })();
    });
  }

  const authenticate = (req: Req) => d.auth.authenticate({ headers: req.headers, query: req.query });

  oaiRoute('get', '/v1/models', async (req) => {
    await authenticate(req);
    return { status: 200, body: { object: 'list', data: table.models.filter((m) => !m.hostedOnly).map(modelJson) } };
  });

  oaiRoute('get', '/v1/models/:model', async (req): Promise<Reply> => {
    await authenticate(req);
    const m = modelOf(table, req.params[0]);
    // A header value must be one line of visible ASCII.
    const description = m.description.replace(/[^\x20-\x7e]+/g, ' ').trim();
    const headers: Record<string, string> = description ? { 'X-Model-Description': description } : {};
    return { status: 200, headers, body: modelJson(m) };
  });

  /**
   * The session a request runs in, and the headers that announce a new one (creation or
   * collision). Without a database the id is used as is, without headers.
   */
  async function sessionOf(p: Principal, req: Req, r: CompletionRequest): Promise<{ id: string; headers: Record<string, string> }> {
    const given = req.headers['x-session-id'];
    const visible = (v: string) => [...v].every((ch) => ch.charCodeAt(0) >= 0x20 && ch.charCodeAt(0) !== 0x7f);
    if (given !== undefined && (given.length === 0 || given.length > 255 || !visible(given))) {
      throw new OpenAiError(400, 'X-Session-ID must be 1 to 255 visible characters');
    }
    const wanted = given ?? `oai-${sha(r.user ? `user\0${r.user}` : `conversation\0${r.systemPrompt ?? ''}\0${r.firstUser}`).slice(0, 32)}`;
    if (!d.store) return { id: wanted, headers: {} };
    const sql = d.store.sql;
    const registry = sessionRegistry(sql);
    const ref = (id: string) => ({ sessionId: id, userId: p.userId ?? null, tenantId: p.tenantId ?? null, at: new Date() });
    const announce = (id: string, uuid: string) => ({ id, headers: { 'X-Session-ID': id, 'X-Service-Session-ID': uuid } });
    const found = await resolveSession(sql, wanted, p, { includeDeleted: true });
    if (found && !found.deleted_at) return { id: wanted, headers: {} };
    if (!found) {
      // Create it as the caller's; when it stays invisible, another owner has the id.
      await registry.ensureSessions([ref(wanted)]);
      const mine = await resolveSession(sql, wanted, p);
      if (mine) return announce(wanted, mine.id);
    }
    const fresh = `oai-${randomUUID()}`;
    await registry.ensureSessions([ref(fresh)]);
    const s = await resolveSession(sql, fresh, p);
    return announce(fresh, s?.id ?? '');
  }

  async function cancel(p: Principal, taskId: string, reason: string): Promise<void> {
    await client.cancelTask({ taskId, reason, requestedBy: p.userId ?? '' }, callAs(callerOfPrincipal(p))).catch((err) => {
      log.debug({ err, workflow_id: taskId }, 'openai: cancel after disconnect not applied');
    });
  }

  /** The outcome from the task's status (when the feed could not tell). */
  async function statusOutcome(p: Principal, taskId: string): Promise<Outcome | undefined> {
    const s = await client.getTaskStatus({ taskId }, callAs(callerOfPrincipal(p)));
    const u = s.usage;
    const usage = { prompt_tokens: u?.promptTokens ?? 0, completion_tokens: u?.completionTokens ?? 0, total_tokens: u?.totalTokens ?? 0 };
    switch (TASK_STATUS_NAME[s.status]) {
      case 'TASK_STATUS_COMPLETED':
        return { status: 'completed', result: s.result, error: '', usage };
      case 'TASK_STATUS_FAILED':
      case 'TASK_STATUS_TIMEOUT':
        return { status: 'failed', result: '', error: s.errorMessage || 'the task failed', usage };
      case 'TASK_STATUS_CANCELLED':
        return { status: 'cancelled', result: '', error: 'the task was cancelled', usage };
      default:
        return undefined;
    }
  }

  async function complete(kind: 'chat' | 'text', req: Req, res: HttpResponse, state: RequestState, c: Record<string, string>): Promise<Reply | undefined> {
    const p = await authenticate(req);
    const body = parseJsonBody(req);
    const r = kind === 'chat' ? parseChatRequest(body, table) : parseLegacyRequest(body, table);
    const rate = await limiter.admit(p, r.model.id, Math.ceil(r.chars / 4));
    const session = await sessionOf(p, req, r);
    if (!d.bus.connected) throw queueUnavailable();
    const m = r.model;
    const sub = await client.submitTask(
      create(SubmitTaskRequestSchema, {
        metadata: { userId: p.userId ?? '', tenantId: p.tenantId ?? '', sessionId: session.id },
        query: r.query,
        context: taskContext(r, { sessionNamed: req.headers['x-session-id'] !== undefined }) as JsonObject,
        options: { modeName: m.mode === 'research' ? '' : m.mode, researchStrategy: m.researchStrategy ?? '' },
      }),
      callAs(callerOfPrincipal(p)),
    );
    const taskId = sub.taskId;
    const head: CompletionHead = { id: `${kind === 'chat' ? 'chatcmpl' : 'cmpl'}-${taskId}`, created: Math.floor(Date.now() / 1000), model: m.id };
    const headers = { ...rate, ...session.headers, 'X-Workflow-ID': taskId };
    const account = (o: Outcome | undefined) => void limiter.record(p, m.id, o?.usage.total_tokens ?? 0);

    if (!r.stream) {
      const watch = new OutcomeWatch();
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), d.config.completionTimeoutSeconds * 1000);
      });
      const gone = new Promise<'gone'>((resolve) => {
        state.onAbort = () => resolve('gone');
        if (state.aborted) resolve('gone');
      });
      void d.hub
        .attach(taskId, watch, 0, () => {})
        .catch((err) => {
          // No feed: fall back to the task's status, polled.
          log.warn({ err, workflow_id: taskId }, 'openai: event feed unavailable; polling the task status');
          const poll = async () => {
            while (!watch.closed) {
              await new Promise((t) => setTimeout(t, 1000));
              const o = await statusOutcome(p, taskId).catch(() => undefined);
              if (o) {
                watch.outcome = o;
                watch.stop();
              }
            }
          };
          void poll();
        });
      const how = await Promise.race([watch.done.then(() => 'done' as const), timedOut, gone]);
      clearTimeout(timer);
      watch.stop();
      state.onAbort = undefined;
      if (how === 'gone') {
        await cancel(p, taskId, 'the client disconnected from the OpenAI-compatible request');
        return undefined;
      }
      if (how === 'timeout') {
        await cancel(p, taskId, `no answer within ${d.config.completionTimeoutSeconds} seconds (OpenAI-compatible request)`);
        const e = new OpenAiError(504, `Request timed out: the task did not finish within ${d.config.completionTimeoutSeconds} seconds and was cancelled`);
        return { ...openAiErrorReply(e, log), headers };
      }
      const o = watch.outcome ?? (await statusOutcome(p, taskId));
      account(o);
      if (!o || o.status !== 'completed') {
        const e = new OpenAiError(500, o?.error || 'the task ended without a result');
        return { ...openAiErrorReply(e, log), headers };
      }
      const json = kind === 'chat' ? chatCompletionJson(head, o.result, o.usage) : textCompletionJson(head, o.result, o.usage);
      return { status: 200, headers, body: json };
    }

    // Streaming: the head and the first chunk now, then chunks as events arrive.
    if (state.aborted) {
      await cancel(p, taskId, 'the client disconnected from the OpenAI-compatible request');
      return undefined;
    }
    // `hb` (the keep-alive timer) is set below, before any callback here can run.
    const finishStream = (s: CompletionStream, tail: string) => {
      clearInterval(hb);
      state.onAbort = undefined;
      s.close(tail);
    };
    const errorTail = (message: string) => frame(errorBody(500, message));
    const stream = new CompletionStream(
      res,
      kind,
      head,
      (s) => {
        void (async () => {
          const o = s.outcome ?? (await statusOutcome(p, taskId).catch(() => undefined));
          account(o);
          if (s.finished) return;
          if (!o || o.status !== 'completed') return finishStream(s, errorTail(o?.error || 'the task ended without a result'));
          let tail = '';
          // What the stream did not carry (an answer from an agent that is not streamed, a cache hit).
          const rest = o.result.startsWith(s.sent) ? o.result.slice(s.sent.length) : s.sent ? '' : o.result;
          if (rest) tail += frame(chunkJson(kind, head, { delta: { content: rest } }));
          tail += frame(chunkJson(kind, head, { delta: {}, finish: 'stop', ...(r.includeUsage ? { usage: o.usage } : {}) }));
          finishStream(s, `${tail}data: [DONE]\n\n`);
        })();
      },
      (s, reason) => {
        finishStream(s, errorTail(reason));
        void cancel(p, taskId, `the OpenAI-compatible stream was dropped: ${reason}`);
      },
    );
    state.onAbort = () => {
      clearInterval(hb);
      stream.finished = true;
      stream.closed = true;
      stream.feed?.remove(stream);
      void cancel(p, taskId, 'the client disconnected from the OpenAI-compatible stream');
    };
    res.cork(() => {
      res.writeStatus('200 OK');
      const all = { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive', 'X-Accel-Buffering': 'no', ...c, ...headers };
      for (const [k, v] of Object.entries(all)) res.writeHeader(k, v);
      res.write(kind === 'chat' ? frame(chunkJson(kind, head, { delta: { role: 'assistant', content: '' } })) : ': stream open\n\n');
    });
    const hb = setInterval(() => {
      if (!stream.finished && !stream.backpressured) stream.writeRaw(': keep-alive\n\n');
    }, d.heartbeatSeconds * 1000);
    hb.unref();
    void d.hub
      .attach(taskId, stream, 0, () => {})
      .catch((err) => {
        log.warn({ err, workflow_id: taskId }, 'openai: stream attach failed');
        stream.drop('stream unavailable');
      });
    return undefined;
  }

  oaiRoute('post', '/v1/chat/completions', (req, res, state, c) => complete('chat', req, res, state, c));
  oaiRoute('post', '/v1/completions', (req, res, state, c) => complete('text', req, res, state, c));
}
