// The in-process transport (./direct-transport.ts): a unary call reaches the implementation
// through the client's and the server's interceptors (the internal token checked, the caller
// read from the headers), failures arrive as a caller over the wire would see them, deadlines
// and the caller's cancellation stop the wait, and streaming calls use the fallback transport.
import { randomUUID } from 'node:crypto';
import { getEventListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { Code, ConnectError, createClient, createRouterTransport, type ConnectRouter } from '@connectrpc/connect';
import { describe, expect, it } from 'vitest';
import { create } from '@bufbuild/protobuf';
import { GetTaskStatusRequestSchema, OrchestratorService } from '../gen/svc/v1/orchestrator_pb.js';
import { StreamingService } from '../gen/svc/v1/streaming_pb.js';
import { CALLER, callAs } from '../kernel/index.js';
import { clientAuthInterceptor, serverAuthInterceptor } from '../rpc/index.js';
import { rpcFailure } from '../../test/helpers/connect.js';
import { createDirectTransport } from './direct-transport.js';

const TOKEN = 'unit-test-internal-token-0123456789abcdef';
const user = { kind: 'user' as const, userId: randomUUID(), tenantId: randomUUID() };

/** What the implementation saw of each call. */
const seen: { message?: unknown; signal?: AbortSignal; timeoutMs?: number }[] = [];

const routes = (r: ConnectRouter) => {
  r.service(OrchestratorService, {
    getTaskStatus: (req, ctx) => {
      seen.push({ message: req, signal: ctx.signal, timeoutMs: ctx.timeoutMs() });
      if (req.taskId === 'missing') throw new ConnectError('task not found', Code.NotFound);
      if (req.taskId === 'bug') throw new Error('something broke');
      return { taskId: req.taskId, result: JSON.stringify(ctx.values.get(CALLER)) };
    },
    cancelTask: async (_req, ctx) => {
      await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
      return { success: false, message: 'stopped' };
    },
  });
  r.service(StreamingService, {
    async *streamTaskExecution(req) {
      yield { workflowId: req.workflowId, type: 'WORKFLOW_STARTED', seq: 1n };
    },
  });
};

function transport(token = TOKEN) {
  const clientInterceptors = [clientAuthInterceptor(token)];
  const serverInterceptors = [serverAuthInterceptor(TOKEN)];
  const fallback = createRouterTransport(routes, { router: { interceptors: serverInterceptors }, transport: { interceptors: clientInterceptors } });
  return createDirectTransport({ routes, clientInterceptors, serverInterceptors, fallback });
}

describe('createDirectTransport', () => {
  it('calls the implementation with the caller the server interceptor read, no copy of the message', async () => {
    const client = createClient(OrchestratorService, transport());
    seen.length = 0;
    const msg = create(GetTaskStatusRequestSchema, { taskId: 't1' });
    const r = await client.getTaskStatus(msg, callAs(user));
    expect(r.taskId).toBe('t1');
    expect(JSON.parse(r.result)).toEqual(user);
    expect(seen).toHaveLength(1);
    expect(seen[0].message).toBe(msg);
    expect(seen[0].signal!.aborted).toBe(true); // the handler's context ends with the call
  });

  it("applies the server's checks: a wrong internal token is refused", async () => {
    const f = await rpcFailure(createClient(OrchestratorService, transport('not-the-token')).getTaskStatus({ taskId: 't1' }, callAs(user)));
    expect(f).toEqual({ code: Code.Unauthenticated, message: 'internal RPC token missing or invalid' });
  });

  it("hands on the implementation's ConnectError, anything else as Internal, and unimplemented methods as such", async () => {
    const client = createClient(OrchestratorService, transport());
    expect(await rpcFailure(client.getTaskStatus({ taskId: 'missing' }, callAs(user)))).toEqual({ code: Code.NotFound, message: 'task not found' });
    expect(await rpcFailure(client.getTaskStatus({ taskId: 'bug' }, callAs(user)))).toEqual({ code: Code.Internal, message: 'something broke' });
    expect((await rpcFailure(client.pauseTask({ taskId: 'x' }, callAs(user)))).code).toBe(Code.Unimplemented);
  });

  it("ends the wait at the deadline (DeadlineExceeded) and on the caller's abort (Canceled), and tells the implementation", async () => {
    const client = createClient(OrchestratorService, transport());
    const t0 = performance.now();
    expect((await rpcFailure(client.cancelTask({ taskId: 'x' }, { ...callAs(user), timeoutMs: 50 }))).code).toBe(Code.DeadlineExceeded);
    expect(performance.now() - t0).toBeLessThan(2000);
    const ac = new AbortController();
    const call = client.cancelTask({ taskId: 'x' }, { ...callAs(user), signal: ac.signal });
    await sleep(10);
    ac.abort();
    expect((await rpcFailure(call)).code).toBe(Code.Canceled);
  });

  it("leaves no listener on the caller's signal, never runs a call cancelled before it starts, and ends the handler's context", async () => {
    const client = createClient(OrchestratorService, transport());
    const ac = new AbortController();
    seen.length = 0;
    for (let i = 0; i < 20; i++) await client.getTaskStatus({ taskId: `t${i}` }, { ...callAs(user), signal: ac.signal, timeoutMs: 5000 });
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
    // The handler saw the deadline, and its context ended with the call.
    expect(seen.every((s) => s.signal!.aborted)).toBe(true);
    expect(seen[0].timeoutMs).toBeGreaterThan(4000);
    ac.abort();
    seen.length = 0;
    expect((await rpcFailure(client.getTaskStatus({ taskId: 'late' }, { ...callAs(user), signal: ac.signal }))).code).toBe(Code.Canceled);
    expect(seen).toHaveLength(0);
  });

  it('serves streaming calls through the fallback transport', async () => {
    const out = [];
    for await (const ev of createClient(StreamingService, transport()).streamTaskExecution({ workflowId: 'w1' }, callAs(user))) out.push(ev);
    expect(out.map((e) => [e.workflowId, e.type])).toEqual([['w1', 'WORKFLOW_STARTED']]);
  });
});
