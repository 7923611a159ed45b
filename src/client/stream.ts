/**
 * Follows a workflow's event stream (GET /api/v1/stream/sse?workflow_id=...) to its end, as an
 * async generator of `{ id, event, data }`. A dropped connection, a 5xx answer or the service
 * dropping a slow reader (`event: error`) is resumed with Last-Event-ID set to the last id
 * yielded, after a backoff (0.5, 1, 2, then 3 s); the service then sends every later event once,
 * in order, so nothing is missed or repeated. `maxFailures` failed attempts in a row give up
 * with a NetworkError; a 4xx answer throws its ApiError at once. The stream ends after
 * STREAM_END (the service then sends `event: done`, `data: [DONE]`, which is not yielded).
 * Heartbeats are SSE comments, dropped by the parser (eventsource-parser). Web APIs only
 * (fetch, ReadableStream, TextDecoderStream): it runs in Node and in a browser.
 */
import { EventSourceParserStream, type EventSourceMessage } from 'eventsource-parser/stream';
import { authHeaders, type ConnectionOptions } from './client.js';
import { ApiError, NetworkError, readApiError } from './errors.js';

/** One event of the stream. */
export interface StreamEvent {
  /** The stream id, `<ms>-<seq>` (none on REPLAY_GAP). */
  id?: string;
  /** The SSE event name: the event type (LLM_PARTIAL as thread.message.delta, LLM_OUTPUT as thread.message.completed), REPLAY_GAP, ... */
  event: string;
  /** The event, parsed when it is JSON (type, agent_id, message, timestamp, seq, stream_id, payload); else its text. */
  data: unknown;
}

export interface FollowStreamOptions extends ConnectionOptions {
  workflowId: string;
  /** Resume after this stream id (or seq): only later events are sent. */
  lastEventId?: string;
  /** Only these event types (the `types` query parameter). */
  types?: readonly string[] | string;
  /** Stops following: the generator rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Failed attempts in a row before giving up (default 10). */
  maxFailures?: number;
  /** The stream's path (e.g. a submit's `stream_url`), instead of /api/v1/stream/sse?workflow_id=<workflowId>. */
  path?: string;
}

export const DEFAULT_MAX_FAILURES = 10;

/** Wait before reconnect attempt `failures` (1, 2, ...): 0.5, 1, 2, then 3 s (one client: no jitter needed). */
export function reconnectDelayMs(failures: number): number {
  return Math.min(3000, 500 * 2 ** Math.max(0, failures - 1));
}

/** The URL of the stream with its `types` filter. */
function streamUrl(opts: FollowStreamOptions): string {
  let path = opts.path ?? `/api/v1/stream/sse?workflow_id=${encodeURIComponent(opts.workflowId)}`;
  const types = typeof opts.types === 'string' ? opts.types : opts.types?.join(',');
  if (types) path += `${path.includes('?') ? '&' : '?'}types=${encodeURIComponent(types)}`;
  return /^https?:\/\//i.test(path) ? path : `${opts.baseUrl.replace(/\/+$/, '')}${path}`;
}

function parseData(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    return data;
  }
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The events of a workflow's stream until its end, resumed across lost connections. */
export async function* followStream(opts: FollowStreamOptions): AsyncGenerator<StreamEvent, void, undefined> {
  const url = streamUrl(opts);
  const fetchFn = opts.fetch ?? ((r: Request) => globalThis.fetch(r));
  const maxFailures = opts.maxFailures ?? DEFAULT_MAX_FAILURES;
  const signal = opts.signal;
  let lastId = opts.lastEventId || undefined;
  let ended = false; // STREAM_END seen: a connection lost after it is the end, not a failure
  let failures = 0;
  let lastError: unknown;

  for (;;) {
    signal?.throwIfAborted();
    const ac = new AbortController();
    const onAbort = () => ac.abort(signal!.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    let reader: ReadableStreamDefaultReader<EventSourceMessage> | undefined;
    try {
      const headers = { ...authHeaders(opts), Accept: 'text/event-stream', ...(lastId ? { 'Last-Event-ID': lastId } : {}) };
      const res = await fetchFn(new Request(url, { headers, signal: ac.signal }));
      if (!res.ok) {
        const apiErr = await readApiError(res);
        if (res.status < 500) throw apiErr;
        lastError = apiErr; // 5xx (503 while a node restarts): try again
      } else if (!res.body) {
        lastError = new Error('the stream answered without a body');
      } else {
        reader = res.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream()).getReader();
        for (;;) {
          const { value: m, done } = await reader.read();
          if (done) {
            lastError = new Error('the stream closed before its end');
            break;
          }
          if (m.event === 'done') return;
          if (m.event === 'error') {
            // The service dropped this reader (too slow): resume from the last id.
            const why = (parseData(m.data) as { error?: unknown } | undefined)?.error;
            lastError = new Error(`the service dropped the stream${typeof why === 'string' ? `: ${why}` : ''}`);
            break;
          }
          if (m.id) lastId = m.id;
          if (m.event === 'STREAM_END') ended = true;
          failures = 0;
          yield { ...(m.id ? { id: m.id } : {}), event: m.event ?? 'message', data: parseData(m.data) };
        }
      }
    } catch (err) {
      if (err instanceof ApiError || signal?.aborted) throw err;
      lastError = err; // the connection failed or was cut: resume below
    } finally {
      signal?.removeEventListener('abort', onAbort);
      reader?.cancel().catch(() => {});
      ac.abort();
    }
    if (ended) return;
    if (++failures >= maxFailures) {
      const why = lastError instanceof Error ? lastError.message : String(lastError);
      throw new NetworkError(`lost the stream of workflow ${opts.workflowId} after ${failures} failed attempts (${why})`, { url, cause: lastError });
    }
    await sleep(reconnectDelayMs(failures), signal);
  }
}
