/**
 * LLMService on the orchestrator's RPC port over real gRPC: internal RPC authentication, and
 * Complete, StreamComplete, Embed, ListModels and CountTokens against a local OpenAI-compatible
 * server (completions) and a local embeddings endpoint (the `openai` provider of the catalogue
 * pointed at it with LLM_BASE_URL and a key).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Code, ConnectError, createClient, type CallOptions, type Client, type Interceptor, type Transport } from '@connectrpc/connect';
import { Http2SessionManager, createGrpcTransport } from '@connectrpc/connect-node';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ModelTier } from '../src/gen/svc/v1/common_pb.js';
import { LLMService, type StreamCompleteResponse } from '../src/gen/svc/v1/llm_pb.js';
import { TEST_RPC_TOKEN, json, startTestApp, waitFor, type TestApp } from './helpers/app.js';
import { startOpenAiServer, type OpenAiTestServer, scriptedProvider } from './helpers/openai-server.js';

let t: TestApp;
let llm: OpenAiTestServer;
/** The embeddings endpoint: POST /v1/embeddings answers one vector per input ([length, index, 0.5]). */
let embeddings: Server;
const embedRequests: { authorization?: string; body: any }[] = [];
const h2: Http2SessionManager[] = [];

const asSystem: Interceptor = (next) => (req) => {
  req.header.set('authorization', `Bearer ${TEST_RPC_TOKEN}`);
  req.header.set('x-caller-kind', 'system');
  return next(req);
};

function transport(interceptors: Interceptor[]): Transport {
  const url = `http://127.0.0.1:${t.app.grpcPort}`;
  const m = new Http2SessionManager(url);
  h2.push(m);
  return createGrpcTransport({ baseUrl: url, sessionManager: m, interceptors });
}

let client: Client<typeof LLMService>;

beforeAll(async () => {
  llm = await startOpenAiServer();
  embeddings = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (b: Buffer) => parts.push(b));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(parts).toString('utf8') || '{}');
      embedRequests.push({ authorization: req.headers.authorization, body });
      if (req.url !== '/v1/embeddings') {
        res.writeHead(404).end();
        return;
      }
      const input: string[] = Array.isArray(body.input) ? body.input : [body.input];
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          object: 'list',
          model: body.model,
          data: input.map((s, i) => ({ object: 'embedding', index: i, embedding: [s.length, i, 0.5] })),
          usage: { prompt_tokens: 1, total_tokens: 1 },
        }),
      );
    });
  });
  await new Promise<void>((r) => embeddings.listen(0, '127.0.0.1', r));
  t = await startTestApp(
    {
      ROLES: 'orchestrator,llm',
      LLM_BASE_URL: `http://127.0.0.1:${(embeddings.address() as AddressInfo).port}/v1`,
      LLM_API_KEY: 'sk-embed',
      ENABLE_CACHE: '0',
      MAX_TOKENS: '321',
    },
    {
      llm: scriptedProvider(llm),
    },
  );
  client = createClient(LLMService, transport([asSystem]));
}, 60_000);
afterAll(async () => {
  for (const m of h2) m.abort();
  await t?.stop();
  await llm?.close();
  await new Promise<void>((r) => (embeddings ? embeddings.close(() => r()) : r()));
});
beforeEach(() => {
  llm.reset();
  embedRequests.length = 0;
});

async function failure(p: Promise<unknown> | AsyncIterable<unknown>): Promise<ConnectError> {
  try {
    if (Symbol.asyncIterator in p) for await (const _ of p);
    else await p;
  } catch (err) {
    return ConnectError.from(err);
  }
  throw new Error('expected the call to fail');
}

describe('authentication', () => {
  it('refuses every LLMService RPC without the internal token, with a wrong one, and without a caller', async () => {
    const bare = createClient(LLMService, transport([]));
    const msgs = [{ role: 'user', content: 'hi' }];
    const calls: [string, (o: CallOptions) => Promise<unknown> | AsyncIterable<unknown>][] = [
      ['Complete', (o) => bare.complete({ messages: msgs }, o)],
      ['StreamComplete', (o) => bare.streamComplete({ messages: msgs }, o)],
      ['Embed', (o) => bare.embed({ texts: ['a'] }, o)],
      ['ListModels', (o) => bare.listModels({}, o)],
      ['CountTokens', (o) => bare.countTokens({ text: 'abc' }, o)],
    ];
    expect(calls).toHaveLength(LLMService.methods.length);
    const variants: [string, Record<string, string>][] = [
      ['no token', { 'x-caller-kind': 'system' }],
      ['wrong token', { authorization: 'Bearer not-the-token', 'x-caller-kind': 'system' }],
      ['no caller', { authorization: `Bearer ${TEST_RPC_TOKEN}` }],
    ];
    for (const [name, call] of calls) {
      for (const [what, headers] of variants) {
        expect((await failure(call({ headers, timeoutMs: 10_000 }))).code, `${name}: ${what}`).toBe(Code.Unauthenticated);
      }
    }
    expect(llm.requests).toHaveLength(0);
    expect(embedRequests).toHaveLength(0);
  });
});

