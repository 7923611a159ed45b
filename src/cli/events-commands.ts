/**
 * `taskorch events <task_id>`: a task's stored events (its persistent history, not the live
 * stream), oldest first, read page by page (after_seq + limit) until the end or --limit; and
 * `taskorch timeline <task_id>`: the task's deterministic timeline (its steps with agent,
 * status, start, duration, retries) as a table.
 */
import { oneTaskId, parse, positiveInt } from './args.js';
import { CliError } from './errors.js';
import { HELP } from './help.js';
import { call, connOf } from './http.js';
import { duration, err, fields, oneLine, out, paint, printJson, statusWord, table, when } from './output.js';

/** Events asked for per request (the gateway's default page; it allows up to 5000). */
const PAGE = 1000;

export async function cmdEvents(args: string[]): Promise<number> {
  const { values, positionals } = parse('events', args, {
    after: { type: 'string' },
    limit: { type: 'string' },
    type: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (values.help) return (out(HELP.events), 0);
  const id = oneTaskId('events', positionals);
  const limit = positiveInt('limit', values.limit);
  if (limit === 0) throw new CliError('--limit must be at least 1', 2);
  const types = values.type
    ?.split(',')
    .map((s) => s.trim().toUpperCase())
    .filter(Boolean);
  if (values.type !== undefined && !types?.length) throw new CliError('--type expects event types, e.g. --type AGENT_STARTED,TOOL_INVOKED', 2);
  const conn = connOf(values);

  let after = positiveInt('after', values.after) ?? 0;
  const events: any[] = [];
  let workflowId = id;
  let full: boolean; // the last page was full: more may follow
  for (;;) {
    const want = limit === undefined ? PAGE : Math.min(PAGE, limit - events.length);
    const { body } = await call(conn, 'GET', `/api/v1/tasks/${encodeURIComponent(id)}/events?after_seq=${after}&limit=${want}`, `events of task ${id}`);
    const page: any[] = body.events ?? [];
    workflowId = body.workflow_id ?? workflowId;
    events.push(...page);
    full = page.length >= want;
    if (!full || (limit !== undefined && events.length >= limit)) break;
    after = Number(page.at(-1)?.seq ?? after + page.length);
  }
  const shown = types ? events.filter((e) => types.includes(String(e.type))) : events;

  // The gateway's shape, its pages joined: {workflow_id, events, count}.
  if (values.json) return (printJson({ workflow_id: workflowId, events: shown, count: shown.length }), 0);
  if (!shown.length) err(events.length ? 'no events of those types\n' : 'no events stored for this task (yet)\n');
  else
    table(
      ['SEQ', 'TIME', 'TYPE', 'AGENT', 'MESSAGE'],
      shown.map((e) => [String(e.seq ?? ''), clock(e.timestamp), String(e.type ?? ''), String(e.agent_id ?? ''), messageOf(e)]),
    );
  const last = events.at(-1)?.seq;
  if (full && limit !== undefined && last !== undefined) err(paint('2', `more may follow: taskorch events ${id} --after ${last}\n`));
  return 0;
}

/** `2024-05-01T10:00:00.123Z` -> `10:00:00.123` */
const clock = (ts: unknown) => /T(\d\d:\d\d:\d\d(?:\.\d+)?)/.exec(String(ts ?? ''))?.[1] ?? String(ts ?? '');

/** The event's message, or the text it carries (a streamed delta). */
function messageOf(e: any): string {
  if (e.message) return oneLine(e.message);
  const delta = e.payload?.delta;
  return typeof delta === 'string' ? JSON.stringify(delta) : '';
}

export async function cmdTimeline(args: string[]): Promise<number> {
  const { values, positionals } = parse('timeline', args, { json: { type: 'boolean' } });
  if (values.help) return (out(HELP.timeline), 0);
  const id = oneTaskId('timeline', positionals);
  const { body: t } = await call(connOf(values), 'GET', `/api/v1/tasks/${encodeURIComponent(id)}/timeline`, `timeline of task ${id}`);
  if (values.json) return (printJson(t), 0);
  fields([
    ['task', t.task_id ?? t.workflow_id ?? id],
    ['status', statusWord(t.status)],
    ['created', when(t.created_at)],
    ['started', when(t.started_at)],
    ['ended', when(t.ended_at)],
    ['duration', duration(t.duration_ms)],
    ['source', t.source === 'journal' ? 'step journal and events' : t.source === 'events' ? 'events only' : t.source],
  ]);
  const steps: any[] = t.steps ?? [];
  out('\n');
  if (!steps.length) err('no steps recorded (yet)\n');
  else {
    const origin = Date.parse(t.started_at ?? t.created_at ?? '');
    const offset = (s: unknown) => {
      const at = Date.parse(String(s ?? ''));
      return Number.isFinite(at) && Number.isFinite(origin) ? `+${((at - origin) / 1000).toFixed(3)} s` : '';
    };
    table(
      ['#', 'STEP', 'AGENT', 'STATUS', 'START', 'DURATION', 'RETRIES', 'EVENTS'],
      steps.map((s, i) => [
        String(i + 1),
        String(s.name ?? ''),
        String(s.agent ?? '-'),
        String(s.status ?? ''),
        offset(s.started_at),
        duration(s.duration_ms),
        String(s.retries ?? 0),
        s.first_seq != null ? `${s.event_count ?? 0} (seq ${s.first_seq}-${s.last_seq})` : String(s.event_count ?? 0),
      ]),
    );
  }
  const st = t.stats ?? {};
  err(paint('2', `${st.steps ?? steps.length} steps, ${st.events ?? '?'} events, ${st.retries ?? 0} retries\n`));
  return 0;
}
