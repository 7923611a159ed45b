/**
 * `taskorch review <task_id>`: the plan review of a research task that waits for a person
 * (submitted with context.require_review). Without options it shows the plan under review;
 * `--feedback "<text>"` sends feedback (the model answers with an updated plan, or questions);
 * `--approve` approves the plan and the task resumes with it.
 *
 * Feedback and approval are conditional (If-Match) on the version of the review: the one the
 * person saw (`--if-match <n>`, as `taskorch review` shows it) or else the current one, read
 * just before. A plan that changed in between is a 409 (412 from a proxy) told as such, so
 * nobody approves a plan they have not seen.
 */
import { oneTaskId, parse, positiveInt } from './args.js';
import { CliError } from './errors.js';
import { HELP } from './help.js';
import { apiErrorOfCli, call, connOf, type Conn } from './http.js';
import { err, fields, out, paint, printJson, when } from './output.js';

/** The spec's limit of a feedback message (UTF-8 bytes). */
const MAX_FEEDBACK_BYTES = 10 * 1024;
/** The spec's limit of review rounds. */
const MAX_ROUNDS = 10;
/** An approval answers at once; feedback waits for the model to write the updated plan. */
const APPROVE_TIMEOUT_MS = 30_000;
const FEEDBACK_TIMEOUT_MS = 180_000;

export async function cmdReview(args: string[]): Promise<number> {
  const { values, positionals } = parse('review', args, {
    feedback: { type: 'string' },
    approve: { type: 'boolean' },
    'if-match': { type: 'string' },
    history: { type: 'boolean' },
    json: { type: 'boolean' },
  });
  if (values.help) return (out(HELP.review), 0);
  const id = oneTaskId('review', positionals);
  const feedback = values.feedback;
  if (feedback !== undefined && values.approve) throw new CliError('review takes --feedback or --approve, not both (see taskorch review --help)', 2);
  if (feedback !== undefined && !feedback.trim()) throw new CliError('--feedback needs a text: taskorch review <task_id> --feedback "<text>"', 2);
  if (feedback !== undefined && Buffer.byteLength(feedback, 'utf8') > MAX_FEEDBACK_BYTES)
    throw new CliError(`--feedback is ${Buffer.byteLength(feedback, 'utf8')} bytes; the gateway takes at most 10 KB`, 2);
  const acting = feedback !== undefined || values.approve === true;
  const pinned = positiveInt('if-match', values['if-match']);
  if (pinned !== undefined && !acting) throw new CliError('--if-match goes with --feedback or --approve (see taskorch review --help)', 2);
  if (values.history && acting) throw new CliError('--history goes with showing the review, not with --feedback or --approve', 2);

  const conn = connOf(values);
  const path = `/api/v1/tasks/${encodeURIComponent(id)}/review`;
  const what = `review of task ${id}`;

  if (!acting) {
    const { body, res } = await call(conn, 'GET', path, what);
    if (values.json) return (printJson(body), 0);
    show(id, body, versionOf(res, body), values.history === true);
    return 0;
  }

  // The version the request is conditional on: the one given, or the current one.
  let version = pinned;
  if (version === undefined) {
    const { body, res } = await call(conn, 'GET', path, what);
    if (body.status === 'approved') throw new CliError(`${what}: the plan is already approved; follow the task with: taskorch status ${id}`);
    version = versionOf(res, body);
  }

  if (values.approve) {
    const { body } = await post(conn, id, path, what, { action: 'approve' }, version, APPROVE_TIMEOUT_MS);
    if (values.json) return (printJson(body), 0);
    out(`${body.message || 'plan approved'}\n`);
    err(paint('2', `approved version ${version}; the research runs now: taskorch status ${id}\n`));
    return 0;
  }

  const { body } = await post(conn, id, path, what, { action: 'feedback', message: feedback }, version, FEEDBACK_TIMEOUT_MS);
  if (values.json) return (printJson(body), 0);
  const plan = body.plan ?? {};
  const asks = plan.intent === 'feedback';
  err(paint('2', `round ${plan.round ?? '?'} of ${MAX_ROUNDS}, version ${plan.version ?? '?'}: ${asks ? 'the model asks' : 'updated plan'}\n`));
  out(`${String(plan.message ?? '').replace(/\n?$/, '\n')}`);
  err(paint('2', nextSteps(id, Number(plan.round), asks)));
  return 0;
}

/** The version of a review answer: its ETag (bare, quoted or weak), else the body's `version`. */
function versionOf(res: Response, body: any): number | undefined {
  const m = /^(?:W\/)?"?(\d+)"?$/.exec((res.headers.get('etag') ?? '').trim());
  if (m) return Number(m[1]);
  return typeof body?.version === 'number' ? body.version : undefined;
}

function show(id: string, s: any, version: number | undefined, history: boolean): void {
  const rounds: any[] = Array.isArray(s.rounds) ? s.rounds : [];
  fields([
    ['task', id],
    ['status', s.status],
    ['round', s.round !== undefined ? `${s.round} of ${MAX_ROUNDS}` : ''],
    ['version', version],
    ['query', s.query],
  ]);
  if (history) {
    for (const r of rounds) out(`\n[${r.role} ${when(r.timestamp)}]\n${String(r.message ?? '').replace(/\n?$/, '\n')}`);
  } else if (s.current_plan) {
    out(`\n${String(s.current_plan).replace(/\n?$/, '\n')}`);
  } else {
    // No actionable plan yet: the model's last turn holds its questions.
    const asked = [...rounds].reverse().find((r) => r.role === 'assistant');
    out(`\n(no plan yet${asked ? '; the model asks:' : ''})\n${asked ? String(asked.message).replace(/\n?$/, '\n') : ''}`);
  }
  if (s.status === 'reviewing') err(paint('2', `\n${nextSteps(id, Number(s.round), !s.current_plan)}`));
}

function nextSteps(id: string, round: number, asks: boolean): string {
  const approve = asks ? '' : `approve: taskorch review ${id} --approve`;
  const more = round >= MAX_ROUNDS ? '' : `${asks ? 'answer' : 'change it'}: taskorch review ${id} --feedback "<text>"`;
  return `${[approve, more].filter(Boolean).join(' · ')}\n`;
}

/** POST to the review with If-Match: the JSON answer, or a CliError a person can act on. */
async function post(conn: Conn, id: string, path: string, what: string, body: unknown, version: number | undefined, timeoutMs: number) {
  try {
    return await call(conn, 'POST', path, what, body, { headers: version !== undefined ? { 'If-Match': String(version) } : {}, timeoutMs });
  } catch (e) {
    const api = apiErrorOfCli(e);
    if (api && (api.status === 409 || api.status === 412)) throw new CliError(conflictMessage(api.message, api.status, id, what, version));
    throw e;
  }
}

/** A 409/412 of the review (the gateway's message, its status) as what happened and what to do next. */
function conflictMessage(message: string, status: number, id: string, what: string, version: number | undefined): string {
  const head = `${what}: ${message || 'conflict'} (HTTP ${status})`;
  if (/in progress/i.test(message)) return `${head}; someone's feedback is being answered: try again in a moment`;
  if (/maximum review rounds/i.test(message)) return `${head}; only approval is left: taskorch review ${id} --approve`;
  // A version mismatch (409 "Conflict: ...", or 412 Precondition Failed from a proxy).
  return `${head}; the plan changed since version ${version ?? '?'} was read: see the latest with taskorch review ${id}, then try again`;
}
