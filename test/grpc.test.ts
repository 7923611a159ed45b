/**
 * The internal Connect services over the real HTTP/2 port: gRPC protocol (createGrpcTransport)
 * for every call, and once more with the Connect protocol over HTTP/2. Every call presents the
 * internal RPC token and acts as one user (authentication itself: rpc-auth.test.ts).
 */
import { randomUUID } from 'node:crypto';
import { create } from '@bufbuild/protobuf';
import { timestampDate } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError, createClient, type Client, type Interceptor, type Transport } from '@connectrpc/connect';
import { Http2SessionManager, createConnectTransport, createGrpcTransport } from '@connectrpc/connect-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecutionMode, type ModelTier, StatusCode, TaskStatus } from '../src/gen/svc/v1/common_pb.js';
import { OrchestratorService, SubmitTaskRequestSchema } from '../src/gen/svc/v1/orchestrator_pb.js';
import { StreamingService, type TaskUpdate } from '../src/gen/svc/v1/streaming_pb.js';
import { TEST_RPC_TOKEN, startTestApp, waitFor, type TestApp } from './helpers/app.js';

let t: TestApp;
/** HTTP/2 connections of the clients, closed before the app stops (its server waits for them). */
const sessions: Http2SessionManager[] = [];
const session = (url: string) => {
  const m = new Http2SessionManager(url);
  sessions.push(m);
  return m;
};
/** The token, and the caller on whose behalf every call here is made. */
const user = { userId: randomUUID(), tenantId: randomUUID() };
const asUser: Interceptor = (next) => (req) => {
  req.header.set('authorization', `Bearer ${TEST_RPC_TOKEN}`);
  req.header.set('x-caller-kind', 'user');
  req.header.set('x-caller-user-id', user.userId);
  req.header.set('x-caller-tenant-id', user.tenantId);
  return next(req);
};
let grpc: Transport;
let orch: Client<typeof OrchestratorService>;
let streaming: Client<typeof StreamingService>;

beforeAll(async () => {
  t = await startTestApp({ PARTIAL_CHUNK_CHARS: '40' });
  expect(t.app.grpcPort).toBeGreaterThan(0);
  const baseUrl = `http://127.0.0.1:${t.app.grpcPort}`;
  grpc = createGrpcTransport({ baseUrl, sessionManager: session(baseUrl), interceptors: [asUser] });
  orch = createClient(OrchestratorService, grpc);
  streaming = createClient(StreamingService, grpc);
});
afterAll(async () => {
  for (const m of sessions) m.abort();
  await t?.stop();
});

async function rpcError(p: Promise<unknown>): Promise<ConnectError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(ConnectError);
    return err as ConnectError;
  }
  throw new Error('expected the call to fail');
}

async function collect(it: AsyncIterable<TaskUpdate>): Promise<TaskUpdate[]> {
  const out: TaskUpdate[] = [];
  for await (const u of it) out.push(u);
  return out;
}

async function completed(c: Client<typeof OrchestratorService>, taskId: string) {
  return waitFor(async () => {
    const s = await c.getTaskStatus({ taskId });
    return s.status === TaskStatus.COMPLETED || s.status === TaskStatus.FAILED ? s : undefined;
  }, 20_000);
}

const submitReq = (query: string, mode: string, sessionId = '') =>
  create(SubmitTaskRequestSchema, { query, metadata: { sessionId }, context: { topic: 'analysis' }, options: { modeName: mode } });

