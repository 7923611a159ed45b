/**
 * The `fetch` an MCP connection hands the SDK's streamable HTTP transport, around the real one
 * (global fetch, or the SSRF-guarded fetch for users' servers).
 *
 * The SDK sends every POST with one transport-wide abort signal, so a call that is cancelled or
 * times out would leave its POST (and its socket) open until the whole connection closes. Here
 * each request gets a signal of its own, and the POST of a JSON-RPC request is aborted when the
 * SDK announces that request's end (`notifications/cancelled`, sent on abort and on time-out).
 *
 * Every response body is counted: past `maxBytes` it is cut (a server cannot grow our memory
 * without end). A POST's stream that breaks while its request waits for the answer means the
 * server went away: `onRequestStreamLost` says so (the standalone GET stream is the SDK's to
 * reopen: a proxy closing it idle is no outage). Once the transport is closed, a GET stream the
 * SDK tries to reopen is answered "405, no stream", so no reconnection timer outlives the close.
 */

export interface McpFetchOptions {
  /** Bytes a response body may have. */
  maxBytes: number;
  /** A POST's answer stream broke before it ended (not by our own abort). */
  onRequestStreamLost(err: unknown): void;
}

/** An answer cut at the byte limit. */
class McpAnswerTooLarge extends Error {
  constructor(maxBytes: number) {
    super(`an answer was larger than ${maxBytes >= 2 ** 20 ? `${+(maxBytes / 2 ** 20).toFixed(1)} MiB` : `${maxBytes} bytes`}`);
  }
}

type RpcId = string | number;

export function mcpFetch(base: typeof fetch, o: McpFetchOptions): typeof fetch {
  /** Each POST of a request still open, by its JSON-RPC id. */
  const posts = new Map<RpcId, AbortController>();
  const open = new Set<AbortController>();
  const watched = new WeakSet<AbortSignal>();
  let closed = false;
  const noStream = () => new Response(null, { status: 405, statusText: 'connection closed' });

  return async (input, init = {}) => {
    const method = (init.method ?? 'GET').toUpperCase();
    const transportSignal = init.signal;
    if (transportSignal && !watched.has(transportSignal)) {
      // One listener for the transport's life (not one per request): its close ends every request.
      watched.add(transportSignal);
      transportSignal.addEventListener(
        'abort',
        () => {
          closed = true;
          for (const c of open) c.abort(transportSignal.reason);
        },
        { once: true },
      );
    }
    if (closed || transportSignal?.aborted) {
      if (method === 'GET') return noStream();
      throw transportSignal?.reason ?? new Error('connection closed');
    }
    const message = method === 'POST' ? rpcMessage(init.body) : undefined;
    const cancelled = message?.method === 'notifications/cancelled' ? rpcId((message.params as { requestId?: unknown } | undefined)?.requestId) : undefined;
    if (cancelled !== undefined) posts.get(cancelled)?.abort(new Error('the request was cancelled'));
    const id = message?.method !== undefined ? rpcId(message.id) : undefined;

    const ac = new AbortController();
    open.add(ac);
    if (id !== undefined) posts.set(id, ac);
    const done = () => {
      open.delete(ac);
      if (id !== undefined && posts.get(id) === ac) posts.delete(id);
    };
    let res: Response;
    try {
      res = await base(input, { ...init, signal: ac.signal });
    } catch (err) {
      done();
      if (closed && method === 'GET') return noStream();
      throw err;
    }
    if (!res.body) {
      done();
      return res;
    }
    const lost = (err: unknown) => {
      if (id !== undefined && !ac.signal.aborted) o.onRequestStreamLost(err);
    };
    const out = new Response(counted(res.body, o.maxBytes, done, lost), { status: res.status, statusText: res.statusText, headers: res.headers });
    Object.defineProperties(out, { url: { value: res.url }, redirected: { value: res.redirected } });
    return out;
  };
}

/** The body passed through, cut past `maxBytes`; `done` once it ends either way, `lost` when it breaks. */
function counted(body: ReadableStream<Uint8Array>, maxBytes: number, done: () => void, lost: (err: unknown) => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let size = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let r: Awaited<ReturnType<typeof reader.read>>;
      try {
        r = await reader.read();
      } catch (err) {
        done();
        lost(err);
        controller.error(err);
        return;
      }
      if (r.done) {
        done();
        controller.close();
        return;
      }
      size += r.value.byteLength;
      if (size > maxBytes) {
        const err = new McpAnswerTooLarge(maxBytes);
        done();
        void reader.cancel(err).catch(() => undefined);
        lost(err);
        controller.error(err);
        return;
      }
      controller.enqueue(r.value);
    },
    async cancel(reason) {
      done();
      await reader.cancel(reason).catch(() => undefined);
    },
  });
}

/** The JSON-RPC message a POST body carries (a batch is not looked into). */
function rpcMessage(body: RequestInit['body']): { method?: string; id?: unknown; params?: unknown } | undefined {
  if (typeof body !== 'string') return undefined;
  try {
    const m: unknown = JSON.parse(body);
    return m && typeof m === 'object' && !Array.isArray(m) ? (m as { method?: string; id?: unknown; params?: unknown }) : undefined;
  } catch {
    return undefined;
  }
}

const rpcId = (v: unknown): RpcId | undefined => (typeof v === 'string' || typeof v === 'number' ? v : undefined);
