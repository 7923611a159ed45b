/**
 * startCluster: the whole fleet on loopback (3 clustered nats-servers, one PostgreSQL, the
 * gateways, the orchestrator+scheduler, the workers), started in dependency order and
 * resolved once every member answers its readiness probe; openCluster: the same cluster from
 * its state file, for the CLI's `stop` and `status` in a later process.
 */
import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { planMembers, DEFAULT_BASE_PORT, type PlannedMember } from './layout.js';
import { ClusterMember, type MemberRecipe } from './member.js';
import { natsBinary, natsNodeCommand, natsNodeReady, type NatsBinary } from './nats.js';
import { settlePlacement } from './placement.js';
import { findPostgresBinDir, initPostgres, postgresAnswers, postgresCommand, postgresRunAs, postgresUrl } from './postgres.js';
import { isAlive } from './process.js';
import { buildIfStale, serviceCommand, serviceReady, type ServiceContext } from './services.js';
import { newSecrets, readState, writeState, type ClusterState, type MemberState } from './state.js';
import { footer, renderTable } from './table.js';
import type { Cluster, ClusterOptions, Member } from './types.js';

/** Service processes get 25 s after SIGTERM (their own drain gives up at 20 s). */
const SERVICE_GRACE_MS = 25_000;
const BACKEND_GRACE_MS = 15_000;

export class ClusterRunningError extends Error {}

/** Ports of the plan something already listens on. */
async function busyPorts(plan: PlannedMember[]): Promise<string[]> {
  const tryPort = (port: number) =>
    new Promise<boolean>((done) => {
      const s = createServer();
      s.once('error', () => done(false));
      s.listen(port, '127.0.0.1', () => s.close(() => done(true)));
    });
  const busy: string[] = [];
  for (const m of plan) for (const [what, port] of Object.entries(m.ports)) if (!(await tryPort(port))) busy.push(`${port} (${m.name} ${what})`);
  return busy;
}

function postgresBin(): string {
  const bin = findPostgresBinDir();
  if (!bin) throw new Error('PostgreSQL server binaries (initdb, postgres) not found on PATH or in /usr/lib/postgresql/*/bin: apt-get install postgresql');
  return bin;
}

function recipeOf(p: MemberState, dir: string, state: ClusterState, nats: () => NatsBinary, env: Record<string, string>): MemberRecipe {
  const base = { name: p.name, kind: p.kind, ports: p.ports, log: p.log };
  const natsPorts = state.members.filter((m) => m.kind === 'nats').map((m) => m.ports);
  switch (p.kind) {
    case 'nats':
      return {
        ...base,
        command: () =>
          natsNodeCommand({
            name: p.name,
            dir: join(dir, p.name),
            ports: { client: p.ports.client, cluster: p.ports.cluster, monitor: p.ports.monitor },
            routes: natsPorts.map((n) => n.cluster),
            binary: nats(),
          }),
        probe: () => natsNodeReady(p.ports.monitor),
        stopSignal: 'SIGTERM',
        stopGraceMs: BACKEND_GRACE_MS,
        // A node is ready once every stream and consumer it holds is current: after all three
        // stopped, that takes their raft groups' elections, slow on a loaded machine.
        readyTimeoutMs: 90_000,
        launches: 1,
      };
    case 'postgres':
      return {
        ...base,
        command: async () => {
          const binDir = postgresBin();
          const runAs = postgresRunAs();
          const dataDir = join(dir, 'postgres');
          await initPostgres({ binDir, dataDir, runAs });
          // No Unix socket (a deep folder can exceed its path limit); room for every process's pool.
          return { ...postgresCommand({ binDir, dataDir, port: p.ports.sql, socketDir: '', settings: { max_connections: '200' }, runAs }), cwd: dataDir };
        },
        probe: () => postgresAnswers(postgresUrl(p.ports.sql)),
        // SIGINT is PostgreSQL's fast shutdown (SIGTERM would wait for every client to leave).
        stopSignal: 'SIGINT',
        stopGraceMs: BACKEND_GRACE_MS,
        readyTimeoutMs: 60_000,
        launches: 1,
      };
    default: {
      const orchestrator = state.members.find((m) => m.kind === 'orchestrator')!;
      const ctx: ServiceContext = {
        dir,
        replicas: state.replicas,
        natsUrl: natsUrlOf(state),
        databaseUrl: databaseUrlOf(state),
        secrets: state.secrets,
        orchestratorPort: orchestrator.ports.grpc,
        extra: env,
      };
      return {
        ...base,
        command: () => serviceCommand(p, ctx),
        probe: () => serviceReady(p),
        stopSignal: 'SIGTERM',
        stopGraceMs: SERVICE_GRACE_MS,
        readyTimeoutMs: 120_000,
        launches: 3,
      };
    }
  }
}

function natsUrlOf(s: ClusterState): string {
  return s.members
    .filter((m) => m.kind === 'nats')
    .map((m) => `nats://127.0.0.1:${m.ports.client}`)
    .join(',');
}

function databaseUrlOf(s: ClusterState): string {
  return postgresUrl(s.members.find((m) => m.kind === 'postgres')!.ports.sql);
}

class LocalCluster implements Cluster {
  readonly members: readonly ClusterMember[];
  readonly gateways: readonly string[];
  readonly natsUrl: string;
  readonly databaseUrl: string;
  private saving: Promise<void> = Promise.resolve();

