/**
 * What the benchmarks run against: a throwaway nats-server with JetStream (the project's own
 * launcher), a throwaway PostgreSQL server (the test harness's launcher: a real server, run
 * as the postgres user when we are root) with one database per benchmark, and the service
 * itself started as a separate process as `npm start` runs it (its node flags), from the
 * sources: `node <npm start's flags> --import tsx src/main.ts` with its configuration in the
 * environment.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { startApp, type App } from '../../src/app/index.js';
import { loadConfig } from '../../src/config/index.js';
import { startNatsServer, type NatsServerHandle } from '../../src/embedded/nats-server.js';
import { createLogger } from '../../src/kernel/index.js';
import type { LlmProvider } from '../../src/llm/index.js';
import { startPostgresServer, type PostgresServerHandle } from '../../test/harness/postgres-server.js';
import { freePort, serviceNodeFlags, spawnChild, waitUntil, type ChildProc } from './proc.js';

export interface Nats {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

export async function startNats(): Promise<Nats> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-nats-'));
  let h: NatsServerHandle;
  try {
    h = await startNatsServer({ storeDir: dir, host: '127.0.0.1', port: 0 });
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    url: h.url,
    pid: h.pid,
    async stop() {
      await h.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface Pg {
  /** URL of a fresh database on the shared server. */
  database(name: string): Promise<string>;
  version: string;
  stop(): Promise<void>;
}

export async function startPg(): Promise<Pg> {
  const h: PostgresServerHandle | undefined = await startPostgresServer();
  if (!h) throw new Error('PostgreSQL server binaries not found (initdb, postgres): install them, e.g. `apt-get install postgresql-15`');
  const admin = postgres(h.url, { max: 1, onnotice: () => {} });
  const [{ version }] = await admin`SELECT current_setting('server_version') AS version`;
  return {
    version: String(version),
    async database(name: string) {
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name}`);
      await admin.unsafe(`CREATE DATABASE ${name}`);
      const u = new URL(h.url);
      u.pathname = `/${name}`;
      return u.toString();
    },
    async stop() {
      await admin.end({ timeout: 2 });
      await h.stop();
    },
  };
}

export interface Service {
  proc: ChildProc;
  port: number;
  base: string;
  stop(): Promise<void>;
}

/**
 * Starts `node --import tsx src/main.ts` and waits until GET /readiness answers 200 (within
 * `readyTimeoutMs`, default 30 s). An empty `natsUrl` / `dbUrl` is the embedded nats-server / PGlite.
 */
export async function startService(o: {
  roles: string;
  natsUrl: string;
  dbUrl: string;
  readyTimeoutMs?: number;
  cpu?: number;
  nofile?: number;
  env?: Record<string, string>;
  nodeArgs?: string[];
  name?: string;
}): Promise<Service> {
  const port = await freePort();
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-svc-'));
  const proc = spawnChild({
    name: o.name ?? 'service',
    script: 'src/main.ts',
    imports: ['bench/lib/parent-watch.ts'],
    // As `npm start` runs it (its V8 flags: --max-semi-space-size=4), plus the bench's own (profiling).
    nodeArgs: [...serviceNodeFlags(), ...(o.nodeArgs ?? [])],
    cpu: o.cpu,
    nofile: o.nofile,
    env: {
      NATS_URL: o.natsUrl,
      DATABASE_URL: o.dbUrl,
      GATEWAY_HOST: '127.0.0.1',
      GATEWAY_PORT: String(port),
      GRPC_HOST: '127.0.0.1',
      ORCHESTRATOR_GRPC_PORT: '0',
      ROLES: o.roles,
      LOG_LEVEL: 'warn',
      DATA_DIR: dataDir,
      ...o.env,
    },
  });
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitUntil(
      async () => {
        if (proc.exitInfo) throw new Error(`service exited during start-up (${proc.exitInfo.code ?? proc.exitInfo.signal}):\n${proc.tail()}`);
        try {
          const r = await fetch(`${base}/readiness`, { signal: AbortSignal.timeout(2000) });
          return r.status === 200;
        } catch {
          return false;
        }
      },
      o.readyTimeoutMs ?? 30_000,
      100,
      'service readiness',
    );
  } catch (err) {
    await proc.stop();
    await rm(dataDir, { recursive: true, force: true });
    throw err;
  }
  return {
    proc,
    port,
    base,
    async stop() {
      await proc.stop(20_000);
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The service in this process (gateway, orchestrator, worker, archiver) with an injected model,
 * on its own database of the benchmark PostgreSQL: for benchmarks that script the model.
 */
export async function inProcessService(
  nats: Nats,
  pg: Pg,
  db: string,
  llm: LlmProvider,
  env: Record<string, string> = {},
): Promise<{ app: App; base: string }> {
  const cfg = loadConfig({
    NATS_URL: nats.url,
    DATABASE_URL: await pg.database(db),
    DATABASE_MAX_CONNECTIONS: '10',
    GATEWAY_HOST: '127.0.0.1',
    GATEWAY_PORT: '0',
    ORCHESTRATOR_GRPC_PORT: '0',
    GRPC_HOST: '127.0.0.1',
    LLM_SERVICE_PORT: '0',
    AGENT_GRPC_PORT: '0',
    INTERNAL_RPC_TOKEN: 'bench-internal-rpc-token-0123456789abcdefghijklmnop',
    ROLES: 'gateway,orchestrator,worker,archiver',
    LOG_LEVEL: 'error',
    MAX_TOKENS_PER_REQUEST: '0',
    MAX_COST_PER_REQUEST: '0',
    ENABLE_CACHE: '0',
    RATE_LIMIT_REQUESTS: '100000000',
    ...env,
  });
  const app = await startApp(cfg, createLogger({ level: cfg.logLevel }), { llm });
  return { app, base: `http://127.0.0.1:${app.gatewayPort}` };
}
