/**
 * Traces across processes (issue 19 §4): two apps over one nats-server and database, a
 * gateway+orchestrator and a worker, each with its own tracer provider and in-memory exporter,
 * so a span of the worker can have the gateway's span as parent only through the start
 * message's NATS headers. A task submitted with a client traceparent runs a template (a
 * calculator step, then a model step on the offline provider): one trace covers the
 * submission, the workflow activation, the tool call and the model call. Held for an approval,
 * the workflow passivates and its second activation (after the wake) joins the same trace.
 * And the export: OTLP over HTTP to a local server only when OTEL_EXPORTER_OTLP_ENDPOINT is set.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startApp, type App } from '../src/app/index.js';
import { loadConfig } from '../src/config/index.js';
import { createLogger } from '../src/kernel/index.js';
import { startTracing } from '../src/tracing/index.js';
import { startTestNats, type TestNats } from './harness/nats.js';
import { TEST_RPC_TOKEN, json, waitFor } from './helpers/app.js';
import { startServer } from './helpers/tools-web.js';

let nats: TestNats;
let gateway: App;
let worker: App;
let base: string;
const gatewaySpans = new InMemorySpanExporter();
const workerSpans = new InMemorySpanExporter();

/** One app of the pair, on the shared bus and database, its spans to `exporter`. */
async function start(env: Record<string, string>, exporter: InMemorySpanExporter): Promise<App> {
  const cfg = loadConfig({
    NATS_URL: nats.url,
    DATABASE_URL: inject('pgUrl'),
    DATABASE_MAX_CONNECTIONS: inject('pgKind') === 'pglite' ? '1' : '5',
    GATEWAY_HOST: '127.0.0.1',
    GATEWAY_PORT: '0',
    ORCHESTRATOR_GRPC_PORT: '0',
    GRPC_HOST: '127.0.0.1',
    INTERNAL_RPC_TOKEN: TEST_RPC_TOKEN,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    LLM_SERVICE_PORT: '0',
    AGENT_GRPC_PORT: '0',
    ...env,
  });
  const app = await startApp(cfg, createLogger({ level: cfg.logLevel }), { spanExporter: exporter });
  // The file's database is shared: no periodic pass publishing other apps' rows here.
  app.reconciler?.stop();
  return app;
}

beforeAll(async () => {
  nats = await startTestNats();
  const dir = mkdtempSync(join(tmpdir(), 'tracing-'));
  const templates = join(dir, 'templates');
  mkdirSync(templates);
  writeFileSync(
    join(templates, 'calc-say.yaml'),
    "name: calc-say\nversion: '1.0.0'\ndescription: a calculator step, then a model step\nsteps:\n" +
      "  - id: sum\n    type: tool\n    tool: calculator\n    arguments:\n      expression: '${query}'\n" +
      "  - id: say\n    type: llm\n    prompt: 'Say that the sum is ${steps.sum}.'\noutput: say\n",
  );
  const shared = { TEMPLATES_DIR: templates, APPROVAL_TIMEOUT_SECONDS: '600' };
  // Workers start first: the gateway app runs no worker, so every activation happens in the other app.
  worker = await start({ ...shared, ROLES: 'worker', INSTANCE_ID: 'worker-1' }, workerSpans);
  gateway = await start({ ...shared, ROLES: 'gateway,orchestrator', INSTANCE_ID: 'gateway-1' }, gatewaySpans);
  base = `http://127.0.0.1:${gateway.gatewayPort}`;
});
afterAll(async () => {
  await gateway?.stop();
  await worker?.stop();
  await nats?.stop();
});

const hex = (n: number) => randomBytes(n).toString('hex');

