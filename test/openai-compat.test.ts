/**
 * The OpenAI-compatible layer (/v1) through the real `openai` npm client (and raw HTTP where
 * the exact bytes matter): chat and legacy completions, streaming and not, the chunk sequence,
 * include_usage, service_events, the translation of messages and sampling fields into the
 * model call, sessions, errors in the OpenAI shape, authentication, rate limits per key and
 * model, the non-streaming timeout and what a disconnect does (it cancels the task).
 *
 * Three services: the offline model with authentication off (A), a scripted OpenAI-compatible
 * model server with authentication off (B), and authentication on with small limits (C).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OFFLINE_LABEL } from '../src/llm/index.js';
import { json, startTestApp, waitFor, type TestApp } from './helpers/app.js';
import { startOpenAiServer, type OpenAiTestServer, scriptedProvider } from './helpers/openai-server.js';
import { loadModelTable } from '../src/gateway/index.js';

/** A model table of group B (OPENAI_MODELS_CONFIG_PATH): it replaces the built-in one. */
const MODEL_TABLE_YAML = `
default_model: svc-chat
models:
  svc-chat:
    mode: simple
    max_tokens: 4096
    description: General chat
  team-standard:
    mode: standard
    max_tokens: 777
    description: One agent with the analysis tools
    context: {role: analysis}
    owned_by: team
    created: 1700000000
  hosted-thing:
    mode: research
    research_strategy: deep
    hosted_only: true
`;

const FORWARDED = new Set([
  'WORKFLOW_STARTED',
  'WORKFLOW_PAUSING',
  'WORKFLOW_PAUSED',
  'WORKFLOW_RESUMED',
  'WORKFLOW_CANCELLING',
  'WORKFLOW_CANCELLED',
  'AGENT_STARTED',
  'AGENT_COMPLETED',
  'AGENT_THINKING',
  'TOOL_INVOKED',
  'TOOL_OBSERVATION',
  'PROGRESS',
  'DATA_PROCESSING',
  'WAITING',
  'ERROR_RECOVERY',
  'TEAM_RECRUITED',
  'TEAM_RETIRED',
  'TEAM_STATUS',
  'ROLE_ASSIGNED',
  'DELEGATION',
  'DEPENDENCY_SATISFIED',
  'BUDGET_THRESHOLD',
  'APPROVAL_REQUESTED',
  'APPROVAL_DECISION',
]);

const client = (base: string, apiKey = 'sk-anything') => new OpenAI({ baseURL: `${base}/v1`, apiKey, maxRetries: 0, timeout: 20_000 });

interface RawStream {
  status: number;
  headers: Headers;
  chunks: any[];
  /** Every `data:` payload in order, `[DONE]` included. */
  data: string[];
  comments: number;
}

/** POSTs and reads the whole SSE body; every `data:` line parsed. */
async function rawStream(base: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<RawStream> {
  const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const text = await res.text();
  const data: string[] = [];
  let comments = 0;
  for (const block of text.split('\n\n')) {
    if (!block.trim()) continue;
    if (block.startsWith(':')) {
      comments++;
      continue;
    }
    for (const line of block.split('\n')) if (line.startsWith('data: ')) data.push(line.slice(6));
  }
  return { status: res.status, headers: res.headers, data, chunks: data.filter((x) => x !== '[DONE]').map((x) => JSON.parse(x)), comments };
}

const contentOf = (chunks: any[]) => chunks.map((c) => c.choices?.[0]?.delta?.content ?? '').join('');

async function taskOf(base: string, id: string, headers: Record<string, string> = {}): Promise<any> {
  return json(await fetch(`${base}/api/v1/tasks/${id}`, { headers }));
}

async function statusEventually(base: string, id: string, status: string, headers: Record<string, string> = {}): Promise<any> {
  return waitFor(
    async () => {
      const t = await taskOf(base, id, headers);
      return t.status === status ? t : undefined;
    },
    15_000,
    50,
  );
}

/** Expects the call to fail with an OpenAI APIError of this status, type, code (and param). */
async function expectApiError(p: Promise<unknown>, status: number, type: string, code: string, param?: string | null): Promise<APIError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, 'expected the request to fail').toBeInstanceOf(APIError);
  const e = err as APIError;
  expect(e.status).toBe(status);
  expect(e.type).toBe(type);
  expect(e.code).toBe(code);
  if (param !== undefined) expect(e.param).toBe(param);
  expect(typeof (e.error as { message?: unknown }).message).toBe('string');
  return e;
}

