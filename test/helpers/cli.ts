/**
 * The `taskorch` CLI as the tests run it: a child process of the TypeScript sources (tsx) from
 * the repository's root, with only PATH and HOME of this environment plus what the test gives
 * (an undefined value leaves a variable out).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Starts `taskorch <args>`: the process, its output so far (`live`), and its end (`done`). */
export function spawnCli(args: string[], env: Record<string, string | undefined>) {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    cwd: ROOT,
    env: Object.fromEntries(Object.entries({ PATH: process.env.PATH, HOME: process.env.HOME, ...env }).filter(([, v]) => v !== undefined)) as Record<
      string,
      string
    >,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const live: CliRun = { code: null, stdout: '', stderr: '' };
  proc.stdout.on('data', (d) => (live.stdout += d));
  proc.stderr.on('data', (d) => (live.stderr += d));
  const done = new Promise<CliRun>((res) => proc.once('close', (code) => res({ ...live, code })));
  return { proc, live, done };
}
