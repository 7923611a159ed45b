/**
 * The two failures a caller of the public API handles: ApiError (the service answered with an
 * error status; its body is `{"error": "<message>"}`, a 429 may add `retry_after`) and
 * NetworkError (the service could not be reached, or did not answer in time).
 */

/** The service answered with a non-2xx status. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  /** HTTP status of the answer. */
  readonly status: number;
  readonly statusText: string;
  /** Seconds to wait before trying again: the Retry-After header, else the body's `retry_after`. */
  readonly retryAfter?: number;
  /** The body: parsed JSON when it was JSON, else its text (undefined when empty). */
  readonly body: unknown;
  readonly headers: Headers;

  constructor(init: { status: number; statusText?: string; message: string; body?: unknown; retryAfter?: number; headers?: Headers }) {
    super(init.message);
    this.status = init.status;
    this.statusText = init.statusText ?? '';
    this.retryAfter = init.retryAfter;
    this.body = init.body;
    this.headers = init.headers ?? new Headers();
  }
}

/** The service could not be reached (refused, reset, DNS) or did not answer within the timeout. */
export class NetworkError extends Error {
  override readonly name = 'NetworkError';
  /** The URL that was asked for. */
  readonly url: string;
  /** The request was abandoned after the client's timeout. */
  readonly timedOut: boolean;

  constructor(message: string, init: { url: string; cause?: unknown; timedOut?: boolean }) {
    super(message, { cause: init.cause });
    this.url = init.url;
    this.timedOut = init.timedOut ?? false;
  }

  /** The short reason of the failure: the system error code (ECONNREFUSED, ...) when there is one. */
  get reason(): string {
    return reasonOf(this.cause);
  }
}

function reasonOf(err: unknown): string {
  const e = err as { cause?: { code?: unknown; message?: unknown }; code?: unknown; message?: unknown } | undefined;
  const why = e?.cause?.code ?? e?.cause?.message ?? e?.code ?? e?.message ?? err;
  return String(why ?? 'unknown error');
}

/** Seconds from a Retry-After header (delta-seconds or an HTTP date), else from a body's `retry_after`. */
function retryAfterOf(headers: Headers, body: unknown): number | undefined {
  const h = headers.get('retry-after')?.trim();
  if (h) {
    if (/^\d+(\.\d+)?$/.test(h)) return Number(h);
    const at = Date.parse(h);
    if (!Number.isNaN(at)) return Math.max(0, Math.ceil((at - Date.now()) / 1000));
  }
  const b = body as { retry_after?: unknown } | undefined;
  return typeof b?.retry_after === 'number' && Number.isFinite(b.retry_after) ? b.retry_after : undefined;
}

/**
 * The ApiError of an answer whose body was already read: `body` parsed (or the text when it was
 * not JSON), `text` the raw text when known. The message is the body's `error`, else the start of
 * the text, else the status text.
 */
export function apiErrorOf(response: Response, body: unknown, text?: string): ApiError {
  const raw = text ?? (typeof body === 'string' ? body : body === undefined ? '' : JSON.stringify(body));
  const fromBody = (body as { error?: unknown } | undefined)?.error;
  const message = (typeof fromBody === 'string' && fromBody) || raw.trim().slice(0, 300) || response.statusText || `HTTP ${response.status}`;
  return new ApiError({
    status: response.status,
    statusText: response.statusText,
    message,
    body,
    retryAfter: retryAfterOf(response.headers, body),
    headers: response.headers,
  });
}

/** Reads an answer's body and makes its ApiError. */
export async function readApiError(response: Response): Promise<ApiError> {
  let text = '';
  try {
    text = await response.text();
  } catch {
    // A body cut off: the status alone says what happened.
  }
  let body: unknown = text || undefined;
  try {
    if (text) body = JSON.parse(text);
  } catch {
    // Not JSON: the text is the body.
  }
  return apiErrorOf(response, body, text);
}

/**
 * The error a failed fetch becomes: a NetworkError, unless the caller aborted the request itself
 * (its own AbortSignal), which is passed on unchanged. `timeoutMs` is the client's timeout, named
 * in the message when it is what ended the request.
 */
export function toNetworkError(err: unknown, url: string, timeoutMs?: number): unknown {
  if (err instanceof NetworkError || err instanceof ApiError) return err;
  const name = (err as { name?: unknown } | undefined)?.name;
  if (name === 'TimeoutError') {
    const origin = originOf(url);
    const within = timeoutMs !== undefined ? ` within ${timeoutMs / 1000} s` : ' in time';
    return new NetworkError(`${origin} did not answer${within}`, { url, cause: err, timedOut: true });
  }
  if (name === 'AbortError') return err;
  return new NetworkError(`cannot reach ${originOf(url)} (${reasonOf(err)})`, { url, cause: err });
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}