describe('A: offline model, authentication off', () => {
  let t: TestApp;
  let oai: OpenAI;
  beforeAll(async () => {
    t = await startTestApp({ ENABLE_CACHE: '0' });
    oai = client(t.base);
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('answers a non-streaming chat completion with the task result, usage and the task id', async () => {
    const q = `What is a fixed window counter? ${randomUUID()}`;
    const { data, response } = await oai.chat.completions
      .create({
        model: 'svc-chat',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: q },
        ],
      })
      .withResponse();
    const wf = response.headers.get('x-workflow-id')!;
    expect(wf).toMatch(/^[0-9a-f-]{36}$/);
    expect(data.id).toBe(`chatcmpl-${wf}`);
    expect(data.object).toBe('chat.completion');
    expect(data.model).toBe('svc-chat');
    expect(Number.isInteger(data.created)).toBe(true);
    expect(Math.abs(data.created - Date.now() / 1000)).toBeLessThan(60);
    expect(data.choices).toHaveLength(1);
    expect(data.choices[0]!.index).toBe(0);
    expect(data.choices[0]!.finish_reason).toBe('stop');
    expect(data.choices[0]!.message.role).toBe('assistant');
    const content = data.choices[0]!.message.content!;
    expect(content).toContain(OFFLINE_LABEL);
    expect(content).toContain(q);
    expect(data.usage!.prompt_tokens).toBeGreaterThan(0);
    expect(data.usage!.completion_tokens).toBeGreaterThan(0);
    expect(data.usage!.total_tokens).toBe(data.usage!.prompt_tokens + data.usage!.completion_tokens);
    const task = await taskOf(t.base, wf);
    expect(task.status).toBe('TASK_STATUS_COMPLETED');
    expect(task.query).toBe(q);
    expect(task.mode).toBe('EXECUTION_MODE_SIMPLE');
    expect(task.result).toBe(content);
    expect(task.usage.total_tokens).toBe(data.usage!.total_tokens);
  });

  it('streams the spec sequence: role first, content deltas, an empty final delta with finish_reason stop, no usage, then [DONE]', async () => {
    const messages = [{ role: 'user', content: `Stream this please ${randomUUID()}` }];
    const s = await rawStream(t.base, '/v1/chat/completions', { model: 'svc-chat', messages, stream: true });
    expect(s.status).toBe(200);
    expect(s.headers.get('content-type')).toBe('text/event-stream');
    expect(s.data.at(-1)).toBe('[DONE]');
    expect(s.data.filter((x) => x === '[DONE]')).toHaveLength(1);
    const [first, ...rest] = s.chunks;
    expect(first.choices[0].delta.role).toBe('assistant');
    expect(first.choices[0].finish_reason).toBeNull();
    const last = rest.at(-1);
    expect(last.choices[0].delta).toEqual({});
    expect(last.choices[0].finish_reason).toBe('stop');
    expect(rest.slice(0, -1).every((c) => c.choices[0].finish_reason === null)).toBe(true);
    const contentChunks = rest.filter((c) => c.choices[0].delta.content);
    expect(contentChunks.length).toBeGreaterThan(0);
    for (const c of s.chunks) {
      expect(c.object).toBe('chat.completion.chunk');
      expect(c.id).toBe(first.id);
      expect(c.model).toBe('svc-chat');
      expect(c.created).toBe(first.created);
      expect('usage' in c).toBe(false);
    }
    expect(first.id).toBe(`chatcmpl-${s.headers.get('x-workflow-id')}`);
    // The same messages without streaming give the same (deterministic) answer.
    const whole = await oai.chat.completions.create({ model: 'svc-chat', messages: messages as never });
    expect(contentOf(s.chunks)).toBe(whole.choices[0]!.message.content);
  });

  it('puts usage on the final chunk only with stream_options.include_usage (openai client)', async () => {
    const stream = await oai.chat.completions.create({
      model: 'svc-chat',
      messages: [{ role: 'user', content: `usage please ${randomUUID()}` }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const c of stream) chunks.push(c);
    const withUsage = chunks.filter((c) => c.usage);
    expect(withUsage).toHaveLength(1);
    expect(withUsage[0]).toBe(chunks.at(-1));
    expect(withUsage[0]!.choices[0]!.finish_reason).toBe('stop');
    const u = withUsage[0]!.usage!;
    expect(u.prompt_tokens).toBeGreaterThan(0);
    expect(u.completion_tokens).toBeGreaterThan(0);
    expect(u.total_tokens).toBe(u.prompt_tokens + u.completion_tokens);
  });

  it('refuses what it cannot honour with OpenAI-shaped 400s naming the field', async () => {
    const m = [{ role: 'user' as const, content: 'hi' }];
    await expectApiError(oai.chat.completions.create({ model: 'svc-chat', messages: m, n: 2 }), 400, 'invalid_request_error', 'invalid_request', 'n');
    await expectApiError(
      oai.chat.completions.create({ model: 'svc-chat', messages: m, temperature: 3 }),
      400,
      'invalid_request_error',
      'invalid_request',
      'temperature',
    );
    await expectApiError(
      oai.chat.completions.create({ model: 'svc-chat', messages: m, temperature: -0.1 }),
      400,
      'invalid_request_error',
      'invalid_request',
      'temperature',
    );
    await expectApiError(
      oai.chat.completions.create({ model: 'svc-chat', messages: m, presence_penalty: -2.5 }),
      400,
      'invalid_request_error',
      'invalid_request',
      'presence_penalty',
    );
    await expectApiError(
      oai.chat.completions.create({ model: 'svc-chat', messages: m, frequency_penalty: 2.01 }),
      400,
      'invalid_request_error',
      'invalid_request',
      'frequency_penalty',
    );
    await expectApiError(oai.chat.completions.create({ model: 'svc-chat', messages: m, top_p: 1.5 }), 400, 'invalid_request_error', 'invalid_request', 'top_p');
    await expectApiError(
      oai.chat.completions.create({ model: 'svc-chat', messages: m, max_tokens: 0 }),
      400,
      'invalid_request_error',
      'invalid_request',
      'max_tokens',
    );
    await expectApiError(
      oai.chat.completions.create({ model: 'svc-chat', messages: m, stop: ['a', 'b', 'c', 'd', 'e'] }),
      400,
      'invalid_request_error',
      'invalid_request',
      'stop',
    );
    await expectApiError(
      oai.chat.completions.create({ model: 'svc-chat', messages: m, tools: [{ type: 'function', function: { name: 'f' } }] }),
      400,
      'invalid_request_error',
      'invalid_request',
      'tools',
    );
    await expectApiError(
      oai.chat.completions.create({ model: 'svc-chat', messages: m, stream_options: { include_usage: true } }),
      400,
      'invalid_request_error',
      'invalid_request',
      'stream_options',
    );
    await expectApiError(
      oai.chat.completions.create({ model: 'svc-chat', messages: [{ role: 'system', content: 'only a system message' }] }),
      400,
      'invalid_request_error',
      'invalid_request',
      'messages',
    );
    const unknown = await expectApiError(
      oai.chat.completions.create({ model: 'svc-chat', messages: m, frobnicate: 1 } as never),
      400,
      'invalid_request_error',
      'invalid_request',
      'frobnicate',
    );
    expect(unknown.message).toContain('Unrecognized request argument supplied: frobnicate');
    const nf = await expectApiError(oai.chat.completions.create({ model: 'gpt-4o', messages: m }), 404, 'invalid_request_error', 'model_not_found', 'model');
    expect(nf.message).toContain('gpt-4o');
    // Hosted-only models are not served here.
    await expectApiError(oai.chat.completions.create({ model: 'svc-ads-research', messages: m }), 404, 'invalid_request_error', 'model_not_found', 'model');
    // Bad JSON, and the whole error body.
    const bad = await fetch(`${t.base}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' });
    expect(bad.status).toBe(400);
    const body = await json(bad);
    expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
    expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request', param: null });
    // n = 1 and the accepted defaults are fine.
    const ok = await oai.chat.completions.create({ model: 'svc-chat', messages: m, n: 1, logprobs: false, tools: [] as never });
    expect(ok.choices[0]!.finish_reason).toBe('stop');
  });

  it('lists the model table without hosted-only models, and describes one model in X-Model-Description', async () => {
    const list = await oai.models.list();
    const ids = list.data.map((x) => x.id);
    expect(ids).toEqual(['svc-chat', 'svc-standard-research', 'svc-deep-research', 'svc-quick-research', 'svc-complex']);
    for (const x of list.data) {
      expect(x.object).toBe('model');
      expect(Number.isInteger(x.created)).toBe(true);
      expect(typeof x.owned_by).toBe('string');
    }
    const raw = await json(await fetch(`${t.base}/v1/models`));
    expect(raw.object).toBe('list');
    const { data, response } = await oai.models.retrieve('svc-deep-research').withResponse();
    expect(data).toEqual(list.data.find((x) => x.id === 'svc-deep-research'));
    expect(response.headers.get('x-model-description')).toMatch(/deep/i);
    await expectApiError(oai.models.retrieve('svc-ads-research'), 404, 'invalid_request_error', 'model_not_found');
    await expectApiError(oai.models.retrieve('nope'), 404, 'invalid_request_error', 'model_not_found');
  });

  it('stop reaches the model call: the answer ends before the stop sequence (streaming and not)', async () => {
    const q = `Where does it stop? ${randomUUID()}`;
    const full = await oai.chat.completions.create({ model: 'svc-chat', messages: [{ role: 'user', content: q }] });
    expect(full.choices[0]!.message.content).toContain('deterministic');
    const cut = await oai.chat.completions.create({ model: 'svc-chat', messages: [{ role: 'user', content: q }], stop: ['deterministic'] });
    const text = cut.choices[0]!.message.content!;
    expect(text.length).toBeGreaterThan(0);
    expect(full.choices[0]!.message.content!.startsWith(text)).toBe(true);
    expect(text).not.toContain('deterministic');
    const s = await rawStream(t.base, '/v1/chat/completions', { messages: [{ role: 'user', content: q }], stop: 'deterministic', stream: true });
    expect(contentOf(s.chunks)).toBe(text);
  });

  it('serves legacy completions (prompt), streaming and not', async () => {
    const prompt = `Legacy prompt ${randomUUID()}`;
    const { data, response } = await oai.completions.create({ model: 'svc-chat', prompt }).withResponse();
    expect(data.object).toBe('text_completion');
    expect(data.id).toBe(`cmpl-${response.headers.get('x-workflow-id')}`);
    expect(data.choices[0]!.text).toContain(prompt);
    expect(data.choices[0]!.finish_reason).toBe('stop');
    expect(data.usage!.total_tokens).toBeGreaterThan(0);
    const stream = await oai.completions.create({ model: 'svc-chat', prompt, stream: true, stream_options: { include_usage: true } });
    const chunks: OpenAI.Completions.Completion[] = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks.every((c) => c.object === 'text_completion')).toBe(true);
    expect(chunks.map((c) => c.choices[0]?.text ?? '').join('')).toBe(data.choices[0]!.text);
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('stop');
    expect(chunks.at(-1)!.usage!.total_tokens).toBeGreaterThan(0);
    await expectApiError(oai.completions.create({ model: 'svc-chat', prompt, echo: true }), 400, 'invalid_request_error', 'invalid_request', 'echo');
    await expectApiError(oai.completions.create({ model: 'svc-chat', prompt: ['a', 'b'] }), 400, 'invalid_request_error', 'invalid_request', 'prompt');
  });

  it('derives sessions and announces X-Session-ID and X-Service-Session-ID on creation and collision only', async () => {
    const sys = `system ${randomUUID()}`;
    const ask = (content: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
      fetch(`${t.base}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({
          messages: [
            { role: 'system', content: sys },
            { role: 'user', content },
          ],
          ...extra,
        }),
      }).then(async (r) => {
        expect(r.status).toBe(200);
        await r.text();
        return r.headers;
      });
    // Derived from the system and first user message: created once, then reused silently.
    const h1 = await ask('first question');
    const derived = h1.get('x-session-id')!;
    expect(derived).toMatch(/^oai-[0-9a-f]{32}$/);
    const uuid = h1.get('x-service-session-id')!;
    expect(uuid).toMatch(/^[0-9a-f-]{36}$/);
    const s = await json(await fetch(`${t.base}/api/v1/sessions/${derived}`));
    expect(s.session_id).toBe(uuid);
    expect(s.external_id).toBe(derived);
    const h2 = await ask('first question');
    expect(h2.get('x-session-id')).toBeNull();
    expect(h2.get('x-service-session-id')).toBeNull();
    // The task ran in that session.
    const tasks = await json(await fetch(`${t.base}/api/v1/tasks?session_id=${derived}`));
    expect(tasks.tasks.map((x: any) => x.task_id)).toContain(h2.get('x-workflow-id'));
    // From `user`: another session, the same for the same user.
    const endUser = `end-user-${randomUUID()}`;
    const u1 = await ask('first question', { user: endUser });
    const byUser = u1.get('x-session-id')!;
    expect(byUser).toMatch(/^oai-[0-9a-f]{32}$/);
    expect(byUser).not.toBe(derived);
    expect((await ask('another first question', { user: endUser })).get('x-session-id')).toBeNull();
    // Given: created under that id, then silent.
    const mine = `client-session-${randomUUID()}`;
    const g1 = await ask('hello', {}, { 'X-Session-ID': mine });
    expect(g1.get('x-session-id')).toBe(mine);
    expect(g1.get('x-service-session-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect((await ask('hello again', {}, { 'X-Session-ID': mine })).get('x-session-id')).toBeNull();
    // A deleted session is a collision: a new one is made and announced.
    expect((await fetch(`${t.base}/api/v1/sessions/${mine}`, { method: 'DELETE' })).status).toBe(204);
    const g3 = await ask('after delete', {}, { 'X-Session-ID': mine });
    const fresh = g3.get('x-session-id')!;
    expect(fresh).toMatch(/^oai-/);
    expect(fresh).not.toBe(mine);
    expect(g3.get('x-service-session-id')).not.toBe(g1.get('x-service-session-id'));
    // A malformed id is refused.
    const long = await fetch(`${t.base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-Session-ID': 'x'.repeat(256) },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(long.status).toBe(400);
    expect((await json(long)).error.type).toBe('invalid_request_error');
  });

  it('forwards exactly the spec event types as service_events, and streams only the answer (svc-complex)', async () => {
    const q = `Compare two designs. Then write a short plan ${randomUUID()}`;
    const s = await rawStream(t.base, '/v1/chat/completions', { model: 'svc-complex', messages: [{ role: 'user', content: q }], stream: true });
    expect(s.status).toBe(200);
    expect(s.data.at(-1)).toBe('[DONE]');
    const wf = s.headers.get('x-workflow-id')!;
    const events = s.chunks.flatMap((c) => c.service_events ?? []);
    for (const c of s.chunks.filter((x) => x.service_events)) {
      expect(c.choices[0].delta).toEqual({});
      expect(c.choices[0].finish_reason).toBeNull();
    }
    const types = events.map((e: any) => e.type);
    expect(types.filter((x: string) => !FORWARDED.has(x))).toEqual([]);
    for (const must of ['WORKFLOW_STARTED', 'AGENT_STARTED', 'AGENT_COMPLETED', 'TEAM_RECRUITED', 'ROLE_ASSIGNED', 'DELEGATION', 'TEAM_RETIRED']) {
      expect(types).toContain(must);
    }
    for (const e of events) {
      expect(Object.keys(e).sort()).toEqual(['agent_id', 'message', 'payload', 'timestamp', 'type']);
      expect(Number.isInteger(e.timestamp)).toBe(true);
      expect(Math.abs(e.timestamp - Date.now() / 1000)).toBeLessThan(120);
      expect(typeof e.payload).toBe('object');
    }
    // Every forwarded event of the workflow, once and in order.
    const archived = await waitFor(async () => {
      const b = await json(await fetch(`${t.base}/api/v1/tasks/${wf}/events`));
      return b.events.at(-1)?.type === 'STREAM_END' ? b.events : undefined;
    });
    expect(types).toEqual(archived.filter((e: any) => FORWARDED.has(e.type)).map((e: any) => e.type));
    // The content is the answer (the synthesizer's), not the planner's JSON plan.
    const task = await taskOf(t.base, wf);
    // Supervisor mode (recorded as complex): its team events are above.
    expect(task.mode).toBe('EXECUTION_MODE_COMPLEX');
    expect(contentOf(s.chunks)).toBe(task.result);
    expect(contentOf(s.chunks)).not.toContain('"subtask-1"');
    const synthDeltas = archived.filter((e: any) => e.type === 'LLM_PARTIAL' && e.agent_id === 'synthesizer');
    expect(synthDeltas.length).toBeGreaterThan(0);
  });

  it('maps the research models to the research workflow with their strategy', async () => {
    const r = await oai.chat.completions
      .create({ model: 'svc-quick-research', messages: [{ role: 'user', content: `Research fixed windows ${randomUUID()}` }] })
      .withResponse();
    const task = await taskOf(t.base, r.response.headers.get('x-workflow-id')!);
    expect(task.status).toBe('TASK_STATUS_COMPLETED');
    expect(task.metadata.research.strategy).toBe('quick');
    expect(r.data.choices[0]!.message.content).toBe(task.result);
  });
});

describe('B: a scripted OpenAI-compatible model, authentication off', () => {
  let t: TestApp;
  let llm: OpenAiTestServer;
  let oai: OpenAI;
  beforeAll(async () => {
    llm = await startOpenAiServer();
    const dir = mkdtempSync(join(tmpdir(), 'openai-models-'));
    writeFileSync(join(dir, 'models.yaml'), MODEL_TABLE_YAML);
    t = await startTestApp(
      { ENABLE_CACHE: '0', OPENAI_MODELS_CONFIG_PATH: join(dir, 'models.yaml') },
      {
        llm: scriptedProvider(llm, 20_000),
      },
    );
    oai = client(t.base);
  });
  afterAll(async () => {
    await t?.stop();
    await llm?.close();
  });

  const lastCall = () => llm.requests.at(-1)!;

  it("hands temperature, top_p, stop, penalties and max_tokens (capped at 16384, default the model's) to the model call", async () => {
    llm.reset();
    await oai.chat.completions.create({
      model: 'svc-chat',
      messages: [{ role: 'user', content: `sampling ${randomUUID()}` }],
      temperature: 0.3,
      top_p: 0.9,
      stop: ['END', 'STOP'],
      presence_penalty: 0.5,
      frequency_penalty: -0.5,
      max_tokens: 123,
    });
    const b = lastCall().body;
    expect(b.temperature).toBe(0.3);
    expect(b.top_p).toBe(0.9);
    expect(b.stop).toEqual(['END', 'STOP']);
    expect(b.presence_penalty).toBe(0.5);
    expect(b.frequency_penalty).toBe(-0.5);
    expect(b.max_tokens).toBe(123);
    await oai.chat.completions.create({ model: 'svc-chat', messages: [{ role: 'user', content: `cap ${randomUUID()}` }], max_tokens: 50_000 });
    expect(lastCall().body.max_tokens).toBe(16384);
    await oai.chat.completions.create({ model: 'svc-chat', messages: [{ role: 'user', content: `defaults ${randomUUID()}` }] });
    const d = lastCall().body;
    expect(d.max_tokens).toBe(4096);
    expect(d.temperature).toBe(0.7);
    expect('top_p' in d || 'stop' in d || 'presence_penalty' in d).toBe(false);
  });

  it('serves the model table of OPENAI_MODELS_CONFIG_PATH: its models, modes, max_tokens, context and descriptions', async () => {
    llm.reset();
    const list = await oai.models.list();
    expect(list.data).toEqual([
      { id: 'svc-chat', object: 'model', created: expect.any(Number), owned_by: 'svc' },
      { id: 'team-standard', object: 'model', created: 1700000000, owned_by: 'team' },
    ]);
    const { response } = await oai.models.retrieve('team-standard').withResponse();
    expect(response.headers.get('x-model-description')).toBe('One agent with the analysis tools');
    await expectApiError(oai.models.retrieve('svc-deep-research'), 404, 'invalid_request_error', 'model_not_found');
    await expectApiError(oai.models.retrieve('hosted-thing'), 404, 'invalid_request_error', 'model_not_found');
    const r = await oai.chat.completions.create({ model: 'team-standard', messages: [{ role: 'user', content: `table ${randomUUID()}` }] }).withResponse();
    expect(lastCall().body.max_tokens).toBe(777);
    // The analysis role's tools (web_search, file_read) are offered: a standard-mode agent.
    expect((lastCall().body.tools ?? []).map((x: any) => x.function.name).sort()).toEqual(['file_read', 'web_search']);
    const task = await taskOf(t.base, r.response.headers.get('x-workflow-id')!);
    expect(task.mode).toBe('EXECUTION_MODE_STANDARD');
    expect(r.data.choices[0]!.message.content).toBe(task.result);
  });

  it('refuses a malformed model table naming the file and the entry', () => {
    const dir = mkdtempSync(join(tmpdir(), 'openai-models-bad-'));
    const bad = (yaml: string) => {
      const f = join(dir, `${randomUUID()}.yaml`);
      writeFileSync(f, yaml);
      return () => loadModelTable(f);
    };
    expect(bad('models:\n  m1: {mode: turbo}\n')).toThrow(/models\.m1\.mode/);
    expect(bad('models:\n  m1: {mode: simple, max_tokens: 99999}\n')).toThrow(/models\.m1\.max_tokens/);
    expect(bad('models:\n  m1: {mode: simple, research_strategy: deep}\n')).toThrow(/research_strategy/);
    expect(bad('models:\n  m1: {mode: simple, colour: red}\n')).toThrow(/models\.m1\.colour/);
    expect(bad('default_model: nope\nmodels:\n  m1: {mode: simple}\n')).toThrow(/default_model/);
    expect(bad('models:\n  m1: {mode: simple}\n')().defaultModel).toBe('m1');
  });

  it('translates messages: first system message = system prompt, last user message = query, the rest = history (with names)', async () => {
    llm.reset();
    const tag = randomUUID();
    const { response } = await oai.chat.completions
      .create({
        model: 'svc-chat',
        messages: [
          { role: 'system', content: `S1 ${tag}` },
          { role: 'user', content: 'U1' },
          { role: 'assistant', content: 'A1' },
          { role: 'system', content: 'S2' },
          { role: 'user', content: 'U2', name: 'bob' },
        ],
      })
      .withResponse();
    expect(lastCall().messages).toEqual([
      { role: 'system', content: `S1 ${tag}` },
      { role: 'user', content: 'U1' },
      { role: 'assistant', content: 'A1' },
      { role: 'user', content: 'bob: U2' },
    ]);
    expect((await taskOf(t.base, response.headers.get('x-workflow-id')!)).query).toBe('bob: U2');
  });

  it("uses the messages as the whole conversation, and the session's turns only when X-Session-ID comes without history", async () => {
    llm.reset();
    const first = `first ${randomUUID()}`;
    // Without X-Session-ID the derived session never adds turns: the same single message twice sees no history.
    await oai.chat.completions.create({ messages: [{ role: 'user', content: first }] } as never);
    await oai.chat.completions.create({ messages: [{ role: 'user', content: first }] } as never);
    expect(lastCall().messages!.map((m) => m.role)).toEqual(['system', 'user']);
    // With X-Session-ID and only the new message, the session keeps the context.
    const sid = `keep-${randomUUID()}`;
    const opts = { headers: { 'X-Session-ID': sid } };
    const a1 = await oai.chat.completions.create({ messages: [{ role: 'user', content: 'remember 42' }] } as never, opts);
    await oai.chat.completions.create({ messages: [{ role: 'user', content: 'what number?' }] } as never, opts);
    expect(lastCall().messages!.slice(1)).toEqual([
      { role: 'user', content: 'remember 42' },
      { role: 'assistant', content: a1.choices[0]!.message.content },
      { role: 'user', content: 'what number?' },
    ]);
    // With X-Session-ID and the history in the messages, the messages win (no duplicate turns).
    await oai.chat.completions.create(
      {
        messages: [
          { role: 'user', content: 'remember 42' },
          { role: 'assistant', content: 'ok' },
          { role: 'user', content: 'and now?' },
        ],
      } as never,
      opts,
    );
    expect(lastCall().messages!.slice(1)).toEqual([
      { role: 'user', content: 'remember 42' },
      { role: 'assistant', content: 'ok' },
      { role: 'user', content: 'and now?' },
    ]);
  });

  it("reports the model's usage, streams its deltas as they come, and ends with usage when asked", async () => {
    llm.reset();
    const usage = { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 };
    llm.enqueue({ type: 'completion', content: 'Hello there', usage });
    const r = await oai.chat.completions.create({ messages: [{ role: 'user', content: `u ${randomUUID()}` }] } as never);
    expect(r.usage).toEqual(usage);
    expect(r.choices[0]!.message.content).toBe('Hello there');
    llm.enqueue({ type: 'completion', content: ['Hel', 'lo ', 'wor', 'ld'], usage });
    const stream = await oai.chat.completions.create({
      messages: [{ role: 'user', content: `s ${randomUUID()}` }],
      stream: true,
      stream_options: { include_usage: true },
    } as never);
    const chunks: any[] = [];
    for await (const c of stream as unknown as AsyncIterable<any>) chunks.push(c);
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    expect(contentOf(chunks)).toBe('Hello world');
    expect(chunks.at(-1).usage).toEqual(usage);
  });

  it('answers a failed task with a server_error (500 before the head, an error chunk in a stream)', async () => {
    llm.reset();
    llm.enqueue({ type: 'error', status: 400, message: 'the model refuses' });
    const e = await expectApiError(
      oai.chat.completions.create({ messages: [{ role: 'user', content: `fail ${randomUUID()}` }] } as never),
      500,
      'server_error',
      'internal_error',
    );
    expect(e.message).toContain('the model refuses');
    llm.enqueue({ type: 'error', status: 400, message: 'the model refuses again' });
    const stream = await oai.chat.completions.create({ messages: [{ role: 'user', content: `fail2 ${randomUUID()}` }], stream: true } as never);
    const err = await (async () => {
      try {
        for await (const _ of stream as unknown as AsyncIterable<unknown>) void _;
        return undefined;
      } catch (x) {
        return x as APIError;
      }
    })();
    expect(err).toBeInstanceOf(APIError);
    expect(err!.message).toContain('the model refuses again');
    expect((err!.error as any).type).toBe('server_error');
  });

  it('cancels the task when a streaming client disconnects', async () => {
    llm.reset();
    const closed = llm.closedEarly;
    llm.enqueue({ type: 'stall', content: ['partial ', 'answer '] });
    const { data: stream, response } = await oai.chat.completions
      .create({ messages: [{ role: 'user', content: `disconnect ${randomUUID()}` }], stream: true } as never)
      .withResponse();
    const wf = response.headers.get('x-workflow-id')!;
    let seen = '';
    for await (const c of stream as unknown as AsyncIterable<any>) {
      seen += c.choices[0]?.delta?.content ?? '';
      if (seen.includes('partial')) break; // leaving the loop aborts the request
    }
    expect(seen).toContain('partial');
    const task = await statusEventually(t.base, wf, 'TASK_STATUS_CANCELLED');
    expect(task.status).toBe('TASK_STATUS_CANCELLED');
    // The model call was stopped too.
    await waitFor(async () => llm.closedEarly > closed);
  });

  it('cancels the task when a non-streaming client disconnects', async () => {
    llm.reset();
    llm.enqueue({ type: 'hang' });
    const q = `gone ${randomUUID()}`;
    const ac = new AbortController();
    const p = fetch(`${t.base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: q }] }),
      signal: ac.signal,
    }).catch((e: Error) => e);
    await waitFor(async () => llm.requests.some((r) => r.messages?.some((m) => m.content === q)));
    ac.abort();
    expect(await p).toBeInstanceOf(Error);
    const id = await waitFor(async () => (await json(await fetch(`${t.base}/api/v1/tasks?limit=20`))).tasks.find((x: any) => x.query === q)?.task_id as string);
    await statusEventually(t.base, id, 'TASK_STATUS_CANCELLED');
  });
});