  constructor(
    readonly dir: string,
    private readonly state: ClusterState,
    nats: () => NatsBinary,
    /** ClusterOptions.env (never written to the state file: it may hold keys). */
    env: Record<string, string>,
  ) {
    const save = () => this.save();
    this.members = state.members.map((m) => new ClusterMember(recipeOf(m, dir, state, nats, env), state.detached, save, m.proc));
    this.gateways = this.members.filter((m) => m.kind === 'gateway').map((m) => `http://127.0.0.1:${m.ports.http}`);
    this.natsUrl = natsUrlOf(state);
    this.databaseUrl = databaseUrlOf(state);
  }

  get replicas(): 1 | 3 {
    return this.state.replicas;
  }

  member(name: string): Member {
    const m = this.members.find((x) => x.name === name);
    if (!m) throw new Error(`no member ${JSON.stringify(name)}; members: ${this.members.map((x) => x.name).join(', ')}`);
    return m;
  }

  /** Whether any member's process still runs. */
  running(): boolean {
    return this.members.some((m) => m.pid !== undefined);
  }

  table(): string {
    return `${renderTable(this.members)}\n\n${this.footer()}`;
  }

  /** The table with each member's readiness now. */
  async status(): Promise<string> {
    const up = await Promise.all(this.members.map((m) => m.ready()));
    return `${renderTable(this.members, up)}\n\n${this.footer()}`;
  }

  private footer(): string {
    return footer({ dir: this.dir, replicas: this.state.replicas, natsVersion: this.state.nats.version, syncInterval: this.state.nats.syncInterval });
  }

  /** Writes the state file; writes are queued, each one taking the members as they are when it runs. */
  save(): Promise<void> {
    this.saving = this.saving.then(() => {
      this.members.forEach((m, i) => (this.state.members[i].proc = m.process));
      return writeState(this.dir, this.state);
    });
    return this.saving;
  }

  async stop(): Promise<void> {
    const of = (kinds: string[]) => this.members.filter((m) => kinds.includes(m.kind));
    await Promise.all(of(['gateway', 'orchestrator', 'worker']).map((m) => m.stop()));
    await Promise.all(of(['nats']).map((m) => m.stop()));
    await Promise.all(of(['postgres']).map((m) => m.stop()));
    await this.save();
  }

  /**
   * Starts the members in dependency order: NATS and PostgreSQL, then the orchestrator (the
   * first service process creates the streams and buckets and migrates the database, so the
   * others find them made), then the gateways and workers.
   */
  async startAll(signal: AbortSignal | undefined): Promise<void> {
    for (const kinds of [['nats', 'postgres'], ['orchestrator'], ['gateway', 'worker']]) {
      // Every start of a stage settles before a failure is thrown: the stop that follows must
      // not miss a member that was still being launched.
      const results = await Promise.allSettled(this.members.filter((m) => kinds.includes(m.kind)).map((m) => m.start(signal)));
      const failed = results.find((r) => r.status === 'rejected');
      if (failed) throw failed.reason;
      if (kinds.includes('nats')) {
        await settlePlacement(
          this.members.filter((m) => m.kind === 'nats'),
          this.state.replicas,
          (s) => process.stderr.write(`[cluster] ${s}\n`),
        );
      }
    }
  }
}

export async function startCluster(o: ClusterOptions): Promise<Cluster> {
  const dir = resolve(o.dir);
  await mkdir(join(dir, 'logs'), { recursive: true });
  const prev = readState(dir);
  if (prev?.members.some((m) => m.proc && isAlive(m.proc))) throw new ClusterRunningError(`a cluster is already running in ${dir}`);
  if (o.replicas !== 1 && o.replicas !== 3) throw new Error(`replicas: 1 or 3, got ${String(o.replicas)}`);
  const plan = planMembers({ basePort: o.basePort ?? DEFAULT_BASE_PORT, gateways: o.gateways ?? 2, workers: o.workers ?? 3 });
  const busy = await busyPorts(plan);
  if (busy.length) throw new Error(`ports already in use: ${busy.join(', ')}; choose another base port`);
  postgresBin();
  const nats = natsBinary();
  buildIfStale();
  const state: ClusterState = {
    version: 1,
    replicas: o.replicas,
    basePort: o.basePort ?? DEFAULT_BASE_PORT,
    gateways: o.gateways ?? 2,
    workers: o.workers ?? 3,
    detached: o.detached === true,
    nats: { version: nats.version, syncInterval: nats.syncInterval },
    // Kept from the last run: what the database and JetStream hold was written with them.
    secrets: prev?.secrets ?? newSecrets(),
    members: plan.map((m) => ({ ...m, log: join(dir, 'logs', `${m.name}.log`) })),
  };
  const cluster = new LocalCluster(dir, state, () => nats, o.env ?? {});
  await cluster.save();
  try {
    await cluster.startAll(o.signal);
  } catch (err) {
    await cluster.stop().catch(() => {});
    throw err;
  }
  return cluster;
}

/** The cluster whose state file is in `dir`, as it runs now; undefined when there is none. */
export function openCluster(dir: string): LocalCluster | undefined {
  const abs = resolve(dir);
  const state = readState(abs);
  if (!state) return undefined;
  const nats = (() => {
    let b: NatsBinary | undefined;
    return () => (b ??= natsBinary());
  })();
  return new LocalCluster(abs, state, nats, {});
}
