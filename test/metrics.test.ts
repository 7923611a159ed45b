/**
 * Prometheus metrics (issue 19 §4): GET /metrics on the gateway port, unauthenticated on a
 * gateway that authenticates everything else, while a task runs (its start message ack-pending,
 * an SSE and a WebSocket client open) and after (the counters moved by what happened, every
 * name valid, no per-task label); and HEALTH_PORT on a process without a gateway (ROLES=worker):
 * /health, /readiness, /metrics.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { OFFLINE_MODEL, OfflineProvider, type LlmProvider } from '../src/llm/index.js';
import { json, readSse, startTestApp, waitFor, type TestApp } from './helpers/app.js';
import { registerUser } from './helpers/users.js';

/** The offline model, answering only once released (hold()): a task stays running meanwhile. */
const offline = new OfflineProvider();
let gate: Promise<void> = Promise.resolve();
const llm: LlmProvider = {
  name: 'held-offline',
  complete: async (req, onDelta) => {
    await gate;
    return offline.complete(req, onDelta);
  },
};
function hold(): { release(): void } {
  let release!: () => void;
  gate = new Promise((r) => (release = r));
  return { release };
}

let t: TestApp;
let worker: TestApp;
beforeAll(async () => {
  t = await startTestApp({ GATEWAY_SKIP_AUTH: '0', PASSWORD_SCRYPT_N: '1024', JWT_SECRET: 'metrics-test-secret-0123456789abcdefghij' }, { llm });
  // A worker-only process on the same NATS server (it may take the task too): no gateway, so
  // HEALTH_PORT is its HTTP face.
  worker = await startTestApp({ ROLES: 'worker', HEALTH_PORT: '0' }, { natsUrl: t.natsUrl, llm });
});
afterAll(async () => {
  await worker?.stop();
  await t?.stop();
});

interface Scrape {
  /** `# TYPE` of every metric family. */
  types: Map<string, string>;
  samples: { name: string; labels: Record<string, string>; value: number }[];
}

/** The Prometheus text format, as far as prom-client writes it (no escaped quotes in our label values). */
function parse(text: string): Scrape {
  const types = new Map<string, string>();
  const samples: Scrape['samples'] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) types.set(type[1], type[2]);
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, k, v] of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="([^"]*)"/g)) labels[k] = v;
    samples.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return { types, samples };
}

/** The sum of a metric's samples whose labels include `labels`. */
function total(s: Scrape, name: string, labels: Record<string, string> = {}): number {
  return s.samples.filter((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v)).reduce((a, x) => a + x.value, 0);
}

async function scrape(url: string): Promise<Scrape> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parse(await res.text());
}

describe('HEALTH_PORT on a process without a gateway', () => {
  it('serves /health, /readiness (NATS and the database checked) and /metrics', async () => {
    const port = worker.app.healthPort!;
    expect(port).toBeGreaterThan(0);
    expect(worker.app.gatewayPort).toBeUndefined();
    const base = `http://127.0.0.1:${port}`;
    const health = await fetch(`${base}/health`);
    expect(health.status).toBe(200);
    expect(await json(health)).toMatchObject({ status: 'healthy', checks: { nats: { ok: true } } });
    const ready = await fetch(`${base}/readiness`);
    expect(ready.status).toBe(200);
    expect(await json(ready)).toMatchObject({ status: 'ready', checks: { roles: { ok: true }, nats: { ok: true }, database: { ok: true } } });
    const s = await scrape(`${base}/metrics`);
    expect(s.types.get('taskorch_consumer_pending_messages')).toBe('gauge');
    expect(total(s, 'taskorch_consumer_pending_messages', { stream: 'TASKS', consumer: 'workers' })).toBeGreaterThanOrEqual(0);
    expect(s.samples.some((x) => x.name === 'taskorch_consumer_ack_pending_messages' && x.labels.consumer === 'workers')).toBe(true);
    expect(s.types.get('nodejs_eventloop_lag_seconds')).toBe('gauge');
    expect((await fetch(`${base}/api/v1/tasks`)).status).toBe(404);
  });
});

