/**
 * The `bash` tool (src/tools/bash.ts): off unless enabled; when enabled, a command in the
 * session's workspace folder with a minimal environment, captured output, and its whole process
 * group killed at the time limit, on abort, and when the shell exits.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASH_DISABLED_MESSAGE, bashTool, type BashOptions } from '../src/tools/bash.js';
import { fileTools } from '../src/tools/files.js';
import { type ToolContext, ToolError } from '../src/tools/tool.js';
import { Workspace } from '../src/workspace/index.js';

let root: string;
let ws: Workspace;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'tools-bash-root-'));
  ws = new Workspace(root);
});
afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

const tool = (o: Partial<BashOptions> = {}) => bashTool({ enabled: true, workspace: ws, timeoutMs: 10_000, maxOutputBytes: 64 * 1024, ...o });
const ctx = (sessionId: string | undefined, signal = new AbortController().signal): ToolContext => ({ signal, sessionId });

async function refusal(p: Promise<unknown>): Promise<ToolError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, 'expected a ToolError').toBeInstanceOf(ToolError);
  return err as ToolError;
}

/** Whether a process exists and is not a zombie (a killed child may wait for a reaper). */
function alive(pid: number): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return false;
  }
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state !== 'Z' && state !== 'X';
}

/** Waits until every process is gone (a SIGKILL takes effect, the reaper catches up); the test's own timeout bounds it. */
async function expectDead(pids: number[]): Promise<void> {
  expect(pids.length).toBeGreaterThan(0);
  while (pids.some(alive)) await sleep(50);
}

