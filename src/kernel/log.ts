/**
 * Structured logs (pino). Child loggers carry workflow_id and trace_id.
 *
 * Two formats: JSON lines (one object per line, for machines and log shippers) and pretty
 * (`12:00:01.234 INFO  message key=value`, for a person at a terminal). LOG_FORMAT=auto,
 * the service's default, picks pretty when stdout is a TTY and JSON otherwise, so pipes,
 * files, containers and tests get JSON.
 */
import { pino, type Logger } from 'pino';

export type { Logger };

export type LogFormat = 'auto' | 'json' | 'pretty';

/** The format `auto` stands for on this stdout. */
export function resolveLogFormat(format: LogFormat, isTTY: boolean = process.stdout.isTTY === true): 'json' | 'pretty' {
  return format === 'auto' ? (isTTY ? 'pretty' : 'json') : format;
}

/** `format` defaults to JSON; the service passes LOG_FORMAT (default auto). */
export function createLogger(opts: { level: string; name?: string; format?: LogFormat }): Logger {
  const options = {
    name: opts.name ?? 'taskorch',
    level: opts.level,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  if (resolveLogFormat(opts.format ?? 'json') === 'json') return pino(options);
  // hasColors() honours NO_COLOR, FORCE_COLOR and the terminal's capabilities.
  const color = process.stdout.isTTY === true && process.stdout.hasColors?.() === true;
  // Synchronous writes (a TTY, a pipe or a file on Linux): nothing is lost on process.exit.
  return pino(options, { write: (line: string) => void process.stdout.write(formatPretty(line, color)) });
}

const LEVELS: Record<number, [label: string, ansi: string]> = {
  10: ['TRACE', '90'],
  20: ['DEBUG', '34'],
  30: ['INFO ', '32'],
  40: ['WARN ', '33'],
  50: ['ERROR', '31'],
  60: ['FATAL', '35'],
};
const HIDDEN = new Set(['level', 'time', 'pid', 'hostname', 'name', 'msg']);

function pad(n: number, w = 2): string {
  return String(n).padStart(w, '0');
}

function valueText(v: unknown): string {
  if (typeof v === 'string') return /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v);
  if (v === null || typeof v !== 'object') return String(v);
  return JSON.stringify(v);
}

/** One pino JSON line as `HH:MM:SS.mmm LEVEL msg key=value ...` (local time), newline-terminated. */
export function formatPretty(line: string, color = false): string {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line.endsWith('\n') ? line : `${line}\n`;
  }
  const paint = (code: string, s: string) => (color ? `\x1b[${code}m${s}\x1b[0m` : s);
  const t = new Date(typeof o.time === 'string' || typeof o.time === 'number' ? o.time : Date.now());
  const time = `${pad(t.getHours())}:${pad(t.getMinutes())}:${pad(t.getSeconds())}.${pad(t.getMilliseconds(), 3)}`;
  const [label, ansi] = LEVELS[o.level as number] ?? [String(o.level).toUpperCase().padEnd(5), '0'];
  let out = `${paint('2', time)} ${paint(ansi, label)} ${typeof o.msg === 'string' ? o.msg : ''}`;
  let stack = '';
  for (const [k, v] of Object.entries(o)) {
    if (HIDDEN.has(k) || v === undefined) continue;
    // pino's serialised errors: the message inline, the stack below the line.
    if (v && typeof v === 'object' && typeof (v as { message?: unknown }).message === 'string' && typeof (v as { stack?: unknown }).stack === 'string') {
      out += ` ${paint('2', `${k}=`)}${valueText((v as { message: string }).message)}`;
      stack += `\n${paint('2', (v as { stack: string }).stack.replace(/^/gm, '    '))}`;
      continue;
    }
    out += ` ${paint('2', `${k}=`)}${valueText(v)}`;
  }
  return `${out}${stack}\n`;
}

/** traceparent: 00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>. Returns the trace id or undefined. */
export function parseTraceparent(header: string | undefined): { traceId: string; parentId: string; sampled: boolean } | undefined {
  if (!header) return undefined;
  const m = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(header.trim().toLowerCase());
  if (!m || m[1] === 'ff' || /^0+$/.test(m[2]) || /^0+$/.test(m[3])) return undefined;
  return { traceId: m[2], parentId: m[3], sampled: (parseInt(m[4], 16) & 1) === 1 };
}
