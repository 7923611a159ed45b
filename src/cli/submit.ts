/**
 * `taskorch submit`: submits a task and, unless --no-stream, follows its stream (stream.ts)
 * and ends with the task's final record; the exit code says whether it completed.
 */
import { parse, readStdin } from './args.js';
import { CliError } from './errors.js';
import { HELP } from './help.js';
import { call, connOf } from './http.js';
import { err, out, paint, statusWord, usageText } from './output.js';
import { followStream } from './stream.js';

export async function cmdSubmit(args: string[]): Promise<number> {
  const { values, positionals } = parse('submit', args, {
    mode: { type: 'string' },
    session: { type: 'string' },
    'model-tier': { type: 'string' },
    'no-stream': { type: 'boolean' },
    json: { type: 'boolean' },
  });
  if (values.help) return (out(HELP.submit), 0);
  const conn = connOf(values);
  let query = positionals.join(' ').trim();
  if (!query && !process.stdin.isTTY) query = (await readStdin()).trim();
  if (!query) throw new CliError('submit needs a query: taskorch submit "<query>" (see taskorch submit --help)', 2);
  const request: Record<string, unknown> = { query };
  if (values.mode) request.mode = values.mode.toLowerCase();
  if (values.session) request.session_id = values.session;
  if (values['model-tier']) request.model_tier = values['model-tier'].toLowerCase();

  if (values['no-stream']) {
    const { body, res } = await call(conn, 'POST', '/api/v1/tasks', 'submit', request);
    if (values.json) out(`${JSON.stringify(body)}\n`);
    else {
      out(`${body.task_id}\n`);
      err(paint('2', `submitted (session ${res.headers.get('x-session-id') ?? '?'}); follow it with: taskorch status ${body.task_id}\n`));
    }
    return 0;
  }

  const started = Date.now();
  const { body: sub, res } = await call(conn, 'POST', '/api/v1/tasks/stream', 'submit', request);
  const taskId: string = sub.task_id;
  const streamPath: string = sub.stream_url ?? `/api/v1/stream/sse?workflow_id=${encodeURIComponent(sub.workflow_id)}`;
  if (!values.json) err(paint('2', `task ${taskId} (session ${res.headers.get('x-session-id') ?? '?'})\n`));

  // Ctrl-C leaves the task running on the server: say how to find it again.
  const onSigint = () => {
    err(`\ninterrupted; task ${taskId} keeps running: taskorch status ${taskId} / taskorch cancel ${taskId}\n`);
    process.exit(130);
  };
  process.once('SIGINT', onSigint);
  const endStatus = await followStream(conn, taskId, streamPath, values.json === true);
  process.removeListener('SIGINT', onSigint);

  // The task's final record: the status that decides the exit code, model and usage.
  const { body: task } = await call(conn, 'GET', `/api/v1/tasks/${encodeURIComponent(taskId)}`, `task ${taskId}`);
  const final = task.status ?? endStatus;
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  if (!values.json) {
    const details = [task.model_used ? `${task.model_used}${task.provider ? ` (${task.provider})` : ''}` : '', usageText(task.usage), `${secs} s`]
      .filter(Boolean)
      .join(', ');
    if (final === 'TASK_STATUS_COMPLETED') err(paint('32', `✓ ${statusWord(final)}`) + paint('2', ` · task ${taskId} · ${details}`) + '\n');
    else err(paint('31', `✗ ${statusWord(final)}`) + paint('2', ` · task ${taskId}${task.error ? ` · ${task.error}` : ''}`) + '\n');
  }
  return final === 'TASK_STATUS_COMPLETED' ? 0 : 1;
}