async function submit(body: Record<string, unknown>, traceparent: string): Promise<string> {
  const r = await fetch(`${base}/api/v1/tasks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', traceparent },
    body: JSON.stringify(body),
  });
  expect(r.status).toBe(200);
  return (await json(r)).task_id as string;
}

async function completed(id: string): Promise<void> {
  const s = await waitFor(async () => {
    const b = await json(await fetch(`${base}/api/v1/tasks/${id}`));
    return /COMPLETED|FAILED|CANCELLED|TIMEOUT/.test(b.status) ? b : undefined;
  }, 30_000);
  expect(s.status, JSON.stringify(s)).toBe('TASK_STATUS_COMPLETED');
}

const ofTrace = (spans: ReadableSpan[], traceId: string) => spans.filter((s) => s.spanContext().traceId === traceId);
const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;
const idOf = (s: ReadableSpan) => s.spanContext().spanId;

describe('one trace across gateway, NATS and worker', () => {
  it('the submission, the workflow activation, the tool call and the model call, parent by parent', async () => {
    const traceId = hex(16);
    const clientSpan = hex(8);
    const id = await submit({ query: '2+3', context: { template: 'calc-say' } }, `00-${traceId}-${clientSpan}-01`);
    await completed(id);
    // The activation's span ends just after the terminal write the status shows: wait for it.
    const spans = await waitFor(async () => {
      const w = ofTrace(workerSpans.getFinishedSpans(), traceId);
      return w.some((s) => s.name.startsWith('workflow ')) ? w : undefined;
    });

    const [submission] = ofTrace(gatewaySpans.getFinishedSpans(), traceId);
    expect(submission).toMatchObject({ name: 'task.submit', kind: SpanKind.CLIENT });
    expect(submission.attributes).toMatchObject({ 'taskorch.task.id': id, 'rpc.method': 'SubmitTask' });
    expect(parentOf(submission)).toBe(clientSpan);
    expect(submission.resource.attributes['service.instance.id']).toBe('gateway-1');

    const workflow = spans.find((s) => s.name.startsWith('workflow '))!;
    expect(workflow.kind).toBe(SpanKind.CONSUMER);
    expect(parentOf(workflow)).toBe(idOf(submission));
    expect(workflow.attributes).toMatchObject({ 'taskorch.task.id': id, 'taskorch.task.status': 'TASK_STATUS_COMPLETED', 'messaging.system': 'nats' });
    expect(workflow.resource.attributes['service.instance.id']).toBe('worker-1');

    const tool = spans.find((s) => s.name === 'execute_tool calculator')!;
    expect(tool.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'calculator' });
    expect(tool.status.code).not.toBe(SpanStatusCode.ERROR);
    expect(parentOf(tool)).toBe(idOf(workflow));

    const model = spans.find((s) => s.name.startsWith('chat '))!;
    expect(model.name).toBe('chat offline-deterministic');
    expect(model.kind).toBe(SpanKind.CLIENT);
    expect(model.attributes).toMatchObject({
      'gen_ai.provider.name': 'offline',
      'gen_ai.response.model': 'offline-deterministic',
      'taskorch.llm.tier': 'small',
    });
    expect(model.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
    expect(model.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
    expect(parentOf(model)).toBe(idOf(workflow));
    // The tool ran before the model step that reads its output.
    expect(tool.endTime[0] * 1e9 + tool.endTime[1]).toBeLessThanOrEqual(model.startTime[0] * 1e9 + model.startTime[1]);
  });

  it('a workflow that waits for a person and resumes: both activations are spans of the same trace', async () => {
    const traceId = hex(16);
    // require_approval: a person approves the task before its first action, so the workflow passivates.
    const id = await submit({ query: '4+5', context: { template: 'calc-say', require_approval: true } }, `00-${traceId}-${hex(8)}-01`);
    const pending = await waitFor(async () => {
      const b = await json(await fetch(`${base}/api/v1/approvals?status=pending`));
      const a = (b.approvals as { approval_id: string; workflow_id: string }[]).find((x) => x.workflow_id === id);
      return a && (await gateway.store.getTask(id))?.status === 'TASK_STATUS_PAUSED' ? a : undefined;
    }, 20_000);
    // The first activation ended when it passivated, without a status.
    const first = await waitFor(async () => ofTrace(workerSpans.getFinishedSpans(), traceId).find((s) => s.name.startsWith('workflow ')));
    expect(first.events.map((e) => e.name)).toContain('passivated');
    expect(first.attributes['taskorch.task.status']).toBeUndefined();

    const r = await fetch(`${base}/api/v1/approvals/decision`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ approval_id: pending.approval_id, workflow_id: id, approved: true }),
    });
    expect(r.status).toBe(200);
    await completed(id);
    const spans = await waitFor(async () => {
      const w = ofTrace(workerSpans.getFinishedSpans(), traceId);
      return w.filter((s) => s.name.startsWith('workflow ')).length === 2 ? w : undefined;
    });
    const [submission] = ofTrace(gatewaySpans.getFinishedSpans(), traceId);
    const activations = spans.filter((s) => s.name.startsWith('workflow '));
    // Both children of the submission: the wake's start message carries the context kept with the task.
    expect(activations.map(parentOf)).toEqual([idOf(submission), idOf(submission)]);
    const second = activations.find((s) => s !== first)!;
    expect(second.attributes['taskorch.task.status']).toBe('TASK_STATUS_COMPLETED');
    expect(parentOf(spans.find((s) => s.name === 'execute_tool calculator')!)).toBe(idOf(second));
    expect(parentOf(spans.find((s) => s.name.startsWith('chat '))!)).toBe(idOf(second));
  });
});

describe('settings', () => {
  it('the standard OTEL_* variables: a base endpoint gets /v1/traces, the traces endpoint is taken as given, headers are URL-decoded', () => {
    expect(loadConfig({}).otel).toEqual({ tracesEndpoint: undefined, headers: {}, serviceName: 'taskorch' });
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SERVICE_NAME: 'taskorch-eu' }).otel).toMatchObject({
      tracesEndpoint: 'http://collector:4318/v1/traces',
      serviceName: 'taskorch-eu',
    });
    const both = loadConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example/ingest',
      OTEL_EXPORTER_OTLP_HEADERS: 'a=1, b=x%3Dy',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'b=2',
    }).otel;
    expect(both).toMatchObject({ tracesEndpoint: 'https://traces.example/ingest', headers: { a: '1', b: '2' } });
    expect(loadConfig({ OTEL_EXPORTER_OTLP_HEADERS: 'b=x%3Dy' }).otel.headers).toEqual({ b: 'x=y' });
  });

  it('a bad endpoint or header list stops start-up naming the variable', () => {
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT: expected an http\(s\) URL/);
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_HEADERS: 'novalue' })).toThrow(/OTEL_EXPORTER_OTLP_HEADERS: expected key=value pairs/);
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_HEADERS: 'k=%zz' })).toThrow(/OTEL_EXPORTER_OTLP_HEADERS: the value of k is not URL-encoded/);
  });
});

describe('export', () => {
  it('OTLP over HTTP to OTEL_EXPORTER_OTLP_ENDPOINT, with OTEL_EXPORTER_OTLP_HEADERS; nothing without it', async () => {
    const collector = await startServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    const settings = (env: Record<string, string>) => {
      const { otel } = loadConfig(env);
      return { serviceName: otel.serviceName, instanceId: 'export-test', version: '0.0.0', endpoint: otel.tracesEndpoint, headers: otel.headers };
    };

    const off = await startTracing(settings({}));
    expect(off.enabled).toBe(false);
    const idle = off.tracer.startSpan('not exported');
    expect(idle.isRecording()).toBe(false);
    idle.end();
    await off.shutdown();

    const on = await startTracing(settings({ OTEL_EXPORTER_OTLP_ENDPOINT: `${collector.origin}/`, OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=s%20ecret' }));
    expect(on.enabled).toBe(true);
    on.tracer.startSpan('exported', { attributes: { 'gen_ai.tool.name': 'calculator' } }).end();
    await on.shutdown(); // flushes the batch
    expect(collector.requests).toHaveLength(1);
    const [req] = collector.requests;
    expect(req).toMatchObject({ method: 'POST', url: '/v1/traces' });
    expect(req.headers['x-api-key']).toBe('s ecret');
    const body = JSON.parse(req.body);
    const resource = body.resourceSpans[0].resource.attributes as { key: string; value: { stringValue?: string } }[];
    expect(resource).toContainEqual({ key: 'service.name', value: { stringValue: 'taskorch' } });
    expect(body.resourceSpans[0].scopeSpans[0].spans.map((s: { name: string }) => s.name)).toEqual(['exported']);
  });
});