describe('Complete and StreamComplete', () => {
  it('Complete: the conversation goes to the model with the settings asked for; text, usage, model and provider come back', async () => {
    llm.enqueue({ type: 'completion', content: 'Paris.', usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 } });
    const r = await client.complete({
      messages: [
        { role: 'system', content: 'Answer briefly.' },
        { role: 'user', content: 'Capital of France?' },
      ],
      tier: ModelTier.MEDIUM,
      maxTokens: 50,
      temperature: 0,
    });
    expect(r).toMatchObject({ text: 'Paris.', finishReason: 'stop', provider: 'openai', cacheHit: false, toolCalls: [] });
    expect(r.usage).toMatchObject({ promptTokens: 12, completionTokens: 3, totalTokens: 15, model: 'm-medium', tier: ModelTier.MEDIUM });
    expect(llm.requests).toHaveLength(1);
    const sent = llm.requests[0]!;
    expect(sent).toMatchObject({ model: 'm-medium', max_tokens: 50, temperature: 0 });
    expect(sent.messages).toEqual([
      { role: 'system', content: 'Answer briefly.' },
      { role: 'user', content: 'Capital of France?' },
    ]);
    // Recorded like every model call (no task), asynchronously.
    await waitFor(async () => {
      const rows = await t.app.store
        .sql`SELECT tier, total_tokens FROM llm_calls WHERE agent_id = 'llm-service' AND task_id IS NULL AND total_tokens = 15 AND model = 'm-medium'`;
      return rows.length ? rows : undefined;
    });
  });

  it('Complete: defaults (MAX_TOKENS, the default tier), and tools with the calls the model asks for', async () => {
    llm.enqueue({ type: 'completion', content: '', toolCalls: [{ id: 'call_9', name: 'lookup', arguments: '{"q":"x"}' }] });
    const r = await client.complete({
      messages: [{ role: 'user', content: 'look it up' }],
      tools: [{ name: 'lookup', description: 'Looks things up', parameters: { type: 'object', properties: { q: { type: 'string' } } } }],
    });
    expect(r.finishReason).toBe('tool_calls');
    expect(r.toolCalls).toEqual([expect.objectContaining({ id: 'call_9', name: 'lookup', arguments: '{"q":"x"}' })]);
    const sent = llm.requests[0]!;
    expect(sent).toMatchObject({ model: 'm-small', max_tokens: 321 });
    expect(sent.body.tools).toEqual([
      { type: 'function', function: { name: 'lookup', description: 'Looks things up', parameters: { type: 'object', properties: { q: { type: 'string' } } } } },
    ]);

    // The tool result goes back in the next call.
    llm.enqueue({ type: 'completion', content: 'found x' });
    const r2 = await client.complete({
      messages: [
        { role: 'user', content: 'look it up' },
        { role: 'assistant', content: '', toolCalls: [{ id: 'call_9', name: 'lookup', arguments: '{"q":"x"}' }] },
        { role: 'tool', content: 'x is 42', toolCallId: 'call_9' },
      ],
    });
    expect(r2.text).toBe('found x');
    expect(llm.requests[1]!.messages!.at(-1)).toMatchObject({ role: 'tool', content: 'x is 42', tool_call_id: 'call_9' });
  });

  it('Complete refuses malformed requests with INVALID_ARGUMENT naming the field, before any model call', async () => {
    const cases: [Parameters<typeof client.complete>[0], string][] = [
      [{ messages: [] }, 'messages is required'],
      [{ messages: [{ role: 'wizard', content: 'x' }] }, 'messages[0].role'],
      [{ messages: [{ role: 'tool', content: 'x' }] }, 'messages[0].tool_call_id'],
      [{ messages: [{ role: 'user', content: 'x' }], temperature: 3 }, 'temperature'],
      [{ messages: [{ role: 'user', content: 'x' }], maxTokens: -1 }, 'max_tokens'],
      [{ messages: [{ role: 'user', content: 'x' }], toolChoice: 'always' }, 'tool_choice'],
      [{ messages: [{ role: 'user', content: 'x' }], tools: [{ name: 'bad name' }] }, 'tools[0].name'],
      [{ messages: [{ role: 'user', content: 'x' }], provider: 'no-such-provider' }, 'no-such-provider'],
      [{ messages: [{ role: 'user', content: 'x' }], tier: 9 as ModelTier }, 'tier'],
    ];
    for (const [req, names] of cases) {
      const e = await failure(client.complete(req));
      expect(e.code, names).toBe(Code.InvalidArgument);
      expect(e.rawMessage, names).toContain(names);
      expect((await failure(client.streamComplete(req as Parameters<typeof client.streamComplete>[0]))).code, `${names} (stream)`).toBe(Code.InvalidArgument);
    }
    expect(llm.requests).toHaveLength(0);
  });

  it('StreamComplete: the deltas in order as the model streams them, then one final message with the whole answer and usage', async () => {
    llm.enqueue({ type: 'completion', content: ['Hel', 'lo, ', 'wor', 'ld!'], usage: { prompt_tokens: 7, completion_tokens: 4, total_tokens: 11 } });
    const msgs: StreamCompleteResponse[] = [];
    for await (const m of client.streamComplete({ messages: [{ role: 'user', content: 'greet' }] })) msgs.push(m);
    const deltas = msgs.filter((m) => m.event.case === 'delta').map((m) => m.event.value as string);
    expect(deltas).toEqual(['Hel', 'lo, ', 'wor', 'ld!']);
    expect(msgs.slice(0, -1).every((m) => m.event.case === 'delta')).toBe(true);
    const last = msgs.at(-1)!;
    expect(last.event.case).toBe('done');
    const done = last.event.value as Exclude<StreamCompleteResponse['event']['value'], string | undefined>;
    expect(done).toMatchObject({ text: 'Hello, world!', finishReason: 'stop', provider: 'openai' });
    expect(done.usage).toMatchObject({ promptTokens: 7, completionTokens: 4, totalTokens: 11, model: 'm-small' });
    expect(llm.requests[0]!.stream).toBe(true);
  });

  it("StreamComplete: a provider's failure ends the stream with its error", async () => {
    llm.enqueue({ type: 'error', status: 400, message: 'context too long' });
    const e = await failure(client.streamComplete({ messages: [{ role: 'user', content: 'x' }] }));
    expect(e.code).not.toBe(Code.Unauthenticated);
    expect(e.code).not.toBe(Code.Internal);
    expect(e.rawMessage).toContain('context too long');
  });
});

