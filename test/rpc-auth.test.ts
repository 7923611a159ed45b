/**
 * Internal RPC authentication over the real HTTP/2 port, with the gRPC protocol and with the
 * Connect protocol: without the internal token (or with a wrong one) every RPC of every
 * service is Unauthenticated; with it, the caller named in the x-caller-* headers is held to
 * task and session ownership whatever the request body says. Also: the embedded default
 * binds the RPC port to 127.0.0.1 and generates the token into DATA_DIR.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DescMethod, DescService } from '@bufbuild/protobuf';
import { Code, ConnectError, createClient, type CallOptions, type Client, type Transport } from '@connectrpc/connect';
import { Http2SessionManager, createConnectTransport, createGrpcTransport } from '@connectrpc/connect-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import { TaskStatus } from '../src/gen/svc/v1/common_pb.js';
import { OrchestratorService } from '../src/gen/svc/v1/orchestrator_pb.js';
import { SessionService } from '../src/gen/svc/v1/session_pb.js';
import { StreamingService } from '../src/gen/svc/v1/streaming_pb.js';
import { TEST_RPC_TOKEN, json, startTestApp, waitFor, type TestApp } from './helpers/app.js';

interface User {
  userId: string;
  tenantId: string;
}
type Who = User | 'system' | 'anonymous' | 'nobody';

const SERVICES: DescService[] = [OrchestratorService, StreamingService, SessionService];

/** Headers of a call: the token (unless `token` is null) and the caller. */
function headersOf(who: Who, token: string | null = TEST_RPC_TOKEN): Record<string, string> {
  const h: Record<string, string> = token === null ? {} : { authorization: `Bearer ${token}` };
  if (who === 'system' || who === 'anonymous') h['x-caller-kind'] = who;
  else if (who !== 'nobody') Object.assign(h, { 'x-caller-kind': 'user', 'x-caller-user-id': who.userId, 'x-caller-tenant-id': who.tenantId });
  return h;
}
const as = (who: Who, token?: string | null): CallOptions => ({ headers: headersOf(who, token), timeoutMs: 15_000 });

async function code(p: Promise<unknown> | AsyncIterable<unknown>): Promise<Code | 'ok'> {
  try {
    if (Symbol.asyncIterator in p) {
      // Server streaming: the first message (or the end) shows whether the call was accepted.
      for await (const _ of p) break;
    } else await p;
    return 'ok';
  } catch (err) {
    return ConnectError.from(err).code;
  }
}

let t: TestApp;
const h2: Http2SessionManager[] = [];
const a: User = { userId: randomUUID(), tenantId: randomUUID() };
/** Another tenant. */
const b: User = { userId: randomUUID(), tenantId: randomUUID() };
/** A's tenant, another user. */
const c: User = { userId: randomUUID(), tenantId: a.tenantId };
const tasks = {} as Record<'a' | 'b' | 'c', string>;
let bSession: string;
const bSessionExt = `b-${randomUUID()}`;

const baseUrl = () => `http://127.0.0.1:${t.app.grpcPort}`;
function manager(url: string) {
  const m = new Http2SessionManager(url);
  h2.push(m);
  return m;
}
const PROTOCOLS: [string, (url: string) => Transport][] = [
  ['gRPC', (url) => createGrpcTransport({ baseUrl: url, sessionManager: manager(url) })],
  ['Connect (HTTP/2)', (url) => createConnectTransport({ baseUrl: url, httpVersion: '2', sessionManager: manager(url) })],
];

async function settled(orch: Client<typeof OrchestratorService>, taskId: string) {
  return waitFor(async () => {
    const s = await orch.getTaskStatus({ taskId }, as('system'));
    return s.status === TaskStatus.COMPLETED || s.status === TaskStatus.FAILED ? s : undefined;
  }, 30_000);
}

