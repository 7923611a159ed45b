/**
 * `taskorch sessions`: the caller's sessions (multi-turn conversations), most recently active
 * first; `taskorch sessions <session_id>` shows one (UUID or the name a client gave it): its
 * totals, then its history turn by turn (each turn a task: the query, its status and answer).
 */
import { onlyOptions, parse, positiveInt } from './args.js';
import { CliError } from './errors.js';
import { HELP } from './help.js';
import { call, connOf, type Conn } from './http.js';
import { err, fields, oneLine, out, paint, printJson, statusWord, table, when } from './output.js';

export async function cmdSessions(args: string[]): Promise<number> {
  const { values, positionals } = parse('sessions', args, {
    limit: { type: 'string' },
    offset: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (values.help) return (out(HELP.sessions), 0);
  if (positionals.length > 1) throw new CliError('sessions takes at most one session id: taskorch sessions [<session_id>] (see taskorch sessions --help)', 2);
  const limit = positiveInt('limit', values.limit);
  if (limit === 0) throw new CliError('--limit must be at least 1', 2);
  if (positionals.length === 0) return list(connOf(values), limit, positiveInt('offset', values.offset), values.json === true);
  onlyOptions('sessions <session_id>', values, ['limit']);
  return show(connOf(values), positionals[0].trim(), limit, values.json === true);
}

async function list(conn: Conn, limit: number | undefined, offset: number | undefined, json: boolean): Promise<number> {
  const q = new URLSearchParams();
  if (limit !== undefined) q.set('limit', String(limit));
  if (offset !== undefined) q.set('offset', String(offset));
  const { body } = await call(conn, 'GET', `/api/v1/sessions${q.size ? `?${q}` : ''}`, 'sessions');
  if (json) return (printJson(body), 0);
  const sessions: any[] = body.sessions ?? [];
  if (!sessions.length) return (err('no sessions\n'), 0);
  table(
    ['SESSION ID', 'TASKS', 'TOKENS', 'LAST ACTIVE', 'TITLE'],
    sessions.map((s) => [
      String(s.session_id ?? s.id),
      String(s.task_count ?? 0),
      String(s.tokens_used ?? s.total_tokens ?? 0),
      when(s.last_activity_at ?? s.updated_at),
      oneLine(s.title || s.latest_task_query || ''),
    ]),
  );
  const from = (body.offset ?? offset ?? 0) + 1;
  err(paint('2', `${from}-${from + sessions.length - 1} of ${body.total_count ?? sessions.length}; one session: taskorch sessions <session_id>\n`));
  return 0;
}

async function show(conn: Conn, id: string, limit: number | undefined, json: boolean): Promise<number> {
  const path = `/api/v1/sessions/${encodeURIComponent(id)}`;
  const [{ body: s }, { body: h }] = await Promise.all([
    call(conn, 'GET', path, `session ${id}`),
    call(conn, 'GET', `${path}/history${limit !== undefined ? `?limit=${limit}` : ''}`, `history of session ${id}`),
  ]);
  // Two answers: the session's details and its history, each as the gateway sent it.
  if (json) return (printJson({ session: s, history: h }), 0);
  fields([
    ['session', s.session_id],
    ['id', s.id !== s.session_id ? s.id : ''],
    ['title', s.title],
    ['tasks', `${s.task_count ?? 0} (${s.successful_tasks ?? 0} completed, ${s.failed_tasks ?? 0} failed)`],
    ['tokens', `${s.tokens_used ?? s.total_tokens ?? 0}${typeof s.cost_usd === 'number' ? `, $${s.cost_usd.toFixed(4)}` : ''}`],
    ['created', when(s.created_at)],
    ['active', when(s.last_activity_at)],
  ]);
  const tasks: any[] = h.tasks ?? [];
  const total: number = h.total ?? tasks.length;
  const first = total - tasks.length + 1;
  tasks.forEach((t, i) => {
    out(`\n── turn ${first + i} · ${statusWord(t.status)} · ${when(t.created_at)} · task ${t.task_id}\n`);
    out(`> ${String(t.query ?? '').replace(/\n/g, '\n> ')}\n`);
    const answer = t.result || (t.error_message ? `error: ${t.error_message}` : '');
    if (answer) out(`${String(answer).replace(/\n?$/, '\n')}`);
  });
  if (!tasks.length) err('no turns yet\n');
  else if (first > 1) err(paint('2', `\nturns 1-${first - 1} left out; --limit <n> shows more\n`));
  return 0;
}
