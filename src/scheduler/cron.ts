/**
 * Cron rules of the schedules: five numeric fields (minute 0-59, hour 0-23, day of month 1-31,
 * month 1-12, day of week 0-6 with Sunday first), IANA timezones, and the minimum interval
 * between two consecutive runs. Occurrences are computed by `cron-parser` in the schedule's
 * timezone; the interval is measured in the schedule's wall-clock time.
 */
import { CronExpressionParser, type CronExpression } from 'cron-parser';
import { badRequest } from '../kernel/index.js';

const FIELDS = ['minute', 'hour', 'day of month', 'month', 'day of week'] as const;
const RANGES: [number, number][] = [
  [0, 59],
  [0, 23],
  [1, 31],
  [1, 12],
  [0, 6],
];
const ITEM = /^(\*|\d+(?:-\d+)?)(?:\/(\d+))?$/;
const DAY_MS = 86_400_000;

function parse(expr: string, tz: string, currentDate?: Date): CronExpression {
  return CronExpressionParser.parse(expr, { tz, ...(currentDate ? { currentDate } : {}) });
}

/** Validates a 5-field cron expression; returns it normalised (single spaces). 400 otherwise. */
export function validateCron(expr: unknown): string {
  if (typeof expr !== 'string' || !expr.trim()) throw badRequest('cron_expression is required');
  const parts = expr.trim().split(/\s+/);
  if (parts.length !== 5) throw badRequest('invalid cron expression: expected 5 fields (minute hour day-of-month month day-of-week)');
  parts.forEach((part, i) => {
    const [lo, hi] = RANGES[i];
    for (const item of part.split(',')) {
      const m = ITEM.exec(item);
      if (!m) throw badRequest(`invalid cron expression: bad ${FIELDS[i]} field "${part}"`);
      const nums = m[1] === '*' ? [] : m[1].split('-').map(Number);
      if (nums.some((n) => n < lo || n > hi)) throw badRequest(`invalid cron expression: ${FIELDS[i]} must be between ${lo} and ${hi}`);
      if (nums.length === 2 && nums[0] > nums[1]) throw badRequest(`invalid cron expression: bad range in ${FIELDS[i]} field "${part}"`);
      if (m[2] !== undefined && Number(m[2]) < 1) throw badRequest(`invalid cron expression: bad step in ${FIELDS[i]} field "${part}"`);
    }
  });
  const normalised = parts.join(' ');
  try {
    parse(normalised, 'UTC').next();
  } catch (err) {
    throw badRequest(`invalid cron expression: ${(err as Error).message}`);
  }
  return normalised;
}

/** Validates an IANA timezone name (default UTC). 400 otherwise. */
export function validateTimezone(tz: unknown): string {
  if (tz === undefined || tz === null || tz === '') return 'UTC';
  if (typeof tz !== 'string' || tz.length > 64 || !/^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*$/.test(tz)) {
    throw badRequest(`invalid timezone: ${typeof tz === 'string' ? tz : JSON.stringify(tz)}`);
  }
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    parse('0 0 * * *', tz).next();
  } catch {
    throw badRequest(`invalid timezone: ${tz}`);
  }
  return tz;
}

/** The first occurrence strictly after `after`. */
export function nextRun(expr: string, tz: string, after: Date = new Date()): Date {
  return parse(expr, tz, after).next().toDate();
}

/** The last occurrence at or before `at`. */
export function prevRun(expr: string, tz: string, at: Date = new Date()): Date {
  // prev() is strictly before its current date: start one millisecond later to include `at`.
  return parse(expr, tz, new Date(at.getTime() + 1))
    .prev()
    .toDate();
}

/**
 * The shortest wall-clock gap, in minutes, between two consecutive runs of `expr`, or
 * Infinity when it is at least `atLeast` (the search stops as soon as that is known).
 * Within a day the firing times are the product of the minute and hour sets; across
 * midnight the gap (last time -> first time of the next day) only matters when two
 * consecutive calendar days can both fire, which is checked over a year of firing days.
 */
export function shortestGapMinutes(expr: string, atLeast: number): number {
  const e = parse(expr, 'UTC');
  const minutes = [...e.fields.minute.values] as number[];
  const hours = [...e.fields.hour.values] as number[];
  const times = hours.flatMap((h) => minutes.map((m) => h * 60 + m)).sort((a, b) => a - b);
  let within = Infinity;
  for (let i = 1; i < times.length; i++) within = Math.min(within, times[i] - times[i - 1]);
  if (within < atLeast) return within;
  const wrap = 1440 - times[times.length - 1] + times[0];
  if (wrap >= atLeast) return Infinity;
  const [, , dom, month, dow] = expr.split(' ');
  const days = parse(`0 0 ${dom} ${month} ${dow}`, 'UTC', new Date(Date.UTC(2000, 0, 1)));
  let prev = days.next().getTime();
  const end = prev + 2 * 366 * DAY_MS; // from a leap year: 29 February included
  while (prev < end) {
    const cur = days.next().getTime();
    if (cur - prev === DAY_MS) return wrap;
    prev = cur;
  }
  return Infinity;
}

/** 400 when consecutive runs of `expr` can be closer than `minMinutes`. */
export function checkInterval(expr: string, minMinutes: number): void {
  if (minMinutes <= 0) return;
  const gap = shortestGapMinutes(expr, minMinutes);
  if (gap < minMinutes) {
    throw badRequest(`schedule interval too short: runs must be at least ${minMinutes} minutes apart, this cron expression runs ${gap} minutes apart`);
  }
}
