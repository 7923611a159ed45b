/**
 * Errors in OpenAI's shape (`{error: {message, type, param, code}}`): the OpenAI-compatible
 * layer answers every failure this way, never in the gateway's `{error: <message>}` shape, so
 * OpenAI clients read them as their own.
 */
import { Code, httpStatusOf, toAppError, type Logger } from '../../kernel/index.js';
import type { Reply } from '../http.js';

/** The spec's OpenAI error type and code per HTTP status; other statuses as OpenAI sends them. */
const ERROR_KIND: Record<number, { type: string; code: string }> = {
  400: { type: 'invalid_request_error', code: 'invalid_request' },
  401: { type: 'authentication_error', code: 'invalid_api_key' },
  403: { type: 'permission_error', code: 'invalid_request' },
  404: { type: 'invalid_request_error', code: 'model_not_found' },
  409: { type: 'invalid_request_error', code: 'conflict' },
  413: { type: 'invalid_request_error', code: 'request_too_large' },
  429: { type: 'rate_limit_error', code: 'rate_limit_exceeded' },
  500: { type: 'server_error', code: 'internal_error' },
  502: { type: 'server_error', code: 'bad_gateway' },
  503: { type: 'server_error', code: 'service_unavailable' },
  504: { type: 'server_error', code: 'timeout' },
};

export function errorKind(status: number): { type: string; code: string } {
  return ERROR_KIND[status] ?? (status >= 500 ? ERROR_KIND[500]! : ERROR_KIND[400]!);
}

/** An error the layer answers as it is: status, message, the request field at fault. */
export class OpenAiError extends Error {
  override name = 'OpenAiError';
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
    readonly code?: string,
  ) {
    super(message);
  }
}

export function errorBody(status: number, message: string, param: string | null = null, code?: string) {
  const k = errorKind(status);
  return { error: { message, type: k.type, param, code: code ?? k.code } };
}

/** 400 invalid_request_error naming the field at fault. */
export const invalid = (message: string, param: string | null = null) => new OpenAiError(400, message, param);

/** 429 with the X-RateLimit-* headers of the window. */
export class ChatRateLimited extends OpenAiError {
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
