/**
 * The cron preview of the schedule form: the service's own rules for an expression (five
 * numeric fields: minute 0-59, hour 0-23, day of month 1-31, month 1-12, day of week 0-6 with
 * Sunday first) and for a timezone (an IANA name), checked as the user types, and the next runs
 * computed by `cron-parser`, the library the service computes them with, in the schedule's
 * timezone. The minimum interval and the per-user limit are the service's to say (they are its
 * settings): the form shows its answer.
 */
import { CronExpressionParser } from 'cron-parser';

const FIELDS = ['minute', 'hour', 'day of month', 'month', 'day of week'] as const;
const RANGES: [number, number][] = [
  [0, 59],
  [0, 23],
  [1, 31],
  [1, 12],
  [0, 6],
];
const ITEM = /^(\*|\d+(?:-\d+)?)(?:\/(\d+))?$/;
const ZONE = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*$/;

export type Preview = { ok: true; runs: Date[] } | { ok: false; error: string; field: 'cron' | 'timezone' };

/** Why `expr` is not a cron expression the service takes, or undefined when it is. */
export function cronError(expr: string): string | undefined {
  if (!expr.trim()) return 'Enter a cron expression.';
  const parts = expr.trim().split(/\s+/);
  if (parts.length !== 5) return `Expected 5 fields (minute hour day-of-month month day-of-week), got ${parts.length}.`;
  for (let i = 0; i < 5; i++) {
    const [lo, hi] = RANGES[i]!;
    for (const item of parts[i]!.split(',')) {
      const m = ITEM.exec(item);
      if (!m) return `Bad ${FIELDS[i]} field "${parts[i]}": use numbers, *, ranges (a-b), lists (a,b) and steps (/n).`;
      const nums = m[1] === '*' ? [] : m[1]!.split('-').map(Number);
      if (nums.some((n) => n < lo || n > hi)) return `The ${FIELDS[i]} must be between ${lo} and ${hi}.`;
      if (nums.length === 2 && nums[0]! > nums[1]!) return `Bad range in the ${FIELDS[i]} field "${parts[i]}".`;
      if (m[2] !== undefined && Number(m[2]) < 1) return `Bad step in the ${FIELDS[i]} field "${parts[i]}".`;
    }
  }
  return undefined;
}

/** Why `tz` is not an IANA timezone name, or undefined when it is (empty means UTC). */
export function timezoneError(tz: string): string | undefined {
  if (!tz) return undefined;
  if (tz.length > 64 || !ZONE.test(tz)) return `Unknown timezone: ${tz}.`;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
  } catch {
    return `Unknown timezone: ${tz}.`;
  }
  return undefined;
}

/** The next `n` runs of `expr` in `tz` after `from`, or why there are none. */
export function preview(expr: string, tz: string, n = 5, from: Date = new Date()): Preview {
  const bad = cronError(expr);
  if (bad) return { ok: false, error: bad, field: 'cron' };
  const badZone = timezoneError(tz);
  if (badZone) return { ok: false, error: badZone, field: 'timezone' };
  try {
    const e = CronExpressionParser.parse(expr.trim().split(/\s+/).join(' '), { tz: tz || 'UTC', currentDate: from });
    return { ok: true, runs: e.take(n).map((d) => d.toDate()) };
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err), field: 'cron' };
  }
}

/** The timezones the browser knows (for the input's suggestions); UTC first. */
export function timezones(): string[] {
  try {
    return ['UTC', ...Intl.supportedValuesOf('timeZone').filter((z) => z !== 'UTC')];
  } catch {
    return ['UTC'];
  }
}

/** The browser's own timezone (UTC when it cannot tell). */
export function localTimezone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
}

/** A moment as wall-clock time in `tz`: "Mon 2026-11-30 09:00". */
export function inZone(d: Date, tz: string): string {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: tz || 'UTC',
    weekday: 'short',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(d);
  const p = (type: Intl.DateTimeFormatPartTypes) => parts.find((x) => x.type === type)?.value ?? '';
  return `${p('weekday')} ${p('year')}-${p('month')}-${p('day')} ${p('hour')}:${p('minute')}`;
}