describe('Embed, ListModels, CountTokens', () => {
  it("Embed: vectors from the provider's embeddings endpoint, one per text, in order", async () => {
    const r = await client.embed({ texts: ['hello', 'a longer text'] });
    expect(r).toMatchObject({ provider: 'openai', model: 'text-embedding-3-small', dimensions: 3 });
    expect(r.embeddings.map((e) => e.values)).toEqual([
      [5, 0, 0.5],
      [13, 1, 0.5],
    ]);
    expect(embedRequests).toHaveLength(1);
    expect(embedRequests[0]).toMatchObject({ authorization: 'Bearer sk-embed', body: { model: 'text-embedding-3-small', input: ['hello', 'a longer text'] } });
  });

  it('Embed: FAILED_PRECONDITION naming why when the provider has no embeddings; INVALID_ARGUMENT for no texts', async () => {
    const e = await failure(client.embed({ texts: ['x'], provider: 'offline' }));
    expect(e.code).toBe(Code.FailedPrecondition);
    expect(e.rawMessage).toContain('offline');
    expect(e.rawMessage).toContain('embedding');
    expect((await failure(client.embed({ texts: [] }))).code).toBe(Code.InvalidArgument);
    expect((await failure(client.embed({ texts: ['ok', ''] }))).rawMessage).toContain('texts[1]');
    expect(embedRequests).toHaveLength(0);
  });

  it('ListModels: the same data as GET /providers/models, with the tier filter', async () => {
    for (const [tier, name] of [
      [ModelTier.UNSPECIFIED, ''],
      [ModelTier.SMALL, 'small'],
      [ModelTier.LARGE, 'large'],
    ] as const) {
      const http = await json(await fetch(`http://127.0.0.1:${t.app.modelServicePort}/providers/models${name ? `?tier=${name}` : ''}`));
      const r = await client.listModels({ tier });
      const asJson = Object.fromEntries(
        Object.entries(r.providers).map(([p, v]) => [
          p,
          v.models.map((m) => ({
            id: m.id,
            name: m.name,
            tier: ['', 'small', 'medium', 'large'][m.tier],
            context_window: Number(m.contextWindow),
            cost_per_1k_prompt_tokens: m.costPer1kPromptTokens,
            cost_per_1k_completion_tokens: m.costPer1kCompletionTokens,
            supports_tools: m.supportsTools,
            supports_streaming: m.supportsStreaming,
            available: m.available,
          })),
        ]),
      );
      expect(asJson, `tier ${name || 'all'}`).toEqual(http);
    }
    const all = await client.listModels({});
    expect(all.providers.openai!.models.map((m) => m.id)).toContain('gpt-4o-mini');
    expect(all.providers.openai!.models.every((m) => m.available)).toBe(true);
    const small = await client.listModels({ tier: ModelTier.SMALL });
    expect(small.providers.openai!.models.every((m) => m.tier === ModelTier.SMALL)).toBe(true);
  });

  it('CountTokens: an estimate (about 4 characters per token) and says so', async () => {
    const r = await client.countTokens({
      messages: [
        { role: 'system', content: 'abcd' },
        { role: 'user', content: 'abcdefghi' },
      ],
      text: 'abcdefgh',
    });
    expect(r.tokenCount).toBe(1 + 3 + 2);
    expect(r.estimated).toBe(true);
    expect(r.method).toContain('estimate');
    expect((await client.countTokens({})).tokenCount).toBe(0);
    expect(llm.requests).toHaveLength(0);
  });
});
