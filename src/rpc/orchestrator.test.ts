// OrchestratorService (./orchestrator.ts) through an in-memory Connect router, behind the
// real authentication interceptor, over a fake task store: ownership of every task RPC
// (another tenant's task is NotFound, another user's PermissionDenied, before anything is
// done), argument checks (InvalidArgument), and the error mapping (an unexpected failure is
// Internal with its message hidden and logged once; a client's error is passed on, not
// logged). No sockets, no NATS, no database.
import { randomUUID } from 'node:crypto';
import { Code, createClient, createRouterTransport } from '@connectrpc/connect';
import { describe, expect, it, vi } from 'vitest';
import type { Bus } from '../bus/index.js';
import { ExecutionMode, type ModelTier, TaskStatus } from '../gen/svc/v1/common_pb.js';
import { OrchestratorService } from '../gen/svc/v1/orchestrator_pb.js';
import { SYSTEM_CALLER, ANONYMOUS_CALLER, badRequest, callAs, type Logger, type RpcCaller } from '../kernel/index.js';
import type { TaskRow, TaskStore } from '../tasks/index.js';
import { clientAuthInterceptor, serverAuthInterceptor } from './auth.js';
import { createOrchestratorService } from './orchestrator.js';
import { rpcFailure } from '../../test/helpers/connect.js';

const TOKEN = 'unit-test-internal-token-0123456789abcdef';
const owner = { userId: randomUUID(), tenantId: randomUUID() };
const asOwner = callAs({ kind: 'user', ...owner });
const sameTenant = callAs({ kind: 'user', userId: randomUUID(), tenantId: owner.tenantId });
const otherTenant = callAs({ kind: 'user', userId: randomUUID(), tenantId: randomUUID() });

function row(over: Partial<TaskRow> = {}): TaskRow {
  const at = new Date('2025-01-01T00:00:00.000Z');
  return {
    id: randomUUID(),
    session_id: 'sess-1',
    user_id: owner.userId,
    tenant_id: owner.tenantId,
    query: 'what is 2+2',
    context: {},
    options: {},
    mode: 'EXECUTION_MODE_SIMPLE',
    status: 'TASK_STATUS_COMPLETED',
    result: '4',
    metadata: { agents_used: 1 },
    error: '',
    model_used: 'm',
    provider: 'p',
    input_tokens: 3,
    output_tokens: 4,
    total_tokens: 7,
    cost_usd: 0.01,
    trace_id: null,
    created_at: at,
    updated_at: at,
    started_at: new Date(at.getTime() + 100),
    completed_at: new Date(at.getTime() + 350),
    ...over,
  };
}

function setup(opts: { getTask?: (id: string) => Promise<TaskRow | undefined> } = {}) {
  const task = row();
  const store = {
    getTask: vi.fn(opts.getTask ?? (async (id: string) => (id === task.id ? task : undefined))),
    listTasks: vi.fn(async () => ({ rows: [task], total: 1 })),
    listEvents: vi.fn(async () => []),
  };
  const log = { error: vi.fn(), warn: vi.fn(), info: vi.fn(), debug: vi.fn(), child: () => log };
  // Nothing here may reach NATS: a bus call would be a TypeError, i.e. Internal, not the code expected.
  const bus = {} as Bus;
  const transport = createRouterTransport(
    (r) =>
      r.service(
        OrchestratorService,
        createOrchestratorService({ bus, store: store as unknown as TaskStore, log: log as unknown as Logger, defaultTier: 'small' }),
      ),
    { router: { interceptors: [serverAuthInterceptor(TOKEN)] }, transport: { interceptors: [clientAuthInterceptor(TOKEN)] } },
  );
  return { task, store, log, client: createClient(OrchestratorService, transport) };
}

