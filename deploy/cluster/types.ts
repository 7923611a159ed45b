/**
 * The cluster's shape as its users see it: `npm run cluster` (deploy/cluster/main.ts), the fault
 * drill (deploy/drill/) and the scaling benchmark (bench/scale.ts) all start, kill and restart
 * members through this one contract.
 */

export type MemberKind = 'nats' | 'postgres' | 'gateway' | 'orchestrator' | 'worker';

export interface ClusterOptions {
  /** The one folder that holds every member's data, logs and the cluster's state file. */
  dir: string;
  /** Stream and bucket replicas (NATS_REPLICAS of every service process): 1 or 3. */
  replicas: 1 | 3;
  /** Service processes; defaults 2 gateways, 3 workers (the orchestrator+scheduler is always one). */
  gateways?: number;
  workers?: number;
  /** First port of the block the members take (each member's ports are listed in the table). */
  basePort?: number;
  /** Extra environment for every service process (e.g. LLM_BASE_URL for a paced model). */
  env?: Record<string, string>;
  /** Members outlive this process (the CLI) or die with it (tests, drill, bench). */
  detached?: boolean;
  /** Abandons the start (e.g. Ctrl-C): what had started is stopped and startCluster rejects. */
  signal?: AbortSignal;
}

export interface Member {
  /** e.g. `nats-1`, `postgres`, `gateway-2`, `orchestrator`, `worker-3`. */
  readonly name: string;
  readonly kind: MemberKind;
  /** The running process's pid; undefined while it is down. */
  readonly pid: number | undefined;
  /** The ports it listens on, by purpose (client, cluster, monitor, http, health, grpc, sql). */
  readonly ports: Readonly<Record<string, number>>;
  /** Its log file inside the cluster's folder. */
  readonly log: string;
  /** Sends a signal to its process (SIGKILL, SIGSTOP, SIGCONT, SIGTERM). */
  signal(sig: NodeJS.Signals): void;
  /** Starts it again (after a kill) and resolves once it is ready. */
  start(): Promise<void>;
  /** Stops it cleanly (SIGTERM, then SIGKILL after a deadline) and resolves once it has exited. */
  stop(): Promise<void>;
  /** Whether it answers its readiness probe now. */
  ready(): Promise<boolean>;
}

export interface Cluster {
  readonly dir: string;
  readonly replicas: 1 | 3;
  readonly members: readonly Member[];
  /** Base URLs of the gateways, e.g. `http://127.0.0.1:18080`. */
  readonly gateways: readonly string[];
  /** `nats://127.0.0.1:p1,nats://127.0.0.1:p2,...`: every NATS node, as NATS_URL. */
  readonly natsUrl: string;
  readonly databaseUrl: string;
  member(name: string): Member;
  /** One table: member, kind, pid, ports, log. */
  table(): string;
  /** Stops the service processes, then NATS, then PostgreSQL. */
  stop(): Promise<void>;
}
