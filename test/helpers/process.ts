/** Runs the service as a real child process (`node --import tsx src/main.ts`) with given env. */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface ServiceProcess {
  proc: ChildProcess;
  logs: string[];
  waitForLog(re: RegExp, timeoutMs?: number): Promise<string>;
  kill(signal: NodeJS.Signals): void;
  exited: Promise<number | null>;
}

/** Every port chosen by the OS, every listener on loopback: the embedded defaults in `dataDir`. */
export function embeddedEnv(dataDir: string): Record<string, string> {
  return {
    DATA_DIR: dataDir,
    GATEWAY_PORT: '0',
    ORCHESTRATOR_GRPC_PORT: '0',
    LLM_SERVICE_PORT: '0',
    AGENT_GRPC_PORT: '0',
    GATEWAY_HOST: '127.0.0.1',
    GRPC_HOST: '127.0.0.1',
  };
}

/** A service process on a test's NATS server and database, with a short ack wait (crash tests redeliver fast). */
export function testBusEnv(natsUrl: string): Record<string, string> {
  return { NATS_URL: natsUrl, DATABASE_URL: inject('pgUrl'), DATABASE_MAX_CONNECTIONS: '2', WORKER_ACK_WAIT_MS: '1500' };
}

/** A service process calling a scripted OpenAI-compatible model at `baseUrl`: no response cache, no budgets. */
export function scriptedModelEnv(baseUrl: string): Record<string, string> {
  return { LLM_BASE_URL: baseUrl, LLM_API_KEY: 'sk-test', LLM_MODEL: 'crash-model', ENABLE_CACHE: '0', MAX_TOKENS_PER_REQUEST: '0', MAX_COST_PER_REQUEST: '0' };
}

/** The gateway's base URL, from the process's `ready` log line (its port was chosen by the OS). */
export async function gatewayBase(p: ServiceProcess): Promise<string> {
  const line = await p.waitForLog(/"msg":"ready/);
  return `http://127.0.0.1:${(JSON.parse(line) as { gateway: number }).gateway}`;
}

/**
 * `detached`: the service leads a process group of its own, as under systemd or a shell's job
 * control, so that a test can signal the whole group (`process.kill(-pid, ...)`).
 */
export async function startServiceProcess(env: Record<string, string>, opts: { detached?: boolean } = {}): Promise<ServiceProcess> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'info', LLM_SERVICE_PORT: '0', AGENT_GRPC_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: opts.detached === true,
  });
  const logs: string[] = [];
  const waiters: { re: RegExp; resolve: (l: string) => void }[] = [];
  let buf = '';
  const onData = (d: Buffer) => {
    buf += d.toString();
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      logs.push(line);
      for (const w of [...waiters]) {
        if (w.re.test(line)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(line);
        }
      }
    }
  };
  proc.stdout!.on('data', onData);
  proc.stderr!.on('data', onData);
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  const sp: ServiceProcess = {
    proc,
    logs,
    exited,
    kill: (s) => proc.kill(s),
    waitForLog(re, timeoutMs = 20_000) {
      const hit = logs.find((l) => re.test(l));
      if (hit) return Promise.resolve(hit);
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`timed out waiting for ${re}; logs:\n${logs.slice(-20).join('\n')}`)), timeoutMs);
        waiters.push({ re, resolve: (l) => (clearTimeout(t), resolve(l)) });
        void exited.then((code) => {
          clearTimeout(t);
          reject(new Error(`process exited (${code}) before ${re}; logs:\n${logs.slice(-20).join('\n')}`));
        });
      });
    },
  };
  // A fresh embedded PGlite on a busy 2-core machine can take a while to initialise.
  try {
    await sp.waitForLog(/"msg":"ready/, 60_000);
  } catch (err) {
    // Never left running behind a failed start (with `detached`, nothing of its group either).
    try {
      if (opts.detached && proc.pid) process.kill(-proc.pid, 'SIGKILL');
      else proc.kill('SIGKILL');
    } catch {
      /* already gone */
    }
    throw err;
  }
  return sp;
}
