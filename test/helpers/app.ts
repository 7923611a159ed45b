/**
 * Starts the whole service in this test process against its own nats-server (so workers of
 * other test files never take its tasks) and the test file's own database (see
 * test/harness/file-database.ts), which the file's other apps share. Calls the API through the
 * typed client (src/client); reads raw SSE responses (status, headers, comments, slow readers)
 * with eventsource-parser.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { inject } from 'vitest';
import { startApp, type App } from '../../src/app/index.js';
import { ApiError, createClient, ok, type ApiClient, type DataOf, type FetchLike, type FetchResult, type components } from '../../src/client/index.js';
import { loadConfig } from '../../src/config/index.js';
import type { LlmProvider } from '../../src/llm/index.js';
import { createLogger } from '../../src/kernel/index.js';
import { startTestNats } from '../harness/nats.js';

/** The internal RPC token of every test app (tests that call the RPC port present it). */
export const TEST_RPC_TOKEN = 'test-internal-rpc-token-0123456789abcdefghijklmnop';

export interface TestApp {
  app: App;
  base: string;
  natsUrl: string;
  stop(): Promise<void>;
}

export async function startTestApp(env: Record<string, string> = {}, overrides: { llm?: LlmProvider; natsUrl?: string } = {}): Promise<TestApp> {
  let natsStop: (() => Promise<void>) | undefined;
  let natsUrl = overrides.natsUrl;
  if (!natsUrl) {
    const nats = await startTestNats();
    natsStop = nats.stop;
    natsUrl = nats.url;
  }
  const cfg = loadConfig({
    NATS_URL: natsUrl,
    DATABASE_URL: inject('pgUrl'),
    DATABASE_MAX_CONNECTIONS: inject('pgKind') === 'pglite' ? '1' : '5',
    GATEWAY_HOST: '127.0.0.1',
    GATEWAY_PORT: '0',
    ORCHESTRATOR_GRPC_PORT: '0',
    GRPC_HOST: '127.0.0.1',
    INTERNAL_RPC_TOKEN: TEST_RPC_TOKEN,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    // No scheduler unless a test asks for it: apps of one file share its database, and a
    // scheduler of one would fire the schedules another app's test made.
    ROLES: 'gateway,orchestrator,worker,archiver',
    LLM_SERVICE_PORT: '0',
    AGENT_GRPC_PORT: '0',
    ...env,
  });
  const log = createLogger({ level: cfg.logLevel });
  const app = await startApp(cfg, log, { llm: overrides.llm });
  // Apps of one file share its database: a periodic reconciler would publish another app's
  // QUEUED rows into this app's NATS and run them here (and on PGlite every file shares one
  // database). Its passes run when a test asks (reconciler.runOnce()).
  app.reconciler?.stop();
  return {
    app,
    natsUrl,
    base: `http://127.0.0.1:${app.gatewayPort}`,
    async stop() {
      await app.stop();
      await natsStop?.();
    },
  };
}

export async function json(res: Response): Promise<any> {
  const t = await res.text();
  try {
    return JSON.parse(t);
  } catch {
    throw new Error(`not JSON (${res.status}): ${t.slice(0, 200)}`);
  }
}

/** globalThis.fetch that also sends `headers` (a helper's X-API-Key, Authorization, ...) unless the request has them. */
export function fetchWith(headers: Record<string, string>): FetchLike {
  return (request) => {
    for (const [k, v] of Object.entries(headers)) if (!request.headers.has(k)) request.headers.set(k, v);
    return globalThis.fetch(request);
  };
}

/** The typed API client (src/client) of the app at `base`, sending `headers` with every call. */
export function apiClient(base: string, headers: Record<string, string> = {}): ApiClient {
  return createClient({ baseUrl: base, fetch: fetchWith(headers) });
}

/**
 * For a poll (waitFor): the data of a successful answer, or undefined (ask again) for an answer
 * that may still change: 404 (not there yet), 429, 5xx. Any other error throws its ApiError.
 */
export function okOrRetry<R extends FetchResult>(result: R): DataOf<R> | undefined {
  try {
    return ok(result);
  } catch (err) {
    if (err instanceof ApiError && (err.status === 404 || err.status === 429 || err.status >= 500)) return undefined;
    throw err;
  }
}