beforeAll(async () => {
  // Slow enough that a standard task is observably RUNNING for a while.
  t = await startTestApp({ OFFLINE_LLM_CHUNK_DELAY_MS: '2', PARTIAL_CHUNK_CHARS: '32' });
  const tr = createGrpcTransport({ baseUrl: baseUrl(), sessionManager: manager(baseUrl()) });
  const orch = createClient(OrchestratorService, tr);
  const sessions = createClient(SessionService, tr);
  for (const [k, u] of [
    ['a', a],
    ['b', b],
    ['c', c],
  ] as const) {
    tasks[k] = (await orch.submitTask({ query: `a task of ${k}`, options: { modeName: 'simple' } }, as(u))).taskId;
  }
  const s = await sessions.createSession({ externalId: bSessionExt, title: 'B private' }, as(b));
  bSession = s.session!.id;
  const inSession = await orch.submitTask({ query: 'B secret question', metadata: { sessionId: bSessionExt }, options: { modeName: 'simple' } }, as(b));
  for (const id of [...Object.values(tasks), inSession.taskId]) await settled(orch, id);
}, 60_000);
afterAll(async () => {
  for (const m of h2) m.abort();
  await t?.stop();
});

/** A plausible request for each RPC, aimed at B's objects (what an attacker would send). */
function requestFor(m: DescMethod): Record<string, unknown> {
  const byName: Record<string, Record<string, unknown>> = {
    submitTask: { query: 'unauthenticated submit', metadata: { userId: b.userId, tenantId: b.tenantId } },
    getTaskStatus: { taskId: tasks.b },
    cancelTask: { taskId: tasks.b },
    listTasks: { userId: b.userId, tenantId: b.tenantId },
    pauseTask: { taskId: tasks.b },
    resumeTask: { taskId: tasks.b },
    getControlState: { taskId: tasks.b },
    getTaskEvents: { taskId: tasks.b },
    streamTaskExecution: { workflowId: tasks.b },
    createSession: { caller: b, externalId: `x-${randomUUID()}` },
    getSession: { caller: b, sessionId: bSession },
    listSessions: { caller: b },
    updateSession: { caller: b, sessionId: bSession, title: 'pwned' },
    deleteSession: { caller: b, sessionId: bSession },
    getSessionHistory: { caller: b, sessionId: bSession },
    getSessionEvents: { caller: b, sessionId: bSession },
  };
  return byName[m.localName] ?? {};
}

function call(tr: Transport, svc: DescService, m: DescMethod, input: Record<string, unknown>, opts: CallOptions) {
  const client = createClient(svc, tr) as unknown as Record<string, (i: unknown, o: CallOptions) => Promise<unknown> | AsyncIterable<unknown>>;
  return client[m.localName](input, opts);
}

