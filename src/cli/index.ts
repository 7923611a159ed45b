/**
 * `taskorch`: the command line (package.json "bin", through bin/taskorch.mjs).
 *
 *   taskorch start                   the service, in the foreground (same as src/main.ts)
 *   taskorch submit "<query>"        submit a task and print its answer as it streams
 *   taskorch status <task_id>        a task's status and result
 *   taskorch list                    recent tasks
 *   taskorch cancel <task_id>        cancel a queued or running task
 *
 * Every command but `start` is an HTTP client of a gateway: --url / TASKORCH_URL (default
 * http://localhost:8080) and --api-key / TASKORCH_API_KEY (sent as X-API-Key). Node built-ins
 * only (fetch, util.parseArgs); nothing of the service is loaded unless `start` runs.
 *
 * Output: results on stdout, progress and errors on stderr, so `taskorch submit ... > answer.txt`
 * keeps only the answer. Exit codes: 0 success; 1 a failed request, or a task that ended in
 * any status but completed; 2 a usage error; 130 interrupted.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const DEFAULT_URL = 'http://localhost:8080';
const REQUEST_TIMEOUT_MS = 30_000;

class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

function version(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
}

// ---------------------------------------------------------------------------------------------
// Help

const USAGE = `Usage: taskorch <command> [options]

Commands:
  start                 run the service in the foreground (gateway, orchestrator, workers)
  submit <query>        submit a task and print its answer live as it streams
  status <task_id>      show a task's status and result
  list                  list recent tasks
  cancel <task_id>      cancel a queued or running task

Connection (every command but start):
  --url <url>           gateway URL (env TASKORCH_URL; default ${DEFAULT_URL})
  --api-key <key>       API key, sent as X-API-Key (env TASKORCH_API_KEY)

  -h, --help            this help; \`taskorch <command> --help\` for a command
  -v, --version         print the version

Examples:
  taskorch start
  taskorch submit "What is the capital of France?"
  taskorch list --status running
  taskorch cancel 6a53aab4-072d-4f6a-937a-1c9b3b9cecbf --reason "no longer needed"
`;

const CONNECTION_HELP = `
Connection:
  --url <url>           gateway URL (env TASKORCH_URL; default ${DEFAULT_URL})
  --api-key <key>       API key, sent as X-API-Key (env TASKORCH_API_KEY)
`;

const HELP: Record<string, string> = {
  start: `Usage: taskorch start [--port <n>] [--data-dir <dir>]

Runs the service in the foreground until Ctrl-C or SIGTERM: the HTTP gateway, the internal
RPC server, workers, archiver and scheduler (ROLES chooses). With nothing configured it starts
an embedded nats-server (needs the nats-server binary) and PGlite under DATA_DIR, and answers
with the offline provider. At a terminal it logs readable lines and ends start-up with a
banner naming its URLs; elsewhere it logs JSON lines (LOG_FORMAT=json|pretty overrides).

Options:
  --port <n>            gateway port (same as GATEWAY_PORT; default 8080)
  --data-dir <dir>      embedded NATS store, PGlite data, secrets (same as DATA_DIR; default ./data)

Everything else is configured by environment variables (see README, "Configuration"), e.g.
  LLM_BASE_URL, LLM_API_KEY, LLM_MODEL   use an OpenAI-compatible model
  NATS_URL, DATABASE_URL                 use an existing NATS (JetStream) / PostgreSQL
`,
  submit: `Usage: taskorch submit <query> [options]

Submits a task and follows its event stream: the model's answer is printed on stdout as it
arrives, progress lines on stderr. Exits when the task ends: 0 when it completed, 1 when it
failed, was cancelled or timed out. Without <query>, the query is read from stdin.

Options:
  --mode <mode>         simple, standard, complex or supervisor (default: auto-detect)
  --session <id>        continue a session (multi-turn); default: a new session
  --model-tier <tier>   small, medium or large
  --no-stream           only submit: print the task id and exit
  --json                print raw JSON (the submission, or one event per line)
${CONNECTION_HELP}`,
  status: `Usage: taskorch status <task_id> [--json]

Shows a task's status, mode, model, token usage, timestamps and result.

Options:
  --json                print the gateway's JSON
${CONNECTION_HELP}`,
  list: `Usage: taskorch list [options]

Lists tasks, newest first.

Options:
  --limit <n>           1-100 (default 20)
  --offset <n>          skip this many (default 0)
  --status <status>     queued, running, completed, failed, cancelled, timeout or paused
  --session <id>        only this session's tasks
  --json                print the gateway's JSON
${CONNECTION_HELP}`,
  cancel: `Usage: taskorch cancel <task_id> [--reason <text>]

Cancels a queued, running or paused task. A task that already ended cannot be cancelled
(the gateway answers 409 and taskorch exits with 1).

Options:
  --reason <text>       recorded with the cancellation
  --json                print the gateway's JSON
${CONNECTION_HELP}`,
};

// ---------------------------------------------------------------------------------------------
// HTTP

interface Conn {
  url: string;
  apiKey?: string;
}

function connOf(values: { url?: string; 'api-key'?: string }): Conn {
  const url = (values.url ?? process.env.TASKORCH_URL ?? '').trim() || DEFAULT_URL;
  try {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
  } catch {
    throw new CliError(`invalid --url / TASKORCH_URL ${JSON.stringify(url)}: expected http(s)://host:port`, 2);
  }
  const apiKey = (values['api-key'] ?? process.env.TASKORCH_API_KEY ?? '').trim() || undefined;
  return { url: url.replace(/\/+$/, ''), apiKey };
}

function headersOf(conn: Conn, extra: Record<string, string> = {}): Record<string, string> {
  return { ...(conn.apiKey ? { 'X-API-Key': conn.apiKey } : {}), 'User-Agent': `taskorch-cli/${version()}`, ...extra };
}

/** fetch, with network failures turned into a message a person can act on. */
async function send(conn: Conn, path: string, init: RequestInit = {}): Promise<Response> {
  try {
    return await fetch(`${conn.url}${path}`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS), ...init });
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } };
    if (e.name === 'TimeoutError') throw new CliError(`${conn.url} did not answer within ${REQUEST_TIMEOUT_MS / 1000} s`);
    const why = e.cause?.code ?? e.cause?.message ?? e.message;
    throw new CliError(
      `cannot reach the gateway at ${conn.url} (${why}). Is the service running (taskorch start)? Use --url or TASKORCH_URL for another address.`,
    );
  }
}

