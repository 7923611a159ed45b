/**
 * One error base for the whole system. Codes are Connect's closed `Code` set, so the same
 * error crosses the RPC boundary unchanged; one table maps a code to an HTTP status.
 * `publicMessage`: text a client may see. `retryable`: a JetStream consumer naks (redelivery)
 * instead of terminating the message. Every Unavailable error carries a Retry-After (a client
 * is told when to come back, never a bare 503), and a failure of an RPC call itself (the peer
 * down, a reset or cancelled stream, a deadline) is Unavailable with a message that names no
 * internals: the developers' guide's rule for a dependency that is down.
 */
import { Code, ConnectError } from '@connectrpc/connect';

export { Code };

/** Retry-After (seconds) of an Unavailable error that names none: a restarted peer is back within about that. */
export const DEPENDENCY_RETRY_AFTER_SECONDS = 1;

export class AppError extends Error {
  override name = 'AppError';
  readonly code: Code;
  readonly retryable: boolean;
  /** Shown to clients as-is; internal errors never leak their message. */
  readonly isPublic: boolean;
  /** Seconds after which a retry may succeed (HTTP Retry-After; crosses RPC as a header). */
  readonly retryAfter?: number;
  constructor(code: Code, message: string, opts: { retryable?: boolean; isPublic?: boolean; cause?: unknown; retryAfter?: number } = {}) {
    super(message, { cause: opts.cause });
    this.code = code;
    this.retryable = opts.retryable ?? false;
    this.isPublic = opts.isPublic ?? code !== Code.Internal;
    this.retryAfter = opts.retryAfter ?? (code === Code.Unavailable ? DEPENDENCY_RETRY_AFTER_SECONDS : undefined);
  }
}

export const badRequest = (msg: string) => new AppError(Code.InvalidArgument, msg);
export const notFound = (msg: string) => new AppError(Code.NotFound, msg);
export const conflict = (msg: string) => new AppError(Code.AlreadyExists, msg);
export const forbidden = (msg: string) => new AppError(Code.PermissionDenied, msg);
export const unauthenticated = (msg = 'Authentication required') => new AppError(Code.Unauthenticated, msg);
export const unavailable = (msg: string, cause?: unknown, retryAfter?: number) => new AppError(Code.Unavailable, msg, { retryable: true, cause, retryAfter });

const RETRY_AFTER = 'retry-after';

const HTTP_STATUS: Record<Code, number> = {
  [Code.Canceled]: 499,
  [Code.Unknown]: 500,
  [Code.InvalidArgument]: 400,
  [Code.DeadlineExceeded]: 504,
  [Code.NotFound]: 404,
  [Code.AlreadyExists]: 409,
  [Code.PermissionDenied]: 403,
  [Code.ResourceExhausted]: 429,
  [Code.FailedPrecondition]: 400,
  [Code.Aborted]: 409,
  [Code.OutOfRange]: 400,
  [Code.Unimplemented]: 501,
  [Code.Internal]: 500,
  [Code.Unavailable]: 503,
  [Code.DataLoss]: 500,
  [Code.Unauthenticated]: 401,
};

export function httpStatusOf(code: Code): number {
  return HTTP_STATUS[code] ?? 500;
}

/** Codes a failed call (not the peer's answer) comes with from Connect's Node transports. */
const TRANSPORT_CODES = new Set([Code.Unavailable, Code.Canceled, Code.Aborted, Code.Internal, Code.Unknown, Code.DeadlineExceeded]);

/** Node.js error codes of a connection that could not be made or was lost (not a local fault such as ENOENT). */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ERR_STREAM_DESTROYED',
  'ERR_STREAM_PREMATURE_CLOSE',
]);

/** A network or HTTP/2 error of Node.js (ECONNREFUSED, ECONNRESET, ERR_HTTP2_...) in `err`'s cause chain, above any application error. */
function hasNetworkCause(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (e instanceof AppError || e instanceof ConnectError) return false;
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && (NETWORK_CODES.has(code) || code.startsWith('ERR_HTTP2_'))) return true;
  }
  return false;
}

/**
 * Whether a ConnectError is the call failing rather than the peer answering. The peer's answer
 * over gRPC carries `grpc-status`; an error of an in-process implementation carries the error
 * it was made from (toConnectError). What the transport makes itself has neither (an HTTP/2
 * reset "stream closed with error code CANCEL", "PING timed out", a GOAWAY, the call's
 * deadline, a proxy's HTTP 502) or wraps the Node error (ECONNREFUSED, ECONNRESET).
 */
function isTransportFailure(err: ConnectError): boolean {
  if (!TRANSPORT_CODES.has(err.code) || err.metadata.has('grpc-status')) return false;
  return err.cause === undefined || hasNetworkCause(err.cause);
}

/**
 * Normalise anything thrown into an AppError: ConnectErrors keep their code and message,
 * except a failed call, which becomes Unavailable "a backend service is unreachable".
 */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof ConnectError) {
    if (isTransportFailure(err)) {
      return new AppError(Code.Unavailable, 'Service temporarily unavailable: a backend service is unreachable; retry', { cause: err, retryable: true });
    }
    const ra = Number(err.metadata.get(RETRY_AFTER));
    return new AppError(err.code, err.rawMessage, {
      cause: err,
      isPublic: err.code !== Code.Internal && err.code !== Code.Unknown,
      retryable: err.code === Code.Unavailable,
      retryAfter: ra > 0 ? ra : undefined,
    });
  }
  if (databaseUnreachable(err)) {
    return new AppError(Code.Unavailable, 'Service temporarily unavailable: the database is unreachable; retry', { cause: err, retryable: true });
  }
  return new AppError(Code.Internal, err instanceof Error ? err.message : String(err), { cause: err, isPublic: false });
}

/**
 * The database is restarting or out of reach, not the statement at fault: PostgreSQL's shutdown
 * and start-up states (SQLSTATE 57P01-57P03), connection exceptions (class 08), and the driver
 * unable to reach or keep its socket (the `postgres` driver's errors carry the syscall's code).
 */
function databaseUnreachable(err: unknown): boolean {
  const e = err as { code?: unknown; errno?: unknown; name?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : '';
  if (/^57P0[123]$/.test(code) || /^08[0-9A-Z]{3}$/.test(code)) return true;
  if (code === 'CONNECTION_CLOSED' || code === 'CONNECTION_ENDED' || code === 'CONNECTION_DESTROYED' || code === 'CONNECT_TIMEOUT') return true;
  return (code === 'ECONNREFUSED' || code === 'ECONNRESET' || code === 'EPIPE') && e?.name !== 'ConnectError';
}

/** For RPC handlers: AppError -> ConnectError with the same code. */
export function toConnectError(err: unknown): ConnectError {
  if (err instanceof ConnectError) return err;
  const app = toAppError(err);
  const md = app.retryAfter ? new Headers({ [RETRY_AFTER]: String(app.retryAfter) }) : undefined;
  return new ConnectError(app.isPublic ? app.message : 'internal error', app.code, md, undefined, err);
}
