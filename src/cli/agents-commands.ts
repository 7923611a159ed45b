/**
 * `taskorch agents`: the agent catalogue (single-purpose agents, each a tool run with a
 * checked input). `agents` lists it, `agents show <agent_id>` shows one with its input fields,
 * `agents run <agent_id> --input '<json>'` (or --input-file) runs one: the run is a task, whose
 * stream is followed (progress on stderr) until it ends; then its result (the agent's output,
 * JSON) is printed on stdout. The exit code says whether the task completed.
 */
import { readFileSync } from 'node:fs';
import { jsonObject, oneArg, onlyOptions, parse, readStdin } from './args.js';
import { CliError } from './errors.js';
import { HELP } from './help.js';
import { call, connOf, type Conn } from './http.js';
import { err, fields, oneLine, out, paint, printJson, statusWord, table, usageText } from './output.js';
import { followStream } from './stream.js';

const SUBCOMMANDS = ['run', 'show'];

export async function cmdAgents(args: string[]): Promise<number> {
  const { values, positionals } = parse('agents', args, {
    input: { type: 'string' },
    'input-file': { type: 'string' },
    session: { type: 'string' },
    'no-stream': { type: 'boolean' },
    json: { type: 'boolean' },
  });
  if (values.help) return (out(HELP.agents), 0);
  const [sub, ...rest] = positionals;
  if (sub === undefined) {
    onlyOptions('agents (list)', values, []);
    return list(connOf(values), values.json === true);
  }
  if (sub === 'show') {
    onlyOptions('agents show', values, []);
    return show(connOf(values), oneArg('agents show <agent_id>', 'agent id', rest), values.json === true);
  }
  if (sub === 'run') {
    const id = oneArg('agents run <agent_id>', 'agent id', rest);
    if (values.input !== undefined && values['input-file'] !== undefined) throw new CliError('agents run takes --input or --input-file, not both', 2);
    const input = await inputOf(values.input, values['input-file']);
    return runAgent(connOf(values), id, input, { session: values.session, noStream: values['no-stream'] === true, json: values.json === true });
  }
  throw new CliError(`unknown subcommand ${JSON.stringify(sub)} of agents; subcommands: ${SUBCOMMANDS.join(', ')} (see taskorch agents --help)`, 2);
}

/** The agent's input: --input '<json>', --input-file <file> ('-' for stdin), or none ({}). */
async function inputOf(text: string | undefined, file: string | undefined): Promise<Record<string, unknown>> {
  if (text !== undefined) return jsonObject('--input', text);
  if (file === undefined) return {};
  let content: string;
  try {
    content = file === '-' ? await readStdin() : readFileSync(file, 'utf8');
  } catch (e) {
    throw new CliError(`cannot read --input-file ${JSON.stringify(file)}: ${(e as Error).message}`, 2);
  }
  return jsonObject(`--input-file ${file}`, content);
}

async function list(conn: Conn, json: boolean): Promise<number> {
  const { body } = await call(conn, 'GET', '/api/v1/agents', 'agents');
  if (json) return (printJson(body), 0);
  const agents: any[] = body.agents ?? [];
  if (!agents.length) return (err('no agents in the catalogue\n'), 0);
  table(
    ['AGENT ID', 'CATEGORY', 'COST', 'NAME'],
    agents.map((a) => [String(a.id), String(a.category ?? ''), costText(a.cost_per_call), oneLine(a.name)]),
  );
  const n = body.count ?? agents.length;
  err(paint('2', `${n} agent${n === 1 ? '' : 's'}; taskorch agents show <agent_id> for its input, taskorch agents run <agent_id> --input '<json>'\n`));
  return 0;
}

const costText = (c: unknown) => (typeof c === 'number' ? `$${c.toFixed(c && c < 0.01 ? 4 : 2)}` : '');

async function show(conn: Conn, id: string, json: boolean): Promise<number> {
  const { body: a } = await call(conn, 'GET', `/api/v1/agents/${encodeURIComponent(id)}`, `agent ${id}`);
  if (json) return (printJson(a), 0);
  fields([
    ['agent', a.id],
    ['name', a.name],
    ['category', a.category],
    ['tool', a.tool],
    ['cost', costText(a.cost_per_call)],
    ['about', a.description],
  ]);
  const required = new Set<string>(a.input_schema?.required ?? []);
  const props = Object.entries<any>(a.input_schema?.properties ?? {});
  out('\ninput:\n');
  if (!props.length) out('  (no fields)\n');
  for (const [name, p] of props) {
    const notes = [
      required.has(name) ? 'required' : '',
      p.default !== undefined ? `default ${JSON.stringify(p.default)}` : '',
      Array.isArray(p.enum) ? `one of ${p.enum.map((x: unknown) => JSON.stringify(x)).join(', ')}` : '',
      p.minimum !== undefined || p.maximum !== undefined ? `${p.minimum ?? ''}..${p.maximum ?? ''}` : '',
      p.description ? oneLine(p.description) : '',
    ].filter(Boolean);
    out(`  ${name}  ${p.type ?? ''}${notes.length ? `  ${notes.join('; ')}` : ''}\n`);
  }
  return 0;
}

async function runAgent(conn: Conn, id: string, input: Record<string, unknown>, o: { session?: string; noStream: boolean; json: boolean }): Promise<number> {
  const request: Record<string, unknown> = { input };
  if (o.session) request.session_id = o.session;
  if (!o.noStream) request.stream = true;
  const started = Date.now();
  const { body: sub, res } = await call(conn, 'POST', `/api/v1/agents/${encodeURIComponent(id)}`, `run agent ${id}`, request);
  const taskId: string = sub.task_id;
  if (o.noStream) {
    if (o.json) printJson(sub);
    else {
      out(`${taskId}\n`);
      err(paint('2', `agent ${sub.agent_id ?? id} runs as task ${taskId}; its result: taskorch status ${taskId}\n`));
    }
    return 0;
  }

  const streamPath: string = sub.stream_url ?? `/api/v1/stream/sse?workflow_id=${encodeURIComponent(taskId)}`;
  if (!o.json) err(paint('2', `agent ${sub.agent_id ?? id}: task ${taskId} (session ${res.headers.get('x-session-id') ?? '?'})\n`));
  const onSigint = () => {
    err(`\ninterrupted; task ${taskId} keeps running: taskorch status ${taskId} / taskorch cancel ${taskId}\n`);
    process.exit(130);
  };
  process.once('SIGINT', onSigint);
  const endStatus = await followStream(conn, taskId, streamPath, o.json);
  process.removeListener('SIGINT', onSigint);

  // The task's final record holds the agent's output (result, and response when it is JSON).
  const { body: task } = await call(conn, 'GET', `/api/v1/tasks/${encodeURIComponent(taskId)}`, `task ${taskId}`);
  const final = task.status ?? endStatus;
  if (o.json) {
    out(`${JSON.stringify(task)}\n`);
    return final === 'TASK_STATUS_COMPLETED' ? 0 : 1;
  }
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  if (final === 'TASK_STATUS_COMPLETED') {
    if (task.response !== undefined && task.response !== null) printJson(task.response);
    else if (task.result) out(String(task.result).replace(/\n?$/, '\n'));
    const details = [usageText(task.usage), `${secs} s`].filter(Boolean).join(', ');
    err(paint('32', `✓ ${statusWord(final)}`) + paint('2', ` · task ${taskId} · ${details}`) + '\n');
    return 0;
  }
  err(paint('31', `✗ ${statusWord(final)}`) + paint('2', ` · task ${taskId}${task.error ? ` · ${task.error}` : ''}`) + '\n');
  return 1;
}
