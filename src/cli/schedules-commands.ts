/**
 * `taskorch schedules`: tasks run on a cron schedule. `schedules` lists the caller's;
 * `schedules create --cron "<expr>" --query "<text>"` makes one; `show <id>` (or just the id),
 * `pause <id>`, `resume <id>`, `runs <id>` (its past runs) and `delete <id>` act on one.
 */
import { jsonObject, noArgs, oneArg, onlyOptions, parse, positiveInt, positiveNumber } from './args.js';
import { CliError } from './errors.js';
import { HELP } from './help.js';
import { call, connOf, type Conn } from './http.js';
import { duration, err, fields, oneLine, out, paint, printJson, statusWord, table, when } from './output.js';

const SUBCOMMANDS = ['create', 'show', 'pause', 'resume', 'runs', 'delete'] as const;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** The name a schedule gets from its query when --name is not given (the API requires one). */
const DEFAULT_NAME_CHARS = 80;

type Values = Record<string, string | boolean | undefined>;

export async function cmdSchedules(args: string[]): Promise<number> {
  const { values, positionals } = parse('schedules', args, {
    cron: { type: 'string' },
    query: { type: 'string' },
    name: { type: 'string' },
    description: { type: 'string' },
    timezone: { type: 'string' },
    context: { type: 'string' },
    budget: { type: 'string' },
    timeout: { type: 'string' },
    reason: { type: 'string' },
    status: { type: 'string' },
    page: { type: 'string' },
    'page-size': { type: 'string' },
    json: { type: 'boolean' },
  });
  if (values.help) return (out(HELP.schedules), 0);
  const [first, ...rest] = positionals;
  const json = values.json === true;
  if (first === undefined) {
    onlyOptions('schedules (list)', values, ['status', 'page', 'page-size']);
    return list(connOf(values), values);
  }
  // `taskorch schedules <id>` is `schedules show <id>`.
  const sub = UUID.test(first) ? 'show' : first;
  const ids = UUID.test(first) ? positionals : rest;
  const one = () => oneArg(`schedules ${sub} <schedule_id>`, 'schedule id', ids);
  switch (sub) {
    case 'create':
      onlyOptions('schedules create', values, ['cron', 'query', 'name', 'description', 'timezone', 'context', 'budget', 'timeout']);
      noArgs('schedules create', rest);
      return create(connOf(values), values);
    case 'show':
      onlyOptions('schedules show', values, []);
      return show(connOf(values), one(), json);
    case 'pause':
    case 'resume':
      onlyOptions(`schedules ${sub}`, values, ['reason']);
      return control(connOf(values), sub, one(), values.reason, json);
    case 'runs':
      onlyOptions('schedules runs', values, ['page', 'page-size']);
      return runs(connOf(values), one(), values);
    case 'delete':
      onlyOptions('schedules delete', values, []);
      return remove(connOf(values), one(), json);
    default:
      throw new CliError(`unknown subcommand ${JSON.stringify(first)} of schedules; subcommands: ${SUBCOMMANDS.join(', ')} (see taskorch schedules --help)`, 2);
  }
}

const pathOf = (id: string) => `/api/v1/schedules/${encodeURIComponent(id)}`;

function pageQuery(values: Values, q = new URLSearchParams()): URLSearchParams {
  const page = positiveInt('page', values.page as string | undefined);
  const size = positiveInt('page-size', values['page-size'] as string | undefined);
  if (page === 0 || size === 0) throw new CliError('--page and --page-size start at 1', 2);
  if (page !== undefined) q.set('page', String(page));
  if (size !== undefined) q.set('page_size', String(size));
  return q;
}

/** `from-to of total` for a page of `n` rows. */
function pageLine(body: any, n: number, total: unknown): string {
  const from = ((body.page ?? 1) - 1) * (body.page_size ?? n) + 1;
  return `${from}-${from + n - 1} of ${total ?? n}`;
}

async function list(conn: Conn, values: Values): Promise<number> {
  const q = pageQuery(values);
  if (values.status !== undefined) {
    const st = String(values.status).trim().toUpperCase();
    if (st !== 'ACTIVE' && st !== 'PAUSED') throw new CliError(`--status is active or paused, got ${JSON.stringify(values.status)}`, 2);
    q.set('status', st);
  }
  const { body } = await call(conn, 'GET', `/api/v1/schedules${q.size ? `?${q}` : ''}`, 'schedules');
  if (values.json) return (printJson(body), 0);
  const rows: any[] = body.schedules ?? [];
  if (!rows.length) return (err('no schedules\n'), 0);
  table(
    ['SCHEDULE ID', 'STATUS', 'CRON', 'NEXT RUN', 'RUNS', 'NAME'],
    rows.map((s) => [
      String(s.id),
      String(s.status ?? '').toLowerCase(),
      `${s.cron_expression}${s.timezone && s.timezone !== 'UTC' ? ` ${s.timezone}` : ''}`,
      when(s.next_run_at),
      `${s.total_runs ?? 0} (${s.successful_runs ?? 0} ok, ${s.failed_runs ?? 0} failed)`,
      oneLine(s.name),
    ]),
  );
  err(paint('2', `${pageLine(body, rows.length, body.total)}\n`));
  return 0;
}