describe('OrchestratorService over gRPC (HTTP/2)', () => {
  it('SubmitTask, GetTaskStatus, ListTasks and GetTaskEvents', async () => {
    const session = `grpc-${randomUUID()}`;
    const r = await orch.submitTask(submitReq('What is gRPC? Then compare it with REST.', 'standard', session));
    expect(r.status).toBe(StatusCode.OK);
    expect(r.taskId).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.workflowId).toBe(r.taskId);
    expect(r.sessionId).toBe(session);
    expect(r.createdAt).toBeDefined();
    expect(Math.abs(timestampDate(r.createdAt!).getTime() - Date.now())).toBeLessThan(60_000);

    const s = await completed(orch, r.taskId);
    expect(s).toMatchObject({
      taskId: r.taskId,
      status: TaskStatus.COMPLETED,
      query: 'What is gRPC? Then compare it with REST.',
      sessionId: session,
      mode: ExecutionMode.STANDARD,
      modelUsed: 'offline-deterministic',
      provider: 'offline',
      errorMessage: '',
    });
    expect(s.progress).toBe(1);
    expect(s.result).toContain('[offline provider');
    expect(s.usage!.totalTokens).toBeGreaterThan(0);
    expect(s.completedAt).toBeDefined();
    // ExecutionMetrics: latency, tokens, cache use, agents, mode.
    expect(s.metrics).toMatchObject({ agentsUsed: 1, mode: ExecutionMode.STANDARD, cacheHit: false });
    expect(s.metrics!.tokenUsage!.totalTokens).toBe(s.usage!.totalTokens);
    // Latency is the row's run time (started to completed), to the millisecond: a real
    // offline run takes time, so 0 would mean the metric is not computed.
    const [row] = await t.app.store.sql<{ started_at: Date; completed_at: Date }[]>`SELECT started_at, completed_at FROM tasks WHERE id = ${r.taskId}`;
    expect(s.metrics!.latencyMs).toBe(BigInt(row!.completed_at.getTime() - row!.started_at.getTime()));
    expect(s.metrics!.latencyMs).toBeGreaterThan(0n);

    const list = await orch.listTasks({ sessionId: session, limit: 10 });
    expect(list.totalCount).toBe(1);
    expect(list.tasks.map((x) => x.taskId)).toEqual([r.taskId]);
    expect(list.tasks[0]).toMatchObject({ status: TaskStatus.COMPLETED, mode: ExecutionMode.STANDARD, sessionId: session });
    const none = await orch.listTasks({ sessionId: session, filterStatus: TaskStatus.FAILED });
    expect(none.totalCount).toBe(0);

    const ev = await waitFor(async () => {
      const e = await orch.getTaskEvents({ taskId: r.taskId });
      // Complete: ends with STREAM_END and holds every seq up to it.
      return e.events.at(-1)?.type === 'STREAM_END' && e.events.length === Number(e.events.at(-1)!.seq) ? e : undefined;
    });
    expect(ev.events.map((e) => Number(e.seq))).toEqual(ev.events.map((_, i) => i + 1));
    expect(ev.events[0]).toMatchObject({ workflowId: r.taskId, type: 'WORKFLOW_STARTED' });
    const page = await orch.getTaskEvents({ taskId: r.taskId, afterSeq: 3n, limit: 2 });
    expect(page.events.map((e) => Number(e.seq))).toEqual([4, 5]);
  });

  it('NotFound for an unknown task; InvalidArgument for a bad request', async () => {
    for (const taskId of [randomUUID(), 'not-a-uuid']) {
      const e = await rpcError(orch.getTaskStatus({ taskId }));
      expect(e.code, taskId).toBe(Code.NotFound);
      expect(e.rawMessage).toBe('Task not found');
      expect((await rpcError(orch.getTaskEvents({ taskId }))).code).toBe(Code.NotFound);
    }
    expect((await rpcError(orch.submitTask({ query: '   ' }))).code).toBe(Code.InvalidArgument);
    expect((await rpcError(orch.submitTask(submitReq('x', 'turbo')))).code).toBe(Code.InvalidArgument);
    expect((await rpcError(orch.listTasks({ limit: 101 }))).code).toBe(Code.InvalidArgument);
  });

  it('refuses with InvalidArgument every field that is not available yet, and queues nothing', async () => {
    const marker = `grpc-not-yet-${randomUUID()}`;
    const cases: [Parameters<typeof orch.submitTask>[0], string][] = [
      [{ manualDecomposition: { mode: ExecutionMode.COMPLEX } }, 'manual_decomposition'],
      [{ sessionContext: {} }, 'session_context'],
      [{ metadata: { tokenBudget: 1000 } }, 'metadata.token_budget'],
    ];
    for (const [fields, name] of cases) {
      const e = await rpcError(orch.submitTask({ query: marker, ...fields }));
      expect(e.code, name).toBe(Code.InvalidArgument);
      expect(e.rawMessage).toBe(`${name} is not available yet`);
    }
    const [{ n }] = await t.app.store.sql`SELECT count(*)::int AS n FROM tasks WHERE query = ${marker}`;
    expect(n).toBe(0);
  });

  it('honours the mode enum and the context fallbacks; refuses unknown enum values and prototype names', async () => {
    const r = await orch.submitTask({
      query: 'Plan it. Then do it. And check it.',
      options: { mode: ExecutionMode.SIMPLE },
      context: { model_tier: 'large', model_override: 'offline-deterministic' },
    });
    const [row] = await t.app.store.sql`SELECT mode, options FROM tasks WHERE id = ${r.taskId}::uuid`;
    expect(row.mode).toBe('EXECUTION_MODE_SIMPLE');
    expect(row.options).toMatchObject({ mode: 'simple', model_tier: 'large', model_override: 'offline-deterministic' });
    for (const tier of ['constructor', '__proto__', 'toString', 'huge']) {
      const e = await rpcError(orch.submitTask({ query: 'x', context: { model_tier: tier } }));
      expect(e.code, tier).toBe(Code.InvalidArgument);
      expect(e.rawMessage).toBe('context.model_tier must be one of: small, medium, large');
    }
    expect((await rpcError(orch.submitTask({ query: 'x', options: { modelTier: 42 as ModelTier } }))).code).toBe(Code.InvalidArgument);
    expect((await rpcError(orch.submitTask({ query: 'x', options: { mode: 42 as ExecutionMode } }))).code).toBe(Code.InvalidArgument);
    expect((await rpcError(orch.listTasks({ filterStatus: 42 as TaskStatus }))).code).toBe(Code.InvalidArgument);
  });
});

