/**
 * How every RPC handler fails: anything thrown becomes a ConnectError with its code (the
 * message hidden unless public); failures that are not a client's fault are logged once.
 */
import { type ConnectError } from '@connectrpc/connect';
import { AppError, toConnectError, type Logger } from '../kernel/index.js';

/** The ConnectError to throw for `err`, logging it when it is not a public (client) error. */
export function rpcError(err: unknown, log: Logger, what: string): ConnectError {
  if (!(err instanceof AppError) || !err.isPublic) log.error({ err }, `${what} failed`);
  return toConnectError(err);
}

/** Wraps unary handlers with rpcError. */
export const rpcHandlers =
  (log: Logger, what: string) =>
  <A extends unknown[], R>(fn: (...a: A) => Promise<R>) =>
  async (...a: A): Promise<R> => {
    try {
      return await fn(...a);
    } catch (err) {
      throw rpcError(err, log, what);
    }
  };
