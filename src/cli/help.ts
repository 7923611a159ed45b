/** The help texts of `taskorch` and of each command. */
import { DEFAULT_URL } from './http.js';

export const USAGE = `Usage: taskorch <command> [options]

Commands:
  start                 run the service in the foreground (gateway, orchestrator, workers)
  submit <query>        submit a task and print its answer live as it streams
  status <task_id>      show a task's status and result
  list                  list recent tasks
  cancel <task_id>      cancel a queued or running task
  events <task_id>      a task's stored events
  timeline <task_id>    a task's timeline: its steps, agents, durations, retries
  review <task_id>      the research plan waiting for review: show, --feedback, --approve
  approve               pending approvals; approve <approval_id> --yes|--no decides one
  agents                the agent catalogue; agents show <id>, agents run <id> --input '<json>'
  sessions              sessions; sessions <session_id> shows one turn by turn
  schedules             scheduled tasks; schedules create|show|pause|resume|runs|delete

Every command but start takes --json: the gateway's JSON answer as is, on stdout.

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
  taskorch agents run keyword-extract --input '{"query": "running shoes"}'
  taskorch schedules create --cron "0 9 * * 1-5" --query "Summarise yesterday's news"
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
  cancel: `Usage: taskorch cancel <task_id> [--reason <text>] [--json]

Cancels a queued, running or paused task. A task that already ended cannot be cancelled
(the gateway answers 409 and taskorch exits with 1).

Options:
  --reason <text>       recorded with the cancellation
  --json                print the gateway's JSON
${CONNECTION_HELP}`,
  events: `Usage: taskorch events <task_id> [options]

Prints a task's stored events (its persistent history; submit follows the live stream),
oldest first: sequence number, time, type, agent and message. The gateway answers in pages;
all of them are read unless --limit says how many.

Options:
  --after <seq>         only events after this sequence number
  --limit <n>           at most this many events (default: all)
  --type <types>        only these types, comma-separated (e.g. AGENT_STARTED,TOOL_INVOKED)
  --json                the gateway's JSON, pages joined: {workflow_id, events, count}
${CONNECTION_HELP}`,
  timeline: `Usage: taskorch timeline <task_id> [--json]

Prints a task's deterministic timeline: the workflow's start, end and duration, then one row
per step with its agent, status, start (from the workflow's start), duration, retries and
events. Built from the step journal and the stored events.

Options:
  --json                print the gateway's JSON
${CONNECTION_HELP}`,
  review: `Usage: taskorch review <task_id> [--feedback <text> | --approve] [options]

The plan review of a research task submitted with context.require_review: the task waits
(paused) until its plan is approved. Without an option: shows the plan, its status
(reviewing or approved), round (at most 10) and version.

  --feedback <text>     send feedback (at most 10 KB): the model answers with an updated plan,
                        or with questions; round and version go up by one
  --approve             approve the current plan: the task resumes and researches it

Feedback and approval apply only to the version read (If-Match): the one you saw
(--if-match <n>) or, by default, the current one, read just before. When the plan changed in
between, nothing is done and taskorch says so (exit 1): look at it again, then retry.

Options:
  --if-match <version>  the version you reviewed (as shown); a newer plan is not overridden
  --history             show every round of the conversation, not only the current plan
  --json                print the gateway's JSON
${CONNECTION_HELP}`,
  approve: `Usage: taskorch approve [--session <id>] [--limit <n>]
       taskorch approve <approval_id> --yes|--no [--feedback <text>]

Without an approval id: lists your pending approvals (a task submitted with
context.require_approval waits before its first action; a tool call a tool policy names waits
before it runs), oldest first. With one: decides it. Approved, the task or tool runs; refused,
the tool is not run and the model is told why (--feedback), or the whole task ends failed.

Options:
  -y, --yes             approve
  -n, --no              refuse
  --feedback <text>     why (recorded; a refused tool call tells the model this)
  --modified-action <json>  with --yes: the arguments the tool runs with instead
  --task <task_id>      the approval's task (default: looked up in your pending approvals)
  --session <id>        list: only this session's approvals
  --limit <n>           list: at most this many (1-100, default 50)
  --json                print the gateway's JSON
${CONNECTION_HELP}`,
  agents: `Usage: taskorch agents [--json]
       taskorch agents show <agent_id> [--json]
       taskorch agents run <agent_id> [--input <json> | --input-file <file>] [options]

The agent catalogue: single-purpose agents, each a tool run with a checked input.
  agents                list them: id, category, cost per call, name
  agents show <id>      one agent and its input fields (required, defaults, allowed values)
  agents run <id>       run one as a task: follows its progress (stderr) until it ends, then
                        prints its output (JSON) on stdout; exit 0 when it completed, else 1

Options of run:
  --input <json>        the agent's input, a JSON object (default {})
  --input-file <file>   the input from a file ('-': stdin)
  --session <id>        run in this session
  --no-stream           only start it: print the task id and exit
  --json                every event as one JSON line, then the task's final status object
                        (with --no-stream: the gateway's answer)
${CONNECTION_HELP}`,
  sessions: `Usage: taskorch sessions [--limit <n>] [--offset <n>] [--json]
       taskorch sessions <session_id> [--limit <n>] [--json]

Without a session id: lists your sessions, most recently active first. With one (its id or
the name it was given with submit --session): its totals, then its history turn by turn (each
turn a task: the query, its status and answer).

Options:
  --limit <n>           list: sessions per page (1-100, default 20); one: the last n turns (default 100)
  --offset <n>          list: skip this many
  --json                print the gateway's JSON (one session: {session, history}, both answers)
${CONNECTION_HELP}`,
  schedules: `Usage: taskorch schedules [--status active|paused] [--page <n>] [--page-size <n>]
       taskorch schedules create --cron <expr> --query <text> [options]
       taskorch schedules show|pause|resume|runs|delete <schedule_id>

Tasks run on a schedule (5-field cron: minute hour day-of-month month day-of-week).
  schedules             list yours: status, cron, next run, runs so far
  create                make one; prints its id
  show <id>             one schedule in full (also: taskorch schedules <id>)
  pause <id>            stop running it (a paused one cannot be paused again: exit 1)
  resume <id>           run it again from its next cron time
  runs <id>             its past runs, newest first: status, task, tokens, cost, duration
  delete <id>           remove it for good

Options of create:
  --cron <expr>         when, e.g. "0 9 * * 1-5" (at most hourly by default)
  --query <text>        the task each run submits
  --name <name>         default: the start of the query
  --description <text>
  --timezone <zone>     IANA name, e.g. Europe/Paris (default UTC)
  --context <json>      the task's context, a JSON object
  --budget <usd>        maximum cost per run (default 10)
  --timeout <seconds>   per run (default 600)
Other options:
  --reason <text>       pause, resume: recorded with it
  --status <status>     list: active or paused
  --page <n>, --page-size <n>   list, runs: which page (page size: list 50, runs 20; at most 100)
  --json                print the gateway's JSON
${CONNECTION_HELP}`,
};
