/**
 * `taskorch`: the command line. The program is main.ts (package.json "bin", through
 * bin/taskorch.mjs; `node dist/cli/main.js` after a build).
 *
 *   taskorch start                   the service, in the foreground (same as src/main.ts)
 *   taskorch submit "<query>"        submit a task and print its answer as it streams
 *   taskorch status <task_id>        a task's status and result
 *   taskorch list                    recent tasks
 *   taskorch cancel <task_id>        cancel a queued or running task
 *   taskorch review <task_id>        a plan under review: show, --feedback, --approve
 *   taskorch approve [<id> --yes|--no]  pending approvals, or decide one
 *   taskorch agents [show|run]       the agent catalogue; run one with its input
 *   taskorch sessions [<id>]         sessions, or one's history by turn
 *   taskorch schedules [...]         list, create, show, pause, resume, runs, delete
 *   taskorch events <task_id>        a task's stored events
 *   taskorch timeline <task_id>      a task's steps over time
 *
 * Every command but `start` is an HTTP client of a gateway through the typed API client
 * (src/client): --url / TASKORCH_URL (default http://localhost:8080) and --api-key /
 * TASKORCH_API_KEY (sent as X-API-Key); `--json` prints the API's answer as is. Nothing of the
 * service is loaded unless `start` runs.
 *
 * Output: results on stdout, progress and errors on stderr, so `taskorch submit ... > answer.txt`
 * keeps only the answer. Exit codes: 0 success; 1 a failed request, or a task that ended in
 * any status but completed; 2 a usage error; 130 interrupted.
 */
export { run } from './run.js';
export { CliError } from './errors.js';