/** The body of POST /api/v1/tasks; helpers take a plain record and cast it (tests send fields and values the schema does not list too). */
export type SubmitBody = components['schemas']['TaskSubmitRequest'];

/** Submits a task (simple mode unless `body` says otherwise) and waits for it to complete; returns its status body. */
export async function runTask(base: string, headers: Record<string, string>, body: Record<string, unknown>): Promise<any> {
  const api = apiClient(base, headers);
  const { task_id } = ok(await api.POST('/api/v1/tasks', { body: { mode: 'simple', ...body } as SubmitBody }));
  return waitFor(async () => {
    const s = okOrRetry(await api.GET('/api/v1/tasks/{id}', { params: { path: { id: task_id } } }));
    return s?.status === 'TASK_STATUS_COMPLETED' ? s : undefined;
  });
}

/**
 * A workflow's archived events once the archive holds all of them: STREAM_END last and as
 * many events as its seq. (After a NATS outage the archiver gets the messages whose acks were
 * lost again only after its ack wait, 30 s, so STREAM_END alone does not mean complete.)
 */
export async function archivedEvents(
  base: string,
  id: string,
  timeoutMs = 60_000,
  headers: Record<string, string> = {},
): Promise<{ seq: number; type: string }[]> {
  const api = apiClient(base, headers);
  return waitFor(
    async () => {
      const { events } = ok(await api.GET('/api/v1/tasks/{id}/events', { params: { path: { id }, query: { limit: 5000 } } }));
      const last = events.at(-1);
      return last?.type === 'STREAM_END' && events.length === last.seq ? events : undefined;
    },
    timeoutMs,
    250,
  );
}

export async function waitFor<T>(fn: () => Promise<T | undefined | false>, timeoutMs = 10_000, stepMs = 25): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('waitFor: timed out');
    await sleep(stepMs);
  }
}

export interface SseEvent {
  id?: string;
  event?: string;
  data: string;
}

export interface SseResult {
  status: number;
  headers: Headers;
  /** Every non-comment frame, in order. */
  events: SseEvent[];
  comments: string[];
  /** The server ended the response (as opposed to `until` or the timeout). */
  closedByServer: boolean;
  /** Body of a non-200 response. */
  body?: string;
}

/** The frames of a complete or partial SSE text, in order (an unfinished last frame left out; comments to `onComment`). */
export function parseSse(text: string, onComment?: (comment: string) => void): SseEvent[] {
  const frames: SseEvent[] = [];
  const parser = createParser({ onEvent: (e) => frames.push(toFrame(e)), onComment });
  parser.feed(text);
  return frames;
}

function toFrame(e: EventSourceMessage): SseEvent {
  const ev: SseEvent = { data: e.data };
  if (e.id !== undefined) ev.id = e.id;
  if (e.event !== undefined) ev.event = e.event;
  return ev;
}

/** Reads an SSE response frame by frame until the server ends it, `until` says stop, or timeout. */
export async function readSse(
  url: string,
  opts: {
    headers?: Record<string, string>;
    until?: (e: SseEvent, all: SseEvent[]) => boolean;
    timeoutMs?: number;
    /** A slow client: pause this long after every chunk read. */
    readDelayMs?: number;
  } = {},
): Promise<SseResult> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), opts.timeoutMs ?? 20_000);
  const events: SseEvent[] = [];
  const comments: string[] = [];
  let closedByServer = false;
  try {
    const res = await fetch(url, { headers: opts.headers, signal: ac.signal });
    if (res.status !== 200 || !res.body) return { status: res.status, headers: res.headers, events, comments, closedByServer: true, body: await res.text() };
    let stopped = false;
    const parser = createParser({
      onEvent: (e) => {
        if (stopped) return;
        const ev = toFrame(e);
        events.push(ev);
        if (opts.until?.(ev, events)) stopped = true;
      },
      onComment: (c) => {
        if (!stopped) comments.push(c.trim());
      },
    });
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    try {
      while (!stopped) {
        const { value, done } = await reader.read();
        if (done) {
          closedByServer = true;
          break;
        }
        if (opts.readDelayMs) await sleep(opts.readDelayMs);
        parser.feed(value);
      }
    } catch (err) {
      if ((err as Error).name !== 'AbortError') throw err;
    }
    return { status: res.status, headers: res.headers, events, comments, closedByServer };
  } finally {
    clearTimeout(timer);
    ac.abort();
  }
}