async function create(conn: Conn, values: Values): Promise<number> {
  const cron = String(values.cron ?? '').trim();
  const query = String(values.query ?? '').trim();
  if (!cron || !query)
    throw new CliError(
      'schedules create needs --cron and --query: taskorch schedules create --cron "0 9 * * *" --query "<text>" (see taskorch schedules --help)',
      2,
    );
  const request: Record<string, unknown> = {
    name: (values.name as string | undefined)?.trim() || oneLine(query).slice(0, DEFAULT_NAME_CHARS),
    cron_expression: cron,
    task_query: query,
  };
  if (values.description !== undefined) request.description = values.description;
  if (values.timezone !== undefined) request.timezone = values.timezone;
  if (values.context !== undefined) request.task_context = jsonObject('--context', String(values.context));
  const budget = positiveNumber('budget', values.budget as string | undefined);
  if (budget !== undefined) request.max_budget_per_run_usd = budget;
  const timeout = positiveInt('timeout', values.timeout as string | undefined);
  if (timeout === 0) throw new CliError('--timeout must be at least 1 second', 2);
  if (timeout !== undefined) request.timeout_seconds = timeout;
  const { body } = await call(conn, 'POST', '/api/v1/schedules', 'create schedule', request);
  if (values.json) return (printJson(body), 0);
  out(`${body.schedule_id}\n`);
  err(paint('2', `${body.message || 'schedule created'}; next run ${when(body.next_run_at) || '?'}\n`));
  return 0;
}

async function show(conn: Conn, id: string, json: boolean): Promise<number> {
  const { body: s } = await call(conn, 'GET', pathOf(id), `schedule ${id}`);
  if (json) return (printJson(s), 0);
  fields([
    ['schedule', s.id],
    ['name', s.name],
    ['status', String(s.status ?? '').toLowerCase()],
    ['cron', `${s.cron_expression} (${s.timezone || 'UTC'})`],
    ['query', s.task_query],
    ['context', s.task_context && Object.keys(s.task_context).length ? JSON.stringify(s.task_context) : ''],
    ['about', s.description],
    ['budget', typeof s.max_budget_per_run_usd === 'number' ? `$${s.max_budget_per_run_usd} per run` : ''],
    ['timeout', s.timeout_seconds !== undefined ? `${s.timeout_seconds} s` : ''],
    ['next run', when(s.next_run_at)],
    ['last run', when(s.last_run_at)],
    ['runs', `${s.total_runs ?? 0} (${s.successful_runs ?? 0} ok, ${s.failed_runs ?? 0} failed)`],
    ['created', when(s.created_at)],
  ]);
  return 0;
}

async function control(conn: Conn, action: 'pause' | 'resume', id: string, reason: unknown, json: boolean): Promise<number> {
  const { body } = await call(conn, 'POST', `${pathOf(id)}/${action}`, `${action} schedule ${id}`, reason !== undefined ? { reason } : {});
  if (json) return (printJson(body), 0);
  if (action === 'pause') out(`paused schedule ${id} at ${when(body.paused_at)}\n`);
  else out(`resumed schedule ${id}; next run ${when(body.next_run_at)}\n`);
  return 0;
}

async function runs(conn: Conn, id: string, values: Values): Promise<number> {
  const q = pageQuery(values);
  const { body } = await call(conn, 'GET', `${pathOf(id)}/runs${q.size ? `?${q}` : ''}`, `runs of schedule ${id}`);
  if (values.json) return (printJson(body), 0);
  const rows: any[] = body.runs ?? [];
  if (!rows.length) return (err(`no runs of schedule ${id} yet\n`), 0);
  table(
    ['TRIGGERED', 'STATUS', 'TASK ID', 'TOKENS', 'COST', 'DURATION', 'RESULT'],
    rows.map((r) => [
      when(r.triggered_at),
      statusWord(r.status),
      String(r.workflow_id || '-'),
      String(r.total_tokens ?? 0),
      typeof r.total_cost_usd === 'number' ? `$${r.total_cost_usd.toFixed(4)}` : '',
      duration(r.duration_ms),
      oneLine(r.error_message ? `error: ${r.error_message}` : (r.result ?? '')),
    ]),
  );
  err(paint('2', `${pageLine(body, rows.length, body.total_count)}\n`));
  return 0;
}

async function remove(conn: Conn, id: string, json: boolean): Promise<number> {
  const { body } = await call(conn, 'DELETE', pathOf(id), `delete schedule ${id}`);
  if (json) return (printJson(body), 0);
  out(`deleted schedule ${id}\n`);
  return 0;
}
