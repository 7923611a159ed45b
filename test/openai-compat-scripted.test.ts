/**
 * The OpenAI-compatible layer (/v1) on a scripted OpenAI-compatible model with authentication
 * off: the translation of messages and sampling fields into the model call, a model table from
 * OPENAI_MODELS_CONFIG_PATH, usage, live streaming (standard mode included), failures, and
 * what a disconnect does (it cancels the task).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { APIError, type OpenAI } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadModelTable } from '../src/gateway/index.js';
import { json, startTestApp, waitFor, type TestApp } from './helpers/app.js';
import { startOpenAiServer, type OpenAiTestServer, scriptedProvider } from './helpers/openai-server.js';
import { client, contentOf, expectApiError, statusEventually, taskOf } from './helpers/openai-compat.js';

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

  it('streams the answer of a standard-mode task live: content arrives while the task still runs', async () => {
    llm.reset();
    // The model sends two deltas, then holds its answer: whatever content the client sees came
    // through the stream as the model produced it, not from the task's result at its end.
    llm.enqueue({ type: 'stall', content: ['standard ', 'answer '] });
    const { data: stream, response } = await oai.chat.completions
      .create({ model: 'team-standard', messages: [{ role: 'user', content: `live ${randomUUID()}` }], stream: true } as never)
      .withResponse();
    const wf = response.headers.get('x-workflow-id')!;
    let seen = '';
    for await (const c of stream as unknown as AsyncIterable<any>) {
      seen += c.choices[0]?.delta?.content ?? '';
      if (seen.includes('answer')) break; // leaving the loop aborts the request
    }
    expect(seen).toBe('standard answer ');
    expect((await taskOf(t.base, wf)).mode).toBe('EXECUTION_MODE_STANDARD');
    // The disconnect cancels the stalled task: it had not ended when the content arrived.
    const task = await statusEventually(t.base, wf, 'TASK_STATUS_CANCELLED');
    expect(task.result ?? '').toBe('');
  });

  it('a standard-mode answer after a tool call streams as a new paragraph after the narration before the call', async () => {
    llm.reset();
    llm.enqueue(
      { type: 'completion', content: 'Let me look.', toolCalls: [{ id: 'c1', name: 'no_such_tool', arguments: '{}' }] },
      { type: 'completion', content: ['The ', 'answer.'] },
    );
    const stream = await oai.chat.completions.create({
      model: 'team-standard',
      messages: [{ role: 'user', content: `narrate ${randomUUID()}` }],
      stream: true,
    } as never);
    const chunks: any[] = [];
    for await (const c of stream as unknown as AsyncIterable<any>) chunks.push(c);
    expect(contentOf(chunks)).toBe('Let me look.\n\nThe answer.');
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
