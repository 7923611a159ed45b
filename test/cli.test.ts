/**
 * The `taskorch` CLI (src/cli/main.ts) as a person runs it: a child process talking to a
 * running service over HTTP, with authentication on (the API key from flags or environment).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startTestApp, waitFor, type TestApp } from './helpers/app.js';
import { spawnCli } from './helpers/cli.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OFFLINE = '[offline provider: deterministic response, no language model was called]';

let t: TestApp;
let apiKey: string;
beforeAll(async () => {
  // Paced offline answers (a word every 6 ms), so the CLI shows a live stream.
  t = await startTestApp({ GATEWAY_SKIP_AUTH: '0', PASSWORD_SCRYPT_N: '1024', OFFLINE_LLM_CHUNK_DELAY_MS: '6', PARTIAL_CHUNK_CHARS: '64' });
  const r = await fetch(`${t.base}/api/v1/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: `cli-${Date.now()}-${process.pid}@example.com`, password: 'correct horse battery', name: 'Cli' }),
  });
  expect(r.status).toBe(201);
  apiKey = (await json(r)).api_key;
});
afterAll(async () => {
  await t?.stop();
});

/** Starts `taskorch <args>`; `env` replaces the defaults (TASKORCH_URL, TASKORCH_API_KEY of the test user). */
function start(args: string[], env: Record<string, string | undefined> = {}) {
  return spawnCli(args, { TASKORCH_URL: t.base, TASKORCH_API_KEY: apiKey, ...env });
}

const cli = (args: string[], env?: Record<string, string | undefined>) => start(args, env).done;

describe('taskorch submit', () => {
  it('streams the answer to stdout, progress to stderr, and ends with the completed status (exit 0)', async () => {
    const r = await cli(['submit', 'What is the capital of France?']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(OFFLINE);
    expect(r.stdout).toContain('What is the capital of France?');
    // The answer arrives as several deltas (64-character chunks) joined back into one text.
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines[0]).toMatch(/^task [0-9a-f-]{36} \(session [^)]+\)$/);
    expect(lines).toContain('· Workflow started');
    expect(lines.at(-1)).toMatch(/^✓ completed · task [0-9a-f-]{36} · offline-deterministic \(offline\), \d+ tokens/);
  });

  it('--no-stream prints only the task id; status shows the finished task; list includes it', async () => {
    const sub = await cli(['submit', '--no-stream', '--mode', 'simple', 'Name three primary colours']);
    expect(sub.code, sub.stderr).toBe(0);
    const id = sub.stdout.trim();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    await waitFor(
      async () => (await json(await fetch(`${t.base}/api/v1/tasks/${id}`, { headers: { 'X-API-Key': apiKey } }))).status === 'TASK_STATUS_COMPLETED',
      20_000,
      100,
    );

    const st = await cli(['status', id]);
    expect(st.code, st.stderr).toBe(0);
    expect(st.stdout).toMatch(new RegExp(`^task\\s+${id}$`, 'm'));
    expect(st.stdout).toMatch(/^status\s+completed$/m);
    expect(st.stdout).toMatch(/^mode\s+simple$/m);
    expect(st.stdout).toContain(OFFLINE);

    const asJson = JSON.parse((await cli(['status', id, '--json'])).stdout);
    expect(asJson).toMatchObject({ task_id: id, status: 'TASK_STATUS_COMPLETED' });

    const list = await cli(['list', '--limit', '5', '--status', 'completed']);
    expect(list.code, list.stderr).toBe(0);
    const rows = list.stdout.trim().split('\n');
    expect(rows[0]).toMatch(/^TASK ID\s+STATUS\s+CREATED\s+QUERY$/);
    expect(rows.find((l) => l.startsWith(id))).toMatch(/completed .*Name three primary colours$/);
    const listed = JSON.parse((await cli(['list', '--json', '--limit', '100'])).stdout);
    expect(listed.tasks.map((x: { task_id: string }) => x.task_id)).toContain(id);
  });

  it('reads the query from stdin when none is given', async () => {
    const p = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'submit'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TASKORCH_URL: t.base, TASKORCH_API_KEY: apiKey },
    });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.stdin.end('a question from stdin');
    const code = await new Promise((r) => p.once('close', r));
    expect(code).toBe(0);
    expect(out).toContain('"a question from stdin"');
  });
});

describe('taskorch cancel', () => {
  // A slower service of its own (same database, so the same API key): a complex task of four
  // steps, each answer streamed a word per 40 ms (~4 s per answer), runs ~20 s, far longer than a CLI
  // process takes to start on a loaded machine.
  let slow: TestApp;
  beforeAll(async () => {
    slow = await startTestApp({ GATEWAY_SKIP_AUTH: '0', PASSWORD_SCRYPT_N: '1024', OFFLINE_LLM_CHUNK_DELAY_MS: '40', PARTIAL_CHUNK_CHARS: '64' });
  });
  afterAll(async () => {
    await slow?.stop();
  });

  it('cancels a running task; the submit following it ends with the cancelled status (exit 1)', async () => {
    const at = { TASKORCH_URL: slow.base };
    const sub = start(['submit', '--mode', 'complex', 'Research the topic. Then compare the options. Then pick one. And then write it up.'], at);
    const id = await waitFor(async () => /^task ([0-9a-f-]{36})/.exec(sub.live.stderr)?.[1], 20_000, 50);
    await waitFor(async () => sub.live.stdout.includes(OFFLINE), 20_000, 50); // running: text is streaming

    const c = await cli(['cancel', id, '--reason', 'changed my mind'], at);
    expect(c.code, c.stderr).toBe(0);
    expect(c.stdout).toContain(id);

    const r = await sub.done;
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n').at(-1)).toMatch(new RegExp(`^✗ cancelled · task ${id}`));
    const st = await cli(['status', id], at);
    expect(st.stdout).toMatch(/^status\s+cancelled$/m);

    // A finished task cannot be cancelled: the gateway's 409 message, exit 1.
    const again = await cli(['cancel', id], at);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^taskorch: cancel [0-9a-f-]{36}: .*cannot be cancelled.*\(HTTP 409\)$/m);
  });
});

