/**
 * One error base for the whole system. Codes are Connect's closed `Code` set, so the same
 * error crosses the RPC boundary unchanged; one table maps a code to an HTTP status.
 * `publicMessage`: text a client may see. `retryable`: a JetStream consumer naks (redelivery)
 * instead of terminating the message.
 */
import { Code, ConnectError } from '@connectrpc/connect';

export { Code };

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
    this.retryAfter = opts.retryAfter;
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

/** Normalise anything thrown into an AppError (ConnectErrors keep their code and message). */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof ConnectError) {
    const ra = Number(err.metadata.get(RETRY_AFTER));
    return new AppError(err.code, err.rawMessage, {
      cause: err,
      isPublic: err.code !== Code.Internal && err.code !== Code.Unknown,
      retryable: err.code === Code.Unavailable,
      retryAfter: ra > 0 ? ra : undefined,
    });
  }
  return new AppError(Code.Internal, err instanceof Error ? err.message : String(err), { cause: err, isPublic: false });
}

/** For RPC handlers: AppError -> ConnectError with the same code. */
export function toConnectError(err: unknown): ConnectError {
  if (err instanceof ConnectError) return err;
  const app = toAppError(err);
  const md = app.retryAfter ? new Headers({ [RETRY_AFTER]: String(app.retryAfter) }) : undefined;
  return new ConnectError(app.isPublic ? app.message : 'internal error', app.code, md, undefined, err);
}
