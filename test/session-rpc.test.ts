/**
 * SessionService's seven RPCs over the real HTTP/2 port with the gRPC protocol. Calls present
 * the internal RPC token; the caller travels in the x-caller-* headers (rpc-auth.test.ts
 * checks that the body's `caller` is not trusted).
 */
import { randomUUID } from 'node:crypto';
import { Code, ConnectError, createClient, type CallOptions, type Client, type Interceptor } from '@connectrpc/connect';
import { Http2SessionManager, createGrpcTransport } from '@connectrpc/connect-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OrchestratorService } from '../src/gen/svc/v1/orchestrator_pb.js';
import { SessionService } from '../src/gen/svc/v1/session_pb.js';
import { TEST_RPC_TOKEN, json, startTestApp, waitFor, type TestApp } from './helpers/app.js';

let t: TestApp;
let h2: Http2SessionManager;
let rpc: Client<typeof SessionService>;
const withToken: Interceptor = (next) => (req) => {
  req.header.set('authorization', `Bearer ${TEST_RPC_TOKEN}`);
  return next(req);
};
/** Call options for a call made on behalf of user `c`. */
const as = (c: { userId: string; tenantId: string }): CallOptions => ({
  headers: { 'x-caller-kind': 'user', 'x-caller-user-id': c.userId, 'x-caller-tenant-id': c.tenantId },
});

beforeAll(async () => {
  t = await startTestApp();
  const baseUrl = `http://127.0.0.1:${t.app.grpcPort}`;
  h2 = new Http2SessionManager(baseUrl);
  rpc = createClient(SessionService, createGrpcTransport({ baseUrl, sessionManager: h2, interceptors: [withToken] }));
});
afterAll(async () => {
  h2?.abort();
  await t?.stop();
});

async function code(p: Promise<unknown>): Promise<Code> {
  try {
    await p;
  } catch (err) {
    return ConnectError.from(err).code;
  }
  return -1 as Code;
}

describe('SessionService over gRPC', () => {
  it('creates, gets, lists, updates, reads history and events of, and deletes a session', async () => {
    const a = { userId: randomUUID(), tenantId: randomUUID() };
    const other = { userId: randomUUID(), tenantId: randomUUID() };
    const ext = `rpc-${randomUUID()}`;
    const created = await rpc.createSession({ externalId: ext, title: 'Planning' }, as(a));
    expect(created.session).toMatchObject({ externalId: ext, title: 'Planning', taskCount: 0 });
    expect(await code(rpc.createSession({ externalId: ext }, as(a)))).toBe(Code.AlreadyExists);
    const id = created.session!.id;

    // A task in that session, submitted as the same user through the orchestrator.
    await t.app.store.sql`UPDATE sessions SET tenant_id = ${a.tenantId}::uuid WHERE id = ${id}::uuid`;
    const orch = createClient(
      OrchestratorService,
      createGrpcTransport({ baseUrl: `http://127.0.0.1:${t.app.grpcPort}`, sessionManager: h2, interceptors: [withToken] }),
    );
    const sub = await orch.submitTask({ metadata: { sessionId: ext }, query: 'hello rpc', options: { modeName: 'simple' } }, as(a));
    await waitFor(async () => (await json(await fetch(`${t.base}/api/v1/tasks/${sub.taskId}`))).status === 'TASK_STATUS_COMPLETED');

    const got = await rpc.getSession({ sessionId: id }, as(a));
    expect(got.session).toMatchObject({ id, taskCount: 1 });
    expect(Number(got.session!.totalTokens)).toBeGreaterThan(0);
    expect((await rpc.getSession({ sessionId: ext }, as(a))).session!.id).toBe(id);
    expect(await code(rpc.getSession({ sessionId: id }, as(other)))).toBe(Code.NotFound);

    const list = await rpc.listSessions({ limit: 10 }, as(a));
    expect(list.totalCount).toBe(1);
    expect(list.sessions[0].id).toBe(id);
    expect((await rpc.listSessions({}, as(other))).totalCount).toBe(0);

    const upd = await rpc.updateSession({ sessionId: id, title: 'Renamed' }, as(a));
    expect(upd.session!.title).toBe('Renamed');
    expect(await code(rpc.updateSession({ sessionId: id, title: '' }, as(a)))).toBe(Code.InvalidArgument);

    const hist = await rpc.getSessionHistory({ sessionId: ext }, as(a));
    expect(hist.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(hist.messages[0]).toMatchObject({ content: 'hello rpc', taskId: sub.taskId });

    const ev = await waitFor(async () => {
      const r = await rpc.getSessionEvents({ sessionId: id }, as(a));
      return r.turns[0]?.events.at(-1)?.type === 'STREAM_END' ? r : undefined;
    });
    expect(ev.turns).toHaveLength(1);
    expect(ev.turns[0].events.map((e) => Number(e.seq))).toEqual(ev.turns[0].events.map((_, i) => i + 1));

    expect((await rpc.deleteSession({ sessionId: id }, as(other))).success).toBe(true);
    expect((await rpc.getSession({ sessionId: id }, as(a))).session!.id).toBe(id);
    expect((await rpc.deleteSession({ sessionId: id }, as(a))).success).toBe(true);
    expect(await code(rpc.getSession({ sessionId: id }, as(a)))).toBe(Code.NotFound);
  });
});