describe('GET /metrics on the gateway port', () => {
  it('needs no credentials, and counts a task, its model call and the events SSE and WebSocket clients received', async () => {
    const u = await registerUser(t.base, 'metrics');
    expect((await fetch(`${t.base}/api/v1/tasks`)).status).toBe(401);
    const before = await scrape(`${t.base}/metrics`);
    /** Open connections [sse, ws] beyond those open before this test, in a scrape. */
    const opened = (s: Scrape) =>
      (['sse', 'ws'] as const)
        .map((transport) => total(s, 'taskorch_stream_connections', { transport }) - total(before, 'taskorch_stream_connections', { transport }))
        .join();
    const model = hold();
    const r = await fetch(`${t.base}/api/v1/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...u.h },
      body: JSON.stringify({ query: 'What is 2+2?', mode: 'simple' }),
    });
    expect(r.status).toBe(200);
    const { task_id } = await json(r);
    const sse = readSse(`${t.base}/api/v1/stream/sse?workflow_id=${task_id}`, { headers: u.h });
    const ws = new WebSocket(`ws://127.0.0.1:${t.app.gatewayPort}/api/v1/stream/ws?workflow_id=${task_id}`, { headers: u.h });
    const wsMessages: string[] = [];
    ws.on('message', (m) => wsMessages.push(String(m)));
    const wsClosed = new Promise<number>((resolve) => ws.on('close', resolve));
    // While the model call is held: the task is delivered and not acked, both clients connected.
    await waitFor(async () => {
      const s = await scrape(`${t.base}/metrics`);
      return opened(s) === '1,1' && total(s, 'taskorch_consumer_ack_pending_messages', { stream: 'TASKS', consumer: 'workers' }) === 1;
    });
    model.release();
    const { events, closedByServer } = await sse;
    expect(closedByServer).toBe(true);
    expect(await wsClosed).toBe(1000);
    const received = events.filter((e) => e.event !== 'done').length;
    expect(received).toBeGreaterThan(1);
    expect(wsMessages.length).toBe(received);
    await waitFor(async () => (await json(await fetch(`${t.base}/api/v1/tasks/${task_id}`, { headers: u.h }))).status === 'TASK_STATUS_COMPLETED');

    const after = await scrape(`${t.base}/metrics`);
    const moved = (name: string, labels: Record<string, string> = {}) => total(after, name, labels) - total(before, name, labels);
    expect(moved('taskorch_tasks_submitted_total', { mode: 'simple' })).toBe(1);
    expect(moved('taskorch_tasks_finished_total', { mode: 'simple', status: 'completed' })).toBe(1);
    expect(moved('taskorch_task_duration_seconds_count', { mode: 'simple' })).toBe(1);
    expect(moved('taskorch_llm_calls_total', { cache: 'miss' })).toBe(1);
    expect(moved('taskorch_llm_tokens_total', { kind: 'completion' })).toBeGreaterThan(0);
    expect(moved('taskorch_events_published_total', { type: 'WORKFLOW_COMPLETED' })).toBe(1);
    expect(moved('taskorch_events_published_total')).toBeGreaterThanOrEqual(received);
    expect(moved('taskorch_events_delivered_total', { transport: 'sse' })).toBe(received);
    expect(moved('taskorch_events_delivered_total', { transport: 'ws' })).toBe(received);
    expect(after.samples.some((x) => x.name === 'taskorch_llm_calls_total' && x.labels.model === OFFLINE_MODEL && x.labels.tier === 'small')).toBe(true);
    await waitFor(async () => opened(await scrape(`${t.base}/metrics`)) === '0,0');
  });

  it('names every metric after the Prometheus conventions, with no per-task or per-user label', async () => {
    const s = await scrape(`${t.base}/metrics`);
    const ours = [...s.types].filter(([name]) => name.startsWith('taskorch_'));
    expect(ours.length).toBeGreaterThanOrEqual(15);
    for (const [name, type] of ours) {
      expect(name).toMatch(/^taskorch_[a-z][a-z0-9_]*$/);
      if (type === 'counter') expect(name).toMatch(/_total$/);
      if (type === 'histogram') expect(name).toMatch(/_seconds$/);
      if (type === 'gauge') expect(name).not.toMatch(/_total$/);
    }
    for (const g of ['taskorch_stream_connections', 'taskorch_consumer_pending_messages', 'taskorch_consumer_ack_pending_messages']) {
      expect(s.types.get(g)).toBe('gauge');
    }
    expect(s.types.get('nodejs_eventloop_lag_seconds')).toBe('gauge');
    expect(s.types.get('process_cpu_seconds_total')).toBe('counter');
    const labels = new Set(s.samples.flatMap((x) => Object.keys(x.labels)));
    for (const bad of ['task_id', 'workflow_id', 'user_id', 'tenant_id', 'session_id']) expect(labels.has(bad)).toBe(false);
  });
});