describe('StreamingService.StreamTaskExecution over gRPC', () => {
  let id: string;
  let all: TaskUpdate[];
  beforeAll(async () => {
    id = (await orch.submitTask(submitReq('Stream me over gRPC. And then finish.', 'complex'))).taskId;
    all = await collect(streaming.streamTaskExecution({ workflowId: id }));
  });

  it('streams every event in order and ends after STREAM_END', () => {
    expect(all.length).toBeGreaterThan(10);
    expect(all.map((u) => Number(u.seq))).toEqual(all.map((_, i) => i + 1));
    expect(all[0].type).toBe('WORKFLOW_STARTED');
    expect(all.at(-1)!.type).toBe('STREAM_END');
    for (const u of all) {
      expect(u.workflowId).toBe(id);
      expect(u.streamId).toBe(`${timestampDate(u.timestamp!).getTime()}-${u.seq}`);
    }
    expect(all.find((u) => u.type === 'LLM_PARTIAL')!.payload).toMatchObject({ delta: expect.any(String) });
  });

  it('follows a workflow live from its submission', async () => {
    const live = (await orch.submitTask(submitReq('Live gRPC stream. Then more.', 'complex'))).taskId;
    const got = await collect(streaming.streamTaskExecution({ workflowId: live }));
    expect(got.map((u) => Number(u.seq))).toEqual(got.map((_, i) => i + 1));
    expect(got.at(-1)!.type).toBe('STREAM_END');
  });

  it('resumes after last_event_id, and after last_stream_id (which wins)', async () => {
    const k = 6;
    const after = (n: number) => all.filter((u) => Number(u.seq) > n);
    expect(await collect(streaming.streamTaskExecution({ workflowId: id, lastEventId: BigInt(k) }))).toEqual(after(k));
    expect(await collect(streaming.streamTaskExecution({ workflowId: id, lastStreamId: all[k - 1].streamId }))).toEqual(after(k));
    expect(await collect(streaming.streamTaskExecution({ workflowId: id, lastStreamId: all[k + 2].streamId, lastEventId: 2n }))).toEqual(after(k + 3));
    expect(await collect(streaming.streamTaskExecution({ workflowId: id, lastStreamId: String(k) }))).toEqual(after(k));
    expect(await collect(streaming.streamTaskExecution({ workflowId: id, lastEventId: BigInt(all.length) }))).toEqual([]);
  });

  it('filters by types', async () => {
    const types = ['LLM_PARTIAL', 'AGENT_COMPLETED'];
    const got = await collect(streaming.streamTaskExecution({ workflowId: id, types }));
    expect(got).toEqual(all.filter((u) => types.includes(u.type)));
    const resumed = await collect(streaming.streamTaskExecution({ workflowId: id, types: ['AGENT_STARTED'], lastEventId: 3n }));
    expect(resumed).toEqual(all.filter((u) => u.type === 'AGENT_STARTED' && u.seq > 3n));
  });

  it('rejects a missing or invalid workflow_id and an invalid last_stream_id with InvalidArgument', async () => {
    expect((await rpcError(collect(streaming.streamTaskExecution({ workflowId: '' })))).code).toBe(Code.InvalidArgument);
    expect((await rpcError(collect(streaming.streamTaskExecution({ workflowId: 'svc.events.>' })))).code).toBe(Code.InvalidArgument);
    expect((await rpcError(collect(streaming.streamTaskExecution({ workflowId: id, lastStreamId: 'not-a-stream-id' })))).code).toBe(Code.InvalidArgument);
  });
});

