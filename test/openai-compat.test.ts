/**
 * The OpenAI-compatible layer (/v1) through the real `openai` npm client (and raw HTTP where
 * the exact bytes matter), on the offline model with authentication off: chat and legacy
 * completions, streaming and not, the chunk sequence, include_usage, service_events, sessions,
 * errors in the OpenAI shape and the model table. The scripted model and authentication with
 * small limits: openai-compat-scripted.test.ts and openai-compat-auth.test.ts.
 */
import { randomUUID } from 'node:crypto';
import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OFFLINE_LABEL } from '../src/llm/index.js';
import { json, startTestApp, waitFor, type TestApp } from './helpers/app.js';
import { FORWARDED, client, contentOf, expectApiError, rawStream, taskOf } from './helpers/openai-compat.js';
import { startResearchWeb } from './helpers/research-web.js';

describe('A: offline model, authentication off', () => {
  let t: TestApp;
  let oai: OpenAI;
  beforeAll(async () => {
    // A search backend and a page: the research models need them (no backend fails at once).
    t = await startTestApp({ ENABLE_CACHE: '0', ...(await startResearchWeb()).env });
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
    // A session named by its client reports that name as session_id, its UUID as id.
    expect(s.id).toBe(uuid);
    expect(s.session_id).toBe(derived);
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
