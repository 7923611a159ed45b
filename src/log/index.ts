/** Structured logs (pino). Child loggers carry workflow_id and trace_id. */
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(opts: { level: string; name?: string }): Logger {
  return pino({
    name: opts.name ?? 'taskorch',
    level: opts.level,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}

/** traceparent: 00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>. Returns the trace id or undefined. */
export function parseTraceparent(header: string | undefined): { traceId: string; parentId: string; sampled: boolean } | undefined {
  if (!header) return undefined;
  const m = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(header.trim().toLowerCase());
  if (!m || m[1] === 'ff' || /^0+$/.test(m[2]) || /^0+$/.test(m[3])) return undefined;
  return { traceId: m[2], parentId: m[3], sampled: (parseInt(m[4], 16) & 1) === 1 };
}