describe('C: authentication on, small limits', () => {
  let t: TestApp;
  let llm: OpenAiTestServer;
  const env = {
    GATEWAY_SKIP_AUTH: '0',
    PASSWORD_SCRYPT_N: '1024',
    JWT_SECRET: 'openai-compat-test-secret-0123456789abcdef',
    ENABLE_CACHE: '0',
    OPENAI_RATE_LIMIT_REQUESTS: '3',
    OPENAI_RATE_LIMIT_TOKENS: '1000',
    OPENAI_COMPLETION_TIMEOUT_SECONDS: '2',
  };
  beforeAll(async () => {
    llm = await startOpenAiServer();
    t = await startTestApp(env, {
      llm: scriptedProvider(llm, 20_000),
    });
  });
  afterAll(async () => {
    await t?.stop();
    await llm?.close();
  });

  async function newKey(): Promise<string> {
    const r = await fetch(`${t.base}/api/v1/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: `oai-${randomUUID()}@example.com`, password: 'password123' }),
    });
    return (await json(r)).api_key;
  }

  /** Fixed one-minute windows: keep a test's requests inside one. */
  async function awayFromMinuteEdge(): Promise<void> {
    const into = (Date.now() % 60_000) / 1000;
    if (into > 50) await new Promise((r) => setTimeout(r, (61 - into) * 1000));
  }

  it('requires credentials (401 authentication_error / invalid_api_key) and accepts Bearer and X-API-Key', async () => {
    const m = [{ role: 'user' as const, content: 'hi' }];
    await expectApiError(client(t.base, 'sk_not_a_real_key').chat.completions.create({ messages: m } as never), 401, 'authentication_error', 'invalid_api_key');
    await expectApiError(client(t.base, 'sk_not_a_real_key').models.list(), 401, 'authentication_error', 'invalid_api_key');
    const none = await fetch(`${t.base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messages: m }),
    });
    expect(none.status).toBe(401);
    expect((await json(none)).error).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key', message: 'Authentication required' });
    const key = await newKey();
    const r = await client(t.base, key).chat.completions.create({ messages: m } as never);
    expect(r.choices[0]!.message.content).toBe('echo: hi');
    const x = await fetch(`${t.base}/v1/models`, { headers: { 'X-API-Key': key } });
    expect(x.status).toBe(200);
    expect((await json(x)).data.length).toBe(5);
  });

  it('limits requests per key and model with the X-RateLimit-*-Requests/-Tokens headers, then 429 rate_limit_error', async () => {
    await awayFromMinuteEdge();
    const key = await newKey();
    const oai = client(t.base, key);
    const seen: Headers[] = [];
    for (let i = 0; i < 3; i++) {
      const { response } = await oai.chat.completions.create({ model: 'svc-chat', messages: [{ role: 'user', content: `r${i}` }] }).withResponse();
      seen.push(response.headers);
    }
    expect(seen.map((h) => h.get('x-ratelimit-limit-requests'))).toEqual(['3', '3', '3']);
    expect(seen.map((h) => h.get('x-ratelimit-remaining-requests'))).toEqual(['2', '1', '0']);
    for (const h of seen) {
      expect(h.get('x-ratelimit-limit-tokens')).toBe('1000');
      expect(Number(h.get('x-ratelimit-remaining-tokens'))).toBeLessThanOrEqual(1000);
      expect(h.get('x-ratelimit-reset-requests')).toMatch(/^\d+s$/);
      expect(h.get('x-ratelimit-reset-tokens')).toMatch(/^\d+s$/);
    }
    // The first request's tokens were counted before the later ones were admitted.
    expect(Number(seen[2]!.get('x-ratelimit-remaining-tokens'))).toBeLessThan(1000);
    const e = await expectApiError(
      oai.chat.completions.create({ model: 'svc-chat', messages: [{ role: 'user', content: 'r3' }] }),
      429,
      'rate_limit_error',
      'rate_limit_exceeded',
    );
    expect(e.message).toContain('3 requests per minute');
    const retry = Number(e.headers!.get('retry-after'));
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(60);
    expect(e.headers!.get('x-ratelimit-remaining-requests')).toBe('0');
    // Legacy completions of the same model share the limit; another model and another key do not.
    await expectApiError(oai.completions.create({ model: 'svc-chat', prompt: 'r4' }), 429, 'rate_limit_error', 'rate_limit_exceeded');
    const other = await oai.chat.completions.create({ model: 'svc-complex', messages: [{ role: 'user', content: 'other model' }] });
    expect(other.choices[0]!.finish_reason).toBe('stop');
    const k2 = await client(t.base, await newKey()).chat.completions.create({ model: 'svc-chat', messages: [{ role: 'user', content: 'other key' }] });
    expect(k2.choices[0]!.finish_reason).toBe('stop');
  });

  it('limits tokens per key and model: usage counts when a completion ends', async () => {
    await awayFromMinuteEdge();
    const oai = client(t.base, await newKey());
    llm.enqueue({ type: 'completion', content: 'big answer', usage: { prompt_tokens: 900, completion_tokens: 600, total_tokens: 1500 } });
    const { data, response } = await oai.chat.completions.create({ messages: [{ role: 'user', content: 'spend' }] } as never).withResponse();
    expect(data.usage!.total_tokens).toBe(1500);
    expect(response.headers.get('x-ratelimit-remaining-tokens')).toBe('1000');
    const e = await expectApiError(
      oai.chat.completions.create({ messages: [{ role: 'user', content: 'more' }] } as never),
      429,
      'rate_limit_error',
      'rate_limit_exceeded',
    );
    expect(e.message).toContain('1000 tokens per minute');
    expect(e.headers!.get('x-ratelimit-remaining-tokens')).toBe('0');
  });

  it("gives a new session when X-Session-ID names another user's session (collision)", async () => {
    const a = await newKey();
    const b = await newKey();
    const sid = randomUUID();
    const ask = async (key: string) => {
      const r = await fetch(`${t.base}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'X-Session-ID': sid },
        body: JSON.stringify({ messages: [{ role: 'user', content: 'mine?' }] }),
      });
      expect(r.status).toBe(200);
      await r.text();
      return r.headers;
    };
    const ha = await ask(a);
    expect(ha.get('x-session-id')).toBe(sid);
    expect(ha.get('x-service-session-id')).toBe(sid);
    expect((await ask(a)).get('x-session-id')).toBeNull();
    const hb = await ask(b);
    const other = hb.get('x-session-id')!;
    expect(other).toMatch(/^oai-/);
    expect(hb.get('x-service-session-id')).not.toBe(sid);
    const own = await fetch(`${t.base}/api/v1/sessions/${other}`, { headers: { 'X-API-Key': b } });
    expect((await json(own)).session_id).toBe(hb.get('x-service-session-id'));
    // B's task is in B's session, not in A's.
    const listA = await json(await fetch(`${t.base}/api/v1/tasks?session_id=${sid}`, { headers: { 'X-API-Key': a } }));
    expect(listA.tasks.map((x: any) => x.task_id)).not.toContain(hb.get('x-workflow-id'));
  });

  it('gives up on a non-streaming completion after the timeout (504 server_error / timeout) and cancels its task', async () => {
    const key = await newKey();
    llm.enqueue({ type: 'hang' });
    const t0 = Date.now();
    const r = await fetch(`${t.base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-API-Key': key },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'never answered' }] }),
    });
    expect(r.status).toBe(504);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1900);
    expect((await json(r)).error).toMatchObject({ type: 'server_error', code: 'timeout' });
    await statusEventually(t.base, r.headers.get('x-workflow-id')!, 'TASK_STATUS_CANCELLED', { 'X-API-Key': key });
  });
});