describe('Connect protocol over HTTP/2', () => {
  it('serves the same services', async () => {
    const baseUrl = `http://127.0.0.1:${t.app.grpcPort}`;
    const connect = createConnectTransport({ baseUrl, httpVersion: '2', sessionManager: session(baseUrl), interceptors: [asUser] });
    const c = createClient(OrchestratorService, connect);
    const s = createClient(StreamingService, connect);
    const r = await c.submitTask(submitReq('Over the Connect protocol', 'simple'));
    expect(r.status).toBe(StatusCode.OK);
    const updates = await collect(s.streamTaskExecution({ workflowId: r.taskId }));
    expect(updates.map((u) => Number(u.seq))).toEqual(updates.map((_, i) => i + 1));
    expect(updates.at(-1)!.type).toBe('STREAM_END');
    const st = await c.getTaskStatus({ taskId: r.taskId });
    expect(st.status).toBe(TaskStatus.COMPLETED);
    expect(st.mode).toBe(ExecutionMode.SIMPLE);
    const list = await c.listTasks({ limit: 100 });
    expect(list.tasks.some((x) => x.taskId === r.taskId)).toBe(true);
    expect((await rpcError(c.getTaskStatus({ taskId: randomUUID() }))).code).toBe(Code.NotFound);
  });
});

describe('StreamTaskExecution past the retained window', () => {
  let small: TestApp;
  let client: Client<typeof StreamingService>;
  let orchSmall: Client<typeof OrchestratorService>;
  beforeAll(async () => {
    // JetStream keeps 16 events per workflow here; a task streams far more (5-char deltas).
    small = await startTestApp({ EVENTS_MAX_PER_WORKFLOW: '16', STREAMING_RING_CAPACITY: '16', PARTIAL_CHUNK_CHARS: '5' });
    const baseUrl = `http://127.0.0.1:${small.app.grpcPort}`;
    const tr = createGrpcTransport({ baseUrl, sessionManager: session(baseUrl), interceptors: [asUser] });
    client = createClient(StreamingService, tr);
    orchSmall = createClient(OrchestratorService, tr);
  });
  afterAll(async () => {
    for (const m of sessions) m.abort();
    await small?.stop();
  });

  it('says REPLAY_GAP first, then streams the retained events in order to STREAM_END', async () => {
    const r = await orchSmall.submitTask(submitReq('Tell me about the history of streaming protocols.', 'simple'));
    await completed(orchSmall, r.taskId);
    const all = await collect(client.streamTaskExecution({ workflowId: r.workflowId }));
    expect(all[0].type).toBe('REPLAY_GAP');
    const first = Number((all[0].payload as { first_available_seq: number }).first_available_seq);
    expect((all[0].payload as { requested_after: number }).requested_after).toBe(0);
    expect(first).toBeGreaterThan(1);
    const seqs = all.slice(1).map((u) => Number(u.seq));
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => first + i));
    expect(seqs.length).toBe(16);
    expect(all[all.length - 1].type).toBe('STREAM_END');
    // A resume point inside the retained window: no notice.
    const tail = await collect(client.streamTaskExecution({ workflowId: r.workflowId, lastEventId: BigInt(first + 3) }));
    expect(tail[0].type).not.toBe('REPLAY_GAP');
    expect(Number(tail[0].seq)).toBe(first + 4);
  });
});
