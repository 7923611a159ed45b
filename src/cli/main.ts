/**
 * The `taskorch` program (package.json "bin", through bin/taskorch.mjs): runs the command of
 * process.argv and sets the exit code. Loading this file runs it.
 */
import { CliError } from './errors.js';
import { err } from './output.js';
import { run } from './run.js';

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