async function pidsIn(file: string): Promise<number[]> {
  return (await readFile(file, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((s) => Number(s));
}

describe('bash: declaration and switch', () => {
  it('is dangerous, not retryable, in category code, with a required command of at most 10k characters', () => {
    const t = bashTool({ enabled: false, workspace: ws, timeoutMs: 30_000, maxOutputBytes: 1024 });
    expect(t).toMatchObject({ name: 'bash', category: 'code', dangerous: true, retryable: false });
    expect(t.parameters.required).toEqual(['command']);
    expect(t.parameters.properties.command.maxLength).toBe(10_000);
    expect(t.timeoutMs).toBeGreaterThanOrEqual(30_000);
  });

  it('disabled (TOOLS_ENABLE_BASH unset): every call fails with not_configured and runs nothing', async () => {
    const id = randomUUID();
    const err = await refusal(tool({ enabled: false }).run({ command: 'touch ran.txt' }, ctx(id)));
    expect(err.kind).toBe('not_configured');
    expect(err.message).toBe('bash is disabled: set TOOLS_ENABLE_BASH=1 to allow it for the developer role');
    expect(BASH_DISABLED_MESSAGE).toBe(err.message);
    expect(existsSync(join(root, id))).toBe(false);
  });

  it('needs a session and a command', async () => {
    const err = await refusal(tool().run({ command: 'true' }, ctx(undefined)));
    expect(err.kind).toBe('bad_arguments');
    expect(err.message).toMatch(/session/);
    expect((await refusal(tool().run({ command: '' }, ctx(randomUUID())))).kind).toBe('bad_arguments');
    expect((await refusal(tool().run({ command: 'x'.repeat(10_001) }, ctx(randomUUID())))).message).toMatch(/10000 characters/);
  });
});

describe('bash: enabled', () => {
  it('returns the exit code, stdout and stderr', async () => {
    const r = await tool().run({ command: 'echo out; echo err >&2; printf "é"; exit 3' }, ctx(randomUUID()));
    expect(r.output).toMatchObject({ exit_code: 3, stdout: 'out\né', stderr: 'err\n', timed_out: false, stdout_truncated: false, stderr_truncated: false });
    expect(r.text).toContain('exit code 3');
    const ok = await tool().run({ command: 'true' }, ctx(randomUUID()));
    expect(ok.output).toMatchObject({ exit_code: 0, stdout: '', stderr: '', timed_out: false });
  });

  it('runs in the session workspace (created if needed): a file written by bash is read by file_read, and listed', async () => {
    const id = randomUUID();
    const r = await tool().run({ command: 'pwd; echo "$HOME"; mkdir -p out && echo made > out/made.txt' }, ctx(id));
    const dir = await realpath(join(root, id));
    expect(r.output.stdout).toBe(`${dir}\n${dir}\n`);
    const files = Object.fromEntries(fileTools(ws).map((t) => [t.name, t]));
    const read = await files.file_read.run({ path: '/out/made.txt' }, ctx(id));
    expect(read.output.content).toBe('made\n');
    const listed = await ws.list(id, ['out'], false);
    expect(listed.files.map((f) => f.path)).toEqual(['/out/made.txt']);
    // And the other way round: file_write then bash.
    await files.file_write.run({ path: 'in.txt', content: 'from the agent' }, ctx(id));
    expect((await tool().run({ command: 'cat in.txt' }, ctx(id))).output.stdout).toBe('from the agent');
  });

  it('does not hand down the service environment', async () => {
    const secret = `s3cret-${randomUUID()}`;
    process.env.TOOLS_BASH_TEST_SECRET = secret;
    try {
      const r = await tool().run({ command: 'env; echo "v=${TOOLS_BASH_TEST_SECRET:-unset}" >&2' }, ctx(randomUUID()));
      const stdout = r.output.stdout as string;
      expect(stdout).not.toContain(secret);
      expect(r.output.stderr).toBe('v=unset\n');
      const names = stdout
        .split('\n')
        .filter((l) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(l))
        .map((l) => l.slice(0, l.indexOf('=')));
      // What bash itself adds (PWD, SHLVL, _) aside, only the three variables given.
      expect(names.filter((n) => !['PWD', 'SHLVL', '_', 'OLDPWD'].includes(n)).sort()).toEqual(['HOME', 'LANG', 'PATH']);
    } finally {
      delete process.env.TOOLS_BASH_TEST_SECRET;
    }
  });

  it('closes stdin', async () => {
    // An open stdin would keep `cat` waiting until the time limit.
    const r = await tool({ timeoutMs: 5_000 }).run({ command: 'cat; read -r line; echo "read=$? done"' }, ctx(randomUUID()));
    expect(r.output).toMatchObject({ stdout: 'read=1 done\n', timed_out: false });
  });

  it('keeps at most maxOutputBytes of stdout and of stderr, marked truncated', async () => {
    const r = await tool({ maxOutputBytes: 1000 }).run(
      { command: "head -c 200000 /dev/zero | tr '\\0' a; head -c 5000 /dev/zero | tr '\\0' b >&2; echo tail >&2" },
      ctx(randomUUID()),
    );
    expect(r.output.stdout).toBe('a'.repeat(1000));
    expect(r.output.stderr).toBe('b'.repeat(1000));
    expect(r.output).toMatchObject({ exit_code: 0, stdout_truncated: true, stderr_truncated: true });
    expect(r.text).toContain('truncated');
  });

  it('kills the command and its children at the time limit (sleep 30 & sleep 30; wait)', async () => {
    const id = randomUUID();
    const r = await tool({ timeoutMs: 1_000 }).run(
      { command: `echo started; sleep 30 & echo $! > pids; sh -c 'echo $$ >> pids; exec sleep 30'; wait` },
      ctx(id),
    );
    expect(r.output).toMatchObject({ timed_out: true, exit_code: null, signal: 'SIGKILL', stdout: 'started\n' });
    expect(r.text).toContain('timed out');
    const pids = await pidsIn(join(root, id, 'pids'));
    expect(pids).toHaveLength(2);
    await expectDead(pids);
  });

  it('kills background processes left behind when the shell exits', async () => {
    const id = randomUUID();
    // Waiting for the background sleep (which holds stdout) would end at the time limit instead.
    const r = await tool({ timeoutMs: 20_000 }).run({ command: 'sleep 30 & echo $! > pids; echo bye' }, ctx(id));
    expect(r.output).toMatchObject({ exit_code: 0, stdout: 'bye\n', timed_out: false });
    await expectDead(await pidsIn(join(root, id, 'pids')));
  });

  it('an abort (ctx.signal) kills the process group and fails the call', async () => {
    const id = randomUUID();
    const ac = new AbortController();
    const p = tool({ timeoutMs: 20_000 }).run({ command: 'sleep 30 & echo $! > pids; sleep 30 & echo $! >> pids; wait' }, ctx(id, ac.signal));
    const pidFile = join(root, id, 'pids');
    while (!existsSync(pidFile) || (await pidsIn(pidFile)).length < 2) await sleep(20);
    ac.abort(new Error('task cancelled'));
    const err = await refusal(p);
    expect(err.kind).toBe('limit');
    expect(err.message).toMatch(/cancelled/); // the abort ended it, not the 20 s limit
    await expectDead(await pidsIn(pidFile));
  });

  it('an already aborted call runs nothing', async () => {
    const id = randomUUID();
    const ac = new AbortController();
    ac.abort();
    await refusal(tool().run({ command: 'touch ran.txt' }, ctx(id, ac.signal)));
    expect(existsSync(join(root, id, 'ran.txt'))).toBe(false);
  });
});