describe.each(PROTOCOLS)('internal RPC authentication over %s', (_name, transportFor) => {
  let tr: Transport;
  let orch: Client<typeof OrchestratorService>;
  let streaming: Client<typeof StreamingService>;
  let sessions: Client<typeof SessionService>;
  beforeAll(() => {
    tr = transportFor(baseUrl());
    orch = createClient(OrchestratorService, tr);
    streaming = createClient(StreamingService, tr);
    sessions = createClient(SessionService, tr);
  });

  it('refuses every RPC of every service without the token, with a wrong one, and without a caller', async () => {
    const wrong = TEST_RPC_TOKEN.slice(0, -1) + (TEST_RPC_TOKEN.endsWith('x') ? 'y' : 'x');
    const variants: [string, Record<string, string>][] = [
      ['no token', headersOf(b, null)],
      ['wrong token of the same length', headersOf(b, wrong)],
      ['wrong token', headersOf(b, 'guess')],
      ['the token under another scheme', { ...headersOf(b, null), authorization: `Basic ${TEST_RPC_TOKEN}` }],
      ['the token without a caller', headersOf('nobody')],
      ['the token with a malformed caller', { ...headersOf('nobody'), 'x-caller-kind': 'user', 'x-caller-user-id': 'not-a-uuid' }],
    ];
    let n = 0;
    for (const svc of SERVICES) {
      for (const m of svc.methods) {
        for (const [what, headers] of variants) {
          expect(await code(call(tr, svc, m, requestFor(m), { headers, timeoutMs: 15_000 })), `${svc.typeName}.${m.name}: ${what}`).toBe(Code.Unauthenticated);
          n++;
        }
      }
    }
    expect(n).toBe(6 * (12 + 1 + 7));
    // Nothing happened to B's objects.
    expect((await orch.getControlState({ taskId: tasks.b }, as(b))).isCancelled).toBe(false);
    expect((await sessions.getSession({ sessionId: bSession }, as(b))).session!.title).toBe('B private');
  });

  it("with the token: the caller's own tasks work", async () => {
    const s = await orch.getTaskStatus({ taskId: tasks.a }, as(a));
    expect(s).toMatchObject({ taskId: tasks.a, status: TaskStatus.COMPLETED, userId: a.userId, tenantId: a.tenantId });
    expect((await orch.getTaskEvents({ taskId: tasks.a }, as(a))).events.length).toBeGreaterThan(0);
    expect((await orch.getControlState({ taskId: tasks.a }, as(a))).isCancelled).toBe(false);
    const updates = [];
    for await (const u of streaming.streamTaskExecution({ workflowId: tasks.a }, as(a))) updates.push(u);
    expect(updates.at(-1)!.type).toBe('STREAM_END');
  });

  it("another tenant's task is NotFound and a same-tenant user's task PermissionDenied, on every task RPC", async () => {
    const rpcs: [string, (id: string, who: User) => Promise<unknown> | AsyncIterable<unknown>][] = [
      ['GetTaskStatus', (id, who) => orch.getTaskStatus({ taskId: id }, as(who))],
      ['GetTaskEvents', (id, who) => orch.getTaskEvents({ taskId: id }, as(who))],
      ['GetControlState', (id, who) => orch.getControlState({ taskId: id }, as(who))],
      ['CancelTask', (id, who) => orch.cancelTask({ taskId: id, requestedBy: b.userId }, as(who))],
      ['PauseTask', (id, who) => orch.pauseTask({ taskId: id }, as(who))],
      ['ResumeTask', (id, who) => orch.resumeTask({ taskId: id }, as(who))],
      ['StreamTaskExecution', (id, who) => streaming.streamTaskExecution({ workflowId: id }, as(who))],
    ];
    for (const [name, rpc] of rpcs) {
      expect(await code(rpc(tasks.b, a)), `${name} of another tenant's task`).toBe(Code.NotFound);
      expect(await code(rpc(tasks.c, a)), `${name} of a same-tenant user's task`).toBe(Code.PermissionDenied);
      expect(await code(rpc(tasks.a, c)), `${name} of a same-tenant user's task (the other way)`).toBe(Code.PermissionDenied);
    }
  });

  it("ListTasks lists only the caller's tasks, whatever the body asks", async () => {
    for (const body of [{}, { userId: b.userId, tenantId: b.tenantId }, { userId: c.userId, tenantId: c.tenantId }]) {
      const r = await orch.listTasks({ ...body, limit: 100 }, as(a));
      expect(
        r.tasks.map((x) => x.taskId),
        JSON.stringify(body),
      ).toContain(tasks.a);
      expect(r.tasks.every((x) => x.taskId !== tasks.b && x.taskId !== tasks.c)).toBe(true);
      const [{ n }] = await t.app.store.sql`SELECT count(*)::int AS n FROM tasks WHERE user_id = ${a.userId}::uuid`;
      expect(r.totalCount).toBe(n);
    }
    expect((await orch.listTasks({ sessionId: bSessionExt }, as(a))).totalCount).toBe(0);
  });

  it('SubmitTask runs as the caller even when the body names another user', async () => {
    const r = await orch.submitTask(
      { query: 'whose task am I?', metadata: { userId: b.userId, tenantId: b.tenantId }, options: { modeName: 'simple' } },
      as(a),
    );
    const [row] = await t.app.store.sql`SELECT user_id, tenant_id FROM tasks WHERE id = ${r.taskId}::uuid`;
    expect(row).toEqual({ user_id: a.userId, tenant_id: a.tenantId });
    expect((await orch.getTaskStatus({ taskId: r.taskId }, as(a))).userId).toBe(a.userId);
    expect(await code(orch.getTaskStatus({ taskId: r.taskId }, as(b)))).toBe(Code.NotFound);
    await settled(orch, r.taskId);
  });

  it("CancelTask (and pause) of another user's running task is refused and the task runs to completion", async () => {
    const running = (await orch.submitTask({ query: 'Research it. Then compare it. And write it up.', options: { modeName: 'complex' } }, as(b))).taskId;
    const sameTenant = (await orch.submitTask({ query: 'Research it. Then compare it. And write it up.', options: { modeName: 'complex' } }, as(c))).taskId;
    for (const id of [running, sameTenant]) {
      await waitFor(async () => (await orch.getTaskStatus({ taskId: id }, as('system'))).status === TaskStatus.RUNNING, 20_000, 5);
    }
    expect(await code(orch.cancelTask({ taskId: running, reason: 'not yours' }, as(a)))).toBe(Code.NotFound);
    expect(await code(orch.pauseTask({ taskId: running, reason: 'not yours' }, as(a)))).toBe(Code.NotFound);
    expect(await code(orch.cancelTask({ taskId: sameTenant, reason: 'not yours' }, as(a)))).toBe(Code.PermissionDenied);
    expect(await code(orch.pauseTask({ taskId: sameTenant, reason: 'not yours' }, as(a)))).toBe(Code.PermissionDenied);
    for (const [id, owner] of [
      [running, b],
      [sameTenant, c],
    ] as const) {
      const cs = await orch.getControlState({ taskId: id }, as(owner));
      expect(cs).toMatchObject({ isCancelled: false, isPaused: false });
      expect((await settled(orch, id)).status).toBe(TaskStatus.COMPLETED);
    }
  }, 60_000);

  it("SessionService: another user's sessions cannot be read, listed, changed or deleted, whatever the body's caller says", async () => {
    for (const sessionId of [bSession, bSessionExt]) {
      expect(await code(sessions.getSessionHistory({ caller: b, sessionId }, as(a))), sessionId).toBe(Code.NotFound);
      expect(await code(sessions.getSessionEvents({ caller: b, sessionId }, as(a)))).toBe(Code.NotFound);
      expect(await code(sessions.getSession({ caller: b, sessionId }, as(a)))).toBe(Code.NotFound);
      expect(await code(sessions.updateSession({ caller: b, sessionId, title: 'pwned' }, as(a)))).toBe(Code.NotFound);
      expect(await code(sessions.getSessionHistory({ caller: b, sessionId }, as(c)))).toBe(Code.NotFound);
    }
    expect((await sessions.listSessions({ caller: b }, as(a))).sessions.map((s) => s.id)).not.toContain(bSession);
    await sessions.deleteSession({ caller: b, sessionId: bSession }, as(a));
    const h = await sessions.getSessionHistory({ sessionId: bSession }, as(b));
    expect(h.messages[0]).toMatchObject({ role: 'user', content: 'B secret question' });
    expect((await sessions.getSession({ sessionId: bSession }, as(b))).session!.title).toBe('B private');
    // A session created by A belongs to A even when the body names B.
    const mine = await sessions.createSession({ caller: b, externalId: `a-${randomUUID()}` }, as(a));
    expect(await code(sessions.getSession({ sessionId: mine.session!.id }, as(b)))).toBe(Code.NotFound);
    expect((await sessions.getSession({ sessionId: mine.session!.id }, as(a))).session!.id).toBe(mine.session!.id);
  });

  it('the anonymous development principal and system callers see every task; a system caller submits for the user it names', async () => {
    for (const who of ['anonymous', 'system'] as const) {
      expect((await orch.getTaskStatus({ taskId: tasks.b }, as(who))).userId).toBe(b.userId);
      const ids = (await orch.listTasks({ limit: 100, userId: c.userId }, as(who))).tasks.map((x) => x.taskId);
      expect(ids).toContain(tasks.c);
    }
    const r = await orch.submitTask(
      { query: 'scheduled for B', metadata: { userId: b.userId, tenantId: b.tenantId }, options: { modeName: 'simple' } },
      as('system'),
    );
    expect((await orch.getTaskStatus({ taskId: r.taskId }, as(b))).userId).toBe(b.userId);
    const anon = await orch.submitTask(
      { query: 'anonymous', metadata: { userId: b.userId, tenantId: b.tenantId }, options: { modeName: 'simple' } },
      as('anonymous'),
    );
    expect((await orch.getTaskStatus({ taskId: anon.taskId }, as('system'))).userId).toBe('');
    await settled(orch, r.taskId);
    await settled(orch, anon.taskId);
  });
});

