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
  constructor(code: Code, message: string, opts: { retryable?: boolean; isPublic?: boolean; cause?: unknown } = {}) {
    super(message, { cause: opts.cause });
    this.code = code;
    this.retryable = opts.retryable ?? false;
    this.isPublic = opts.isPublic ?? code !== Code.Internal;
  }
}

export const badRequest = (msg: string) => new AppError(Code.InvalidArgument, msg);
export const notFound = (msg: string) => new AppError(Code.NotFound, msg);
export const conflict = (msg: string) => new AppError(Code.AlreadyExists, msg);
export const forbidden = (msg: string) => new AppError(Code.PermissionDenied, msg);
export const unavailable = (msg: string, cause?: unknown) => new AppError(Code.Unavailable, msg, { retryable: true, cause });

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
    return new AppError(err.code, err.rawMessage, { cause: err, isPublic: err.code !== Code.Internal && err.code !== Code.Unknown });
  }
  return new AppError(Code.Internal, err instanceof Error ? err.message : String(err), { cause: err, isPublic: false });
}

/** For RPC handlers: AppError -> ConnectError with the same code. */
export function toConnectError(err: unknown): ConnectError {
  if (err instanceof ConnectError) return err;
  const app = toAppError(err);
  return new ConnectError(app.isPublic ? app.message : 'internal error', app.code, undefined, undefined, err);
}
