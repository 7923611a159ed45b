/**
 * `taskorch`: the command line. The program is main.ts (package.json "bin", through
 * bin/taskorch.mjs; `node dist/cli/main.js` after a build).
 *
 *   taskorch start                   the service, in the foreground (same as src/main.ts)
 *   taskorch submit "<query>"        submit a task and print its answer as it streams
 *   taskorch status <task_id>        a task's status and result
 *   taskorch list                    recent tasks
 *   taskorch cancel <task_id>        cancel a queued or running task
 *
 * Every command but `start` is an HTTP client of a gateway: --url / TASKORCH_URL (default
 * http://localhost:8080) and --api-key / TASKORCH_API_KEY (sent as X-API-Key). Nothing of the
 * service is loaded unless `start` runs (the client commands use Node built-ins,
 * eventsource-parser for the event stream and the kernel's backoff for reconnecting).
 *
 * Output: results on stdout, progress and errors on stderr, so `taskorch submit ... > answer.txt`
 * keeps only the answer. Exit codes: 0 success; 1 a failed request, or a task that ended in
 * any status but completed; 2 a usage error; 130 interrupted.
 */
export { run } from './run.js';
export { CliError } from './errors.js';