describe('embedded default', () => {
  it('binds the RPC port to 127.0.0.1 unless GRPC_HOST says otherwise', () => {
    expect(loadConfig({}).rpc.host).toBe('127.0.0.1');
    expect(loadConfig({ GRPC_HOST: '0.0.0.0' }).rpc.host).toBe('0.0.0.0');
  });

  it('refuses an INTERNAL_RPC_TOKEN too short to be a secret', () => {
    expect(() => loadConfig({ INTERNAL_RPC_TOKEN: 'short' })).toThrow(/INTERNAL_RPC_TOKEN/);
    expect(loadConfig({ INTERNAL_RPC_TOKEN: TEST_RPC_TOKEN }).rpc.token).toBe(TEST_RPC_TOKEN);
  });

  it('listens on loopback only and authenticates with a token generated once into DATA_DIR (mode 0600)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'taskorch-rpc-auth-'));
    // GRPC_HOST and INTERNAL_RPC_TOKEN unset: the defaults.
    const env = { GRPC_HOST: '', INTERNAL_RPC_TOKEN: '', DATA_DIR: dataDir, ROLES: 'gateway,orchestrator' };
    let e = await startTestApp(env);
    const local: Http2SessionManager[] = [];
    const clientOf = (url: string) => {
      const m = new Http2SessionManager(url);
      local.push(m);
      return createClient(OrchestratorService, createGrpcTransport({ baseUrl: url, sessionManager: m }));
    };
    try {
      const port = e.app.grpcPort!;
      const reach = (host: string) =>
        new Promise<string>((res) => {
          const s = connect({ host, port, timeout: 3000 }, () => {
            s.destroy();
            res('connected');
          });
          s.on('error', (err: NodeJS.ErrnoException) => res(err.code ?? err.message));
          s.on('timeout', () => {
            s.destroy();
            res('timeout');
          });
        });
      expect(await reach('127.0.0.1')).toBe('connected');
      const external = Object.values(networkInterfaces())
        .flat()
        .find((i) => i && i.family === 'IPv4' && !i.internal);
      if (external) expect(await reach(external.address)).toBe('ECONNREFUSED');

      const file = join(dataDir, 'internal-rpc-token');
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const token = readFileSync(file, 'utf8').trim();
      expect(token.length).toBeGreaterThanOrEqual(32);
      const orch = clientOf(`http://127.0.0.1:${port}`);
      expect(await code(orch.listTasks({}, as('system', token)))).toBe('ok');
      expect(await code(orch.listTasks({}, as('system', TEST_RPC_TOKEN)))).toBe(Code.Unauthenticated);
      expect(await code(orch.listTasks({}, as('system', null)))).toBe(Code.Unauthenticated);

      // The in-process gateway reaches the orchestrator with the same token (readiness round trip).
      expect((await json(await fetch(`${e.base}/readiness`))).checks.orchestrator.ok).toBe(true);

      // A restart on the same DATA_DIR keeps the token.
      for (const m of local.splice(0)) m.abort();
      await e.stop();
      e = await startTestApp(env);
      expect(readFileSync(file, 'utf8').trim()).toBe(token);
      const again = clientOf(`http://127.0.0.1:${e.app.grpcPort}`);
      expect(await code(again.listTasks({}, as('system', token)))).toBe('ok');
    } finally {
      for (const m of local) m.abort();
      await e.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