describe('task ownership', () => {
  it('the owner reads the task; its fields and latency come from the row', async () => {
    const { client, task } = setup();
    const s = await client.getTaskStatus({ taskId: task.id }, asOwner);
    expect(s).toMatchObject({ taskId: task.id, status: TaskStatus.COMPLETED, result: '4', mode: ExecutionMode.SIMPLE, userId: owner.userId, progress: 1 });
    expect(s.metrics?.latencyMs).toBe(250n);
  });

  it("another tenant's task is NotFound and another user's PermissionDenied, on every task RPC, before acting", async () => {
    const { client, task } = setup();
    const calls = {
      getTaskStatus: (o: typeof asOwner) => client.getTaskStatus({ taskId: task.id }, o),
      getTaskEvents: (o: typeof asOwner) => client.getTaskEvents({ taskId: task.id }, o),
      cancelTask: (o: typeof asOwner) => client.cancelTask({ taskId: task.id, reason: 'x' }, o),
      pauseTask: (o: typeof asOwner) => client.pauseTask({ taskId: task.id }, o),
      resumeTask: (o: typeof asOwner) => client.resumeTask({ taskId: task.id }, o),
      getControlState: (o: typeof asOwner) => client.getControlState({ taskId: task.id }, o),
    };
    for (const [name, call] of Object.entries(calls)) {
      expect(await rpcFailure(call(otherTenant)), name).toEqual({ code: Code.NotFound, message: 'Task not found' });
      expect(await rpcFailure(call(sameTenant)), name).toEqual({ code: Code.PermissionDenied, message: 'Forbidden: not the task owner' });
    }
  });

  it('system and anonymous callers see every task', async () => {
    const { client, task } = setup();
    for (const c of [SYSTEM_CALLER, ANONYMOUS_CALLER] as RpcCaller[]) expect((await client.getTaskStatus({ taskId: task.id }, callAs(c))).taskId).toBe(task.id);
  });

  it('an unknown id is NotFound, and a malformed one NotFound without a look-up', async () => {
    const { client, store } = setup();
    expect(await rpcFailure(client.getTaskStatus({ taskId: randomUUID() }, asOwner))).toEqual({ code: Code.NotFound, message: 'Task not found' });
    store.getTask.mockClear();
    expect(await rpcFailure(client.getTaskStatus({ taskId: "1' OR '1'='1" }, asOwner))).toEqual({ code: Code.NotFound, message: 'Task not found' });
    expect(store.getTask).not.toHaveBeenCalled();
  });
});

describe('ListTasks', () => {
  it("lists a user caller's own tasks whatever the body names; a system caller's filters are the body's", async () => {
    const { client, store } = setup();
    const someone = { userId: randomUUID(), tenantId: randomUUID() };
    await client.listTasks({ ...someone, limit: 5 }, asOwner);
    expect(store.listTasks).toHaveBeenLastCalledWith(expect.objectContaining({ limit: 5, ...owner }));
    await client.listTasks({ ...someone }, callAs(SYSTEM_CALLER));
    expect(store.listTasks).toHaveBeenLastCalledWith(expect.objectContaining({ limit: 20, ...someone }));
  });

  it('refuses bad arguments with InvalidArgument, without a query', async () => {
    const { client, store } = setup();
    for (const [req, message] of [
      [{ limit: 101 }, 'limit must be between 1 and 100'],
      [{ limit: -1 }, 'limit must be between 1 and 100'],
      [{ offset: -1 }, 'offset must be >= 0'],
      [{ filterStatus: 99 as TaskStatus }, 'invalid filter_status: 99'],
      [{ userId: 'nope' }, 'user_id and tenant_id must be UUIDs'],
    ] as const) {
      expect(await rpcFailure(client.listTasks(req, callAs(SYSTEM_CALLER))), message).toEqual({ code: Code.InvalidArgument, message });
    }
    expect(store.listTasks).not.toHaveBeenCalled();
  });
});

describe('error mapping', () => {
  it('an unexpected failure is Internal, its message hidden from the caller and logged once', async () => {
    const { client, log } = setup({
      getTask: async () => {
        throw new Error('connection to 10.0.0.5:5432 refused');
      },
    });
    expect(await rpcFailure(client.getTaskStatus({ taskId: randomUUID() }, asOwner))).toEqual({ code: Code.Internal, message: 'internal error' });
    expect(log.error).toHaveBeenCalledTimes(1);
    expect(String((log.error.mock.calls[0][0] as { err: Error }).err.message)).toMatch(/10\.0\.0\.5/);
  });

  it("a client's error keeps its code and message and is not logged", async () => {
    const { client, log } = setup({
      getTask: async () => {
        throw badRequest('bad things');
      },
    });
    expect(await rpcFailure(client.getTaskStatus({ taskId: randomUUID() }, asOwner))).toEqual({ code: Code.InvalidArgument, message: 'bad things' });
    expect(log.error).not.toHaveBeenCalled();
  });

  it('SubmitTask refuses an unknown mode or tier with InvalidArgument before storing anything', async () => {
    const { client, store } = setup();
    expect(await rpcFailure(client.submitTask({ query: 'q', options: { mode: 42 as ExecutionMode } }, asOwner))).toEqual({
      code: Code.InvalidArgument,
      message: 'invalid mode: 42',
    });
    expect((await rpcFailure(client.submitTask({ query: 'q', options: { modelTier: 42 as ModelTier } }, asOwner))).code).toBe(Code.InvalidArgument);
    expect(store.getTask).not.toHaveBeenCalled();
  });

  it('RPCs not built yet are Unimplemented', async () => {
    const { client } = setup();
    expect(await rpcFailure(client.approveTask({}, asOwner))).toEqual({ code: Code.Unimplemented, message: 'ApproveTask is not implemented yet' });
    expect((await rpcFailure(client.getPendingApprovals({}, asOwner))).code).toBe(Code.Unimplemented);
  });

  it('every RPC refuses a call without the caller the interceptor authenticates', async () => {
    const { client, task } = setup();
    expect((await rpcFailure(client.getTaskStatus({ taskId: task.id }))).code).toBe(Code.Unauthenticated);
  });
});
