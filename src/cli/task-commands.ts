/** `taskorch status`, `list` and `cancel`: one request each to the gateway, its answer printed. */
import { oneTaskId, parse, positiveInt } from './args.js';
import { CliError } from './errors.js';
import { HELP } from './help.js';
import { call, connOf } from './http.js';
import { err, modeWord, out, paint, statusWord, usageText } from './output.js';

export async function cmdStatus(args: string[]): Promise<number> {
  const { values, positionals } = parse('status', args, { json: { type: 'boolean' } });
  if (values.help) return (out(HELP.status), 0);
  const id = oneTaskId('status', positionals);
  const conn = connOf(values);
  const { body: t } = await call(conn, 'GET', `/api/v1/tasks/${encodeURIComponent(id)}`, `task ${id}`);
  if (values.json) return (out(`${JSON.stringify(t, null, 2)}\n`), 0);
  const rows: [string, unknown][] = [
    ['task', t.task_id],
    ['status', statusWord(t.status)],
    ['mode', modeWord(t.mode)],
    ['session', t.session_id],
    ['query', t.query],
    ['model', t.model_used ? `${t.model_used}${t.provider ? ` (${t.provider})` : ''}` : ''],
    ['usage', usageText(t.usage)],
    ['created', t.created_at],
    ['completed', t.completed_at],
    ['error', t.error],
  ];
  for (const [k, v] of rows) if (v !== undefined && v !== null && v !== '') out(`${k.padEnd(10)} ${String(v).replace(/\n/g, ' ')}\n`);
  if (t.result) out(`\n${String(t.result).replace(/\n?$/, '\n')}`);
  return 0;
}

export async function cmdList(args: string[]): Promise<number> {
  const { values, positionals } = parse('list', args, {
    limit: { type: 'string' },
    offset: { type: 'string' },
    status: { type: 'string' },
    session: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (values.help) return (out(HELP.list), 0);
  if (positionals.length) throw new CliError('list takes no arguments (see taskorch list --help)', 2);
  const conn = connOf(values);
  const q = new URLSearchParams();
  const limit = positiveInt('limit', values.limit);
  const offset = positiveInt('offset', values.offset);
  if (limit !== undefined) q.set('limit', String(limit));
  if (offset !== undefined) q.set('offset', String(offset));
  if (values.status)
    q.set(
      'status',
      values.status
        .trim()
        .toUpperCase()
        .replace(/^TASK_STATUS_/, ''),
    );
  if (values.session) q.set('session_id', values.session);
  const { body } = await call(conn, 'GET', `/api/v1/tasks${q.size ? `?${q}` : ''}`, 'list');
  if (values.json) return (out(`${JSON.stringify(body, null, 2)}\n`), 0);
  const tasks: any[] = body.tasks ?? [];
  if (!tasks.length) {
    err('no tasks\n');
    return 0;
  }
  const rows = tasks.map((t) => [
    String(t.task_id),
    statusWord(t.status),
    String(t.created_at ?? '')
      .replace('T', ' ')
      .replace(/\.\d+Z$/, 'Z'),
    String(t.query ?? '').replace(/\s+/g, ' '),
  ]);
  const w = [0, 1, 2].map((i) => Math.max(['TASK ID', 'STATUS', 'CREATED'][i].length, ...rows.map((r) => r[i].length)));
  const width = process.stdout.isTTY ? process.stdout.columns || 120 : Infinity;
  const line = (r: string[]) => {
    const head = `${r[0].padEnd(w[0])}  ${r[1].padEnd(w[1])}  ${r[2].padEnd(w[2])}  `;
    const room = Math.max(width - head.length, 20);
    return `${head}${r[3].length > room ? `${r[3].slice(0, room - 1)}…` : r[3]}\n`;
  };
  out(line(['TASK ID', 'STATUS', 'CREATED', 'QUERY']));
  for (const r of rows) out(line(r));
  const from = (offset ?? 0) + 1;
  err(paint('2', `${from}-${from + tasks.length - 1} of ${body.total_count ?? tasks.length}\n`));
  return 0;
}

export async function cmdCancel(args: string[]): Promise<number> {
  const { values, positionals } = parse('cancel', args, { reason: { type: 'string' }, json: { type: 'boolean' } });
  if (values.help) return (out(HELP.cancel), 0);
  const id = oneTaskId('cancel', positionals);
  const conn = connOf(values);
  const { body } = await call(
    conn,
    'POST',
    `/api/v1/tasks/${encodeURIComponent(id)}/cancel`,
    `cancel ${id}`,
    values.reason ? { reason: values.reason } : undefined,
  );
  if (values.json) out(`${JSON.stringify(body, null, 2)}\n`);
  else out(`${body.message || 'cancellation requested'} (task ${body.task_id ?? id})\n`);
  return body.success === false ? 1 : 0;
}