describe('errors a person can act on', () => {
  it('an unknown task id: "not found", exit 1 (status and cancel)', async () => {
    const id = '00000000-0000-4000-8000-000000000000';
    for (const args of [
      ['status', id],
      ['cancel', id],
    ]) {
      const r = await cli(args);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/^taskorch: .*00000000-0000-4000-8000-000000000000: Task not found \(HTTP 404\)\n$/);
    }
  });

  it('no API key: 401 with a hint; --api-key overrides the environment', async () => {
    const denied = await cli(['list'], { TASKORCH_API_KEY: undefined });
    expect(denied.code).toBe(1);
    expect(denied.stderr).toMatch(/HTTP 401.*--api-key or TASKORCH_API_KEY/);
    const ok = await cli(['list', '--limit', '1', '--api-key', apiKey], { TASKORCH_API_KEY: 'sk_wrong' });
    expect(ok.code, ok.stderr).toBe(0);
    const flagUrl = await cli(['list', '--limit', '1', '--url', t.base], { TASKORCH_URL: 'http://127.0.0.1:9' });
    expect(flagUrl.code, flagUrl.stderr).toBe(0);
  });

  it('no service at the URL: says so, exit 1', async () => {
    const r = await cli(['list'], { TASKORCH_URL: 'http://127.0.0.1:9' });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^taskorch: cannot reach the gateway at http:\/\/127\.0\.0\.1:9 .*taskorch start/);
  });

  it('usage errors exit 2; --help exits 0', { timeout: 60_000 }, async () => {
    const usage = await Promise.all([['frobnicate'], ['status'], ['list', '--limit', 'many'], ['submit', '--bogus', 'x'], []].map((a) => cli(a)));
    expect(usage.map((r) => r.code)).toEqual([2, 2, 2, 2, 2]);
    expect(usage[0].stderr).toMatch(/^taskorch: unknown command "frobnicate"; commands: start, submit, status, list, cancel/);
    const cmds = ['submit', 'status', 'list', 'cancel', 'start'];
    const help = await Promise.all([...cmds.map((c) => cli([c, '--help'])), cli(['--help'])]);
    cmds.forEach((c, i) => {
      expect(help[i].code).toBe(0);
      expect(help[i].stdout).toMatch(new RegExp(`^Usage: taskorch ${c}`));
    });
    expect(help[5].stdout).toMatch(/^Usage: taskorch <command>/);
  });
});

describe('taskorch start', () => {
  it('runs the service on the embedded defaults; pretty logs end with a banner naming the URLs; SIGTERM stops it', { timeout: 90_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'taskorch-cli-start-'));
    try {
      const svc = start(['start', '--port', '0', '--data-dir', dataDir], {
        TASKORCH_URL: undefined,
        TASKORCH_API_KEY: undefined,
        LOG_FORMAT: 'pretty',
        GATEWAY_HOST: '127.0.0.1',
        ORCHESTRATOR_GRPC_PORT: '0',
        LLM_SERVICE_PORT: '0',
        AGENT_GRPC_PORT: '0',
      });
      const api = await waitFor(
        async () => {
          if (svc.live.stdout.includes('Ctrl-C stops the service')) return /API\s+(http:\/\/localhost:\d+)\/api\/v1\/tasks/.exec(svc.live.stdout)?.[1];
          if (svc.proc.exitCode !== null) throw new Error(`start exited ${svc.proc.exitCode}: ${svc.live.stdout}${svc.live.stderr}`);
          return undefined;
        },
        60_000,
        100,
      );
      const out = svc.live.stdout;
      // Readable lines, not JSON: `HH:MM:SS.mmm LEVEL message key=value`.
      expect(out).not.toMatch(/^\{/m);
      expect(out).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}ready: http:\/\/localhost:\d+ .*gateway=\d+/m);
      expect(out).toMatch(new RegExp(`OpenAPI\\s+${api}/openapi.json`));
      expect(out).toMatch(/Internal RPC\s+127\.0\.0\.1:\d+ \(Connect, gRPC, gRPC-Web/);
      expect(out).toMatch(/Embedded\s+nats-server with JetStream at nats:\/\/127\.0\.0\.1:\d+/);
      expect(out).toContain('PostgreSQL: PGlite');
      // The server's version and what an ack means on it (nats-server 2.10+: fsynced before the ack).
      expect(out).toMatch(/Durability\s+nats-server \d+\.\d+\.\d+, R1: an ack /);
      expect(out).toContain('offline LLM provider');
      expect(out).toMatch(/Real model\s+set LLM_BASE_URL .*LLM_API_KEY and LLM_MODEL/);

      const r = await cli(['submit', 'hello from the banner test'], { TASKORCH_URL: api.replace('localhost', '127.0.0.1'), TASKORCH_API_KEY: undefined });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(OFFLINE);

      svc.proc.kill('SIGTERM');
      const end = await svc.done;
      expect(end.code).toBe(0);
      expect(end.stdout).toMatch(/INFO {2}stopped$/m);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
