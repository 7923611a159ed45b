/** The help texts of `taskorch` and of each command. */
import { DEFAULT_URL } from './http.js';

export const USAGE = `Usage: taskorch <command> [options]

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

export const HELP: Record<string, string> = {
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