/** The JSON body of a 2xx answer; otherwise a CliError with the gateway's `error` message. */
async function jsonOf(res: Response, what: string): Promise<any> {
  const text = await res.text();
  let body: any;
  try {
    body = text ? JSON.parse(text) : {};
  } catch {
    body = undefined;
  }
  if (res.ok && body !== undefined) return body;
  const message = (body && typeof body.error === 'string' && body.error) || text.trim().slice(0, 300) || res.statusText;
  let hint = '';
  if (res.status === 401 || res.status === 403) hint = '; pass an API key with --api-key or TASKORCH_API_KEY';
  if (res.status === 429) hint = `; retry in ${res.headers.get('retry-after') ?? body?.retry_after ?? 'a few'} s`;
  throw new CliError(`${what}: ${message} (HTTP ${res.status})${hint}`);
}

async function call(conn: Conn, method: string, path: string, what: string, body?: unknown): Promise<{ body: any; res: Response }> {
  const res = await send(conn, path, {
    method,
    headers: headersOf(conn, body === undefined ? {} : { 'Content-Type': 'application/json' }),
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { body: await jsonOf(res, what), res };
}

// ---------------------------------------------------------------------------------------------
// Output helpers

const out = (s: string) => void process.stdout.write(s);
const err = (s: string) => void process.stderr.write(s);
const colorOn = process.stderr.isTTY === true && process.stderr.hasColors?.() === true;
const paint = (code: string, s: string) => (colorOn ? `\x1b[${code}m${s}\x1b[0m` : s);

/** TASK_STATUS_COMPLETED -> completed */
const statusWord = (s: unknown) =>
  String(s ?? 'unknown')
    .replace(/^TASK_STATUS_/, '')
    .toLowerCase();
const modeWord = (s: unknown) =>
  String(s ?? '')
    .replace(/^EXECUTION_MODE_/, '')
    .toLowerCase();

function usageText(u: any): string {
  if (!u || typeof u !== 'object') return '';
  const parts = [`${u.total_tokens ?? 0} tokens`];
  if (u.input_tokens !== undefined || u.output_tokens !== undefined) parts[0] += ` (${u.input_tokens ?? 0} in, ${u.output_tokens ?? 0} out)`;
  const cost = u.estimated_cost ?? u.cost_usd;
  if (typeof cost === 'number') parts.push(`$${cost.toFixed(4)}`);
  return parts.join(', ');
}

// ---------------------------------------------------------------------------------------------
// SSE

interface SseFrame {
  id?: string;
  event?: string;
  data: string;
}

/** Yields the frames of an SSE body (comments, i.e. heartbeats, are skipped). */
async function* sseFrames(body: ReadableStream<Uint8Array>): AsyncGenerator<SseFrame> {
  const dec = new TextDecoder();
  let buf = '';
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buf += dec.decode(chunk, { stream: true }).replace(/\r\n?/g, '\n');
    let i: number;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      const frame: SseFrame = { data: '' };
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line === '' || line.startsWith(':')) continue;
        const c = line.indexOf(':');
        const k = c < 0 ? line : line.slice(0, c);
        const v = c < 0 ? '' : line.slice(c + 1).replace(/^ /, '');
        if (k === 'id') frame.id = v;
        else if (k === 'event') frame.event = v;
        else if (k === 'data') data.push(v);
      }
      if (frame.event === undefined && frame.id === undefined && data.length === 0) continue;
      frame.data = data.join('\n');
      yield frame;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Commands

const CONNECTION_OPTIONS = {
  url: { type: 'string' },
  'api-key': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

function parse<O extends Record<string, { type: 'string' | 'boolean'; short?: string }>>(command: string, args: string[], options: O) {
  try {
    return parseArgs({ args, options: { ...CONNECTION_OPTIONS, ...options }, allowPositionals: true, strict: true });
  } catch (e) {
    throw new CliError(`${(e as Error).message}\nSee: taskorch ${command} --help`, 2);
  }
}

function positiveInt(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new CliError(`--${name} expects a whole number, got ${JSON.stringify(v)}`, 2);
  return Number(v);
}

function oneTaskId(command: string, positionals: string[]): string {
  if (positionals.length !== 1 || !positionals[0].trim())
    throw new CliError(`${command} needs exactly one task id: taskorch ${command} <task_id> (see taskorch ${command} --help)`, 2);
  return positionals[0].trim();
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function cmdStart(args: string[]): Promise<number | 'running'> {
  const { values, positionals } = parse('start', args, { port: { type: 'string' }, 'data-dir': { type: 'string' } });
  if (values.help) return (out(HELP.start), 0);
  if (positionals.length) throw new CliError('start takes no arguments (see taskorch start --help)', 2);
  if (values.url || values['api-key'])
    throw new CliError('--url and --api-key are for the client commands; start is configured by environment variables (see taskorch start --help)', 2);
  // The service reads its configuration from the environment (src/config/index.ts).
  if (values.port !== undefined) process.env.GATEWAY_PORT = String(positiveInt('port', values.port));
  if (values['data-dir'] !== undefined) process.env.DATA_DIR = values['data-dir'];
  await import('../main.js');
  return 'running';
}

async function cmdSubmit(args: string[]): Promise<number> {
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

  let midLine = false; // stdout holds text without its final newline
  let textAgent: string | undefined; // the agent whose deltas are being printed
  const agents = new Set<string>(); // agents that started: with more than one, text is labelled
  let streamedText = false; // deltas seen since the last completed message
  const status = (line: string) => {
    if (values.json) return;
    if (midLine) out('\n');
    midLine = false;
    err(`${line}\n`);
  };
  const text = (s: string) => {
    if (!s) return;
    out(s);
    midLine = !s.endsWith('\n');
  };

  let lastId: string | undefined;
  let ended = false;
  let endStatus: string | undefined;
  let failures = 0;
  while (!ended) {
    const ac = new AbortController();
    let streamRes: Response;
    try {
      streamRes = await fetch(`${conn.url}${streamPath}`, {
        headers: headersOf(conn, { Accept: 'text/event-stream', ...(lastId ? { 'Last-Event-ID': lastId } : {}) }),
        signal: ac.signal,
      });
    } catch {
      streamRes = undefined as unknown as Response;
    }
    if (streamRes && !streamRes.ok) await jsonOf(streamRes, `stream of task ${taskId}`);
    try {
      if (streamRes?.body) {
        for await (const f of sseFrames(streamRes.body)) {
          failures = 0;
          if (f.id) lastId = f.id;
          if (f.event === 'done') {
            ended = true;
            break;
          }
          if (f.event === 'error') break; // the gateway dropped a slow reader: resume from lastId
          let e: any;
          try {
            e = JSON.parse(f.data);
          } catch {
            continue;
          }
          if (values.json) out(`${JSON.stringify(e)}\n`);
          switch (e.type) {
            case 'LLM_PARTIAL': {
              if (values.json) break;
              if (textAgent !== e.agent_id && (midLine || agents.size > 1)) status(paint('36', `▸ ${e.agent_id}`));
              textAgent = e.agent_id;
              text(String(e.payload?.delta ?? e.delta ?? ''));
              streamedText = true;
              break;
            }
            case 'LLM_OUTPUT':
              if (values.json) break;
              if (!streamedText) text(String(e.message ?? ''));
              if (midLine) text('\n');
              streamedText = false;
              textAgent = undefined;
              break;
            case 'LLM_PROMPT':
              break;
            case 'AGENT_STARTED':
              agents.add(String(e.agent_id));
              status(paint('2', `· ${e.message || e.type}`));
              break;
            case 'STREAM_END':
              endStatus = e.payload?.status;
              break;
            case 'ERROR_OCCURRED':
              status(paint('31', `✗ ${e.message || 'error'}`));
              break;
            case 'REPLAY_GAP':
              status(paint('33', '· some earlier events are no longer retained by the gateway'));
              break;
            default:
              status(paint('2', `· ${e.message || e.type}`));
          }
        }
      }
    } catch {
      // Connection lost mid-stream: resume below from the last event id.
    } finally {
      ac.abort();
    }
    if (!ended && endStatus) ended = true; // STREAM_END seen, the `done` frame lost with the connection
    if (ended) break;
    if (++failures > 10) throw new CliError(`lost the stream of task ${taskId}; it may still be running: taskorch status ${taskId}`);
    await new Promise((r) => setTimeout(r, Math.min(500 * failures, 3000)));
  }
  process.removeListener('SIGINT', onSigint);
  if (midLine) out('\n');
  midLine = false;

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

async function cmdStatus(args: string[]): Promise<number> {
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

async function cmdList(args: string[]): Promise<number> {
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

async function cmdCancel(args: string[]): Promise<number> {
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

const COMMANDS: Record<string, (args: string[]) => Promise<number | 'running'>> = {
  start: cmdStart,
  submit: cmdSubmit,
  status: cmdStatus,
  list: cmdList,
  cancel: cmdCancel,
};

async function run(argv: string[]): Promise<number | 'running'> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '-h' || command === '--help' || command === 'help') {
    if (command === 'help' && rest[0] && HELP[rest[0]]) out(HELP[rest[0]]);
    else (command === undefined ? err : out)(USAGE);
    return command === undefined ? 2 : 0;
  }
  if (command === '-v' || command === '--version' || command === 'version') return (out(`taskorch ${version()}\n`), 0);
  const fn = COMMANDS[command];
  if (!fn) throw new CliError(`unknown command ${JSON.stringify(command)}; commands: ${Object.keys(COMMANDS).join(', ')} (taskorch --help)`, 2);
  return fn(rest);
}

// `taskorch list | head`: a closed pipe ends the output quietly.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw e;
});

run(process.argv.slice(2)).then(
  (code) => {
    if (code !== 'running') process.exitCode = code;
  },
  (e: unknown) => {
    if (e instanceof CliError) {
      err(`taskorch: ${e.message}\n`);
      process.exitCode = e.exitCode;
    } else {
      err(`taskorch: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exitCode = 1;
    }
  },
);
