/**
 * The cluster on one command (deploy/cluster), with real processes: 3 clustered nats-servers,
 * PostgreSQL, 2 gateways, the orchestrator+scheduler and 3 workers. A task submitted at one
 * gateway is streamed to completion through the other; every stream and bucket the service
 * made is R3; stopping leaves no process. Then the CLI, detached, on the same folder (its data
 * kept): `start`, `status`, `stop`.
 */
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startCluster, type Cluster } from '../deploy/cluster/index.js';
import { readState } from '../deploy/cluster/state.js';
import { isAlive } from '../deploy/cluster/process.js';
import { json, readSse } from './helpers/app.js';
import { registerUser } from './helpers/users.js';

const run = promisify(execFile);
const ROOT = new URL('..', import.meta.url).pathname;
// A block of ports of its own (the CLI's default block stays free for a person's cluster).
const BASE_PORT = 20_000 + (process.pid % 90) * 100;

let dir: string;
let cluster: Cluster | undefined;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cluster-test-'));
  // PostgreSQL runs as another user when the tests run as root: it must reach its folder.
  await chmod(dir, 0o755);
  cluster = await startCluster({ dir, replicas: 3, basePort: BASE_PORT });
}, 240_000);

afterAll(async () => {
  await cluster?.stop();
  await rm(dir, { recursive: true, force: true });
}, 120_000);

test('every member is up and ready', async () => {
  const c = cluster!;
  expect(c.members.map((m) => m.name)).toEqual([
    'nats-1',
    'nats-2',
    'nats-3',
    'postgres',
    'orchestrator',
    'gateway-1',
    'gateway-2',
    'worker-1',
    'worker-2',
    'worker-3',
  ]);
  const ready = await Promise.all(c.members.map((m) => m.ready()));
  expect(Object.fromEntries(c.members.map((m, i) => [m.name, ready[i] && m.pid !== undefined]))).toEqual(
    Object.fromEntries(c.members.map((m) => [m.name, true])),
  );
  expect(c.gateways).toEqual([`http://127.0.0.1:${BASE_PORT + 20}`, `http://127.0.0.1:${BASE_PORT + 21}`]);
  expect(c.table()).toMatch(/gateway-2 +gateway +\d+ +http:\/\/127\.0\.0\.1:\d+/);
});

test('a task submitted at gateway 1 streams to completion through gateway 2, and every stream and bucket is R3', async () => {
  const [g1, g2] = cluster!.gateways;
  const u = await registerUser(g1, 'cluster');
  const r = await fetch(`${g1}/api/v1/tasks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...u.h },
    body: JSON.stringify({ query: 'What is the capital of France?', mode: 'simple' }),
  });
  expect(r.status).toBe(200);
  const { task_id: id } = await json(r);

  const sse = await readSse(`${g2}/api/v1/stream/sse?workflow_id=${id}`, { headers: u.h, timeoutMs: 60_000 });
  expect(sse.status).toBe(200);
  expect(sse.closedByServer).toBe(true);
  const evs = sse.events.filter((e) => e.event !== 'done').map((e) => JSON.parse(e.data) as { seq: number; type: string });
  expect(evs.map((e) => e.seq)).toEqual(evs.map((_, i) => i + 1));
  expect(evs.at(-1)?.type).toBe('STREAM_END');
  expect((await json(await fetch(`${g2}/api/v1/tasks/${id}`, { headers: u.h }))).status).toBe('TASK_STATUS_COMPLETED');

  const nc = await connect({ servers: cluster!.natsUrl.split(',') });
  try {
    const replicas: Record<string, number> = {};
    for await (const s of (await jetstreamManager(nc)).streams.list()) replicas[s.config.name] = s.config.num_replicas;
    // The task's own streams, a KV bucket and the object store at least.
    expect(Object.keys(replicas)).toEqual(expect.arrayContaining(['TASKS', 'EVENTS', 'JOURNAL', 'KV_IDEMPOTENCY', 'OBJ_BLOBS']));
    expect(Object.entries(replicas).filter(([, n]) => n !== 3)).toEqual([]);
  } finally {
    await nc.close();
  }
}, 120_000);

test('a member killed with SIGKILL starts again as itself: same ports, same data', async () => {
  const c = cluster!;
  const killed = ['nats-2', 'worker-1'].map((name) => c.member(name));
  const before = killed.map((m) => ({ pid: m.pid, ports: { ...m.ports } }));
  killed.forEach((m) => m.signal('SIGKILL'));
  await Promise.all(killed.map((m) => m.start()));
  killed.forEach((m, i) => {
    expect(m.pid).toBeDefined();
    expect(m.pid).not.toBe(before[i].pid);
    expect(m.ports).toEqual(before[i].ports);
  });
  expect(await Promise.all(killed.map((m) => m.ready()))).toEqual([true, true]);
  // The state file names the new processes.
  const state = readState(dir)!;
  expect(killed.map((m) => state.members.find((s) => s.name === m.name)!.proc!.pid)).toEqual(killed.map((m) => m.pid));
}, 120_000);

test('stop() stops every member: no process is left', async () => {
  const c = cluster!;
  const procs = readState(dir)!.members.map((m) => m.proc!);
  expect(procs.every((p) => p && isAlive(p))).toBe(true);
  await c.stop();
  cluster = undefined;
  expect(procs.filter((p) => isAlive(p))).toEqual([]);
  expect(c.members.map((m) => m.pid).filter((p) => p !== undefined)).toEqual([]);
  expect(readState(dir)!.members.filter((m) => m.proc)).toEqual([]);
}, 120_000);

test('the CLI starts a cluster that outlives it, reports it, and stops it', async () => {
  const cli = (...args: string[]) =>
    run(process.execPath, ['--import', 'tsx', 'deploy/cluster/main.ts', ...args, `--dir=${dir}`, `--base-port=${BASE_PORT}`], { cwd: ROOT, timeout: 200_000 });
  try {
    const started = await cli('start', '--gateways=1', '--workers=1', '--replicas=1');
    expect(started.stdout).toMatch(/member +kind +pid +listens on +log/);
    expect(started.stdout).toContain(`http://127.0.0.1:${BASE_PORT + 20}`);
    expect(started.stdout).toMatch(/npm run cluster -- stop/);
    // The CLI has exited: its members still run.
    const procs = readState(dir)!.members.map((m) => m.proc!);
    expect(procs).toHaveLength(7);
    expect(procs.filter((p) => !p || !isAlive(p))).toEqual([]);

    const again = await cli('start');
    expect(again.stdout).toMatch(/already running/);
    const status = await cli('status');
    expect(status.stdout.match(/ up /g)).toHaveLength(7);

    const stopped = await cli('stop');
    expect(stopped.stdout).toMatch(/stopped/);
    expect(procs.filter((p) => isAlive(p))).toEqual([]);
    expect((await cli('status')).stdout.match(/ down /g)).toHaveLength(7);
  } finally {
    // Whatever failed above, nothing stays running.
    await cli('stop').catch(() => {});
  }
}, 400_000);
